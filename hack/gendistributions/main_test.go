package main

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtures is where the builder manifests are, from this package's folder.
var fixtures = filepath.Join("..", "..", "..", "shared", "fixtures", "collector-distributions")

// TestGeneratedTableIsCurrent: zz_generated.go is what Generate makes of the fixtures now (make
// generate writes it). Without ../shared the test fails and says where the manifests belong.
func TestGeneratedTableIsCurrent(t *testing.T) {
	if _, err := os.Stat(fixtures); err != nil {
		t.Fatalf("%v: the distributions' builder manifests are expected at ../shared/fixtures/collector-distributions from the repository root", err)
	}
	want, err := generate(fixtures)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "internal", "distributions", "zz_generated.go"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("zz_generated.go is stale: run make generate and commit it")
	}
}
