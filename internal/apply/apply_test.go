package apply_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{CRDDirectoryPaths: []string{}}, func(e *testenv.Env) { env = e })
}

// countingClient returns a client whose write requests (anything but GET) are counted.
func countingClient(t *testing.T) (client.Client, *atomic.Int64) {
	var writes atomic.Int64
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet {
				writes.Add(1)
			}
			return rt.RoundTrip(r)
		})
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, &writes
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func namespace(t *testing.T, name string) string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := env.Client.Create(context.Background(), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return name
}

func configMap(ns, value string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: ns, Labels: map[string]string{"app": "x"}},
		Data:       map[string]string{"k": value},
	}
}

func live(t *testing.T, obj client.Object) client.Object {
	cp := obj.DeepCopyObject().(client.Object)
	if err := env.Client.Get(context.Background(), client.ObjectKeyFromObject(obj), cp); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		t.Fatal(err)
	}
	return cp
}

func TestApplyCreatesSkipsAndConfigures(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-basic")
	c, writes := countingClient(t)
	a := apply.New(c, "otelop-test")

	ch, err := a.Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Created))
	g.Expect(writes.Load()).To(Equal(int64(1)))

	// Same desired state, live unchanged: no request at all.
	for range 10 {
		ch, err = a.Apply(ctx, configMap(ns, "1"), live(t, configMap(ns, "1")))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ch.Action).To(Equal(apply.Unchanged))
	}
	g.Expect(writes.Load()).To(Equal(int64(1)), "no-op applies must not reach the API server")

	ch, err = a.Apply(ctx, configMap(ns, "2"), live(t, configMap(ns, "1")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Configured))
	got := &corev1.ConfigMap{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: "cfg"}, got)).To(Succeed())
	g.Expect(got.Data).To(HaveKeyWithValue("k", "2"))
	g.Expect(got.ManagedFields).To(ContainElement(HaveField("Manager", "otelop-test")))
}

func TestApplyRestoresDriftAndKeepsOtherManagersFields(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-drift")
	a := apply.New(env.Client, "otelop-test")
	_, err := a.Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())

	// Someone edits our field and adds their own label.
	cur := live(t, configMap(ns, "1")).(*corev1.ConfigMap)
	cur.Data["k"] = "edited"
	cur.Labels["team"] = "payments"
	g.Expect(env.Client.Update(ctx, cur)).To(Succeed())

	ch, err := a.Apply(ctx, configMap(ns, "1"), live(t, configMap(ns, "1")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Configured))
	got := live(t, configMap(ns, "1")).(*corev1.ConfigMap)
	g.Expect(got.Data).To(HaveKeyWithValue("k", "1"))
	g.Expect(got.Labels).To(HaveKeyWithValue("team", "payments"), "fields of other managers are kept")
}

func deployment(ns string, selector map[string]string) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, Annotations: map[string]string{apply.OwnerAnnotation: "Test/" + ns + "/owner"}},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: selector},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selector},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c:1"}}},
			},
		},
	}
}

func TestApplyRecreatesOnImmutableFieldChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-immutable")
	a := apply.New(env.Client, "otelop-test")
	_, err := a.Apply(ctx, deployment(ns, map[string]string{"app": "a"}), nil)
	g.Expect(err).NotTo(HaveOccurred())
	before := live(t, deployment(ns, nil))

	ch, err := a.Apply(ctx, deployment(ns, map[string]string{"app": "b"}), before)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Recreated))
	after := live(t, deployment(ns, nil)).(*appsv1.Deployment)
	g.Expect(after.UID).NotTo(Equal(before.GetUID()))
	g.Expect(after.Spec.Selector.MatchLabels).To(HaveKeyWithValue("app", "b"))
}

func TestDeleteHonoursUIDPrecondition(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-delete")
	a := apply.New(env.Client, "otelop-test")
	_, err := a.Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	stale := live(t, configMap(ns, "1"))
	stale.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))

	// The object is replaced by someone else under the same name: our stale view must not delete it.
	g.Expect(env.Client.Delete(ctx, configMap(ns, "1"))).To(Succeed())
	g.Expect(env.Client.Create(ctx, configMap(ns, "theirs"))).To(Succeed())
	_, err = a.Delete(ctx, stale)
	g.Expect(err).To(HaveOccurred())
	g.Expect(live(t, configMap(ns, "1"))).NotTo(BeNil())

	current := live(t, configMap(ns, "1"))
	current.GetObjectKind().SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	ch, err := a.Delete(ctx, current)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Deleted))
	g.Expect(live(t, configMap(ns, "1"))).To(BeNil())
}

