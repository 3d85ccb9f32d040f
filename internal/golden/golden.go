// Package golden compares what a test produced with a golden file under testdata, or rewrites
// the file when the test binary runs with -update (`go test ./internal/<pkg>/ -update`). Only
// tests import it: it registers the -update flag.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Check compares got with testdata/name. With -update it writes got there instead. A missing
// file or a difference fails t with the first line that differs.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run this package's tests with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test produced; review and run this package's tests with -update\n%s", path, FirstDiff(want, got))
	}
}

// FirstDiff names the first line in which want and got differ and shows both; "" when equal.
func FirstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + strconv.Itoa(i+1) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return ""
}
