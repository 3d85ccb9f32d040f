package manifestutils

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelop/otelop/internal/naming"
)

// Well-known label keys and values of the generated objects.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelPartOf    = "app.kubernetes.io/part-of"
	LabelComponent = "app.kubernetes.io/component"
	LabelName      = "app.kubernetes.io/name"
	LabelVersion   = "app.kubernetes.io/version"

	// LabelTargetAllocator on a collector names the standalone TargetAllocator (in its namespace)
	// the collector takes its Prometheus targets from.
	LabelTargetAllocator = "opentelemetry.io/target-allocator"

	// ManagedBy is the value of app.kubernetes.io/managed-by.
	ManagedBy = "opentelemetry-operator"
	// PartOf is the value of app.kubernetes.io/part-of.
	PartOf = "opentelemetry"
	// ComponentCollector is the value of app.kubernetes.io/component for collector objects.
	ComponentCollector = "opentelemetry-collector"
)

// SelectorLabels returns the labels that select the pods of an operand: managed-by, instance
// (<namespace>.<name>), part-of and component.
func SelectorLabels(meta metav1.ObjectMeta, component string) map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelInstance:  naming.Instance(meta.Namespace, meta.Name),
		LabelPartOf:    PartOf,
		LabelComponent: component,
	}
}

// Labels returns the labels of a generated object named name: the custom resource's labels that
// filter keeps, the selector labels, app.kubernetes.io/version from the tag of image ("latest"
// without one) and app.kubernetes.io/name=name unless the resource already sets that label.
func Labels(meta metav1.ObjectMeta, name, image, component string, filter Filter) map[string]string {
	out := filter.Apply(meta.Labels)
	for k, v := range SelectorLabels(meta, component) {
		out[k] = v
	}
	out[LabelVersion] = VersionLabel(image)
	if _, ok := out[LabelName]; !ok {
		out[LabelName] = name
	}
	return out
}

// VersionLabel returns the app.kubernetes.io/version value upstream derives from an image
// reference: the tag of "repo:tag", the tag before "@sha256" of "repo:tag@sha256:digest", "latest"
// otherwise. It is at most 63 characters long.
func VersionLabel(image string) string {
	parts := strings.Split(image, ":")
	switch len(parts) {
	case 3:
		for _, p := range parts {
			if v, ok := strings.CutSuffix(p, "@sha256"); ok {
				return v
			}
		}
		return ""
	case 2:
		return naming.Truncate("%s", 63, parts[1])
	default:
		return "latest"
	}
}
