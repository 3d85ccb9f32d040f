// Package guard finds the users' opentelemetry.io objects in a control plane, which must be gone
// before an OtelOperator may be deleted: deleting the operator (and later the CRDs) would leave
// them unmanaged or delete them.
package guard

import (
	"context"
	"fmt"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// BlockingKinds are every user-facing kind of the OpenTelemetry Operator. Collectors are listed at
// both served versions so either CRD version alone is enough to find them.
var BlockingKinds = []schema.GroupVersionKind{
	{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollector"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "OpenTelemetryCollector"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "Instrumentation"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "OpAMPBridge"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "TargetAllocator"},
}

// Remaining lists the blocking objects in the cluster as "Kind namespace/name", sorted and without
// duplicates (a collector served at two versions counts once). A kind whose CRD is not installed
// is skipped (a list answered 404 means the CRD is gone).
func Remaining(ctx context.Context, c client.Reader) ([]string, error) {
	seen := map[string]bool{}
	for _, gvk := range BlockingKinds {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("listing %s in the control plane: %w", gvk.GroupKind(), err)
		}
		for _, o := range list.Items {
			seen[fmt.Sprintf("%s %s/%s", gvk.Kind, o.Namespace, o.Name)] = true
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out, nil
}

// Message is the status message for remaining objects, listing at most max of them.
func Message(remaining []string, max int) string {
	shown := remaining
	if len(shown) > max {
		shown = shown[:max]
	}
	msg := fmt.Sprintf("waiting for %d opentelemetry.io object(s) in the control plane to be deleted: %s", len(remaining), strings.Join(shown, ", "))
	if len(remaining) > max {
		msg += fmt.Sprintf(" and %d more", len(remaining)-max)
	}
	return msg
}
