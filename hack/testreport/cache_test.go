package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain marks this package as one whose tests read inputs outside Go's view (they run go list
// and go test over the repository), so make test links the inputs' digest into it too.
func TestMain(m *testing.M) { os.Exit(m.Run()) }

// probe is a test package that reads config/default in TestMain, before Go's test cache starts
// recording what a test reads, the way test/install does (it applies config/default with kubectl).
const probe = `package cacheprobe

import (
	"os"
	"strings"
	"testing"
)

var kustomization string

func TestMain(m *testing.M) {
	b, err := os.ReadFile("../../config/default/kustomization.yaml")
	if err != nil {
		panic(err)
	}
	kustomization = string(b)
	os.Exit(m.Run())
}

func TestInstallNamespace(t *testing.T) {
	if !strings.Contains(kustomization, "namespace: opentelemetry-operator-system") {
		t.Fatal("config/default does not install into opentelemetry-operator-system")
	}
}
`

// scratchRepo copies the repository's tracked and untracked files (not bin/) into a new git
// repository, so that the digest is computed as in a clone.
func scratchRepo(t *testing.T) string {
	t.Helper()
	root, _ := filepath.Abs("../..")
	dir := filepath.Join(t.TempDir(), "repo")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet in the index
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", "-A")
	return dir
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// goTest runs the probe as make test runs a cluster package: with the digest linked in (when
// digest is not empty). It returns go test's output and whether it passed.
func goTest(t *testing.T, dir, digest string) (string, bool) {
	t.Helper()
	args := []string{"test"}
	if digest != "" {
		flag, err := benchtimeFlag(digest)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, flag)
	}
	cmd := exec.Command("go", append(args, "./test/cacheprobe")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// TestYAMLChangeIsNotAnsweredFromTheCache: the contract's own proof that a YAML-only change to the
// shipped install makes the next make test run the tests that read it, in a scratch copy of the
// repository.
func TestYAMLChangeIsNotAnsweredFromTheCache(t *testing.T) {
	if testing.Short() {
		t.Skip("copies the repository and runs go test four times")
	}
	dir := scratchRepo(t)
	if err := os.MkdirAll(filepath.Join(dir, "test", "cacheprobe"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test", "cacheprobe", "probe_test.go"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	// A unique comment keeps an earlier run's results of this test out of the way.
	if err := os.WriteFile(filepath.Join(dir, "test", "cacheprobe", "doc.go"),
		[]byte(fmt.Sprintf("// Package cacheprobe is made by a test (%s).\npackage cacheprobe\n", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	unit, cluster, err := split(dir, []string{"./test/cacheprobe"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cluster) != 1 || len(unit) != 0 {
		t.Fatalf("a package with a TestMain that reads YAML is not sorted as one that reads outside Go's view: unit %v, cluster %v", unit, cluster)
	}

	d1, err := digest(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if out, ok := goTest(t, dir, d1); !ok {
		t.Fatalf("first run failed:\n%s", out)
	}
	// Positive control: unchanged inputs are answered from the cache.
	if out, ok := goTest(t, dir, d1); !ok || !strings.Contains(out, "(cached)") {
		t.Fatalf("second run with nothing changed was not answered from the cache (ok=%v):\n%s", ok, out)
	}

	// A YAML-only change to config/default.
	k := filepath.Join(dir, "config", "default", "kustomization.yaml")
	b, err := os.ReadFile(k)
	if err != nil {
		t.Fatal(err)
	}
	changed := bytes.Replace(b, []byte("namespace: opentelemetry-operator-system"), []byte("namespace: somewhere-else"), 1)
	if bytes.Equal(b, changed) {
		t.Fatal("config/default/kustomization.yaml has no namespace: opentelemetry-operator-system line to change")
	}
	if err := os.WriteFile(k, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	// Without the digest, Go's cache answers the old result: the hazard this guards against.
	if out, ok := goTest(t, dir, d1); !ok || !strings.Contains(out, "(cached)") {
		t.Fatalf("expected go test without a new digest to answer from its cache (the hazard), got ok=%v:\n%s", ok, out)
	}
	d2, err := digest(dir, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if d1 == d2 {
		t.Fatal("the digest did not change with config/default")
	}
	out, ok := goTest(t, dir, d2)
	if ok || strings.Contains(out, "(cached)") {
		t.Fatalf("the run after a YAML-only change passed (from the cache: %v):\n%s", strings.Contains(out, "(cached)"), out)
	}
	if !strings.Contains(out, "does not install into opentelemetry-operator-system") {
		t.Fatalf("the run failed for another reason:\n%s", out)
	}
}

// TestSkippedSuiteFailsTheSummary runs a real go test -json of a required package whose every
// test skips and feeds it to the summary, as make test does.
func TestSkippedSuiteFailsTheSummary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                  "module github.com/otelop/otelop\n\ngo 1.26\n",
		"test/realnode/a_test.go": "package realnode\n\nimport \"testing\"\n\nfunc TestNode(t *testing.T) { t.Skip(\"they need root\") }\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("go test: %v\n%s", err, raw)
	}
	if !bytes.Contains(raw, []byte(`"Action":"pass","Package":"github.com/otelop/otelop/test/realnode"`)) {
		t.Fatalf("go test did not pass the all-skipped package (the hazard):\n%s", raw)
	}
	r := newResults()
	if err := r.read(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if summarize(&out, nil, realnode, r, nil) {
		t.Fatalf("the summary passed an all-skipped required suite:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "skipped: test/realnode TestNode: they need root") {
		t.Errorf("the summary does not name the skip and its reason:\n%s", out.String())
	}
}