func TestApplyRecreatesStatefulSetWhenVolumeClaimTemplatesChange(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-sts")
	a := apply.New(env.Client, "otelop-test")
	sts := func(vcts []corev1.PersistentVolumeClaim) *appsv1.StatefulSet {
		labels := map[string]string{"app": "s"}
		return &appsv1.StatefulSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: ns, Annotations: map[string]string{apply.OwnerAnnotation: "Test/" + ns + "/owner"}},
			Spec: appsv1.StatefulSetSpec{
				Selector:             &metav1.LabelSelector{MatchLabels: labels},
				VolumeClaimTemplates: vcts,
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "example.invalid/c:1"}}},
				},
			},
		}
	}
	_, err := a.Apply(ctx, sts(nil), nil)
	g.Expect(err).NotTo(HaveOccurred())
	vct := corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}
	a.RecreateWait = 200 * time.Millisecond
	old := live(t, sts(nil))
	_, err = a.Apply(ctx, sts([]corev1.PersistentVolumeClaim{vct}), old)
	g.Expect(errors.Is(err, apply.ErrRecreatePending)).To(BeTrue(), "the garbage collector has not orphaned the pods yet: %v", err)

	// The selector did not change: the pods are orphaned (the new StatefulSet adopts them), not
	// deleted all at once with the old StatefulSet.
	terminating := live(t, sts(nil))
	g.Expect(terminating.GetUID()).To(Equal(old.GetUID()))
	g.Expect(terminating.GetDeletionTimestamp()).NotTo(BeNil())
	g.Expect(terminating.GetFinalizers()).To(ContainElement(metav1.FinalizerOrphanDependents))

	// Retrying while it terminates deletes nothing else and waits again.
	_, err = a.Apply(ctx, sts([]corev1.PersistentVolumeClaim{vct}), terminating)
	g.Expect(errors.Is(err, apply.ErrRecreatePending)).To(BeTrue(), "%v", err)

	// envtest runs no garbage collector: finish the orphaning as it would.
	terminating.SetFinalizers(nil)
	g.Expect(env.Client.Update(ctx, terminating)).To(Succeed())
	_, err = a.Apply(ctx, sts([]corev1.PersistentVolumeClaim{vct}), terminating)
	g.Expect(err).NotTo(HaveOccurred())
	got := live(t, sts(nil)).(*appsv1.StatefulSet)
	g.Expect(got.UID).NotTo(Equal(old.GetUID()))
	g.Expect(got.Spec.VolumeClaimTemplates).To(HaveLen(1))
}

// A same-named object that was not created for the desired object's owner is never deleted to
// change an immutable field.
func TestRecreateLeavesObjectsOfOthersAlone(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-foreign")
	theirs := deployment(ns, map[string]string{"app": "theirs"})
	theirs.Annotations = nil
	g.Expect(env.Client.Create(ctx, theirs)).To(Succeed())
	before := live(t, theirs)

	a := apply.New(env.Client, "otelop-test")
	_, err := a.Apply(ctx, deployment(ns, map[string]string{"app": "ours"}), before)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("does not replace it"))
	after := live(t, theirs).(*appsv1.Deployment)
	g.Expect(after.UID).To(Equal(before.GetUID()))
	g.Expect(after.Spec.Selector.MatchLabels).To(HaveKeyWithValue("app", "theirs"))

	// Another owner's object (a different owner annotation) is not replaced either.
	other := deployment(ns, map[string]string{"app": "ours"})
	other.Annotations[apply.OwnerAnnotation] = "Test/" + ns + "/someone-else"
	_, err = a.Apply(ctx, other, after)
	g.Expect(err).To(HaveOccurred())
	g.Expect(live(t, theirs).GetUID()).To(Equal(before.GetUID()))
}

// A reconcile that follows its own write before the cache has seen it (live missing, or older
// than that write) reads the object instead of writing the same state again; an object someone
// deleted meanwhile is created again.
func TestApplyBehindItsOwnWriteReadsInsteadOfWriting(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := namespace(t, "apply-cache-lag")
	c, writes := countingClient(t)
	a := apply.New(c, "otelop-test")

	ch, err := a.Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Created))
	stale := live(t, configMap(ns, "1"))

	// The cache has not seen the create yet.
	ch, err = a.Apply(ctx, configMap(ns, "1"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Unchanged))
	g.Expect(writes.Load()).To(Equal(int64(1)))

	// A change, then the cache still holds the version before it.
	ch, err = a.Apply(ctx, configMap(ns, "2"), stale)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Configured))
	g.Expect(ch.Live).NotTo(BeNil(), "the apply's answer")
	written := ch.Live.GetResourceVersion()
	g.Expect(written).NotTo(Equal(stale.GetResourceVersion()))
	ch, err = a.Apply(ctx, configMap(ns, "2"), stale)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Unchanged))
	g.Expect(writes.Load()).To(Equal(int64(2)))
	// The caller learns the version it read: a status must not be computed from the stale one.
	g.Expect(ch.Live).NotTo(BeNil())
	g.Expect(ch.Live.GetResourceVersion()).To(Equal(written))
	ch, err = a.Apply(ctx, configMap(ns, "2"), live(t, configMap(ns, "2")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Unchanged))
	g.Expect(ch.Live).To(BeNil(), "the caller's live object is current")

	// Deleted by someone before the cache saw it: created again.
	g.Expect(env.Client.Delete(ctx, configMap(ns, "2"))).To(Succeed())
	ch, err = a.Apply(ctx, configMap(ns, "2"), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Action).To(Equal(apply.Created))
	g.Expect(writes.Load()).To(Equal(int64(3)))
}
