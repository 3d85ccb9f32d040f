package instrumentation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
)

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	requireEnv(t)
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func minimal(ns, name string) *v1alpha1.Instrumentation {
	return &v1alpha1.Instrumentation{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.InstrumentationSpec{
			Exporter: v1alpha1.Exporter{Endpoint: "http://otel-collector:4318"},
			Sampler:  v1alpha1.Sampler{Type: v1alpha1.ParentBasedTraceIDRatio, Argument: "0.25"},
		},
	}
}

type warnings struct{ texts []string }

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) { w.texts = append(w.texts, text) }

// TestDefaultsThroughTheAPIServer creates an Instrumentation with only an endpoint and a sampler
// and reads back the images (one from the operator's flag), default resources, annotations and
// web-server paths; an update without changes stores nothing.
func TestDefaultsThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "defaults")
	g.Expect(k8s.Create(ctx, minimal(ns, "i"))).To(Succeed())
	got := &v1alpha1.Instrumentation{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "i"}, got)).To(Succeed())

	d := instrumentation.DefaultImages()
	s := got.Spec
	g.Expect(s.Java.Image).To(Equal(flagJavaImage))
	g.Expect([]string{s.NodeJS.Image, s.Python.Image, s.DotNet.Image, s.Go.Image, s.ApacheHttpd.Image, s.Nginx.Image}).
		To(Equal([]string{d.NodeJS, d.Python, d.DotNet, d.Go, d.ApacheHttpd, d.Nginx}))
	g.Expect(s.Java.Resources.Limits.Cpu().String()).To(Equal("500m"))
	g.Expect(s.Java.Resources.Limits.Memory().String()).To(Equal("256Mi"))
	g.Expect(s.Java.Resources.Requests.Cpu().String()).To(Equal("50m"))
	g.Expect(s.Java.Resources.Requests.Memory().String()).To(Equal("64Mi"))
	g.Expect(s.Nginx.Resources.Requests.Cpu().String()).To(Equal("1m"))
	g.Expect(s.Nginx.Resources.Requests.Memory().String()).To(Equal("128Mi"))
	g.Expect(s.ApacheHttpd.Version).To(Equal("2.4"))
	g.Expect(s.ApacheHttpd.ConfigPath).To(Equal("/usr/local/apache2/conf"))
	g.Expect(s.Nginx.ConfigFile).To(Equal("/etc/nginx/nginx.conf"))
	g.Expect(got.Annotations).To(HaveKeyWithValue("instrumentation.opentelemetry.io/default-auto-instrumentation-java-image", flagJavaImage))
	g.Expect(got.Annotations).To(HaveKeyWithValue("instrumentation.opentelemetry.io/default-auto-instrumentation-nginx-image", d.Nginx))
	g.Expect(got.Annotations).To(HaveKeyWithValue("instrumentation.opentelemetry.io/default-auto-instrumentation-go-image", d.Go))

	rv := got.ResourceVersion
	g.Expect(k8s.Update(ctx, got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(rv), "an update that changes nothing stores nothing")
}

// TestRejectionListsEveryField sends an Instrumentation with problems in several places (dry run)
// and checks that one Invalid answer names every field path.
func TestRejectionListsEveryField(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "rejections")
	size := resource.MustParse("100Mi")
	inst := minimal(ns, "bad")
	inst.Spec.Sampler.Argument = "1.5"
	inst.Spec.Exporter = v1alpha1.Exporter{Endpoint: "https://otel-collector:4318", TLS: &v1alpha1.TLS{Cert: "tls.crt", Key: "tls.key"}}
	inst.Spec.NodeJS.VolumeSizeLimit = &size
	inst.Spec.NodeJS.VolumeClaimTemplate.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	inst.Spec.Python.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}
	inst.Spec.Python.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}
	err := k8s.Create(ctx, inst, client.DryRunAll)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	for _, f := range []string{"spec.sampler.argument", "spec.exporter.tls.cert_file", "spec.exporter.tls.key_file",
		"spec.nodejs.volumeLimitSize", "spec.python.resourceRequirements.requests[memory]"} {
		g.Expect(err.Error()).To(ContainSubstring(f))
	}
	g.Expect(apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(inst), &v1alpha1.Instrumentation{}))).To(BeTrue())
}

// TestWarningsReachTheClient: upstream's warnings arrive as API warnings on an accepted create.
func TestWarningsReachTheClient(t *testing.T) {
	requireEnv(t)
	g := NewWithT(t)
	ctx := context.Background()
	cfg := rest.CopyConfig(env.Config)
	got := &warnings{}
	cfg.WarningHandler = got
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())
	inst := minimal(newNamespace(t, "warnings"), "w")
	inst.Spec.Sampler = v1alpha1.Sampler{}
	inst.Spec.Exporter.Endpoint = "https://otel-collector:4318"
	g.Expect(c.Create(ctx, inst)).To(Succeed())
	g.Expect(got.texts).To(ContainElements(ContainSubstring("spec.sampler.type is not set"), ContainSubstring("spec.exporter.tls is not set")))
}

