package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
)

const (
	timeout = 60 * time.Second
	poll    = 100 * time.Millisecond
)

// newG is a gomega with the package's Eventually defaults.
func newG(t *testing.T) *WithT {
	g := NewWithT(t)
	g.SetDefaultEventuallyTimeout(timeout)
	g.SetDefaultEventuallyPollingInterval(poll)
	g.SetDefaultConsistentlyPollingInterval(poll)
	return g
}

// readyCondition returns the Ready condition of the OtelOperator key, or nil.
func readyCondition(g Gomega, ctx context.Context, key client.ObjectKey) (*spv1alpha1.OtelOperator, *metav1.Condition) {
	o := &spv1alpha1.OtelOperator{}
	g.Expect(world.Onboarding.Client.Get(ctx, key, o)).To(Succeed())
	return o, meta.FindStatusCondition(o.Status.Conditions, spv1alpha1.ConditionReady)
}

// expectStatus waits for phase and reason, and a message containing msg.
func expectStatus(t *testing.T, ctx context.Context, key client.ObjectKey, phase spv1alpha1.Phase, reason, msg string) *spv1alpha1.OtelOperator {
	t.Helper()
	g := newG(t)
	var out *spv1alpha1.OtelOperator
	g.Eventually(func(g Gomega) { out = checkStatus(g, ctx, key, phase, reason, msg) }).Should(Succeed())
	return out
}

// checkStatus checks once that the OtelOperator key has phase and reason, and a message
// containing msg, and returns it.
func checkStatus(g Gomega, ctx context.Context, key client.ObjectKey, phase spv1alpha1.Phase, reason, msg string) *spv1alpha1.OtelOperator {
	o, c := readyCondition(g, ctx, key)
	g.Expect(c).NotTo(BeNil())
	g.Expect(o.Status.Phase).To(Equal(phase), c.Message)
	g.Expect(c.Reason).To(Equal(reason), c.Message)
	g.Expect(c.Message).To(ContainSubstring(msg))
	return o
}

// expectEvent waits for an event on the OtelOperator with the type and reason, naming msg.
func expectEvent(t *testing.T, ctx context.Context, key client.ObjectKey, typ, reason, msg string) {
	t.Helper()
	g := newG(t)
	g.Eventually(func(g Gomega) {
		var list corev1.EventList
		g.Expect(world.Onboarding.Client.List(ctx, &list, client.InNamespace(key.Namespace))).To(Succeed())
		found := false
		for _, e := range list.Items {
			if e.InvolvedObject.Name == key.Name && e.Type == typ && e.Reason == reason && (msg == "" || contains(e.Message, msg)) {
				found = true
			}
		}
		g.Expect(found).To(BeTrue(), "event %s %s %q", typ, reason, msg)
	}).Should(Succeed())
}

// eventCount counts the events of the OtelOperator, including repeats folded into one Event.
func eventCount(g Gomega, ctx context.Context, key client.ObjectKey) int {
	var list corev1.EventList
	g.Expect(world.Onboarding.Client.List(ctx, &list, client.InNamespace(key.Namespace))).To(Succeed())
	n := 0
	for _, e := range list.Items {
		if e.InvolvedObject.Name != key.Name {
			continue
		}
		n += max(int(e.Count), 1)
		if e.Series != nil {
			n += int(e.Series.Count)
		}
	}
	return n
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && indexOf(s, sub) >= 0)
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// markFluxReady sets Ready=True on every Flux object in ns that does not already say so for its
// current generation, as source- and helm-controller would.
func markFluxReady(g Gomega, ctx context.Context, ns string) {
	c := world.Platform.Client
	ready := func(gen int64) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: metav1.ConditionTrue, Reason: "Succeeded", Message: "flux says ready", ObservedGeneration: gen, LastTransitionTime: metav1.Now()}}
	}
	done := func(conds []metav1.Condition, gen int64) bool {
		r := meta.FindStatusCondition(conds, "Ready")
		return len(conds) == 1 && r != nil && r.Status == metav1.ConditionTrue && r.ObservedGeneration == gen
	}
	var repos sourcev1.OCIRepositoryList
	g.Expect(c.List(ctx, &repos, client.InNamespace(ns))).To(Succeed())
	tags := map[string]string{}
	for i := range repos.Items {
		r := &repos.Items[i]
		if r.Spec.Reference != nil {
			tags[r.Name] = r.Spec.Reference.Tag
		}
		if !done(r.Status.Conditions, r.Generation) {
			r.Status.Conditions = ready(r.Generation)
			g.Expect(c.Status().Update(ctx, r)).To(Succeed())
		}
	}
	var hrs helmv2.HelmReleaseList
	g.Expect(c.List(ctx, &hrs, client.InNamespace(ns))).To(Succeed())
	for i := range hrs.Items {
		h := &hrs.Items[i]
		// As helm-controller records a chart from an OCIRepository: the tag's version with the
		// artifact digest's first 12 hex digits as build metadata.
		version := ""
		if h.Spec.ChartRef != nil {
			version = tags[h.Spec.ChartRef.Name] + "+0123456789ab"
		}
		latest := h.Status.History.Latest()
		if !done(h.Status.Conditions, h.Generation) || latest == nil || latest.ChartVersion != version {
			h.Status.Conditions = ready(h.Generation)
			h.Status.History = helmv2.Snapshots{deployedSnapshot(h, version)}
			g.Expect(c.Status().Update(ctx, h)).To(Succeed())
		}
	}
}

