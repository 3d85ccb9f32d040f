package collectorconfig

import "strings"

// Kind is the kind of a collector component.
type Kind int

const (
	// KindReceiver is a component under receivers.
	KindReceiver Kind = iota
	// KindProcessor is a component under processors.
	KindProcessor
	// KindExporter is a component under exporters.
	KindExporter
	// KindConnector is a component under connectors; it acts as an exporter in one pipeline and a
	// receiver in another.
	KindConnector
	// KindExtension is a component under extensions.
	KindExtension

	numKinds = 5
)

// Kinds lists every component kind in the order the config sections are processed.
var Kinds = []Kind{KindReceiver, KindProcessor, KindExporter, KindConnector, KindExtension}

// String returns the singular name of the kind, e.g. "receiver".
func (k Kind) String() string {
	switch k {
	case KindReceiver:
		return "receiver"
	case KindProcessor:
		return "processor"
	case KindExporter:
		return "exporter"
	case KindConnector:
		return "connector"
	case KindExtension:
		return "extension"
	}
	return "unknown"
}

// Section returns the top-level config key that holds components of this kind, e.g. "receivers".
func (k Kind) Section() string {
	return k.String() + "s"
}

// SplitID splits a component or pipeline id of the form "type[/name]" into its type and name.
// The name is empty when the id has no "/".
func SplitID(id string) (typ, name string) {
	typ, name, _ = strings.Cut(id, "/")
	return typ, name
}

// ComponentType returns the type part of a component id of the form "type[/name]".
func ComponentType(id string) string {
	typ, _ := SplitID(id)
	return typ
}

// Signals lists the pipeline signal types the collector accepts.
var Signals = []string{"traces", "metrics", "logs", "profiles"}

func isSignal(s string) bool {
	for _, v := range Signals {
		if v == s {
			return true
		}
	}
	return false
}

// validID reports why a component id is not of the form the collector accepts, or "" when it is.
// The type must start with a letter and contain only letters, digits and '_' (at most 63 characters);
// the name, when present, must be non-empty and contain no whitespace, control characters or '/'.
func validID(id string) string {
	typ, name, hasName := strings.Cut(id, "/")
	if typ == "" {
		return "the type before '/' must not be empty"
	}
	if len(typ) > 63 {
		return "the type must be at most 63 characters"
	}
	for i, r := range typ {
		letter := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if i == 0 && !letter {
			return "the type must start with a letter"
		}
		if !letter && !(r >= '0' && r <= '9') && r != '_' {
			return "the type may contain only letters, digits and '_'"
		}
	}
	if hasName {
		if name == "" {
			return "the name after '/' must not be empty"
		}
		for _, r := range name {
			if r <= ' ' || r == 0x7f || r == '/' {
				return "the name must not contain whitespace, control characters or '/'"
			}
		}
	}
	return ""
}
