package collector

import (
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/naming"
)

func TestClusterObjectOwnership(t *testing.T) {
	col := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "otel-prod", UID: "u1"}}
	other := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "prod-team", Name: "otel", UID: "u2"}}
	role := func(name string, labels, ann map[string]string) *rbacv1.ClusterRole {
		return &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: ann}}
	}
	name := naming.ClusterRole(col.Name, col.Namespace)
	if name != naming.ClusterRole(other.Name, other.Namespace) {
		t.Fatal("the example must collide")
	}
	managed := func(inst string) map[string]string {
		return map[string]string{ManagedByLabel: ManagedByValue, InstanceLabel: inst}
	}
	ours := role(name, managed("team.otel-prod"), nil)
	setClusterOwner(ours, col)
	for _, tc := range []struct {
		what string
		obj  *rbacv1.ClusterRole
		col  *v1beta1.OpenTelemetryCollector
		want bool
	}{
		{"annotated for the collector", ours, col, true},
		{"annotated for another collector", ours, other, false},
		{"upstream object: label and name match", role(name, managed("team.otel-prod"), nil), col, true},
		{"upstream object of the other collector", role(name, managed("team.otel-prod"), nil), other, false},
		{"upstream object with a foreign name", role("admin", managed("team.otel-prod"), nil), col, false},
		{"not managed by the operator", role(name, map[string]string{InstanceLabel: "team.otel-prod"}, nil), col, false},
		{"forged label, annotation names someone else", role(name, managed("team.otel-prod"), map[string]string{apply.OwnerAnnotation: "OpenTelemetryCollector/x/y"}), col, false},
	} {
		if got := ownsClusterObject(tc.obj, tc.col); got != tc.want {
			t.Errorf("%s: ownsClusterObject = %v, want %v", tc.what, got, tc.want)
		}
	}

	// A truncated instance label names no collector for sure: such an object without the owner
	// annotation is not owned, and adopted only as a ClusterRoleBinding with the same subjects.
	prefix := strings.Repeat("n", 61)
	nsA, nsB := prefix+"a", prefix+"b"
	colA := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsA, Name: "a"}}
	colB := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: nsB, Name: "a"}}
	truncated := managed(naming.Instance(nsA, "a"))
	if truncated[InstanceLabel] != naming.Instance(nsB, "a") || naming.ClusterRole("a", nsA) != naming.ClusterRole("a", nsB) {
		t.Fatal("the truncated example must collide")
	}
	upstreamRole := role(naming.ClusterRole("a", nsA), truncated, nil)
	for _, c := range []*v1beta1.OpenTelemetryCollector{colA, colB} {
		if ownsClusterObject(upstreamRole, c) {
			t.Errorf("a truncated label is owned by %s/%s", c.Namespace, c.Name)
		}
	}
	binding := func(col *v1beta1.OpenTelemetryCollector, subjectNS string) *rbacv1.ClusterRoleBinding {
		b := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: naming.ClusterRoleBinding("a", nsA), Labels: truncated},
			Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: subjectNS, Name: "a-collector"}}}
		if col != nil {
			setClusterOwner(b, col)
		}
		return b
	}
	desiredRole := role(upstreamRole.Name, truncated, nil)
	setClusterOwner(desiredRole, colB)
	for _, tc := range []struct {
		what          string
		desired, live client.Object
		want          bool
	}{
		{"truncated ClusterRole of another tenant", desiredRole, upstreamRole, false},
		{"truncated binding of another tenant's ServiceAccount", binding(colB, nsB), binding(nil, nsA), false},
		{"truncated binding of the collector's own ServiceAccount", binding(colB, nsB), binding(nil, nsB), true},
		{"untruncated label of the collector", func() client.Object {
			d := role(name, managed("team.otel-prod"), nil)
			setClusterOwner(d, col)
			return d
		}(),
			role(name, managed("team.otel-prod"), nil), true},
	} {
		if tc.live.GetAnnotations() != nil {
			delete(tc.live.GetAnnotations(), apply.OwnerAnnotation)
			delete(tc.live.GetAnnotations(), apply.OwnerUIDAnnotation)
		}
		if got := Adoptable(tc.desired, tc.live); got != tc.want {
			t.Errorf("%s: Adoptable = %v, want %v", tc.what, got, tc.want)
		}
	}

	// Events on the object map to the collector the annotation names, even when the truncated
	// label would point elsewhere.
	long := role("x", managed(naming.Instance("team", "a-very-long-collector-name-that-truncates-the-namespace-label")), nil)
	setClusterOwner(long, &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "team", Name: "a-very-long-collector-name-that-truncates-the-namespace-label"}})
	reqs := requestFromInstance(long)
	want := types.NamespacedName{Namespace: "team", Name: "a-very-long-collector-name-that-truncates-the-namespace-label"}
	if len(reqs) != 1 || reqs[0].NamespacedName != want {
		t.Errorf("requestFromInstance = %v, want %v", reqs, want)
	}
}
