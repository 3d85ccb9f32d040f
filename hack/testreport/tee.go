package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// tee copies a `go test -json` stream to w as JSON lines and prints what a person reads of a plain
// `go test` run to out: each package's closing line (ok, FAIL, cached), whatever a package printed
// outside its tests (TestMain's banners, panics), build errors, and the whole output of every failed
// test. A skipped test gets one line with its reason, so that a skip is never silent. Lines that
// are not JSON (a go command error) are printed as they are.
func tee(in io.Reader, w, out io.Writer) error {
	buf := map[string][]string{}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil {
			fmt.Fprintln(out, string(line))
			continue
		}
		if _, err := w.Write(append(append([]byte{}, line...), '\n')); err != nil {
			return err
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(out, e.Output)
		case e.Test == "" && e.Action == "output":
			if t := strings.TrimSpace(e.Output); t != "PASS" && t != "FAIL" && !strings.HasPrefix(t, "=== ") {
				fmt.Fprint(out, e.Output)
			}
		case e.Test != "":
			key := e.Package + "\x00" + e.Test
			switch e.Action {
			case "output":
				buf[key] = append(buf[key], e.Output)
			case "pass":
				delete(buf, key)
			case "fail":
				fmt.Fprintf(out, "--- FAIL: %s (%s)\n", e.Test, e.Package)
				for _, l := range buf[key] {
					fmt.Fprint(out, "    "+l)
				}
				delete(buf, key)
			case "skip":
				fmt.Fprintf(out, "--- SKIP: %s (%s): %s\n", e.Test, e.Package, skipReason(buf[key]))
				delete(buf, key)
			}
		}
	}
	return sc.Err()
}
