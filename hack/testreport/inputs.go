package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

// The digest of what Go's test cache cannot see.
//
// `go test` keys a cached result on the test binary, on the cacheable flags and on the files and
// environment variables the tests read while they run. It does not see what TestMain reads before
// m.Run (CRDs, config/default, the chart), what a child process reads (kubectl apply -k, the
// operator built with `go build` by a test) or the binaries it starts. hack/test.sh therefore passes
// the digest of all of that to the packages that read such inputs as the value of a cacheable flag
// that changes nothing else: -benchtime=<digest>x (make test runs no benchmark). A changed input is
// a changed flag, and Go runs the tests again; unchanged inputs still give cached results. (A
// linker -X stamp does not work: a variable no code reads is dropped from the binary, and with it
// the stamp.)

// benchtimeFlag turns a digest into the flag that carries it.
func benchtimeFlag(d string) (string, error) {
	n, err := strconv.ParseUint(d[:12], 16, 64)
	if err != nil {
		return "", fmt.Errorf("digest %q: %w", d, err)
	}
	return fmt.Sprintf("-benchtime=%dx", n+1), nil
}

// excluded tells which repository files no test reads: prose and benchmark results.
func excluded(rel string) bool {
	switch {
	case strings.HasPrefix(rel, "docs/"), strings.HasPrefix(rel, ".git/"):
		return true
	case !strings.Contains(rel, "/") && strings.HasSuffix(rel, ".md"):
		return true
	case strings.HasPrefix(rel, "bench/") && strings.Contains(rel, "/results/"):
		return true
	}
	return false
}

// digest hashes every file of the repository at root that git tracks or would track (committed or
// not, so a local edit counts), except prose and benchmark results; bin/tool-keys (which tool
// binaries bin/ holds, hack/build-tools.sh); and every file under ../shared/fixtures. A missing
// ../shared is said on warn and hashed as missing.
func digest(root string, warn io.Writer) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "go %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git ls-files in %s: %w", root, err)
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !excluded(f) {
			files = append(files, f)
		}
	}
	files = append(files, "bin/tool-keys")
	sort.Strings(files)
	for _, f := range files {
		if err := hashFile(h, root, f); err != nil {
			return "", err
		}
	}
	shared := filepath.Join(root, "..", "shared", "fixtures")
	if _, err := os.Stat(shared); err != nil {
		fmt.Fprintf(warn, "!! %s is missing: the tests that read upstream's fixtures will fail (they need the project's shared/ folder beside the checkout)\n", shared)
		fmt.Fprintln(h, "shared: missing")
	} else {
		err := filepath.WalkDir(shared, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			return hashFile(h, root, rel)
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:20], nil
}

// hashFile adds a file's name and content (a symlink's target) to h; a missing file counts as such.
func hashFile(h io.Writer, root, rel string) error {
	p := filepath.Join(root, rel)
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		fmt.Fprintf(h, "%s: missing\n", rel)
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode()&os.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s -> %s\n", rel, t)
		return nil
	}
	if !fi.Mode().IsRegular() {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(b)
	fmt.Fprintf(h, "%s %x\n", rel, sum)
	return nil
}

// clusterMarkers are the packages whose use makes a test read inputs outside Go's view: they start
// API servers, clusters, nodes or child processes from binaries and YAML of the repository.
var clusterMarkers = []string{
	modulePrefix + "internal/testenv",
	modulePrefix + "test/simcluster",
	modulePrefix + "test/realnode",
	modulePrefix + "test/proc",
}

// listedPackage is what `go list -test -json` says of a package or of its test binary.
type listedPackage struct {
	ImportPath, Dir, ForTest  string
	TestGoFiles, XTestGoFiles []string
	Deps                      []string
}

// split sorts the packages matched by patterns (run in dir) into those whose tests read inputs
// outside Go's view ("cluster": their test binary depends on a cluster marker, or a test file
// has a TestMain, which runs before Go starts recording what the tests read) and the rest
// ("unit"). Packages without test files are left out.
func split(dir string, patterns []string) (unit, cluster []string, err error) {
	args := append([]string{"list", "-test", "-json=ImportPath,Dir,ForTest,TestGoFiles,XTestGoFiles,Deps"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w", err)
	}
	pkgs := map[string]*listedPackage{}
	testDeps := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, nil, err
		}
		switch {
		case strings.HasSuffix(p.ImportPath, ".test"):
			testDeps[strings.TrimSuffix(p.ImportPath, ".test")] = p.Deps
		case p.ForTest == "":
			pkgs[p.ImportPath] = &p
		}
	}
	var paths []string
	for path := range pkgs {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p := pkgs[path]
		if len(p.TestGoFiles)+len(p.XTestGoFiles) == 0 {
			continue
		}
		outside, err := readsOutside(p, testDeps[path])
		if err != nil {
			return nil, nil, err
		}
		if outside {
			cluster = append(cluster, path)
		} else {
			unit = append(unit, path)
		}
	}
	return unit, cluster, nil
}

func readsOutside(p *listedPackage, deps []string) (bool, error) {
	for _, d := range deps {
		for _, m := range clusterMarkers {
			if d == m {
				return true, nil
			}
		}
	}
	for _, f := range append(append([]string{}, p.TestGoFiles...), p.XTestGoFiles...) {
		b, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			return false, err
		}
		if bytes.Contains(b, []byte("\nfunc TestMain(")) {
			return true, nil
		}
	}
	return false, nil
}
