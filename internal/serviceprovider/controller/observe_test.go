package controller

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
)

func TestFluxPhase(t *testing.T) {
	c := func(typ string, s metav1.ConditionStatus, msg string, gen int64) metav1.Condition {
		return metav1.Condition{Type: typ, Status: s, Message: msg, ObservedGeneration: gen}
	}
	tests := []struct {
		name    string
		conds   []metav1.Condition
		gen     int64
		want    spv1alpha1.ResourcePhase
		wantMsg string
	}{
		{"no conditions", nil, 1, spv1alpha1.ResourceProgressing, "waiting for Flux to report readiness"},
		{"ready", []metav1.Condition{c("Ready", "True", "done", 2)}, 2, spv1alpha1.ResourceReady, "done"},
		{"ready for an older generation", []metav1.Condition{c("Ready", "True", "done", 1)}, 2, spv1alpha1.ResourceProgressing, "waiting for Flux to observe the latest generation"},
		{"stalled", []metav1.Condition{c("Ready", "False", "", 1), c("Stalled", "True", "retries exhausted", 1)}, 1, spv1alpha1.ResourceFailed, "retries exhausted"},
		{"reconciling message", []metav1.Condition{c("Ready", "Unknown", "", 1), c("Reconciling", "True", "installing", 1)}, 1, spv1alpha1.ResourceProgressing, "installing"},
		{"ready message wins", []metav1.Condition{c("Ready", "False", "pull failed", 1), c("Reconciling", "True", "installing", 1)}, 1, spv1alpha1.ResourceProgressing, "pull failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			phase, msg := fluxPhase(tt.conds, tt.gen)
			g.Expect(phase).To(Equal(tt.want))
			g.Expect(msg).To(Equal(tt.wantMsg))
		})
	}
}

func TestSummary(t *testing.T) {
	g := NewWithT(t)
	ready := spv1alpha1.ManagedResource{Kind: "Secret", Name: "a", Namespace: "n", Phase: spv1alpha1.ResourceReady, Location: spv1alpha1.LocationWorkloadCluster}
	msg, ok := summary([]spv1alpha1.ManagedResource{ready})
	g.Expect(ok).To(BeTrue())
	g.Expect(msg).To(BeEmpty())
	hr := spv1alpha1.ManagedResource{Kind: "HelmRelease", Name: "cp-workload", Namespace: "mcp--x", Phase: spv1alpha1.ResourceFailed, Message: "boom", Location: spv1alpha1.LocationPlatformCluster}
	msg, ok = summary([]spv1alpha1.ManagedResource{ready, hr})
	g.Expect(ok).To(BeFalse())
	g.Expect(msg).To(Equal("HelmRelease mcp--x/cp-workload in the PlatformCluster is Failed: boom"))
}

// A HelmRelease Flux gave up on (Stalled: phase Failed) makes the whole instance Failed with Flux's
// message; any other resource that is not ready keeps it Progressing.
func TestFailedRelease(t *testing.T) {
	g := NewWithT(t)
	hr := spv1alpha1.ManagedResource{Kind: "HelmRelease", Name: "cp-workload", Namespace: "mcp--x", Phase: spv1alpha1.ResourceFailed, Message: "install retries exhausted", Location: spv1alpha1.LocationPlatformCluster}
	msg, failed := failedRelease([]spv1alpha1.ManagedResource{hr})
	g.Expect(failed).To(BeTrue())
	g.Expect(msg).To(And(ContainSubstring("HelmRelease mcp--x/cp-workload"), ContainSubstring("install retries exhausted"), ContainSubstring("openmcp.cloud/operation=reconcile")))
	hr.Phase = spv1alpha1.ResourceProgressing
	_, failed = failedRelease([]spv1alpha1.ManagedResource{hr, {Kind: "Secret", Phase: spv1alpha1.ResourceFailed}})
	g.Expect(failed).To(BeFalse())
}

// A HelmRelease Flux reports Ready counts only once its latest Helm release is deployed from
// the chart version asked for: Ready with the old chart (spec.version just changed, the upgrade
// not yet run) or before the first install is Progressing, naming both versions.
func TestReleasePhase(t *testing.T) {
	hr := func(history ...*helmv2.Snapshot) *helmv2.HelmRelease {
		return &helmv2.HelmRelease{Status: helmv2.HelmReleaseStatus{History: history}}
	}
	snap := func(rev int, version, status string) *helmv2.Snapshot {
		return &helmv2.Snapshot{Version: rev, ChartVersion: version, Status: status}
	}
	tests := []struct {
		name    string
		hr      *helmv2.HelmRelease
		phase   spv1alpha1.ResourcePhase
		want    spv1alpha1.ResourcePhase
		wantMsg string
	}{
		{"old chart, Flux Ready", hr(snap(1, "1.0.0+0123456789ab", "deployed")), spv1alpha1.ResourceReady,
			spv1alpha1.ResourceProgressing, "upgrading to chart version 2.0.0 (installed 1.0.0)"},
		{"new chart, Flux Ready", hr(snap(2, "2.0.0+0123456789ab", "deployed"), snap(1, "1.0.0+ba9876543210", "superseded")), spv1alpha1.ResourceReady,
			spv1alpha1.ResourceReady, "flux message"},
		{"history out of order: the highest release counts", hr(snap(1, "1.0.0+ba9876543210", "superseded"), snap(2, "2.0.0+0123456789ab", "deployed")), spv1alpha1.ResourceReady,
			spv1alpha1.ResourceReady, "flux message"},
		{"rolled back to the old chart", hr(snap(3, "1.0.0+ba9876543210", "deployed"), snap(2, "2.0.0+0123456789ab", "failed")), spv1alpha1.ResourceReady,
			spv1alpha1.ResourceProgressing, "upgrading to chart version 2.0.0 (installed 1.0.0)"},
		{"new chart, not deployed", hr(snap(2, "2.0.0+0123456789ab", "pending-upgrade")), spv1alpha1.ResourceReady,
			spv1alpha1.ResourceProgressing, "chart version 2.0.0 is not deployed yet"},
		{"no history", hr(), spv1alpha1.ResourceReady, spv1alpha1.ResourceProgressing, "installing chart version 2.0.0"},
		{"Flux not Ready keeps its phase and message", hr(snap(1, "1.0.0", "deployed")), spv1alpha1.ResourceFailed,
			spv1alpha1.ResourceFailed, "flux message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			phase, msg := releasePhase(tt.hr, "2.0.0", tt.phase, "flux message")
			g.Expect(phase).To(Equal(tt.want))
			g.Expect(msg).To(Equal(tt.wantMsg))
		})
	}
}
