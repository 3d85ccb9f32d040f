package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestStamp: in a git checkout, the same content gets the same modification time wherever it is
// (and in any clone), other content another one, and a file edited since the index keeps its own.
func TestStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write("a.yaml", "same\n")
	write("sub/b.yaml", "same\n")
	write("c.yaml", "other\n")
	write("edited.yaml", "committed\n")
	git("add", ".")
	git("commit", "-q", "-m", "x")
	write("edited.yaml", "edited\n")
	before := mtime(t, filepath.Join(dir, "edited.yaml"))

	n, err := stamp(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("stamped %d files, want 3 (not the edited one)", n)
	}
	a, b, c := mtime(t, filepath.Join(dir, "a.yaml")), mtime(t, filepath.Join(dir, "sub/b.yaml")), mtime(t, filepath.Join(dir, "c.yaml"))
	if !a.Equal(b) {
		t.Errorf("same content, different times: %v, %v", a, b)
	}
	if a.Equal(c) {
		t.Errorf("other content, same time %v", a)
	}
	if a.Before(stampBase) || a.After(stampBase.Add(stampSpan)) {
		t.Errorf("time %v outside the stamp range", a)
	}
	if got := mtime(t, filepath.Join(dir, "edited.yaml")); !got.Equal(before) {
		t.Errorf("an edited file was stamped: %v, was %v", got, before)
	}
}

func mtime(t *testing.T, p string) time.Time {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}
