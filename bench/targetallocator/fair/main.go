// Command fair is make bench-ta: the target allocator against upstream's (v0.140.0) on the same
// data in one run. Ours is BenchmarkFair in internal/targetallocator/pipeline; upstream's side
// (bench/targetallocator/upstream/fair/fair_test.go.in) runs inside a temporary copy of
// upstream's module, in its cmd/otel-allocator package, so that it reaches upstream's internal
// allocator (upstream's code is run, never imported by the product). The sizes run interleaved
// (ours 1k, upstream 1k, ours 10k, ...) so that the load of a shared machine hits both alike; the
// raw outputs go to bench/targetallocator/fair-{ours,upstream}.txt and a table of ratios to
// stdout.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	sizes := flag.String("sizes", "1000,10000,100000", "target counts, comma-separated (each of 1000, 10000, 100000)")
	benchtime := flag.String("benchtime", "3x", "go test -benchtime")
	flag.Parse()
	if err := run(strings.Split(*sizes, ","), *benchtime); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ta:", err)
		os.Exit(1)
	}
}

func run(sizes []string, benchtime string) error {
	root, err := filepath.Abs(".")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "internal", "targetallocator", "pipeline")); err != nil {
		return fmt.Errorf("run from the repository root (make bench-ta): %w", err)
	}
	upstream, cleanup, err := upstreamCopy(root)
	if err != nil {
		return err
	}
	defer cleanup()
	var ours, theirs bytes.Buffer
	for _, n := range sizes {
		pattern := fmt.Sprintf("BenchmarkFair/.*/.*/.*/%s$", strings.TrimSpace(n))
		args := []string{"test", "-run", "^$", "-bench", pattern, "-benchtime=" + benchtime, "-benchmem"}
		fmt.Fprintf(os.Stderr, "== ours, %s targets\n", n)
		if err := goTest(root, append(args, "./internal/targetallocator/pipeline/"), &ours); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "== upstream v0.140.0, %s targets\n", n)
		if err := goTest(upstream, append(args, "./cmd/otel-allocator"), &theirs); err != nil {
			return err
		}
	}
	out := filepath.Join(root, "bench", "targetallocator")
	if err := os.WriteFile(filepath.Join(out, "fair-ours.txt"), ours.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "fair-upstream.txt"), theirs.Bytes(), 0o644); err != nil {
		return err
	}
	table(os.Stdout, parse(theirs.String()), parse(ours.String()))
	return nil
}

// upstreamCopy copies upstream's module (as the throwaway module bench/targetallocator/upstream
// resolves it) into a temporary folder and adds upstream's side of the benchmark to its
// cmd/otel-allocator package.
func upstreamCopy(root string) (string, func(), error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/open-telemetry/opentelemetry-operator")
	cmd.Dir = filepath.Join(root, "bench", "targetallocator", "upstream")
	cmd.Stderr = os.Stderr
	src, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("locating upstream's module: %w", err)
	}
	dir, err := os.MkdirTemp("", "bench-ta-upstream-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { _ = os.RemoveAll(dir) }
	if err := os.CopyFS(dir, os.DirFS(strings.TrimSpace(string(src)))); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("copying upstream's module: %w", err)
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			_ = os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[d.IsDir()])
		}
		return nil
	})
	bench, err := os.ReadFile(filepath.Join(root, "bench", "targetallocator", "upstream", "fair", "fair_test.go.in"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "cmd", "otel-allocator", "zz_otelop_fair_test.go"), bench, 0o644)
	}
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// goTest runs go in dir, its output to stderr (progress) and to out.
func goTest(dir string, args []string, out io.Writer) error {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stdout = io.MultiWriter(out, os.Stderr)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return nil
}

// result is one benchmark line's figures.
type result struct{ ns, bytes, allocs, retained float64 }

var line = regexp.MustCompile(`^BenchmarkFair/(\S+?)-\d+\s+\d+\s+(.*)$`)

// parse reads go test -bench output into results by name (strategy/variant/scenario/size).
func parse(s string) map[string]result {
	out := map[string]result{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		m := line.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		var r result
		f := strings.Fields(m[2])
		for i := 0; i+1 < len(f); i += 2 {
			v, _ := strconv.ParseFloat(f[i], 64)
			switch f[i+1] {
			case "ns/op":
				r.ns = v
			case "B/op":
				r.bytes = v
			case "allocs/op":
				r.allocs = v
			case "retained-MB":
				r.retained = v
			}
		}
		out[m[1]] = r
	}
	return out
}

// table prints one row per benchmark both sides ran: time, bytes, allocations and (cold)
// retained heap, each side, and upstream/ours ratios.
func table(w io.Writer, up, ours map[string]result) {
	var names []string
	for n := range ours {
		if _, ok := up[n]; ok {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	fmt.Fprintln(w, "| strategy / rules / scenario / targets | upstream | ours | time ratio | upstream B/op | ours B/op | bytes ratio | upstream allocs | ours allocs | retained MB (upstream / ours) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, n := range names {
		u, o := up[n], ours[n]
		retained := ""
		if strings.Contains(n, "/cold/") {
			retained = fmt.Sprintf("%.1f / %.1f", u.retained, o.retained)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %.0f | %.0f | %s |\n", strings.ReplaceAll(n, "/", " / "),
			dur(u.ns), dur(o.ns), ratio(u.ns, o.ns), mb(u.bytes), mb(o.bytes), ratio(u.bytes, o.bytes), u.allocs, o.allocs, retained)
	}
}

// key sorts by strategy, rules, size, then scenario in the order cold, reload10, unchanged.
func key(name string) string {
	p := strings.Split(name, "/")
	if len(p) != 4 {
		return name
	}
	n, _ := strconv.Atoi(p[3])
	order := map[string]int{"cold": 0, "reload10": 1, "unchanged": 2}[p[2]]
	return fmt.Sprintf("%s/%s/%09d/%d", p[0], p[1], n, order)
}

func ratio(up, ours float64) string {
	switch {
	case ours == 0 && up == 0:
		return "="
	case ours == 0:
		return "∞"
	}
	return fmt.Sprintf("%.1fx", up/ours)
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.0f µs", ns/1e3)
}

func mb(b float64) string { return fmt.Sprintf("%.2f MB", b/1e6) }
