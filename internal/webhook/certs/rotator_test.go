package certs

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{Scheme: Scheme()}, func(e *testenv.Env) { env = e })
}

const crdName = "opentelemetrycollectors.opentelemetry.io"

// fixture creates a namespace, two webhook configurations (one the rotator is told about, one it
// is not) pointing at port and returns options for them.
func fixture(t *testing.T, port int) Options {
	t.Helper()
	ctx := context.Background()
	g := NewWithT(t)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "certs-"}}
	g.Expect(env.Client.Create(ctx, ns)).To(Succeed())
	url := "https://127.0.0.1:" + strconv.Itoa(port) + "/deny"
	hook := func(name string) admissionregistrationv1.ValidatingWebhook {
		return admissionregistrationv1.ValidatingWebhook{
			Name:                    name,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{"CREATE"}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns.Name}},
			ObjectSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"deny": "yes"}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
		}
	}
	for _, name := range []string{ns.Name + "-ours", ns.Name + "-other"} {
		vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: name},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{hook("deny.otelop.test")}}
		g.Expect(env.Client.Create(ctx, vwc)).To(Succeed())
	}
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: ns.Name + "-mutating"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{Name: "noop.otelop.test", ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
			SideEffects: ptr.To(admissionregistrationv1.SideEffectClassNone), AdmissionReviewVersions: []string{"v1"}}}}
	g.Expect(env.Client.Create(ctx, mwc)).To(Succeed())
	return Options{
		Mode: ModeSelf, Namespace: ns.Name, CertDir: t.TempDir(), ExtraIPs: []net.IP{net.ParseIP("127.0.0.1")},
		ValidatingWebhookConfigurations: []string{ns.Name + "-ours", "does-not-exist"},
		MutatingWebhookConfigurations:   []string{ns.Name + "-mutating"},
		CRDs:                            []string{crdName},
	}
}

func uncached(t *testing.T) client.Client {
	c, err := client.New(env.Config, client.Options{Scheme: Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enableConversionWebhook points the collector CRD's conversion at a webhook, as a deployment does.
func enableConversionWebhook(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
	base := crd.DeepCopy()
	url := "https://127.0.0.1:1/convert"
	crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{ConversionReviewVersions: []string{"v1"}, ClientConfig: &apiextensionsv1.WebhookClientConfig{URL: &url}}}
	g.Expect(env.Client.Patch(ctx, crd, client.MergeFrom(base))).To(Succeed())
}

func TestSelfManagedCertificate(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	enableConversionWebhook(t)
	port := testenv.FreePort(t)
	opts := fixture(t, port)

	r, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Sync(ctx)).To(Succeed())

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: DefaultSecretName}, secret)).To(Succeed())
	g.Expect(secret.Type).To(Equal(corev1.SecretTypeTLS))
	g.Expect(secret.Data).To(HaveKey(keyCA))
	g.Expect(readFile(t, opts.CertDir, CertFile)).To(Equal(secret.Data[keyCert]))
	g.Expect(readFile(t, opts.CertDir, KeyFile)).To(Equal(secret.Data[keyKey]))
	bundle := secret.Data[keyCA]
	g.Expect(injected(t, opts)).To(Equal([][]byte{bundle, bundle, bundle}))
	other := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Name: opts.Namespace + "-other"}, other)).To(Succeed())
	g.Expect(other.Webhooks[0].ClientConfig.CABundle).To(BeEmpty(), "objects not named are left alone")

	// The API server trusts the injected bundle and the certificate served from the files.
	serve(t, opts.CertDir, port)
	// (Eventually: the API server sees webhook configuration changes through an informer.)
	g.Eventually(func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, GenerateName: "denied-", Labels: map[string]string{"deny": "yes"}}}
		return env.Client.Create(ctx, cm)
	}, 10*time.Second, 200*time.Millisecond).Should(MatchError(ContainSubstring("denied by the test webhook")))

	// A restart reuses the valid Secret: nothing is written.
	rv := secret.ResourceVersion
	r2, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r2.Sync(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: opts.Namespace, Name: DefaultSecretName}, secret)).To(Succeed())
	g.Expect(secret.ResourceVersion).To(Equal(rv))
}

