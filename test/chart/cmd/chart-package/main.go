// Command chart-package packages the Helm chart (run by `make chart`):
//
//	chart-package -chart charts/opentelemetry-operator -out bin/charts -version 1.2.3
//
// It writes <name>-<version>.tgz with the given chart version and appVersion (the operator image's
// tag); a version that is not SemVer (e.g. a bare commit hash) becomes 0.0.0-dev+<version>.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/otelop/otelop/test/chart/internal/chartpkg"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chart-package:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("chart-package", flag.ExitOnError)
	chartDir := fs.String("chart", "charts/opentelemetry-operator", "chart directory")
	out := fs.String("out", "bin/charts", "output directory")
	version := fs.String("version", "", "chart version and appVersion (image tag); empty keeps Chart.yaml's")
	_ = fs.Parse(args)
	path, err := chartpkg.Package(*chartDir, *out, *version)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
