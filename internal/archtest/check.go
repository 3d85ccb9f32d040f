package archtest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Package is what the check needs to know about one package: its module-relative directory, the
// module-relative paths of the module's packages it imports, its other imports, and which
// identifiers it uses from each import (only the client package's matter today).
type Package struct {
	Dir string
	// Internal are module-relative import paths ("internal/apply").
	Internal []string
	// External are the full import paths of everything else.
	External []string
	// Uses maps an import path to the identifiers the package selects from it.
	Uses map[string][]string
}

// Violation is one broken rule, with a message naming the package and the import.
type Violation struct {
	Pkg, Import, Msg string
}

func (v Violation) String() string { return v.Msg }

// Checker checks packages against a layer rule.
type Checker struct {
	Layers     []Layer
	Exceptions []Exception
	// Where names the file that holds the data, for messages.
	Where string
}

// Place returns the index of the layer holding dir, or -1: an exact pattern wins, then the longest
// wildcard prefix.
func (c Checker) Place(dir string) int {
	best, bestScore := -1, -1
	for i, l := range c.Layers {
		for _, p := range l.Packages {
			if s := matchScore(p, dir); s > bestScore {
				best, bestScore = i, s
			}
		}
	}
	return best
}

// matchScore is -1 when pattern does not match dir, else higher for more specific patterns.
func matchScore(pattern, dir string) int {
	switch {
	case strings.HasSuffix(pattern, "/..."):
		base := strings.TrimSuffix(pattern, "/...")
		if dir == base || strings.HasPrefix(dir, base+"/") {
			return 2 * len(base)
		}
	case strings.HasSuffix(pattern, "/*"):
		base := strings.TrimSuffix(pattern, "/*")
		if rest, ok := strings.CutPrefix(dir, base+"/"); ok && !strings.Contains(rest, "/") {
			return 2*len(base) + 1
		}
	case pattern == dir:
		return 1 << 20
	}
	return -1
}

// Check returns every violation in pkgs, sorted, including exceptions that matched nothing and
// exact patterns that name no package.
func (c Checker) Check(pkgs []Package) []Violation {
	var out []Violation
	used := make([]bool, len(c.Exceptions))
	excepted := func(from, to string) bool {
		for i, e := range c.Exceptions {
			if e.From == from && e.To == to {
				used[i] = true
				return true
			}
		}
		return false
	}
	dirs := map[string]bool{}
	for _, p := range pkgs {
		dirs[p.Dir] = true
	}
	for _, p := range pkgs {
		li := c.Place(p.Dir)
		if li < 0 {
			out = append(out, Violation{Pkg: p.Dir, Msg: fmt.Sprintf(
				"%s is in no layer: add it (or a pattern covering it) to the Packages of the layer it belongs to in %s, then run `go test ./internal/archtest -update`",
				p.Dir, c.Where)})
			continue
		}
		l := c.Layers[li]
		for _, imp := range p.Internal {
			if !dirs[imp] {
				continue // not a package of this module (e.g. a separate module); nothing to say
			}
			ii := c.Place(imp)
			if ii < 0 {
				continue // reported as unplaced on its own
			}
			var msg string
			switch {
			case ii < li:
				msg = fmt.Sprintf("%s (layer %q) imports %s of the higher layer %q", p.Dir, l.Name, imp, c.Layers[ii].Name)
			case ii == li && !siblingOK(l.Siblings, p.Dir, imp):
				msg = fmt.Sprintf("%s imports %s, a sibling in layer %q whose packages may not import each other%s",
					p.Dir, imp, l.Name, siblingHint(l.Siblings))
			}
			if msg != "" && !excepted(p.Dir, imp) {
				out = append(out, Violation{Pkg: p.Dir, Import: imp, Msg: msg})
			}
		}
		if !l.Pure {
			continue
		}
		for _, imp := range p.External {
			if impure(imp) && !excepted(p.Dir, imp) {
				out = append(out, Violation{Pkg: p.Dir, Import: imp, Msg: fmt.Sprintf(
					"%s (pure layer %q) imports %s: pure code holds no client, informer, recorder or logger", p.Dir, l.Name, imp)})
			}
		}
		for _, id := range p.Uses[ClientPath] {
			if !slices.Contains(ClientTypes, id) && !excepted(p.Dir, ClientPath+"."+id) {
				out = append(out, Violation{Pkg: p.Dir, Import: ClientPath, Msg: fmt.Sprintf(
					"%s (pure layer %q) uses client.%s: pure code may use only the object types %v of %s",
					p.Dir, l.Name, id, ClientTypes, ClientPath)})
			}
		}
	}
	for i, e := range c.Exceptions {
		if !used[i] {
			out = append(out, Violation{Pkg: e.From, Import: e.To, Msg: fmt.Sprintf(
				"exception %s -> %s in %s matches no violation any more: remove it", e.From, e.To, c.Where)})
		}
	}
	for _, l := range c.Layers {
		for _, p := range l.Packages {
			if !strings.HasSuffix(p, "/...") && !strings.HasSuffix(p, "/*") && !dirs[p] {
				out = append(out, Violation{Pkg: p, Msg: fmt.Sprintf(
					"layer %q names %s, which is no package of the module: remove or fix it in %s", l.Name, p, c.Where)})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Pkg != out[j].Pkg {
			return out[i].Pkg < out[j].Pkg
		}
		return out[i].Import < out[j].Import
	})
	return out
}

func siblingOK(s Siblings, from, to string) bool {
	switch s {
	case AnySibling:
		return true
	case SameComponent:
		return component(from) == component(to)
	}
	return false
}

func siblingHint(s Siblings) string {
	if s == SameComponent {
		return " across components"
	}
	return ""
}

// component is a directory's first two path elements.
func component(dir string) string {
	parts := strings.SplitN(dir, "/", 3)
	if len(parts) < 2 {
		return dir
	}
	return parts[0] + "/" + parts[1]
}

func impure(imp string) bool {
	if slices.Contains(PureAllowed, imp) {
		return false
	}
	for _, p := range Impure {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}
