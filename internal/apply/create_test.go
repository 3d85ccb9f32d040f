package apply_test

import (
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
)

func creatingApplier(c client.Client) *apply.Applier {
	a := apply.New(c, "otelop-test")
	a.CreateMissing = true
	return a
}

// A missing object is created (one write, an Update entry of ours), then left alone while in
// place; the first change converts that entry to an Apply entry, so a field the desired state
// drops is removed, and from then on the applier works as for an applied object.
func TestCreateMissingThenChangePrunesDroppedFields(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-create-missing")
	c, writes := countingClient(t)
	a := creatingApplier(c)

	desired := richObjects(ns, map[string]string{"team": "a", "tier": "gold"})
	changes, err := a.ApplyAll(ctx, desired, nil)
	g.Expect(err).NotTo(HaveOccurred())
	for _, ch := range changes {
		g.Expect(ch.Action).To(Equal(apply.Created))
		g.Expect(ch.Live).NotTo(BeNil())
	}
	g.Expect(writes.Load()).To(Equal(int64(len(desired))), "one create each")
	for _, d := range desired {
		g.Expect(live(t, d).GetManagedFields()).To(ContainElement(And(
			HaveField("Manager", MatchRegexp(`^otelop-test-create-[0-9a-f]{16}$`)), HaveField("Operation", metav1.ManagedFieldsOperationUpdate))))
	}

	// In place: nothing is sent, by this applier or by a new one (a restart) from the cache.
	before := writes.Load()
	_, err = a.ApplyAll(ctx, desired, liveObjects(t, desired))
	g.Expect(err).NotTo(HaveOccurred())
	_, err = creatingApplier(c).ApplyAll(ctx, desired, liveObjects(t, desired))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(writes.Load()).To(Equal(before))

	// A label dropped, seen by a new applier (a restart: it remembers nothing of the creates, the
	// create entries tell): converted, applied, and gone from every object.
	desired = richObjects(ns, map[string]string{"team": "a"})
	changes, err = creatingApplier(c).ApplyAll(ctx, desired, liveObjects(t, desired))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(changes.Changed()).To(HaveLen(len(desired)))
	for _, d := range desired {
		got := live(t, d)
		g.Expect(got.GetLabels()).NotTo(HaveKey("tier"), d.GetObjectKind().GroupVersionKind().Kind)
		g.Expect(got.GetManagedFields()).NotTo(ContainElement(
			HaveField("Manager", HavePrefix("otelop-test-create-"))), "the create entry was converted")
		g.Expect(got.GetManagedFields()).To(ContainElement(And(
			HaveField("Manager", "otelop-test"), HaveField("Operation", metav1.ManagedFieldsOperationApply))))
	}
	g.Expect(live(t, desired[2]).(*appsv1.Deployment).Spec.Template.Labels).NotTo(HaveKey("tier"))
	g.Expect(writes.Load()-before).To(Equal(int64(2*len(desired))), "a conversion and an apply each, once")

	// Another drop: an apply each, no conversion.
	before = writes.Load()
	desired = richObjects(ns, nil)
	_, err = a.ApplyAll(ctx, desired, liveObjects(t, desired))
	g.Expect(err).NotTo(HaveOccurred())
	for _, d := range desired {
		g.Expect(live(t, d).GetLabels()).NotTo(HaveKey("team"))
	}
	g.Expect(writes.Load() - before).To(Equal(int64(len(desired))))
}

// An object someone else made under a desired name is not written: the create fails, the object
// is read and refused. One that belongs to the same owner (ours, not yet in the cache) is taken
// over as usual.
func TestCreateMissingRefusesSomeoneElsesObject(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-create-foreign")
	c, writes := countingClient(t)
	a := creatingApplier(c)

	theirs := configMap(ns, "theirs")
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	mine := configMap(ns, "mine")
	mine.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: types.UID("owner-uid"), Controller: ptr.To(true)}}
	_, err := a.Apply(ctx, mine, nil)
	var owned *apply.OwnershipError
	g.Expect(errors.As(err, &owned)).To(BeTrue(), "%v", err)
	g.Expect(owned.Name).To(Equal("cfg"))
	g.Expect(writes.Load()).To(Equal(int64(1)), "the failed create only")
	// Refused again: read, not created again.
	_, err = a.Apply(ctx, mine, nil)
	g.Expect(errors.As(err, &owned)).To(BeTrue(), "%v", err)
	g.Expect(writes.Load()).To(Equal(int64(1)), "a refused object is read, not created, while it stays someone else's")
	got := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed())
	g.Expect(got.Data).To(HaveKeyWithValue("k", "theirs"))
	g.Expect(got.OwnerReferences).To(BeEmpty())

	// The same owner's object (e.g. made before a restart, not cached yet): applied.
	got.OwnerReferences = mine.OwnerReferences
	g.Expect(env.Client.Update(ctx, got)).To(Succeed())
	_, err = a.Apply(ctx, configMap(ns, "mine"), nil)
	g.Expect(err).To(HaveOccurred(), "without the owner reference the desired object is not the owner's")
	withOwner := configMap(ns, "mine")
	withOwner.OwnerReferences = mine.OwnerReferences
	ch, err := a.Apply(ctx, withOwner, nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Configured))
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(theirs), got)).To(Succeed())
	g.Expect(got.Data).To(HaveKeyWithValue("k", "mine"))
}