func TestRotation(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := testenv.FreePort(t)
	opts := fixture(t, port)
	opts.CRDs = nil
	opts.Validity, opts.CAValidity = 3*time.Second, 3*time.Second

	r, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Sync(ctx)).To(Succeed())
	firstCert := readFile(t, opts.CertDir, CertFile)
	firstBundle := injected(t, opts)[0]
	serve(t, opts.CertDir, port)

	done := make(chan error)
	go func() { done <- r.Start(ctx) }()
	// Within a validity the certificate and the CA are replaced, files and bundles follow.
	g.Eventually(func() bool { return !bytes.Equal(readFile(t, opts.CertDir, CertFile), firstCert) }, 5*time.Second, 100*time.Millisecond).Should(BeTrue())
	g.Eventually(func() []byte { return injected(t, opts)[0] }, 5*time.Second, 100*time.Millisecond).ShouldNot(Equal(firstBundle))
	// The served certificate keeps being trusted across rotations.
	g.Eventually(func() error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, GenerateName: "denied-", Labels: map[string]string{"deny": "yes"}}}
		return env.Client.Create(ctx, cm)
	}, 10*time.Second, 200*time.Millisecond).Should(MatchError(ContainSubstring("denied by the test webhook")))
	cancel()
	g.Eventually(done).Should(Receive(BeNil()))
}

func TestModesOtherThanSelfDoNothing(t *testing.T) {
	g := NewWithT(t)
	for _, m := range []Mode{ModeCertManager, ModeFiles, ""} {
		o, err := Options{Mode: m}.withDefaults()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(o.Mode).NotTo(Equal(ModeSelf))
	}
	_, err := Options{Mode: "vault"}.withDefaults()
	g.Expect(err).To(HaveOccurred())
}

// injected returns the CA bundles of the mutating and the named validating configuration and,
// when set, of the CRD.
func injected(t *testing.T, o Options) [][]byte {
	t.Helper()
	ctx := context.Background()
	var out [][]byte
	mwc := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: o.MutatingWebhookConfigurations[0]}, mwc); err != nil {
		t.Fatal(err)
	}
	vwc := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := env.Client.Get(ctx, client.ObjectKey{Name: o.ValidatingWebhookConfigurations[0]}, vwc); err != nil {
		t.Fatal(err)
	}
	out = append(out, mwc.Webhooks[0].ClientConfig.CABundle, vwc.Webhooks[0].ClientConfig.CABundle)
	if len(o.CRDs) > 0 {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := env.Client.Get(ctx, client.ObjectKey{Name: o.CRDs[0]}, crd); err != nil {
			t.Fatal(err)
		}
		out = append(out, crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
	}
	return out
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// serve runs controller-runtime's webhook server from certDir on 127.0.0.1:port with a handler
// that denies every request, until the test ends.
func serve(t *testing.T, certDir string, port int) {
	t.Helper()
	srv := webhook.NewServer(webhook.Options{Host: "127.0.0.1", Port: port, CertDir: certDir})
	srv.Register("/deny", &admission.Webhook{Handler: admission.HandlerFunc(func(context.Context, admission.Request) admission.Response {
		return admission.Denied("denied by the test webhook")
	})})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	g := NewWithT(t)
	g.Eventually(func() error {
		conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // only checks that it listens.
		if err == nil {
			_ = conn.Close()
		}
		return err
	}, 10*time.Second, 50*time.Millisecond).Should(Succeed())
}

func TestSetupProvisionsBeforeStart(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts := fixture(t, testenv.FreePort(t))
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Setup(ctx, mgr, opts)).To(Succeed())
	// Files exist before the manager (and its webhook server) starts.
	g.Expect(filepath.Join(opts.CertDir, CertFile)).To(BeARegularFile())
	g.Expect(filepath.Join(opts.CertDir, KeyFile)).To(BeARegularFile())

	// Other modes touch nothing.
	other := opts
	other.Mode, other.CertDir = ModeCertManager, t.TempDir()
	g.Expect(Setup(ctx, mgr, other)).To(Succeed())
	entries, err := os.ReadDir(other.CertDir)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(entries).To(BeEmpty())
}

func TestFlags(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	g.Expect(fs.Parse([]string{"--webhook-cert-mode=cert-manager", "--webhook-cert-extra-ips=127.0.0.1,::1", "--webhook-cert-validity=48h"})).To(Succeed())
	g.Expect(o.Mode).To(Equal(ModeCertManager))
	g.Expect(o.ExtraIPs).To(HaveLen(2))
	g.Expect(o.Validity).To(Equal(48 * time.Hour))
	g.Expect(o.CRDs).To(Equal([]string{CollectorCRD}))
}
