package valuesdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRows(t *testing.T) {
	in := `
# Section comment, not a key's.

# -- The name.
# Second line.
name: ""
manager:
  # -- Replicas.
  replicas: 1
  undocumented: x
  image:
    # -- Repository | with a pipe.
    repository: ghcr.io/x
    list: []
  # -- A map default.
  env: {A: "1"}
`
	rows, err := Rows([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Row{
		{"name", `""`, "The name. Second line."},
		{"manager.replicas", "1", "Replicas."},
		{"manager.image.repository", `"ghcr.io/x"`, "Repository | with a pipe."},
		{"manager.env", `{"A":"1"}`, "A map default."},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows = %+v, want %+v", rows, want)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d = %+v, want %+v", i, rows[i], want[i])
		}
	}
	if tab := Table(rows); !strings.Contains(tab, "| `manager.image.repository` | `\"ghcr.io/x\"` | Repository \\| with a pipe. |") {
		t.Errorf("table:\n%s", tab)
	}
}

func TestUpdateNeedsMarkers(t *testing.T) {
	if _, err := Update("no markers", "x"); err == nil {
		t.Error("a README without markers was accepted")
	}
	out, err := Update("a\n"+StartMarker+"\nold\n"+EndMarker+"\nb", "new\n")
	if err != nil || out != "a\n"+StartMarker+"\nnew\n"+EndMarker+"\nb" {
		t.Errorf("Update = %q, %v", out, err)
	}
}

// TestChartREADMEIsCurrent: the chart's README holds the table of its values.yaml as it is now
// (`make generate` writes it), and the table documents a good share of the keys.
func TestChartREADMEIsCurrent(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "charts", "opentelemetry-operator")
	values, err := os.ReadFile(filepath.Join(dir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Rows(values)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 50 {
		t.Errorf("only %d documented values; the table is meant to cover the chart", len(rows))
	}
	want, err := Update(string(readme), Table(rows))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(readme) {
		t.Error("charts/opentelemetry-operator/README.md's values table is stale: run `make generate` and commit")
	}
}
