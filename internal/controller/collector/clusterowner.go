package collector

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/naming"
)

// Cluster-scoped RBAC cannot carry an owner reference, and its names (<name>-<namespace>-...) and
// instance label (<namespace>.<name>, truncated to 63 characters by cutting the namespace first)
// are not unique: "otel-prod" in "team" and "otel" in "prod-team" get the same ClusterRole name,
// and two long names can share a label. The controller therefore records the owning collector in
// apply.OwnerAnnotation and treats a cluster-scoped object as the collector's only when that
// annotation names it. Objects without the annotation (created by upstream or an earlier version)
// are the collector's when their name is one it generates and their instance label is its
// "<namespace>.<name>" in full: a label truncated to 63 characters names no collector for sure, so
// such an object is neither adopted nor pruned nor deleted, except a ClusterRoleBinding whose
// subjects are exactly the collector's (they carry the ServiceAccount's namespace and name in full).

const ownerKind = "OpenTelemetryCollector"

// ownerValue is the apply.OwnerAnnotation value of otelcol's cluster-scoped objects.
func ownerValue(otelcol *v1beta1.OpenTelemetryCollector) string {
	return ownerKind + "/" + otelcol.Namespace + "/" + otelcol.Name
}

// setClusterOwner records otelcol as the owner of the cluster-scoped object obj.
func setClusterOwner(obj client.Object, otelcol *v1beta1.OpenTelemetryCollector) {
	ann := obj.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[apply.OwnerAnnotation] = ownerValue(otelcol)
	ann[apply.OwnerUIDAnnotation] = string(otelcol.UID)
	obj.SetAnnotations(ann)
}

// ownsClusterObject reports whether the cluster-scoped object o belongs to otelcol.
func ownsClusterObject(o client.Object, otelcol *v1beta1.OpenTelemetryCollector) bool {
	if owner, ok := o.GetAnnotations()[apply.OwnerAnnotation]; ok {
		return owner == ownerValue(otelcol)
	}
	if o.GetLabels()[ManagedByLabel] != ManagedByValue || o.GetLabels()[InstanceLabel] != fullInstance(otelcol.Namespace, otelcol.Name) {
		return false
	}
	name := o.GetName()
	return name == naming.ClusterRole(otelcol.Name, otelcol.Namespace) || name == naming.ClusterRoleBinding(otelcol.Name, otelcol.Namespace)
}

// ownershipConflict is a desired object that exists and belongs to someone else.
type ownershipConflict struct {
	kind, namespace, name, owner string
}

func (c ownershipConflict) Error() string {
	name := c.name
	if c.namespace != "" {
		name = c.namespace + "/" + c.name
	}
	return fmt.Sprintf("%s %q already exists and belongs to %s; the operator does not take it over "+
		"(rename this collector, or delete the other object if it is stale)", c.kind, name, c.owner)
}

// Adoptable is the collector applier's apply.Applier.Adoptable: whether an object that exists
// under a desired object's name (the applier's create of it failed) may be taken over. It may
// when it is the same owner's (apply.SameOwner: the collector's controller reference, or for a
// cluster-scoped object the owner annotation naming the collector), or when it is a cluster-scoped
// object without that annotation that upstream's operator or an earlier version made for the same
// collector: its managed-by label is set and its instance label is the collector's
// "<namespace>.<name>" in full (and so is its name, or the create would not have failed; see
// ownsClusterObject). A truncated instance label may be another collector's (upstream names two
// collectors' objects alike once "<namespace>.<name>" passes 63 characters); only a
// ClusterRoleBinding whose subjects are the desired ones is adopted then. Anything else is someone else's: forced
// server-side apply would take it over (or, for an immutable field, delete it), so the collector
// is reported Stalled with reason OwnershipConflict instead.
func Adoptable(desired, live client.Object) bool {
	if apply.SameOwner(desired, live) {
		return true
	}
	if desired.GetNamespace() != "" {
		return false
	}
	if _, annotated := live.GetAnnotations()[apply.OwnerAnnotation]; annotated {
		return false
	}
	want, have := desired.GetLabels(), live.GetLabels()
	if have[ManagedByLabel] != ManagedByValue || want[InstanceLabel] == "" || have[InstanceLabel] != want[InstanceLabel] {
		return false
	}
	// The labels match; they identify the collector only when not truncated.
	ns, name, ok := parseOwner(desired.GetAnnotations()[apply.OwnerAnnotation])
	if !ok {
		return false
	}
	if have[InstanceLabel] == fullInstance(ns, name) {
		return true
	}
	return sameSubjects(desired, live)
}

// fullInstance is the untruncated instance label of collector namespace/name: an object labelled
// with it names that collector and no other. When "<namespace>.<name>" is longer than a label
// value may be, it returns "" (no label equals it).
func fullInstance(namespace, name string) string {
	v := namespace + "." + name
	if v != naming.Instance(namespace, name) {
		return ""
	}
	return v
}

// parseOwner splits an apply.OwnerAnnotation value "OpenTelemetryCollector/<namespace>/<name>".
func parseOwner(owner string) (namespace, name string, ok bool) {
	parts := strings.Split(owner, "/")
	if len(parts) != 3 || parts[0] != ownerKind || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[1], parts[2], true
}

// sameSubjects reports whether desired and live are ClusterRoleBindings with the same non-empty
// subjects (kind, namespace and name, in full).
func sameSubjects(desired, live client.Object) bool {
	want, have := subjectsOf(desired), subjectsOf(live)
	return len(want) > 0 && slices.Equal(want, have)
}

// subjectsOf returns the subjects of a ClusterRoleBinding, typed or unstructured, as
// "<kind>/<namespace>/<name>" in order; nil for other objects.
func subjectsOf(o client.Object) []string {
	var out []string
	switch b := o.(type) {
	case *rbacv1.ClusterRoleBinding:
		for _, s := range b.Subjects {
			out = append(out, s.Kind+"/"+s.Namespace+"/"+s.Name)
		}
	case *unstructured.Unstructured:
		if b.GetKind() != "ClusterRoleBinding" {
			return nil
		}
		items, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		for _, it := range items {
			m, _ := it.(map[string]any)
			kind, _, _ := unstructured.NestedString(m, "kind")
			ns, _, _ := unstructured.NestedString(m, "namespace")
			name, _, _ := unstructured.NestedString(m, "name")
			out = append(out, kind+"/"+ns+"/"+name)
		}
	}
	return out
}

// conflictOf returns the ownershipConflict that err (from the applier) carries, if any.
func conflictOf(err error) (ownershipConflict, bool) {
	var taken *apply.OwnershipError
	if !errors.As(err, &taken) {
		return ownershipConflict{}, false
	}
	return ownershipConflict{kind: taken.Kind, namespace: taken.Namespace, name: taken.Name, owner: taken.Owner}, true
}

// requestFromInstance maps a cluster-scoped object to its collector: by apply.OwnerAnnotation, or,
// for objects without it, by the instance label <ns>.<name> (ambiguous once truncated; a wrong
// guess only costs a reconcile that finds nothing to do).
func requestFromInstance(obj client.Object) []reconcile.Request {
	if obj.GetLabels()[ManagedByLabel] != ManagedByValue {
		return nil
	}
	if owner, ok := obj.GetAnnotations()[apply.OwnerAnnotation]; ok {
		ns, name, ok := parseOwner(owner)
		if !ok {
			return nil
		}
		return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
	}
	ns, name, ok := strings.Cut(obj.GetLabels()[InstanceLabel], ".")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}
