// Command testreport is the test runner's bookkeeper behind `make test` (hack/test.sh):
//
//	testreport split [PATTERN...]      sort packages into "unit" and "cluster" (reads inputs outside Go's view)
//	testreport digest [-flag]          print the digest of those inputs (-flag: as the go test flag that carries it)
//	testreport tee FILE                copy `go test -json` from stdin to FILE, print it as a person reads it
//	testreport summary [-required F] [-phases F] FILE...
//	                                   print the phase and suite tables; fail unless the contract holds
//	testreport readme -phases F -label L README.md
//	                                   put the phase table of a run into README's time table
//	testreport stamp                   set tracked files' modification times from their content (CI's fresh clones)
//
// The contract: every suite of the required list (hack/testreport/required.txt) ran at least one
// test, failed none, and skipped none unless OTELOP_ALLOW_SKIP names it. `go test` prints "ok" for a
// package whose every test skipped; this does not.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	ok := true
	switch os.Args[1] {
	case "split":
		err = runSplit(os.Args[2:])
	case "digest":
		var d string
		if d, err = digest(".", os.Stderr); err == nil {
			if len(os.Args) > 2 && os.Args[2] == "-flag" {
				d, err = benchtimeFlag(d)
			}
			fmt.Println(d)
		}
	case "tee":
		err = runTee(os.Args[2:])
	case "summary":
		ok, err = runSummary(os.Args[2:])
	case "readme":
		err = runReadme(os.Args[2:])
	case "stamp":
		var n int
		n, err = stamp(".")
		if err == nil {
			fmt.Printf("stamped %d files' modification times from their content\n", n)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: testreport split|digest|tee|summary|readme|stamp ... (see the package comment: go doc ./hack/testreport)")
	os.Exit(2)
}

func runSplit(args []string) error {
	if len(args) == 0 {
		args = []string{"./..."}
	}
	unit, cluster, err := split(".", args)
	if err != nil {
		return err
	}
	for _, p := range unit {
		fmt.Println("unit", p)
	}
	for _, p := range cluster {
		fmt.Println("cluster", p)
	}
	return nil
}

func runTee(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("tee wants one file")
	}
	if err := os.MkdirAll(filepath.Dir(args[0]), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(args[0], os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return tee(os.Stdin, f, os.Stdout)
}

func runSummary(args []string) (bool, error) {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	req := fs.String("required", "hack/testreport/required.txt", "the required suites")
	ph := fs.String("phases", "", "the phase log of hack/test.sh")
	_ = fs.Parse(args)
	suites, err := readRequired(*req)
	if err != nil {
		return false, err
	}
	phases, err := readPhases(*ph)
	if err != nil {
		return false, err
	}
	r, err := readFiles(fs.Args())
	if err != nil {
		return false, err
	}
	return summarize(os.Stdout, phases, suites, r, allowed(os.Getenv("OTELOP_ALLOW_SKIP"))), nil
}
