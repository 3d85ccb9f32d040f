package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// modulePrefix is the product module's path; suites name packages relative to the repository.
const modulePrefix = "github.com/otelop/otelop/"

// suite is one entry of the required list: a name and the packages it covers.
type suite struct {
	Name string
	// Patterns are package paths relative to the repository; "dir/..." covers dir and below.
	Patterns []string
}

// covers tells whether the package (an import path) belongs to the suite.
func (s suite) covers(pkg string) bool {
	rel := strings.TrimPrefix(pkg, modulePrefix)
	for _, p := range s.Patterns {
		if tree, ok := strings.CutSuffix(p, "/..."); ok {
			if rel == tree || strings.HasPrefix(rel, tree+"/") {
				return true
			}
		} else if rel == p {
			return true
		}
	}
	return false
}

// readRequired parses the required list: one suite a line, "name pattern [pattern...]"; '#'
// starts a comment.
func readRequired(path string) ([]suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseRequired(f)
}

func parseRequired(in io.Reader) ([]suite, error) {
	var out []suite
	seen := map[string]bool{}
	sc := bufio.NewScanner(in)
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 2 {
			return nil, fmt.Errorf("line %d: want \"name package...\", got %q", n, sc.Text())
		}
		if seen[f[0]] {
			return nil, fmt.Errorf("line %d: suite %q listed twice", n, f[0])
		}
		seen[f[0]] = true
		out = append(out, suite{Name: f[0], Patterns: f[1:]})
	}
	return out, sc.Err()
}

// allowed parses OTELOP_ALLOW_SKIP: suite names separated by commas or spaces.
func allowed(v string) map[string]bool {
	out := map[string]bool{}
	for _, s := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		out[s] = true
	}
	return out
}

// suiteResult is one required suite's totals and what is wrong with it.
type suiteResult struct {
	suite
	Packages                int
	Passed, Failed, Skipped int
	Seconds                 float64
	Cached                  bool
	// Problems says why the suite breaks the contract; empty when it holds.
	Problems []string
	// Skips lists each skipped test with its reason.
	Skips []string
	// SkipAllowed is true when OTELOP_ALLOW_SKIP names the suite.
	SkipAllowed bool
}

// check holds every required suite against the results: each must have run, run at least one test,
// failed none and skipped none unless allow names it.
func check(suites []suite, r *results, allow map[string]bool) []suiteResult {
	out := make([]suiteResult, 0, len(suites))
	pkgs := r.sorted()
	for _, s := range suites {
		sr := suiteResult{suite: s, SkipAllowed: allow[s.Name], Cached: true}
		for _, p := range pkgs {
			if !s.covers(p.Path) || p.NoTests {
				continue
			}
			sr.Packages++
			sr.Passed += p.Passed
			sr.Failed += p.Failed
			sr.Skipped += p.Skipped
			sr.Seconds += p.Elapsed
			sr.Cached = sr.Cached && p.Cached
			for _, sk := range p.SkippedTests {
				sr.Skips = append(sr.Skips, strings.TrimPrefix(p.Path, modulePrefix)+" "+sk)
			}
			if p.PkgFailed {
				sr.Problems = append(sr.Problems, strings.TrimPrefix(p.Path, modulePrefix)+" failed")
			} else if !p.Ended {
				sr.Problems = append(sr.Problems, strings.TrimPrefix(p.Path, modulePrefix)+" did not finish")
			}
		}
		switch {
		case sr.Packages == 0:
			sr.Cached = false
			sr.Problems = append(sr.Problems, "did not run")
		case sr.Passed+sr.Failed == 0:
			sr.Problems = append(sr.Problems, "ran no test")
		}
		if sr.Skipped > 0 && !sr.SkipAllowed {
			sr.Problems = append(sr.Problems, fmt.Sprintf("skipped %d test(s) without OTELOP_ALLOW_SKIP=%s", sr.Skipped, s.Name))
		}
		out = append(out, sr)
	}
	return out
}
