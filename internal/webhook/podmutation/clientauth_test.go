package podmutation_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/testenv"
	otelwebhook "github.com/otelop/otelop/internal/webhook"
	winstrumentation "github.com/otelop/otelop/internal/webhook/instrumentation"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// clientAuthEnv is a second kube-apiserver, whose admission configuration gives it a client
// certificate for every webhook ("*"), with a manager whose webhook server trusts that
// certificate's CA (webhook.ClientCA) and serves the pod webhook with RequireClientCert, plus the
// Instrumentation webhooks. The suite's own API server presents no client certificate.
type clientAuthEnv struct {
	env *testenv.Env
	mgr ctrl.Manager
}

func startClientAuth(t *testing.T, requireClientCert bool) *clientAuthEnv {
	t.Helper()
	caFile, admissionFile, err := apiServerClientCert(t, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cenv, err := testenv.Start(testenv.Options{Scheme: scheme, WebhookInstallOptions: testenv.ShippedWebhooks(),
		APIServerFlags: map[string]string{"admission-control-config-file": admissionFile}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cenv.Stop() })
	clientCA, err := otelwebhook.ClientCA(caFile)
	if err != nil {
		t.Fatal(err)
	}
	wio := &cenv.Environment.WebhookInstallOptions
	cmgr, err := ctrl.NewManager(cenv.Config, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		WebhookServer: crwebhook.NewServer(crwebhook.Options{Host: wio.LocalServingHost, Port: wio.LocalServingPort,
			CertDir: wio.LocalServingCertDir, TLSOpts: []func(*tls.Config){clientCA}}),
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := winstrumentation.Setup(cmgr, winstrumentation.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := podmutation.Setup(cmgr, podmutation.Options{RequireClientCert: requireClientCert}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = cmgr.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-stopped })
	for deadline := time.Now().Add(30 * time.Second); cmgr.GetWebhookServer().StartedChecker()(nil) != nil; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("webhook server did not start")
		}
	}
	return &clientAuthEnv{env: cenv, mgr: cmgr}
}

// apiServerClientCert writes a CA, a client certificate it signed for kube-apiserver, the
// kubeconfig that hands it to every webhook, and the AdmissionConfiguration that names it.
func apiServerClientCert(t *testing.T, dir string) (caFile, admissionFile string, err error) {
	t.Helper()
	ca := testenv.NewCA(t, "webhook-client-ca")
	client := ca.ClientCert(t, "kube-apiserver")
	der := client.Certificate[0]
	keyDER, err := x509.MarshalECPrivateKey(client.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		return "", "", err
	}
	b64 := func(typ string, b []byte) string {
		return base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b}))
	}
	caFile = filepath.Join(dir, "client-ca.pem")
	if err := os.WriteFile(caFile, ca.PEM(), 0o600); err != nil {
		return "", "", err
	}
	kubeconfig := filepath.Join(dir, "webhook-kubeconfig.yaml")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
users:
- name: "*"
  user:
    client-certificate-data: %s
    client-key-data: %s
`, b64("CERTIFICATE", der), b64("EC PRIVATE KEY", keyDER))), 0o600); err != nil {
		return "", "", err
	}
	admissionFile = filepath.Join(dir, "admission.yaml")
	plugin := func(name string) string {
		return fmt.Sprintf(`- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %s
`, name, kubeconfig)
	}
	return caFile, admissionFile, os.WriteFile(admissionFile, []byte("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"+
		plugin("MutatingAdmissionWebhook")+plugin("ValidatingAdmissionWebhook")), 0o600)
}

// victimAPIKey is a credential in the victim's Instrumentation env.
const victimAPIKey = "x-api-key=victim-s3cret-29"

// TestForgedReviewRefusedWithClientCA is issue 29 finding 1 with the option on: a review posted
// straight to the webhook port claiming a pod of namespace victim that asks for victim's
// Instrumentation gets 403 and no AdmissionReview (no env, no config, no Event). Positive
// control: the same pod created through the API server, which presents its client certificate,
// is instrumented with victim's env.
func TestForgedReviewRefusedWithClientCA(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ca := startClientAuth(t, true)
	env, mgr := ca.env, ca.mgr
	victim := "victim"
	g.Expect(env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: victim}})).To(Succeed())
	in := &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: "otel"}}
	in.Spec.Exporter.Endpoint = "http://collector:4318"
	in.Spec.Java.Image = "java:1"
	in.Spec.Env = []corev1.EnvVar{{Name: "OTEL_EXPORTER_OTLP_HEADERS", Value: victimAPIKey}}
	g.Expect(env.Client.Create(ctx, in)).To(Succeed())
	g.Eventually(func() error {
		return mgr.GetClient().Get(ctx, client.ObjectKeyFromObject(in), &v1alpha1.Instrumentation{})
	}).Should(Succeed())

	pod := func(name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: victim, Name: name,
			Annotations: map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "true"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}}}
	}

	// The attack: no client certificate.
	raw, err := json.Marshal(pod("forged"))
	g.Expect(err).NotTo(HaveOccurred())
	review, err := json.Marshal(admissionv1.AdmissionReview{TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "forged", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
			Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, Operation: admissionv1.Create,
			Namespace: victim, Object: runtime.RawExtension{Raw: raw}}})
	g.Expect(err).NotTo(HaveOccurred())
	wio := env.Environment.WebhookInstallOptions
	g.Expect(wio.LocalServingHost).To(HavePrefix("127."))
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(wio.LocalServingCAData)).To(BeTrue())
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Post(fmt.Sprintf("https://%s:%d%s", wio.LocalServingHost, wio.LocalServingPort, podmutation.Path), "application/json", bytes.NewReader(review))
	g.Expect(err).NotTo(HaveOccurred())
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	g.Expect(resp.StatusCode).To(Equal(http.StatusForbidden))
	g.Expect(string(body)).NotTo(ContainSubstring("victim-s3cret"))
	g.Expect(string(body)).NotTo(ContainSubstring("patch"))

	// Control: through the API server.
	real := pod("real")
	g.Expect(env.Client.Create(ctx, real)).To(Succeed())
	got := &corev1.Pod{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(real), got)).To(Succeed())
	var headers string
	for _, e := range got.Spec.Containers[0].Env {
		if e.Name == "OTEL_EXPORTER_OTLP_HEADERS" {
			headers = e.Value
		}
	}
	g.Expect(headers).To(Equal(victimAPIKey), "the API server's call, with its client certificate, is served")

	events := &eventsv1.EventList{}
	g.Expect(env.Client.List(ctx, events, client.InNamespace(victim))).To(Succeed())
	g.Expect(events.Items).To(BeEmpty(), "no Event")
}
