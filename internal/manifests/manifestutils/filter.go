package manifestutils

import (
	"fmt"
	"regexp"
	"strings"
)

// LastAppliedAnnotation is kubectl's client-side apply annotation, filtered by default so that it is
// not copied from the custom resource onto the objects generated from it.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// Filter drops the labels or annotations whose key matches one of its patterns. As upstream's
// --labels-filter and --annotations-filter, a pattern is a regular expression matched anywhere in
// the key (".*filter.out" drops "label.filter.out"). A pattern that is not a valid regular
// expression, such as the glob "*.filter.out", is read as a glob where '*' matches anything and the
// rest is literal. The zero Filter drops nothing.
type Filter struct {
	patterns []*regexp.Regexp
}

// NewFilters compiles the operator's label and annotation filters (--labels-filter,
// --annotations-filter); an error says which.
func NewFilters(labels, annotations []string) (labelsFilter, annotationsFilter Filter, err error) {
	if labelsFilter, err = NewFilter(labels); err != nil {
		return Filter{}, Filter{}, fmt.Errorf("labels filter: %w", err)
	}
	if annotationsFilter, err = NewFilter(annotations); err != nil {
		return Filter{}, Filter{}, fmt.Errorf("annotations filter: %w", err)
	}
	return labelsFilter, annotationsFilter, nil
}

// NewFilter compiles patterns; a pattern that is neither a regular expression nor a glob is an
// error naming its index.
func NewFilter(patterns []string) (Filter, error) {
	f := Filter{patterns: make([]*regexp.Regexp, 0, len(patterns))}
	for i, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			glob := "^" + strings.ReplaceAll(regexp.QuoteMeta(p), `\*`, ".*") + "$"
			if re, err = regexp.Compile(glob); err != nil {
				return Filter{}, fmt.Errorf("pattern [%d] %q: %w", i, p, err)
			}
		}
		f.patterns = append(f.patterns, re)
	}
	return f, nil
}

// Drops reports whether key matches one of the filter's patterns.
func (f Filter) Drops(key string) bool {
	for _, re := range f.patterns {
		if re.MatchString(key) {
			return true
		}
	}
	return false
}

// Apply returns a new map holding the entries of in whose key the filter does not drop. It never
// returns nil.
func (f Filter) Apply(in map[string]string) map[string]string {
	out := make(map[string]string, len(in)+8)
	for k, v := range in {
		if !f.Drops(k) {
			out[k] = v
		}
	}
	return out
}
