package instrumentation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// InjectedAnnotation is set by the pod webhook on every pod it instrumented. Its value lists,
// sorted by language, what was injected and from which generation of which Instrumentation:
//
//	java=apps/my-instr@3,python=apps/my-instr@3
//
// Upstream sets no such record; the catch-up controller needs it to tell, from pod metadata alone,
// a pod that got its injection (and whether it is current) from one that missed it.
const InjectedAnnotation = "otelop.io/instrumented"

// Injected is one language injected into a pod.
type Injected struct {
	Language        Language
	Instrumentation types.NamespacedName
	Generation      int64
}

// FormatInjected returns the InjectedAnnotation value for list, sorted by language.
func FormatInjected(list []Injected) string {
	parts := make([]string, 0, len(list))
	for _, in := range list {
		parts = append(parts, fmt.Sprintf("%s=%s/%s@%d", in.Language, in.Instrumentation.Namespace, in.Instrumentation.Name, in.Generation))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// ParseInjected reads an InjectedAnnotation value. An empty value is an empty list.
func ParseInjected(value string) ([]Injected, error) {
	var out []Injected
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	for _, part := range strings.Split(value, ",") {
		lang, rest, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || lang == "" {
			return nil, fmt.Errorf("%s: %q is not <language>=<namespace>/<name>@<generation>", InjectedAnnotation, part)
		}
		ref, gen, ok := strings.Cut(rest, "@")
		ns, name, okRef := strings.Cut(ref, "/")
		g, err := strconv.ParseInt(gen, 10, 64)
		if !ok || !okRef || ns == "" || name == "" || err != nil {
			return nil, fmt.Errorf("%s: %q is not <language>=<namespace>/<name>@<generation>", InjectedAnnotation, part)
		}
		out = append(out, Injected{Language: Language(lang), Instrumentation: types.NamespacedName{Namespace: ns, Name: name}, Generation: g})
	}
	return out, nil
}
