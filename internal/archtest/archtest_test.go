package archtest

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the layer table in docs/architecture.md from Layers")

const (
	modPath  = "github.com/otelop/otelop"
	root     = "../.."
	docPath  = "../../docs/architecture.md"
	dataFile = "internal/archtest/layers.go"
)

func checker() Checker { return Checker{Layers: Layers, Exceptions: Exceptions, Where: dataFile} }

// TestLayers holds every non-test package of the module to the layer rule.
func TestLayers(t *testing.T) {
	pkgs, err := Load(root, modPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) < 20 {
		t.Fatalf("found only %d packages under %s; is the module root right?", len(pkgs), root)
	}
	for _, v := range checker().Check(pkgs) {
		t.Error(v)
	}
}

// TestDocTable keeps the layer table of docs/architecture.md equal to Layers.
func TestDocTable(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := Splice(string(raw), Table(Layers, Exceptions))
	if !ok {
		t.Fatalf("%s lacks the markers %q and %q around the layer table", docPath, BeginMarker, EndMarker)
	}
	if got == string(raw) {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote the layer table in %s", docPath)
		return
	}
	t.Errorf("the layer table in docs/architecture.md differs from %s: run `go test ./internal/archtest -update` and commit", dataFile)
}

// synthetic is a small module with one of each kind of mistake.
func synthetic() (Checker, []Package) {
	layers := []Layer{
		{Name: "tests", Packages: []string{"test/..."}, Siblings: AnySibling},
		{Name: "binaries", Packages: []string{"cmd/*"}},
		{Name: "daemons", Packages: []string{"internal/a/*", "internal/b/*"}, Siblings: SameComponent},
		{Name: "controllers", Packages: []string{"internal/controller/*"}},
		{Name: "builders", Packages: []string{"internal/manifests/*"}, Pure: true},
		{Name: "api", Packages: []string{"api/v1"}, Pure: true},
	}
	pkgs := []Package{
		{Dir: "test/e2e", Internal: []string{"cmd/op", "test/util"}},
		{Dir: "test/util"},
		{Dir: "cmd/op", Internal: []string{"internal/controller/x", "test/util"}},
		{Dir: "internal/a/one", Internal: []string{"internal/a/two"}},
		{Dir: "internal/a/two", Internal: []string{"internal/b/one"}},
		{Dir: "internal/b/one"},
		{Dir: "internal/controller/x", Internal: []string{"internal/controller/y", "internal/manifests/m"}},
		{Dir: "internal/controller/y", Internal: []string{"internal/manifests/m"}},
		{Dir: "internal/manifests/m", Internal: []string{"api/v1"},
			External: []string{ClientPath, "sigs.k8s.io/controller-runtime/pkg/log"},
			Uses:     map[string][]string{ClientPath: {"Client", "Object"}}},
		{Dir: "api/v1", Internal: []string{"internal/controller/y"}},
		{Dir: "internal/newpkg"},
	}
	return Checker{Layers: layers, Where: "layers.go"}, pkgs
}

// TestCheckerReportsViolations is the test of the test: a synthetic module with an upward import,
// forbidden siblings, an impure builder and an unplaced package.
func TestCheckerReportsViolations(t *testing.T) {
	c, pkgs := synthetic()
	want := []string{
		`api/v1 (layer "api") imports internal/controller/y of the higher layer "controllers"`,
		`cmd/op (layer "binaries") imports test/util of the higher layer "tests"`,
		`internal/a/two imports internal/b/one, a sibling in layer "daemons" whose packages may not import each other across components`,
		`internal/controller/x imports internal/controller/y, a sibling in layer "controllers"`,
		`internal/manifests/m (pure layer "builders") imports sigs.k8s.io/controller-runtime/pkg/log`,
		`internal/manifests/m (pure layer "builders") uses client.Client`,
		`internal/newpkg is in no layer: add it (or a pattern covering it) to the Packages of the layer it belongs to in layers.go`,
	}
	got := c.Check(pkgs)
	if len(got) != len(want) {
		t.Errorf("got %d violations, want %d:\n%s", len(got), len(want), join(got))
	}
	for _, w := range want {
		if !strings.Contains(join(got), w) {
			t.Errorf("missing violation %q in:\n%s", w, join(got))
		}
	}
}

// TestCheckerExceptions: an exception silences its violation, and a stale exception or a pattern
// naming no package is reported.
func TestCheckerExceptions(t *testing.T) {
	c, pkgs := synthetic()
	c.Exceptions = []Exception{
		{From: "api/v1", To: "internal/controller/y", Why: "test"},
		{From: "cmd/op", To: "internal/gone", Why: "stale"},
	}
	c.Layers = append(c.Layers, Layer{Name: "leaf", Packages: []string{"internal/newpkg", "internal/missing"}})
	got := join(c.Check(pkgs))
	if strings.Contains(got, "api/v1 (layer") {
		t.Errorf("the exception did not silence api/v1 -> internal/controller/y:\n%s", got)
	}
	for _, w := range []string{
		"exception cmd/op -> internal/gone in layers.go matches no violation any more",
		`layer "leaf" names internal/missing, which is no package of the module`,
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in:\n%s", w, got)
		}
	}
	if strings.Contains(got, "internal/newpkg is in no layer") {
		t.Errorf("internal/newpkg is placed now:\n%s", got)
	}
}

// TestPlace: exact patterns beat wildcards, longer wildcards beat shorter ones.
func TestPlace(t *testing.T) {
	c := Checker{Layers: []Layer{
		{Name: "all", Packages: []string{"internal/..."}},
		{Name: "kinds", Packages: []string{"internal/controller/*"}},
		{Name: "owned", Packages: []string{"internal/controller/owned"}},
	}}
	for dir, want := range map[string]int{
		"internal/apply": 0, "internal/controller/x": 1, "internal/controller/owned": 2,
		"internal/controller/x/y": 0, "cmd/x": -1, "internal": 0,
	} {
		if got := c.Place(dir); got != want {
			t.Errorf("Place(%s) = %d, want %d", dir, got, want)
		}
	}
}

// TestLoad parses testdata/mod: test files, nested modules and testdata are skipped, imports of
// the module are module-relative, and the client identifiers a file uses are recorded.
func TestLoad(t *testing.T) {
	pkgs, err := Load(filepath.Join("testdata", "mod"), "example.com/mod")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, p := range pkgs {
		dirs = append(dirs, p.Dir)
	}
	if got, want := strings.Join(dirs, " "), "api/v1 internal/manifests/m"; got != want {
		t.Fatalf("packages %q, want %q", got, want)
	}
	m := pkgs[1]
	if got := strings.Join(m.Internal, " "); got != "api/v1" {
		t.Errorf("internal imports %q, want api/v1 (the test file's import is ignored)", got)
	}
	if got := strings.Join(m.Uses[ClientPath], " "); got != "Object Reader" {
		t.Errorf("client identifiers %q, want \"Object Reader\"", got)
	}
	c := Checker{Layers: []Layer{
		{Name: "builders", Packages: []string{"internal/manifests/*"}, Pure: true},
		{Name: "api", Packages: []string{"api/v1"}, Pure: true},
	}}
	if got := join(c.Check(pkgs)); !strings.Contains(got, "uses client.Reader") {
		t.Errorf("want the client.Reader use reported, got:\n%s", got)
	}
}

func join(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.Msg + "\n")
	}
	return b.String()
}
