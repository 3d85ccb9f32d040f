// Command gendistributions writes internal/distributions/zz_generated.go from the official distributions'
// builder manifests (../shared/fixtures/collector-distributions/<release>/<distribution>.yaml):
// each distribution's components as kind/type, by version. make generate runs it.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	fixtures := flag.String("fixtures", "../shared/fixtures/collector-distributions", "the folder of the distributions' builder manifests, one folder per release")
	out := flag.String("out", "internal/distributions/zz_generated.go", "the Go file to write")
	flag.Parse()
	src, err := generate(*fixtures)
	if err == nil {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "distributions:", err)
		os.Exit(1)
	}
}
