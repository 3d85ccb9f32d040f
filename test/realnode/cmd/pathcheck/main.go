// Command pathcheck is the application of the real-node agent path tests: it checks that every
// file or folder the auto-instrumentation environment names exists in its filesystem, as the
// language runtime would need it. For each variable that can name agent files (JAVA_TOOL_OPTIONS,
// NODE_OPTIONS, PYTHONPATH, LD_LIBRARY_PATH, CORECLR_*, DOTNET_* and OTEL_*) it prints one line
// per absolute path in the value:
//
//	path NAME PATH ok file|dir
//	path NAME PATH missing
//
// For each -conf FILE (a web server's configuration, see checkConf) it prints the configuration's
// directive lines and whether each file they load or include exists, in the same form with NAME
// conf:FILE. Then, for each folder /otel-auto-instrumentation-* (the agent volumes) and each
// -tree DIR, the files under it:
//
//	tree ROOT REL REL ...
//
// and exits 0: the test reads the lines from the container's log.
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// list is a repeatable flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	var confs, trees list
	flag.Var(&confs, "conf", "a web server configuration file to check (repeatable)")
	flag.Var(&trees, "tree", "a folder whose files to list (repeatable)")
	flag.Parse()
	for _, l := range check(os.Environ(), os.Stat) {
		fmt.Println(l)
	}
	for _, f := range confs {
		for _, l := range checkConf(f, os.Stat) {
			fmt.Println(l)
		}
	}
	roots, _ := filepath.Glob("/otel-auto-instrumentation-*")
	for _, r := range append(roots, trees...) {
		fmt.Println(tree(r))
	}
}

// watched says whether variable name can name agent files.
func watched(name string) bool {
	switch name {
	case "JAVA_TOOL_OPTIONS", "NODE_OPTIONS", "PYTHONPATH", "LD_LIBRARY_PATH":
		return true
	}
	for _, p := range []string{"OTEL_", "CORECLR_", "DOTNET_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// paths returns the absolute paths in a variable's value: the value is split at blanks and at
// ':', ';', ',' and '=' (the separators of path lists and of options such as
// -javaagent:PATH); pieces that start with one '/' are paths ("//host" of a URL is not).
func paths(value string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(value, func(r rune) bool {
		return r == ' ' || r == '\t' || r == ':' || r == ';' || r == ',' || r == '='
	}) {
		if strings.HasPrefix(f, "/") && !strings.HasPrefix(f, "//") {
			out = append(out, f)
		}
	}
	return out
}

// check returns the path lines for environ, sorted by variable name, stat-ing with stat.
func check(environ []string, stat func(string) (os.FileInfo, error)) []string {
	sort.Strings(environ)
	var out []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !watched(name) {
			continue
		}
		for _, p := range paths(value) {
			info, err := stat(p)
			switch {
			case err != nil:
				out = append(out, fmt.Sprintf("path %s %s missing", name, p))
			case info.IsDir():
				out = append(out, fmt.Sprintf("path %s %s ok dir", name, p))
			default:
				out = append(out, fmt.Sprintf("path %s %s ok file", name, p))
			}
		}
	}
	return out
}

// tree returns "tree ROOT" and the paths of the files under root, relative to it, sorted.
func tree(root string) string {
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return strings.TrimSpace("tree " + root + " " + strings.Join(files, " "))
}