// deployedSnapshot is the history entry helm-controller writes for a deployed release of h.
func deployedSnapshot(h *helmv2.HelmRelease, chartVersion string) *helmv2.Snapshot {
	now := metav1.Now()
	return &helmv2.Snapshot{
		Name: h.GetReleaseName(), Namespace: h.GetReleaseNamespace(), Version: 1, Status: "deployed",
		ChartName: "opentelemetry-kube-stack", ChartVersion: chartVersion, Digest: "sha256:0", ConfigDigest: "sha256:0",
		FirstDeployed: now, LastDeployed: now,
	}
}

// expectReadyWithFlux plays Flux in platformNS (every new generation of a Flux object is marked
// ready, as the real controllers would observe it) until the OtelOperator key is Ready with a
// message containing msg. Marking Flux once and then waiting races the provider: a change it
// writes a moment later gives a HelmRelease a generation nobody would ever observe.
func expectReadyWithFlux(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS, msg string) *spv1alpha1.OtelOperator {
	t.Helper()
	g := newG(t)
	var out *spv1alpha1.OtelOperator
	g.Eventually(func(g Gomega) {
		markFluxReady(g, ctx, platformNS)
		o, c := readyCondition(g, ctx, key)
		g.Expect(c).NotTo(BeNil())
		g.Expect(o.Status.Phase).To(Equal(spv1alpha1.PhaseReady), c.Message)
		g.Expect(c.Reason).To(Equal(spv1alpha1.ReasonReconcileSuccess), c.Message)
		g.Expect(c.Message).To(ContainSubstring(msg))
		out = o
	}).Should(Succeed())
	return out
}

// operatorConfig is what the workload operator's client-go builds from the kubeconfig Secret as
// mounted by the kubelet: the Secret's keys become files in dir, and the kubeconfig's tokenFile is
// pointed at dir (the mount path in a pod).
func operatorConfig(g Gomega, secret *corev1.Secret, dir string) *rest.Config {
	writeMount(g, secret, dir)
	kc, err := clientcmd.Load(secret.Data["kubeconfig"])
	g.Expect(err).NotTo(HaveOccurred())
	for _, a := range kc.AuthInfos {
		g.Expect(a.Token).To(BeEmpty())
		a.TokenFile = filepath.Join(dir, "token")
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, nil).ClientConfig()
	g.Expect(err).NotTo(HaveOccurred())
	return cfg
}

// writeMount updates the files as the kubelet does for a Secret volume.
func writeMount(g Gomega, secret *corev1.Secret, dir string) {
	for k, v := range secret.Data {
		g.Expect(os.WriteFile(filepath.Join(dir, k+".tmp"), v, 0o600)).To(Succeed())
		g.Expect(os.Rename(filepath.Join(dir, k+".tmp"), filepath.Join(dir, k))).To(Succeed())
	}
}

// expireToken makes the provider think the operator's token is about to expire. A reconcile that
// read the Secret just before this update applies it back with the old expiry, so callers re-expire
// until they see the rotation (expireIfFresh).
func expireToken(g Gomega, ctx context.Context, c client.Client, key client.ObjectKey) {
	s := &corev1.Secret{}
	g.Expect(c.Get(ctx, key, s)).To(Succeed())
	s.Annotations[cpaccess.ExpiresAnnotation] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	g.Expect(c.Update(ctx, s)).To(Succeed())
}

// expireIfFresh expires the token in s again when its expiry is still in the future: a concurrent
// reconcile overwrote the test's update. Conflicts are left to the next poll.
func expireIfFresh(ctx context.Context, c client.Client, s *corev1.Secret) {
	exp, err := time.Parse(time.RFC3339, s.Annotations[cpaccess.ExpiresAnnotation])
	if err != nil || exp.Before(time.Now()) {
		return
	}
	s = s.DeepCopy()
	s.Annotations[cpaccess.ExpiresAnnotation] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	_ = c.Update(ctx, s)
}
