// Command chart-values writes the chart README's values table from its values.yaml (run by
// `make generate`):
//
//	chart-values -chart ../../charts/opentelemetry-operator
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelop/otelop/test/chart/internal/valuesdoc"
)

func main() {
	chart := flag.String("chart", "charts/opentelemetry-operator", "the chart's directory")
	flag.Parse()
	if err := run(*chart); err != nil {
		fmt.Fprintln(os.Stderr, "chart-values:", err)
		os.Exit(1)
	}
}

func run(chart string) error {
	values, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return err
	}
	rows, err := valuesdoc.Rows(values)
	if err != nil {
		return err
	}
	path := filepath.Join(chart, "README.md")
	readme, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out, err := valuesdoc.Update(string(readme), valuesdoc.Table(rows))
	if err != nil {
		return err
	}
	if out == string(readme) {
		return nil
	}
	return os.WriteFile(path, []byte(out), 0o644)
}
