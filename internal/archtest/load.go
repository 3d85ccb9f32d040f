package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Load parses every non-test Go file of the module rooted at root (module path modPath) and returns
// one Package per directory that has any. It skips testdata, hidden and underscore directories,
// bin/ and nested modules (directories with their own go.mod). No build, no network.
func Load(root, modPath string) ([]Package, error) {
	byDir := map[string]*Package{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") ||
				strings.HasPrefix(name, "_") || rel == "bin") {
				return filepath.SkipDir
			}
			if rel != "." {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ignored(f) {
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		p := byDir[dir]
		if p == nil {
			p = &Package{Dir: dir, Uses: map[string][]string{}}
			byDir[dir] = p
		}
		addFile(p, f, modPath)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]Package, 0, len(byDir))
	for _, p := range byDir {
		p.Internal = uniq(p.Internal)
		p.External = uniq(p.External)
		for k, v := range p.Uses {
			p.Uses[k] = uniq(v)
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dir < out[j].Dir })
	return out, nil
}

// ignored reports a file excluded from every build (`//go:build ignore`).
func ignored(f *ast.File) bool {
	for _, cg := range f.Comments {
		if cg.Pos() >= f.Package {
			break
		}
		for _, c := range cg.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

func addFile(p *Package, f *ast.File, modPath string) {
	names := map[string]string{} // local name -> import path
	for _, is := range f.Imports {
		path, err := strconv.Unquote(is.Path.Value)
		if err != nil {
			panic(fmt.Sprintf("bad import %s", is.Path.Value))
		}
		if rel, ok := strings.CutPrefix(path, modPath+"/"); ok {
			p.Internal = append(p.Internal, rel)
		} else {
			p.External = append(p.External, path)
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if is.Name != nil {
			name = is.Name.Name
		}
		names[name] = path
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok {
			if path, ok := names[id.Name]; ok && path == ClientPath {
				p.Uses[path] = append(p.Uses[path], sel.Sel.Name)
			}
		}
		return true
	})
}

func uniq(s []string) []string {
	sort.Strings(s)
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
