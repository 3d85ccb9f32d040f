package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestBundleDir(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--root", "/r", "create", "--bundle", "/b", "id"}, "/b"},
		{[]string{"create", "--bundle=/b2", "id"}, "/b2"},
		{[]string{"run", "-b", "/b3", "id"}, "/b3"},
		{[]string{"--root", "/r", "kill", "id", "9"}, ""},
		{[]string{"state", "id"}, ""},
	}
	for _, c := range cases {
		if got := bundleDir(c.args); got != c.want {
			t.Errorf("bundleDir(%v) = %q, want %q", c.args, got, c.want)
		}
	}
}

func TestClampKeepsEverythingButANegativeOOMScoreAdj(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"ociVersion":"1.0.2","process":{"oomScoreAdj":-998,"args":["/pause"]},"linux":{"resources":{"memory":{"limit":9007199254740993}}}}`)
	if err := clamp(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `{"linux":{"resources":{"memory":{"limit":9007199254740993}}},"ociVersion":"1.0.2","process":{"args":["/pause"],"oomScoreAdj":0}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	// Non-negative values and specs without the field are left byte for byte.
	for _, s := range []string{`{"process":{"oomScoreAdj":1000}}`, `{"process":{"args":["/x"]}}`, `{"ociVersion":"1.0.2"}`} {
		write(s)
		if err := clamp(path); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(path); string(got) != s {
			t.Errorf("%s was rewritten to %s", s, got)
		}
	}
}
