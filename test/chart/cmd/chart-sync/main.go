// Command chart-sync keeps the Helm chart in step with config/ (run by `make generate`):
//
//	chart-sync -repo ../.. -chart charts/opentelemetry-operator
//
// It renders config/default with kustomize and writes its RBAC objects and webhook configurations
// into the chart's files/ folder, which the chart's templates read with .Files.Glob, and its CRDs
// as named templates into the library subchart charts/opentelemetry-operator-crds (a subchart is
// not stored in the release Secret). The templates rewrite them for the release (names, namespace,
// webhook Service, CA injection).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/otelop/otelop/test/chart/internal/configrender"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "chart-sync:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("chart-sync", flag.ExitOnError)
	repo := fs.String("repo", ".", "repository root (holds config/default)")
	chartDir := fs.String("chart", "charts/opentelemetry-operator", "chart directory, relative to -repo")
	_ = fs.Parse(args)
	files, err := configrender.ChartFiles(*repo)
	if err != nil {
		return err
	}
	for dir, fs := range files {
		if err := writeDir(filepath.Join(*repo, *chartDir, dir), fs); err != nil {
			return err
		}
	}
	return nil
}

// writeDir makes dir hold exactly files (only generated *.yaml and _*.tpl are removed), writing
// only what changed.
func writeDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return err
	}
	tpls, err := filepath.Glob(filepath.Join(dir, "_*.tpl"))
	if err != nil {
		return err
	}
	old = append(old, tpls...)
	for _, p := range old {
		if _, keep := files[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return err
			}
		}
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		p := filepath.Join(dir, n)
		if cur, err := os.ReadFile(p); err == nil && string(cur) == string(files[n]) {
			continue
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return err
		}
	}
	return nil
}
