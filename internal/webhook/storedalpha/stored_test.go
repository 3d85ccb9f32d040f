package storedalpha_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

const (
	timeout = 30 * time.Second
	poll    = 100 * time.Millisecond
	crdName = "opentelemetrycollectors.opentelemetry.io"
)

// unparsable is a v1alpha1 config that does not parse (an unclosed flow mapping), with a comment
// that only an exact copy of the text keeps.
const unparsable = "receivers:\n  otlp:\n    protocols: {grpc: {}\nexporters: {debug: {}}\n# written by hand, kept as written\n"

const otlpDebug = `
receivers: {otlp: {protocols: {grpc: {}}}}
exporters: {debug: {}}
service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}
`

// TestStoredUnparsableV1alpha1Collector is the attack of issue 29 finding 10 (upstream #4288):
// a collector stored as v1alpha1 with a config that does not parse made every v1beta1 list and
// watch of collectors fail, the operator's own informers included. The test stores one as a
// cluster that ran upstream would have (v1alpha1 the storage version, no admission webhook
// parsing the config), puts the operator's CRD storage and webhooks back, and then reads it.
func TestStoredUnparsableV1alpha1Collector(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	c := env.Client
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "stored-alpha"}}
	g.Expect(c.Create(ctx, ns)).To(Succeed())

	// Positive control for the lists below: a valid collector written through v1beta1.
	good := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "good"}}
	g.Expect(yaml.Unmarshal([]byte(otlpDebug), &good.Spec.Config)).To(Succeed())
	g.Expect(c.Create(ctx, good)).To(Succeed())

	// The past: v1alpha1 is the storage version and nothing parses the config at admission.
	restoreWebhooks := removeAdmissionWebhooks(t)
	setStorageVersion(t, "v1alpha1")
	old := &v1alpha1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: ns.Name, Name: "old"}}
	// As upstream's defaulting webhook stored it.
	old.Spec.Mode = v1alpha1.ModeDeployment
	old.Spec.UpgradeStrategy = v1alpha1.UpgradeStrategyAutomatic
	old.Spec.ManagementState = v1alpha1.ManagementStateManaged
	old.Spec.Config = unparsable
	g.Eventually(func() error { return c.Create(ctx, old.DeepCopy()) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	// The present: the operator's CRD (v1beta1 storage, conversion webhook) and its webhooks.
	setStorageVersion(t, "v1beta1")
	restoreWebhooks()

	// A v1beta1 list succeeds and includes the stored object: the text kept, spec.config empty.
	list := &v1beta1.OpenTelemetryCollectorList{}
	g.Expect(c.List(ctx, list, client.InNamespace(ns.Name))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(2))
	byName := map[string]v1beta1.OpenTelemetryCollector{}
	for _, item := range list.Items {
		byName[item.Name] = item
	}
	g.Expect(byName["good"].Spec.Config.Exporters.Object).To(HaveKey("debug"))
	stored := byName["old"]
	g.Expect(stored.Annotations).To(HaveKeyWithValue(v1alpha1.AnnotationUnparsedConfig, unparsable))
	g.Expect(stored.Spec.Mode).To(Equal(v1beta1.ModeDeployment))
	cfg, err := json.Marshal(stored.Spec.Config)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(string(cfg)).To(MatchJSON(`{"receivers":{},"exporters":{},"service":{"pipelines":{}}}`))
	g.Expect(v1alpha1.UnparsedConfig(&stored)).To(MatchError(ContainSubstring("spec.config: invalid collector configuration")))
	// Cluster-wide too, as the operator lists.
	g.Expect(c.List(ctx, &v1beta1.OpenTelemetryCollectorList{})).To(Succeed())

	// Watches: a plain v1beta1 watch gets both objects and no error event, and the manager's
	// informer (list + watch) syncs and holds the stored object.
	wc, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	w, err := wc.Watch(ctx, &v1beta1.OpenTelemetryCollectorList{}, client.InNamespace(ns.Name))
	g.Expect(err).NotTo(HaveOccurred())
	seen := map[string]bool{}
	deadline := time.After(timeout)
	for len(seen) < 2 {
		select {
		case ev := <-w.ResultChan():
			g.Expect(ev.Type).To(Equal(watch.Added), "watch event %+v", ev.Object)
			seen[ev.Object.(*v1beta1.OpenTelemetryCollector).Name] = true
		case <-deadline:
			t.Fatalf("the v1beta1 watch delivered only %v", seen)
		}
	}
	w.Stop()
	g.Expect(seen).To(HaveKey("old"))
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cached := &v1beta1.OpenTelemetryCollectorList{}
	g.Expect(mgr.GetCache().List(cctx, cached, client.InNamespace(ns.Name))).To(Succeed())
	g.Expect(cached.Items).To(ContainElement(HaveField("ObjectMeta.Name", "old")))

	// The v1alpha1 API returns the exact text, without the annotation.
	back := &v1alpha1.OpenTelemetryCollector{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(old), back)).To(Succeed())
	g.Expect(back.Spec.Config).To(Equal(unparsable))
	g.Expect(back.Annotations).NotTo(HaveKey(v1alpha1.AnnotationUnparsedConfig))

	// Admission still refuses a new one, naming the field.
	g.Eventually(func(g Gomega) {
		fresh := old.DeepCopy()
		fresh.Name = "new"
		err := c.Create(ctx, fresh)
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
		g.Expect(err.Error()).To(ContainSubstring("spec.config"))
		g.Expect(err.Error()).To(ContainSubstring("invalid collector configuration"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// And the stored one can be deleted through v1beta1 (the delete webhook gets it converted).
	g.Expect(c.Delete(ctx, &stored)).To(Succeed())
	g.Eventually(func() bool {
		return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(old), &v1beta1.OpenTelemetryCollector{}))
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue())
}

// removeAdmissionWebhooks deletes the installed webhook configurations and returns a function
// that puts them back (also run at cleanup).
func removeAdmissionWebhooks(t *testing.T) func() {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	c := env.Client
	mutating := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	validating := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	g.Expect(c.List(ctx, mutating)).To(Succeed())
	g.Expect(c.List(ctx, validating)).To(Succeed())
	g.Expect(mutating.Items).NotTo(BeEmpty())
	g.Expect(validating.Items).NotTo(BeEmpty())
	var saved []client.Object
	for i := range mutating.Items {
		saved = append(saved, &mutating.Items[i])
	}
	for i := range validating.Items {
		saved = append(saved, &validating.Items[i])
	}
	for _, o := range saved {
		g.Expect(c.Delete(ctx, o)).To(Succeed())
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		for _, o := range saved {
			o.SetResourceVersion("")
			o.SetUID("")
			o.SetCreationTimestamp(metav1.Time{})
			o.SetManagedFields(nil)
			if err := c.Create(ctx, o); err != nil {
				t.Errorf("restoring webhook configuration %s: %v", o.GetName(), err)
			}
		}
	}
	t.Cleanup(restore)
	return restore
}

// setStorageVersion makes version the storage version of the collector CRD and waits until the
// API server stores in it. The probe is a v1alpha1 collector that cannot be converted at all (its
// v1beta1 conversion data is malformed): it is stored only when v1alpha1 is the storage version,
// and is deleted at once.
func setStorageVersion(t *testing.T, version string) {
	t.Helper()
	g := NewWithT(t)
	ctx := context.Background()
	c := env.Client
	g.Eventually(func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Storage = crd.Spec.Versions[i].Name == version
		}
		return c.Update(ctx, crd)
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Eventually(func() bool {
		probe := &v1alpha1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "default", GenerateName: "probe-",
			Annotations: map[string]string{v1alpha1.AnnotationV1beta1Data: "{"}}}
		probe.Spec.Config = "receivers: {}"
		probe.Spec.UpgradeStrategy = v1alpha1.UpgradeStrategyAutomatic
		err := c.Create(ctx, probe)
		if err == nil {
			g.Expect(c.Delete(ctx, probe)).To(Succeed())
		}
		if err != nil {
			t.Logf("probe: %v", err)
		}
		return (err == nil) == (version == "v1alpha1")
	}).WithTimeout(timeout).WithPolling(poll).Should(BeTrue(), "the API server does not store in %s", version)
}
