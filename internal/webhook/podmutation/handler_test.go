package podmutation_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// handler returns a Handler reading from the test API server through the manager, as Setup
// wires it, with native sidecars as given.
func handler(t *testing.T, native bool) *podmutation.Handler {
	t.Helper()
	opts := podmutation.Options{Manifests: manifests, Collectors: mgr.GetClient(), APIReader: mgr.GetAPIReader()}
	opts.Manifests.NativeSidecars = native
	h, err := podmutation.New(opts, admission.NewDecoder(scheme))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func request(t testing.TB, pod *corev1.Pod) admission.Request {
	t.Helper()
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:       "1",
		Operation: admissionv1.Create,
		Namespace: pod.Namespace,
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Object:    runtime.RawExtension{Raw: raw},
	}}
}

// TestRegularContainerBefore129: without native sidecars (Kubernetes < 1.29) otc-container is
// appended to the containers, without a restart policy.
func TestRegularContainerBefore129(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "pre-129", nil)
	newCollector(t, ns, "agent", v1beta1.ModeSidecar)
	resp := handler(t, false).Handle(context.Background(), request(t, newPod(ns, "p", map[string]string{podmutation.Annotation: "true"})))
	g.Expect(resp.Allowed).To(BeTrue())
	g.Expect(resp.Warnings).To(BeEmpty())
	var added map[string]any
	for _, p := range resp.Patches {
		g.Expect(p.Path).NotTo(HavePrefix("/spec/initContainers"))
		if p.Path == "/spec/containers/1" {
			added, _ = p.Value.(map[string]any)
		}
	}
	g.Expect(added).To(HaveKeyWithValue("name", naming.Container))
	g.Expect(added).NotTo(HaveKey("restartPolicy"))
	g.Expect(resp.Patches).To(ContainElement(HaveField("Path", "/metadata/labels")))
}

// TestNeverDenies: requests the webhook cannot make sense of are allowed, with a warning when the
// pod asked for a sidecar.
func TestNeverDenies(t *testing.T) {
	h := handler(t, true)
	ctx := context.Background()
	tests := []struct {
		name    string
		req     admission.Request
		warning string
	}{{
		name:    "not a pod",
		req:     admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Create, Object: runtime.RawExtension{Raw: []byte("{")}}},
		warning: "cannot decode the pod",
	}, {
		name:    "namespace that does not exist",
		req:     request(t, newPod("nowhere", "p", map[string]string{podmutation.Annotation: "true"})),
		warning: `reading namespace "nowhere"`,
	}, {
		name: "namespace that does not exist, no annotation",
		req:  request(t, newPod("nowhere", "p", nil)),
	}, {
		// A pod's namespace must exist before any collector is looked up (a forged review can claim
		// any namespace).
		name:    "collector named by a pod of a namespace that does not exist",
		req:     request(t, newPod("nowhere", "p", map[string]string{podmutation.Annotation: "elsewhere/agent"})),
		warning: `reading namespace "nowhere"`,
	}, {
		name: "update",
		req:  admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{Operation: admissionv1.Update}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			resp := h.Handle(ctx, tt.req)
			g.Expect(resp.Allowed).To(BeTrue())
			g.Expect(resp.Patches).To(BeEmpty())
			if tt.warning == "" {
				g.Expect(resp.Warnings).To(BeEmpty())
			} else {
				g.Expect(resp.Warnings).To(ConsistOf(ContainSubstring(tt.warning)))
			}
		})
	}
}

// collectionRead matches a list or watch of the kinds the webhook must not cache, cluster-wide
// or in a namespace: /api/v1/pods, /api/v1/namespaces/x/pods, /apis/apps/v1/replicasets,
// /apis/apps/v1/namespaces/x/deployments, /apis/batch/v1/jobs...
var collectionRead = regexp.MustCompile(`^/api/v1/(pods|namespaces/[^/]+/(pods|secrets|configmaps))\?|^/apis/(apps|batch)/v1/(namespaces/[^/]+/)?(replicasets|deployments|jobs)\?`)

// TestNoInformers: after pods went through every path (namespace annotation, ReplicaSet owner),
// the manager has read ReplicaSets one by one, as metadata, and never listed or watched Pods,
// ReplicaSets, Deployments or Jobs; Namespaces come from a metadata-only watch, collectors and
// Instrumentations from the manager's watch.
func TestNoInformers(t *testing.T) {
	g := NewWithT(t)
	ns := newNamespace(t, "no-informers", map[string]string{podmutation.Annotation: "true"})
	newCollector(t, ns, "agent", v1beta1.ModeSidecar)
	rs := replicaSetOfDeployment(t, ns, "web")
	pod := newPod(ns, "p", nil)
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	got, _ := create(t, pod)
	g.Expect(got.Labels).To(HaveKeyWithValue(sidecar.InjectedLabel, ns+".agent"))

	gets := reads.snapshot()
	for _, r := range gets {
		g.Expect(collectionRead.MatchString(r)).To(BeFalse(), "the manager listed or watched: %s", r)
		if strings.HasPrefix(r, "/api/v1/namespaces?") {
			g.Expect(r).To(HaveSuffix(" [metadata]"), "namespaces are watched as metadata only")
		}
	}
	g.Expect(gets).To(ContainElement(SatisfyAll(HavePrefix("/api/v1/namespaces?"), ContainSubstring("watch=true"))), "namespaces come from a watch")
	g.Expect(gets).NotTo(ContainElement(HavePrefix("/api/v1/namespaces/"+ns+"?")), "the namespace is not read per pod")
	g.Expect(gets).To(ContainElement(SatisfyAll(
		HavePrefix("/apis/apps/v1/namespaces/"+ns+"/replicasets/"+rs.Name+"?"), HaveSuffix(" [metadata]"))))
	g.Expect(gets).To(ContainElement(SatisfyAll(
		HavePrefix("/apis/opentelemetry.io/v1beta1/opentelemetrycollectors?"),
		WithTransform(func(s string) bool { return strings.Contains(s, "watch=true") }, BeTrue()),
	)), "collectors come from the cache")
}
