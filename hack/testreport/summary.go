package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
)

// phase is one line of the phase log hack/test.sh writes: what ran, for how long, and its exit code.
type phase struct {
	Name    string
	Seconds int
	RC      int
}

// readPhases parses the phase log ("name<TAB>seconds<TAB>rc" a line); a missing file is no phases.
func readPhases(path string) ([]phase, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []phase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), "\t")
		if len(fs) != 3 {
			continue
		}
		s, err1 := strconv.Atoi(fs[1])
		rc, err2 := strconv.Atoi(fs[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s: bad line %q", path, sc.Text())
		}
		out = append(out, phase{Name: fs[0], Seconds: s, RC: rc})
	}
	return out, sc.Err()
}

// summarize prints the phase table, the required suites' table and every problem to out, and
// returns whether the run holds the contract: every phase exited 0, no package failed, and every
// required suite ran tests and skipped none it was not allowed to. The last line is the count of
// tests, in the form CI reads ("tests: N passed, N failed, N skipped").
func summarize(out io.Writer, phases []phase, suites []suite, r *results, allow map[string]bool) bool {
	ok := true
	fmt.Fprintln(out, "\n==> test summary")
	if len(phases) > 0 {
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "phase\tseconds\tresult")
		total := 0
		for _, p := range phases {
			res := "ok"
			if p.RC != 0 {
				res, ok = fmt.Sprintf("FAILED (exit %d)", p.RC), false
			}
			total += p.Seconds
			fmt.Fprintf(tw, "%s\t%d\t%s\n", p.Name, p.Seconds, res)
		}
		fmt.Fprintf(tw, "total\t%d\t\n", total)
		tw.Flush()
		fmt.Fprintln(out)
	}

	checked := check(suites, r, allow)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "suite\tpackages\tpassed\tfailed\tskipped\tseconds\t\t")
	for _, s := range checked {
		state := "ok"
		switch {
		case len(s.Problems) > 0:
			state = "BROKEN"
		case s.Skipped > 0:
			state = "ok, SKIPS ALLOWED"
		case s.Cached:
			state = "ok (cached)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f\t\t%s\t\n", s.Name, s.Packages, s.Passed, s.Failed, s.Skipped, s.Seconds, state)
	}
	var other pkgResult
	otherPkgs := 0
	var failedPkgs, otherSkips []string
	var passed, failed, skipped int
	for _, p := range r.sorted() {
		passed, failed, skipped = passed+p.Passed, failed+p.Failed, skipped+p.Skipped
		rel := strings.TrimPrefix(p.Path, modulePrefix)
		if p.PkgFailed || (!p.Ended && !p.NoTests) {
			failedPkgs = append(failedPkgs, rel)
		}
		covered := false
		for _, s := range suites {
			covered = covered || s.covers(p.Path)
		}
		if covered {
			continue
		}
		if p.NoTests {
			continue
		}
		otherPkgs++
		other.Passed, other.Failed, other.Skipped = other.Passed+p.Passed, other.Failed+p.Failed, other.Skipped+p.Skipped
		other.Elapsed += p.Elapsed
		for _, sk := range p.SkippedTests {
			otherSkips = append(otherSkips, rel+" "+sk)
		}
	}
	fmt.Fprintf(tw, "other packages\t%d\t%d\t%d\t%d\t%.1f\t\t\t\n", otherPkgs, other.Passed, other.Failed, other.Skipped, other.Elapsed)
	tw.Flush()
	fmt.Fprintln(out)

	for _, s := range checked {
		if len(s.Skips) == 0 && len(s.Problems) == 0 {
			continue
		}
		if len(s.Problems) > 0 {
			ok = false
			fmt.Fprintf(out, "!! required suite %s: %s\n", s.Name, strings.Join(s.Problems, "; "))
		} else {
			fmt.Fprintf(out, "!! required suite %s SKIPPED %d test(s) (allowed by OTELOP_ALLOW_SKIP): its proof did not run\n", s.Name, s.Skipped)
		}
		for _, sk := range s.Skips {
			fmt.Fprintln(out, "   skipped:", sk)
		}
	}
	if len(otherSkips) > 0 {
		fmt.Fprintf(out, "\nskipped outside the required suites (%d):\n", len(otherSkips))
		for _, sk := range otherSkips {
			fmt.Fprintln(out, "   ", sk)
		}
	}
	if len(failedPkgs) > 0 {
		ok = false
		fmt.Fprintf(out, "\n!! failed packages: %s\n", strings.Join(failedPkgs, " "))
	}
	if ok {
		fmt.Fprintln(out, "\nthe required-suite contract holds (hack/testreport/required.txt)")
	} else {
		fmt.Fprintln(out, "\n!! FAILED: see above (the required suites are in hack/testreport/required.txt)")
	}
	fmt.Fprintf(out, "tests: %d passed, %d failed, %d skipped\n", passed, failed, skipped)
	return ok
}
