package main

import (
	"os"
	"path/filepath"
	"testing"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCopiesLikeTheInitContainersExpect covers the forms the injected init containers use:
// `cp FILE DST`, `cp -r DIR/. DST` (the folder's contents) and `cp -r DIR DST` (the folder).
func TestCopiesLikeTheInitContainersExpect(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	write(t, filepath.Join(src, "javaagent.jar"), "jar")
	write(t, filepath.Join(src, "auto", "a.js"), "a")
	write(t, filepath.Join(src, "auto", "lib", "b.js"), "b")

	if err := run(filepath.Join(src, "javaagent.jar"), filepath.Join(dst, "javaagent.jar"), false); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dst, "javaagent.jar")); got != "jar" {
		t.Errorf("file copy: %q", got)
	}
	if err := run(filepath.Join(src, "auto")+"/.", filepath.Join(dst, "contents"), true); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dst, "contents", "lib", "b.js")); got != "b" {
		t.Errorf("contents copy: %q", got)
	}
	if err := os.Mkdir(filepath.Join(dst, "into"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := run(filepath.Join(src, "auto"), filepath.Join(dst, "into"), true); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dst, "into", "auto", "a.js")); got != "a" {
		t.Errorf("folder copy into a folder: %q", got)
	}
	if err := run(filepath.Join(src, "auto"), filepath.Join(dst, "x"), false); err == nil {
		t.Error("copying a folder without -r must fail")
	}
}
