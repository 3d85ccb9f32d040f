package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// stampBase is the earliest time stamp gives a file; every stamped time lies within stampSpan
// after it, far in the past, so Go never takes a stamped file for one being written.
var stampBase = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)

const stampSpan = 10 * 365 * 24 * time.Hour

// stampTime is the modification time of content with the git object id id: a function of the id
// alone, to the nanosecond, so the same content gets the same time in every clone and other content
// another time.
func stampTime(id string) time.Time {
	sum := sha256.Sum256([]byte(id))
	n := binary.BigEndian.Uint64(sum[:8]) % uint64(stampSpan)
	return stampBase.Add(time.Duration(n))
}

// stamp sets the modification time of every file git tracks in dir (and of every folder holding
// one) from its content: files from their blob id, folders from the ids of what they hold. Go's
// test cache keys the files a test opens on their size and modification time, not their content;
// a fresh clone gives every file a new time, so every package whose tests read files (golden
// files, YAML, charts) ran again although nothing changed. With stamped times a fresh clone of
// unchanged content is answered from the cache, and a changed file gets another time (and the
// tests that read it run again). A file whose content differs from git's index (a local edit) is
// left alone, and so is everything when dir is not a git checkout.
func stamp(dir string) (int, error) {
	out, err := exec.Command("git", "-C", dir, "ls-files", "-s", "-z").Output()
	if err != nil {
		return 0, fmt.Errorf("git ls-files: %w", err)
	}
	modified := map[string]bool{}
	if m, err := exec.Command("git", "-C", dir, "ls-files", "-m", "-z").Output(); err == nil {
		for _, f := range strings.Split(string(m), "\x00") {
			modified[f] = true
		}
	} else {
		return 0, fmt.Errorf("git ls-files -m: %w", err)
	}
	folders := map[string][]string{}
	n := 0
	for _, rec := range bytes.Split(out, []byte{0}) {
		// <mode> <object> <stage>\t<path>
		meta, path, ok := strings.Cut(string(rec), "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 3 || modified[path] {
			continue
		}
		mode, id := fields[0], fields[1]
		if mode == "160000" || mode == "120000" { // submodules, symbolic links
			continue
		}
		t := stampTime(id)
		if err := os.Chtimes(filepath.Join(dir, path), t, t); err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return n, err
		}
		n++
		for d := filepath.Dir(path); ; d = filepath.Dir(d) {
			folders[d] = append(folders[d], path+"\x00"+id)
			if d == "." {
				break
			}
		}
	}
	for d, entries := range folders {
		sort.Strings(entries)
		t := stampTime(strings.Join(entries, "\n"))
		if err := os.Chtimes(filepath.Join(dir, d), t, t); err != nil && !os.IsNotExist(err) {
			return n, err
		}
	}
	return n, nil
}
