package instrumentation

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	// GoInAnyNamespace injects the Go agent (a privileged container running as root) into pods
	// of any namespace, as upstream does. Without it only namespaces labelled
	// GoAgentNamespaceLabel=true get it.
	GoInAnyNamespace bool
}

// GoAgentNamespaceLabel is the label an administrator sets to "true" on a namespace whose pods may
// get the Go agent. The agent is a privileged container running as root with the node's
// /sys/kernel/debug mounted, and a pod's own annotation (or an Instrumentation, which a tenant may
// write) must not be enough to get one: namespaces are cluster-scoped, so a tenant who may only
// write inside its namespace cannot set this label.
const GoAgentNamespaceLabel = "otelop.io/allow-privileged-go-agent"

// GoAllowedIn reports whether pods of namespace ns may get the Go agent under o.
func (o Options) GoAllowedIn(ns metav1.ObjectMeta) bool {
	return o.GoInAnyNamespace || ns.Labels[GoAgentNamespaceLabel] == "true"
}

// GoNotAllowedMessage says why the Go agent was not injected into a pod of namespace ns.
func GoNotAllowedMessage(ns string) string {
	return fmt.Sprintf("the Go agent runs as a privileged root container, which namespace %q has not allowed (an administrator labels the namespace %s=true)",
		ns, GoAgentNamespaceLabel)
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