// TestInvalidUpdateRejectedDeleteAllowed: an update is validated like a create; a delete never
// is, even of an object that fails today's rules (one stored while the validating webhook was
// bypassed, as by an older operator).
func TestInvalidUpdateRejectedDeleteAllowed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "updates")
	inst := minimal(ns, "u")
	g.Expect(k8s.Create(ctx, inst)).To(Succeed())
	inst.Spec.Sampler.Type = v1alpha1.JaegerRemote
	inst.Spec.Sampler.Argument = "endpoint="
	err := k8s.Update(ctx, inst)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.sampler.argument"))

	// Store an invalid object: exempt objects labelled "bypass" from the create/update webhook
	// for a moment.
	invalid := minimal(ns, "stored-invalid")
	invalid.Labels = map[string]string{"bypass": "true"}
	invalid.Spec.Sampler.Argument = "7"
	setBypass(t, true)
	g.Eventually(func() error { return k8s.Create(ctx, invalid.DeepCopy()) }).Should(Succeed())
	setBypass(t, false)
	g.Eventually(func() bool {
		return apierrors.IsInvalid(k8s.Create(ctx, invalid.DeepCopy(), client.DryRunAll))
	}).Should(BeTrue(), "the webhook validates labelled objects again")

	for _, name := range []string{"u", "stored-invalid"} {
		g.Expect(k8s.Delete(ctx, minimal(ns, name))).To(Succeed(), name)
		g.Eventually(func() bool {
			return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &v1alpha1.Instrumentation{}))
		}).Should(BeTrue(), name)
	}
}

// setBypass adds (or removes) an objectSelector that exempts objects labelled "bypass" from the
// Instrumentation create/update validating webhook.
func setBypass(t *testing.T, on bool) {
	t.Helper()
	ctx := context.Background()
	list := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
	if err := k8s.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		cfg := &list.Items[i]
		changed := false
		for j := range cfg.Webhooks {
			if cfg.Webhooks[j].Name != "vinstrumentationcreateupdate.kb.io" {
				continue
			}
			sel := &metav1.LabelSelector{}
			if on {
				sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "bypass", Operator: metav1.LabelSelectorOpDoesNotExist}}
			}
			cfg.Webhooks[j].ObjectSelector, changed = sel, true
		}
		if changed {
			if err := k8s.Update(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatal("webhook vinstrumentationcreateupdate.kb.io is not installed")
}

// TestUpgradeMovesOlderDefaults: an Instrumentation defaulted by an older operator (its images
// equal its annotations) is moved to the current defaults by the startup pass, through the
// webhooks; a user image is left alone.
func TestUpgradeMovesOlderDefaults(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "upgrade")
	const oldJava = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.32.0"
	const oldPython = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.43b0"
	javaKey := "instrumentation.opentelemetry.io/default-auto-instrumentation-java-image"
	pythonKey := "instrumentation.opentelemetry.io/default-auto-instrumentation-python-image"
	inst := minimal(ns, "old")
	inst.Annotations = map[string]string{javaKey: oldJava, pythonKey: oldPython}
	inst.Spec.Java.Image = oldJava
	inst.Spec.Python.Image = "my.registry/python:pinned"
	g.Expect(k8s.Create(ctx, inst)).To(Succeed())
	got := &v1alpha1.Instrumentation{}
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(inst), got)).To(Succeed())
	g.Expect(got.Annotations).To(HaveKeyWithValue(javaKey, oldJava), "the webhook keeps an older default it has not upgraded")

	u := &instrumentation.Upgrader{Client: k8s, Options: instrumentation.Options{Images: instrumentation.Images{Java: flagJavaImage}}}
	g.Expect(u.Start(ctx)).To(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(inst), got)).To(Succeed())
	g.Expect(got.Spec.Java.Image).To(Equal(flagJavaImage))
	g.Expect(got.Annotations).To(HaveKeyWithValue(javaKey, flagJavaImage))
	g.Expect(got.Spec.Python.Image).To(Equal("my.registry/python:pinned"))
	g.Expect(got.Annotations).To(HaveKeyWithValue(pythonKey, instrumentation.DefaultImages().Python))

	rv := got.ResourceVersion
	g.Expect(u.Start(ctx)).To(Succeed())
	g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(inst), got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(rv), "a second pass writes nothing")
}
