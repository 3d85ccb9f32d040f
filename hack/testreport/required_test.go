package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// events builds a go test -json stream: each item is "action package test [output]".
func events(t *testing.T, lines ...string) *results {
	t.Helper()
	r := newResults()
	for _, l := range lines {
		f := strings.SplitN(l, " ", 4)
		for len(f) < 4 {
			f = append(f, "")
		}
		e := event{Action: f[0], Package: modulePrefix + f[1], Test: f[2], Output: f[3]}
		if f[2] == "-" {
			e.Test = ""
		}
		b, _ := json.Marshal(e)
		if err := r.read(strings.NewReader(string(b) + "\n")); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

var realnode = []suite{{Name: "realnode", Patterns: []string{"test/realnode"}}}

func TestAllSkippedRequiredSuiteBreaksTheContract(t *testing.T) {
	r := events(t,
		"output test/realnode TestA     namespace.go:111: real-node tests skipped: they need root\n",
		"skip test/realnode TestA",
		"skip test/realnode TestB",
		"output test/realnode - ok  \tgithub.com/otelop/otelop/test/realnode\t0.1s\n",
		"pass test/realnode -",
	)
	got := check(realnode, r, nil)[0]
	if len(got.Problems) == 0 {
		t.Fatalf("a suite whose every test skipped holds the contract: %+v", got)
	}
	if !strings.Contains(strings.Join(got.Problems, ";"), "ran no test") {
		t.Errorf("problems %q do not say it ran no test", got.Problems)
	}
	if want := "test/realnode TestA: real-node tests skipped: they need root"; got.Skips[0] != want {
		t.Errorf("skip reason %q, want %q", got.Skips[0], want)
	}
	var out strings.Builder
	if summarize(&out, nil, realnode, r, nil) {
		t.Fatalf("summary passed:\n%s", out.String())
	}
	if !strings.HasSuffix(out.String(), "tests: 0 passed, 0 failed, 2 skipped\n") {
		t.Errorf("summary does not end with the count:\n%s", out.String())
	}

	// Allowed by name, it passes, and says so loudly.
	out.Reset()
	r = events(t, "pass test/realnode TestC", "skip test/realnode TestA", "pass test/realnode -")
	if !summarize(&out, nil, realnode, r, allowed("system, realnode")) {
		t.Fatalf("an allowed skip failed the summary:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "!! required suite realnode SKIPPED 1 test(s)") {
		t.Errorf("an allowed skip is not loud:\n%s", out.String())
	}
}

func TestRequiredSuiteThatDidNotRunOrFailed(t *testing.T) {
	r := events(t,
		"pass test/e2e TestA",
		"fail test/e2e TestB",
		"fail test/e2e -",
		"pass internal/naming TestX",
		"pass internal/naming -",
	)
	suites := []suite{
		{Name: "e2e", Patterns: []string{"test/e2e"}},
		{Name: "system", Patterns: []string{"test/system/..."}},
	}
	got := check(suites, r, nil)
	if p := strings.Join(got[0].Problems, ";"); !strings.Contains(p, "test/e2e failed") {
		t.Errorf("e2e problems %q", p)
	}
	if p := strings.Join(got[1].Problems, ";"); p != "did not run" {
		t.Errorf("system problems %q, want did not run", p)
	}
	// Positive control: a suite that ran and passed holds.
	r = events(t, "pass test/e2e TestA", "pass test/e2e -")
	if got := check(suites[:1], r, nil); len(got[0].Problems) != 0 {
		t.Errorf("a passing suite breaks the contract: %q", got[0].Problems)
	}
}

func TestPackageCutShortIsNotAPass(t *testing.T) {
	// A test binary killed by the timeout or a crash of go test leaves no final event.
	r := events(t, "pass test/chaos TestA")
	got := check([]suite{{Name: "chaos", Patterns: []string{"test/chaos"}}}, r, nil)
	if p := strings.Join(got[0].Problems, ";"); !strings.Contains(p, "did not finish") {
		t.Errorf("problems %q", p)
	}
}

func TestSuitePatterns(t *testing.T) {
	s := suite{Name: "chart", Patterns: []string{"test/chart/...", "api/crdtest"}}
	for pkg, want := range map[string]bool{
		modulePrefix + "test/chart":         true,
		modulePrefix + "test/chart/install": true,
		modulePrefix + "test/chartx":        false,
		modulePrefix + "api/crdtest":        true,
		modulePrefix + "api/crdtest/sub":    false,
	} {
		if s.covers(pkg) != want {
			t.Errorf("covers(%s) = %v, want %v", pkg, !want, want)
		}
	}
	if _, err := parseRequired(strings.NewReader("a x\na y\n")); err == nil {
		t.Error("a suite listed twice is accepted")
	}
}

// TestRequiredCoversEveryClusterPackage: every package of the product module that starts an API
// server, a cluster, a node or a child process is a required suite, so none can silently stop
// running its tests; and every suite named names packages that exist.
func TestRequiredCoversEveryClusterPackage(t *testing.T) {
	root, _ := filepath.Abs("../..")
	suites, err := readRequired("required.txt")
	if err != nil {
		t.Fatal(err)
	}
	unit, cluster, err := split(root, []string{"./..."})
	if err != nil {
		t.Fatal(err)
	}
	if len(cluster) < 20 || len(unit) < 20 {
		t.Fatalf("split found %d cluster and %d unit packages; expected dozens of each", len(cluster), len(unit))
	}
	for _, p := range cluster {
		covered := false
		for _, s := range suites {
			covered = covered || s.covers(p)
		}
		if !covered {
			t.Errorf("%s starts clusters or binaries but is in no suite of required.txt", p)
		}
	}
	for _, s := range suites {
		for _, p := range s.Patterns {
			dir := filepath.Join(root, strings.TrimSuffix(p, "/..."))
			if _, err := os.Stat(dir); err != nil {
				t.Errorf("suite %s: %s does not exist", s.Name, p)
			}
		}
	}
}
