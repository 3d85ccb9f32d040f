package instrumentation

import (
	"fmt"
	"strings"
)

// Annotations besides inject-<language> that steer an injection, on the pod or its namespace
// (the pod's value wins, as for the inject annotations).
const (
	// ContainerNamesAnnotation lists, comma-separated, the containers every requested language
	// is injected into. Without it (and without a per-language list) the first container is.
	ContainerNamesAnnotation = AnnotationPrefix + "container-names"
	// PythonPlatformAnnotation selects the Python build: "glibc" (default) or "musl".
	PythonPlatformAnnotation = AnnotationPrefix + "otel-python-platform"
	// DotNetRuntimeAnnotation selects the C library of the .NET profiler's build: "linux-x64"
	// (glibc, the default) or "linux-musl-x64". The arm64 build of either is used when the pod's
	// spec allows only arm64 nodes.
	DotNetRuntimeAnnotation = AnnotationPrefix + "otel-dotnet-auto-runtime"
	// GoTargetExeAnnotation is the path of the executable the Go agent instruments
	// (OTEL_GO_AUTO_TARGET_EXE).
	GoTargetExeAnnotation = AnnotationPrefix + "otel-go-auto-target-exe"
)

// ContainerNamesAnnotationOf is the per-language container list, read with multi-instrumentation
// on: <language>-container-names, except nginx, whose key upstream spells
// inject-nginx-container-names.
func ContainerNamesAnnotationOf(lang Language) string {
	if lang == Nginx {
		return AnnotationPrefix + "inject-nginx-container-names"
	}
	return AnnotationPrefix + string(lang) + "-container-names"
}

// Options are the operator-wide switches of auto-instrumentation (upstream's
// --enable-<language>-instrumentation and --enable-multi-instrumentation flags).
type Options struct {
	// Disabled languages are not injected; a pod asking for one gets a warning. sdk cannot be
	// disabled.
	Disabled map[Language]bool
	// MultiInstrumentation allows several languages in one pod, each in its own containers
	// named by <language>-container-names.
	MultiInstrumentation bool
}

// DefaultOptions are upstream's defaults: every language but Go and nginx enabled,
// multi-instrumentation on.
func DefaultOptions() Options {
	return Options{Disabled: map[Language]bool{Go: true, Nginx: true}, MultiInstrumentation: true}
}

// Enabled reports whether lang may be injected.
func (o Options) Enabled(lang Language) bool { return lang == SDK || !o.Disabled[lang] }

// DisabledMessage says why a request for lang was refused.
func DisabledMessage(lang Language) string {
	return fmt.Sprintf("support for %s auto-instrumentation is not enabled in the operator (--enable-%s-instrumentation)", lang, lang)
}

// ParseContainerNames reads a container-names annotation value: names separated by commas, each
// of letters, digits and '-' (upstream's rule). Empty items are dropped; an empty value is an
// empty list.
func ParseContainerNames(key, value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var out []string
	for _, name := range strings.Split(value, ",") {
		if name == "" {
			continue
		}
		for _, r := range name {
			if !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return nil, fmt.Errorf("%s=%q: container names are letters, digits and '-', separated by ','", key, value)
			}
		}
		out = append(out, name)
	}
	return out, nil
}
