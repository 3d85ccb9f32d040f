package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json), build events included.
type event struct {
	Time        time.Time `json:",omitempty"`
	Action      string
	Package     string  `json:",omitempty"`
	Test        string  `json:",omitempty"`
	Elapsed     float64 `json:",omitempty"`
	Output      string  `json:",omitempty"`
	ImportPath  string  `json:",omitempty"`
	FailedBuild string  `json:",omitempty"`
}

// pkgResult is what one package's tests did, from its events.
type pkgResult struct {
	Path                    string
	Passed, Failed, Skipped int
	// SkippedTests names each skipped test with the first line of its reason.
	SkippedTests []string
	// FailedTests names each failed test.
	FailedTests []string
	Elapsed     float64
	// PkgFailed is true when the package failed as a whole (a failed test, a build failure, a
	// panic or a TestMain that exited non-zero).
	PkgFailed bool
	// Ended is true once the package's final event was seen (a run cut short has none).
	Ended  bool
	Cached bool
	// NoTests is true when the package has no test files.
	NoTests bool
}

// results aggregates the events of one or more `go test -json` streams by package.
type results struct {
	pkgs map[string]*pkgResult
	// output buffers each running test's output, to name a skip's reason.
	output map[string][]string
}

func newResults() *results {
	return &results{pkgs: map[string]*pkgResult{}, output: map[string][]string{}}
}

func (r *results) pkg(path string) *pkgResult {
	p, ok := r.pkgs[path]
	if !ok {
		p = &pkgResult{Path: path}
		r.pkgs[path] = p
	}
	return p
}

// add takes one event into the aggregate.
func (r *results) add(e event) {
	switch e.Action {
	case "build-fail":
		r.pkg(e.ImportPath).PkgFailed = true
		return
	case "build-output":
		return
	}
	if e.Package == "" {
		return
	}
	p := r.pkg(e.Package)
	key := e.Package + "\x00" + e.Test
	if e.Test == "" {
		switch e.Action {
		case "output":
			if strings.Contains(e.Output, "(cached)") {
				p.Cached = true
			}
			if strings.Contains(e.Output, "[no test files]") {
				p.NoTests = true
			}
		case "pass", "skip":
			p.Ended, p.Elapsed = true, e.Elapsed
		case "fail":
			p.Ended, p.Elapsed, p.PkgFailed = true, e.Elapsed, true
		}
		return
	}
	switch e.Action {
	case "output":
		if len(r.output[key]) < 50 {
			r.output[key] = append(r.output[key], e.Output)
		}
	case "pass":
		p.Passed++
		delete(r.output, key)
	case "fail":
		p.Failed++
		p.FailedTests = append(p.FailedTests, e.Test)
		delete(r.output, key)
	case "skip":
		p.Skipped++
		p.SkippedTests = append(p.SkippedTests, e.Test+": "+skipReason(r.output[key]))
		delete(r.output, key)
	}
}

// skipReason is the first line a skipped test logged that is not go test's own framing.
func skipReason(lines []string) string {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		if i := strings.Index(t, ": "); i > 0 && strings.Contains(t[:i], ".go:") {
			t = t[i+2:]
		}
		return t
	}
	return "(no reason given)"
}

// read adds every event of a `go test -json` stream to r; lines that are not JSON are skipped.
func (r *results) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		r.add(e)
	}
	return sc.Err()
}

// readFiles reads every named event file.
func readFiles(names []string) (*results, error) {
	r := newResults()
	for _, n := range names {
		f, err := os.Open(n)
		if err != nil {
			return nil, err
		}
		err = r.read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
	}
	return r, nil
}

// sorted returns the packages by path.
func (r *results) sorted() []*pkgResult {
	out := make([]*pkgResult, 0, len(r.pkgs))
	for _, p := range r.pkgs {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}
