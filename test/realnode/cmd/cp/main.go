// Command cp is the copy program of the real-node agent image (otelop.test/javaagent:1), enough of
// cp(1) for the init containers the operator injects: `cp SRC DST` copies a file, `cp -r SRC DST`
// a tree; a SRC ending in "/." copies the folder's contents into DST. It exists because the test
// images have no shell or coreutils, only static binaries built from Go source.
package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	args := os.Args[1:]
	recursive := len(args) > 0 && args[0] == "-r"
	if recursive {
		args = args[1:]
	}
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: cp [-r] SRC DST")
		os.Exit(2)
	}
	if err := run(args[0], args[1], recursive); err != nil {
		fmt.Fprintln(os.Stderr, "cp:", err)
		os.Exit(1)
	}
}

func run(src, dst string, recursive bool) error {
	info, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		if st, err := os.Stat(dst); err == nil && st.IsDir() {
			dst = filepath.Join(dst, filepath.Base(src))
		}
		return copyFile(src, dst, info.Mode())
	}
	if !recursive {
		return fmt.Errorf("%s is a folder (use -r)", src)
	}
	if !strings.HasSuffix(src, "/.") {
		if st, err := os.Stat(dst); err == nil && st.IsDir() {
			dst = filepath.Join(dst, filepath.Base(src))
		}
	}
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		}
		return copyFile(path, target, info.Mode())
	})
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
