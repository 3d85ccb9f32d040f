package targetallocator_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
	"github.com/otelop/otelop/internal/targetallocator/app"
	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/certs"
)

func newPromCRTA(ns, name string) *v1alpha1.TargetAllocator {
	ta := newTA(ns, name)
	ta.Spec.PrometheusCR = v1beta1.TargetAllocatorPrometheusCR{Enabled: true}
	return ta
}

func leafOf(g Gomega, s *corev1.Secret) *x509.Certificate {
	cs, err := certs.ParseCertificates(s.Data[mta.SecretCertKey])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cs).NotTo(BeEmpty())
	return cs[0]
}

// TestMTLSCertificates: with operator.targetallocator.mtls, a target allocator with prometheusCR
// gets the CA, serving and client certificate Secrets, owned by it, mounted and configured; the
// allocator serving those files gives scrape secrets to a client with the client certificate
// (positive control) and to no client without it or with another allocator's (attack); a
// certificate due for renewal is replaced before it expires, a renewed CA stays trusted in the
// bundle, and a deleted Secret comes back. Without prometheusCR nothing of it is generated.
func TestMTLSCertificates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ta := newPromCRTA(ns, "secure")
	other := newPromCRTA(ns, "other")
	plain := newTA(ns, "plain")
	for _, o := range []*v1alpha1.TargetAllocator{ta, other, plain} {
		g.Expect(k8s.Create(ctx, o)).To(Succeed())
	}

	secrets := map[string]*corev1.Secret{}
	g.Eventually(func(g Gomega) {
		for _, n := range []string{"secure-ca-cert", "secure-ta-server-cert", "secure-ta-client-cert", "other-ta-client-cert"} {
			s := get(g, ns, n, &corev1.Secret{})
			g.Expect(s.Type).To(Equal(corev1.SecretTypeTLS))
			g.Expect(s.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"))
			secrets[n] = s
		}
		cur := get(g, ns, "secure", &v1alpha1.TargetAllocator{})
		for _, n := range []string{"secure-ca-cert", "secure-ta-server-cert", "secure-ta-client-cert"} {
			isController(g, secrets[n], cur)
		}
		dep := get(g, ns, "secure-targetallocator", &appsv1.Deployment{})
		g.Expect(dep.Spec.Template.Spec.Volumes).To(ContainElement(HaveField("Secret.SecretName", "secure-ta-server-cert")))
		g.Expect(dep.Spec.Template.Spec.Containers[0].VolumeMounts).To(ContainElement(HaveField("MountPath", "/tls")))
		g.Expect(get(g, ns, "secure-targetallocator", &corev1.Service{}).Spec.Ports).To(ContainElement(HaveField("Port", int32(443))))
		g.Expect(file(g, ns, "secure")).To(ContainSubstring("tls_cert_file_path: /tls/tls.crt"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	server := leafOf(g, secrets["secure-ta-server-cert"])
	g.Expect(server.DNSNames).To(ContainElement("secure-targetallocator." + ns + ".svc"))
	g.Expect(server.ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}))
	g.Expect(leafOf(g, secrets["secure-ta-client-cert"]).ExtKeyUsage).To(Equal([]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}))

	// Without prometheusCR (and no spec.mtls): no Secret, no https (the control of the above).
	g.Eventually(func(g Gomega) { file(g, ns, "plain") }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Consistently(func(g Gomega) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "plain-ta-server-cert"}, &corev1.Secret{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue())
		g.Expect(file(g, ns, "plain")).NotTo(ContainSubstring("https"))
	}).WithTimeout(2 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())

	checkServesOnlyToItsCollectors(t, secrets)

	// A reconcile that finds nothing due keeps every certificate.
	touch(g, ns, "secure", "1m")
	g.Eventually(func(g Gomega) { g.Expect(file(g, ns, "secure")).To(ContainSubstring("1m0s")) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	g.Expect(get(g, ns, "secure-ta-server-cert", &corev1.Secret{}).Data).To(Equal(secrets["secure-ta-server-cert"].Data))

	// Rotation: 300 days later (validity 365 days, renewed with a third left) the serving and
	// client certificates are replaced while the old ones are still valid; the CA is kept.
	defer clock.offset.Store(0)
	clock.offset.Store(int64(300 * 24 * time.Hour))
	touch(g, ns, "secure", "2m")
	var renewed *corev1.Secret
	g.Eventually(func(g Gomega) {
		renewed = get(g, ns, "secure-ta-server-cert", &corev1.Secret{})
		g.Expect(leafOf(g, renewed).SerialNumber).NotTo(Equal(server.SerialNumber))
		g.Expect(leafOf(g, get(g, ns, "secure-ta-client-cert", &corev1.Secret{})).SerialNumber).
			NotTo(Equal(leafOf(g, secrets["secure-ta-client-cert"]).SerialNumber))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	fresh := leafOf(g, renewed)
	g.Expect(fresh.NotBefore.Before(server.NotAfter)).To(BeTrue(), "renewed before the old certificate expired")
	g.Expect(get(g, ns, "secure-ca-cert", &corev1.Secret{}).Data[mta.SecretCertKey]).To(Equal(secrets["secure-ca-cert"].Data[mta.SecretCertKey]))

	// Seven years later the CA is due too: a new CA issues new certificates and the bundle still
	// trusts the old CA, so a peer that has not reread its files keeps working.
	clock.offset.Store(int64(7 * 365 * 24 * time.Hour))
	touch(g, ns, "secure", "3m")
	g.Eventually(func(g Gomega) {
		ca := get(g, ns, "secure-ca-cert", &corev1.Secret{})
		g.Expect(ca.Data[mta.SecretCertKey]).NotTo(Equal(secrets["secure-ca-cert"].Data[mta.SecretCertKey]))
		bundle, err := certs.ParseCertificates(get(g, ns, "secure-ta-client-cert", &corev1.Secret{}).Data[mta.SecretCAKey])
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(bundle).To(HaveLen(2))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
	clock.offset.Store(0)

	// A deleted Secret is issued again.
	g.Expect(k8s.Delete(ctx, get(g, ns, "secure-ta-client-cert", &corev1.Secret{}))).To(Succeed())
	touch(g, ns, "secure", "4m")
	g.Eventually(func(g Gomega) { get(g, ns, "secure-ta-client-cert", &corev1.Secret{}) }).WithTimeout(timeout).WithPolling(poll).Should(Succeed())
}

// touch changes spec.collectorNotReadyGracePeriod, so that the target allocator reconciles.
func touch(g Gomega, ns, name, period string) {
	d, err := time.ParseDuration(period)
	g.Expect(err).NotTo(HaveOccurred())
	g.Eventually(func() error {
		cur := get(g, ns, name, &v1alpha1.TargetAllocator{})
		cur.Spec.CollectorNotReadyGracePeriod = &metav1.Duration{Duration: d}
		return k8s.Update(context.Background(), cur)
	}).WithTimeout(timeout).Should(Succeed())
}

// securedJob is a job whose basic auth password only the https listener shows in clear.
const securedJob = `
config:
  scrape_configs:
  - job_name: secured
    basic_auth: {username: u, password: hunter2}
    static_configs: [{targets: ["127.0.0.2:9"]}]
`

// checkServesOnlyToItsCollectors runs the target allocator on loopback with securedJob and the
// files of the Secrets as they would be mounted.
func checkServesOnlyToItsCollectors(t *testing.T, secrets map[string]*corev1.Secret) {
	t.Helper()
	g := NewWithT(t)
	dir := t.TempDir()
	for k, v := range secrets["secure-ta-server-cert"].Data {
		g.Expect(os.WriteFile(filepath.Join(dir, k), v, 0o600)).To(Succeed())
	}
	cfg, err := config.Parse([]byte(securedJob), nil)
	g.Expect(err).NotTo(HaveOccurred())
	cfg.HTTPS = config.HTTPS{Enabled: true, CAFilePath: filepath.Join(dir, mta.SecretCAKey),
		TLSCertFilePath: filepath.Join(dir, mta.SecretCertKey), TLSKeyFilePath: filepath.Join(dir, mta.SecretKeyKey)}
	serveOnlyToItsCollectors(t, cfg, "secure", secrets["secure-ta-client-cert"], secrets["other-ta-client-cert"])
}

// serveOnlyToItsCollectors runs the target allocator called name with cfg on loopback: the
// collectors' certificate (client) gets the password of securedJob over https (positive control),
// a client without a certificate or with another allocator's (foreign) gets nothing.
func serveOnlyToItsCollectors(t *testing.T, cfg config.Config, name string, client, foreign *corev1.Secret) {
	t.Helper()
	g := NewWithT(t)
	cfg.ListenAddr = testenv.FreeAddr(t)
	cfg.HTTPS.ListenAddr = testenv.FreeAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- app.Run(ctx, cfg, slog.New(slog.DiscardHandler)) }()
	defer func() {
		cancel()
		<-done
	}()

	// clientFor trusts the CA of the collectors' Secret and presents the certificate of cert (none
	// when nil).
	clientFor := func(cert *corev1.Secret) *http.Client {
		pool := x509.NewCertPool()
		g.Expect(pool.AppendCertsFromPEM(client.Data[mta.SecretCAKey])).To(BeTrue())
		tc := &tls.Config{RootCAs: pool, ServerName: name + "-targetallocator", MinVersion: tls.VersionTLS12}
		if cert != nil {
			pair, err := tls.X509KeyPair(cert.Data[mta.SecretCertKey], cert.Data[mta.SecretKeyKey])
			g.Expect(err).NotTo(HaveOccurred())
			tc.Certificates = []tls.Certificate{pair}
		}
		return &http.Client{Transport: &http.Transport{TLSClientConfig: tc}, Timeout: 5 * time.Second}
	}
	url := "https://" + cfg.HTTPS.ListenAddr + "/scrape_configs"
	// Positive control: the collectors' certificate gets the password (polled until the listener is up).
	collector := clientFor(client)
	g.Eventually(func(g Gomega) {
		resp, err := collector.Get(url)
		g.Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		g.Expect(string(b)).To(ContainSubstring("hunter2"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	// Attacks: no client certificate, or the certificate of another target allocator's collectors.
	for name, c := range map[string]*http.Client{
		"no certificate":             clientFor(nil),
		"another allocator's client": clientFor(foreign),
	} {
		resp, err := c.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Errorf("%s: served %d %q", name, resp.StatusCode, strings.TrimSpace(string(b)))
		}
	}
}

// TestMTLSFromSpec: spec.mtls.enabled turns mutual TLS on without prometheusCR, and the file the
// operator generated, run by the target allocator with the Secret's files where the pod mounts
// them (/tls), serves the job's password to the collectors' certificate only.
func TestMTLSFromSpec(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t)
	ta := newTA(ns, "explicit")
	ta.Spec.Mtls = &v1beta1.TargetAllocatorMTLS{Enabled: true}
	ta.Spec.ScrapeConfigs = []v1beta1.AnyConfig{{Object: map[string]any{
		"job_name":       "secured",
		"basic_auth":     map[string]any{"username": "u", "password": "hunter2"},
		"static_configs": []any{map[string]any{"targets": []any{"127.0.0.2:9"}}},
	}}}
	g.Expect(k8s.Create(ctx, ta)).To(Succeed())
	foreign := newPromCRTA(ns, "foreign")
	g.Expect(k8s.Create(ctx, foreign)).To(Succeed())

	var server, client, other *corev1.Secret
	var data string
	g.Eventually(func(g Gomega) {
		server = get(g, ns, "explicit-ta-server-cert", &corev1.Secret{})
		client = get(g, ns, "explicit-ta-client-cert", &corev1.Secret{})
		other = get(g, ns, "foreign-ta-client-cert", &corev1.Secret{})
		data = file(g, ns, "explicit")
		g.Expect(data).To(ContainSubstring("https:"))
	}).WithTimeout(timeout).WithPolling(poll).Should(Succeed())

	dir := t.TempDir()
	for k, v := range server.Data {
		g.Expect(os.WriteFile(filepath.Join(dir, k), v, 0o600)).To(Succeed())
	}
	g.Expect(data).To(ContainSubstring(mta.TLSMountPath + "/"))
	cfg, err := config.Parse([]byte(strings.ReplaceAll(data, mta.TLSMountPath+"/", dir+"/")), nil)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.HTTPS.Enabled).To(BeTrue())
	serveOnlyToItsCollectors(t, cfg, "explicit", client, other)
}
