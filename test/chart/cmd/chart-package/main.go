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
	"regexp"
	"strings"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chart-package:", err)
		os.Exit(1)
	}
}

var nonSemverChars = regexp.MustCompile(`[^0-9A-Za-z.-]+`)

func run(args []string) error {
	fs := flag.NewFlagSet("chart-package", flag.ExitOnError)
	chartDir := fs.String("chart", "charts/opentelemetry-operator", "chart directory")
	out := fs.String("out", "bin/charts", "output directory")
	version := fs.String("version", "", "chart version and appVersion (image tag); empty keeps Chart.yaml's")
	_ = fs.Parse(args)
	ch, err := loader.LoadDir(*chartDir)
	if err != nil {
		return err
	}
	if v := strings.TrimPrefix(*version, "v"); v != "" {
		ch.Metadata.AppVersion = v
		if _, err := semver.StrictNewVersion(v); err == nil {
			ch.Metadata.Version = v
		} else {
			ch.Metadata.Version = "0.0.0-dev+" + strings.Trim(nonSemverChars.ReplaceAllString(v, "."), ".")
		}
	}
	if err := ch.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	path, err := chartutil.Save(ch, *out)
	if err != nil {
		return err
	}
	fmt.Println(path)
	return nil
}
