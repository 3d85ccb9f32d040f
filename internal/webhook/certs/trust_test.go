package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/otelop/otelop/internal/testenv"
)

// deny asks the API server to create a ConfigMap the test webhook denies: nil when the webhook
// answered (the TLS handshake succeeded), the error otherwise.
func deny(ctx context.Context, ns string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "denied-", Labels: map[string]string{"deny": "yes"}}}
	err := env.Client.Create(ctx, cm)
	if err != nil && strings.Contains(err.Error(), "denied by the test webhook") {
		return nil
	}
	if err == nil {
		return errString("the webhook was not called")
	}
	return err
}

type errString string

func (e errString) Error() string { return string(e) }

// trustFixture is fixture without the configuration the rotator is not told about (its webhook,
// which nothing injects, would fail every call the tests make) and without the CRD.
func trustFixture(t *testing.T, port int) Options {
	t.Helper()
	o := fixture(t, port)
	o.CRDs = nil
	other := &admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: o.Namespace + "-other"}}
	if err := env.Client.Delete(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	return o
}

// servedLeaf returns the certificate the webhook server presents now.
func servedLeaf(port int) (*x509.Certificate, error) {
	conn, err := tls.Dial("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // reads the served certificate.
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// TestRotationServesOnlyTrustedCertificates rotates the CA several times while the API server
// calls the webhook every 100ms, and watches the injected bundles and the served certificate: a
// certificate is served only after the CA that issued it has been in every bundle for at least
// a quarter of the trust delay (the observer may see the bundle late), and no call fails its TLS
// handshake.
func TestRotationServesOnlyTrustedCertificates(t *testing.T) {
	g := NewWithT(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	port := testenv.FreePort(t)
	opts := trustFixture(t, port)
	opts.Validity, opts.CAValidity = 12*time.Second, 12*time.Second
	opts.TrustDelay, opts.SyncInterval = 2*time.Second, 200*time.Millisecond

	r, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r.Sync(ctx)).To(Succeed())
	serve(t, opts.CertDir, port)
	g.Eventually(func() error { return deny(ctx, opts.Namespace) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())
	go func() { _ = r.Start(ctx) }()

	var (
		mu          sync.Mutex
		inBundles   = map[string]time.Time{} // CA fingerprint -> first seen in every bundle
		cas         = map[string]*x509.Certificate{}
		violations  []string
		served      = map[string]bool{}
		failedCalls []string
		calls       int
	)
	observe := func() {
		now := time.Now()
		bundles := injected(t, opts)
		counts := map[string]int{}
		for _, b := range bundles {
			certs, _ := parseCerts(b)
			for _, c := range certs {
				counts[fingerprint(c)]++
				cas[fingerprint(c)] = c
			}
		}
		for fp, n := range counts {
			if _, ok := inBundles[fp]; !ok && n == len(bundles) {
				inBundles[fp] = now
			}
		}
		leaf, err := servedLeaf(port)
		if err != nil {
			return
		}
		served[fingerprint(leaf)] = true
		for fp, ca := range cas {
			if leaf.CheckSignatureFrom(ca) == nil {
				if since, ok := inBundles[fp]; !ok || (!since.IsZero() && now.Sub(since) < opts.TrustDelay/4) {
					violations = append(violations, "a certificate was served "+now.Sub(since).String()+" after its CA joined the bundles")
				}
				return
			}
		}
		violations = append(violations, "a certificate whose CA is in no bundle was served")
	}
	// The CA of the start is trusted from the beginning.
	for _, b := range injected(t, opts) {
		certs, _ := parseCerts(b)
		for _, c := range certs {
			inBundles[fingerprint(c)] = time.Time{}
			cas[fingerprint(c)] = c
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			if err := deny(ctx, opts.Namespace); ctx.Err() == nil {
				mu.Lock()
				calls++
				if err != nil {
					failedCalls = append(failedCalls, err.Error())
				}
				mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		observe()
		rotations := len(served)
		mu.Unlock()
		if rotations >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d CAs, %d served certificates, %d webhook calls", len(inBundles), len(served), calls)
	g.Expect(len(served)).To(BeNumerically(">=", 3), "at least two CA rotations reached the server")
	g.Expect(violations).To(BeEmpty())
	g.Expect(failedCalls).To(BeEmpty(), "webhook calls that failed during rotation")
}

// TestRecreatedSecretKeepsTrustingServedCertificates: the Secret is deleted; a replica that
// starts then issues a new CA, but the bundle keeps the CA that issued what the other replicas
// serve, and they keep serving it (trusted) until the trust delay has passed.
func TestRecreatedSecretKeepsTrustingServedCertificates(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	port := testenv.FreePort(t)
	opts := trustFixture(t, port)
	opts.TrustDelay = time.Hour
	a, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a.Sync(ctx)).To(Succeed())
	servedByA := readFile(t, opts.CertDir, CertFile)
	firstBundle := injected(t, opts)[0]
	serve(t, opts.CertDir, port)
	g.Eventually(func() error { return deny(ctx, opts.Namespace) }, 10*time.Second, 100*time.Millisecond).Should(Succeed())

	g.Expect(env.Client.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: DefaultSecretName}})).To(Succeed())
	optsB := opts
	optsB.CertDir = t.TempDir() // a new pod
	b, err := NewRotator(uncached(t), optsB)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(b.Sync(ctx)).To(Succeed())
	bundle := injected(t, opts)[0]
	g.Expect(bundle).NotTo(Equal(firstBundle), "a new CA")
	g.Expect(string(bundle)).To(ContainSubstring(strings.TrimSpace(string(firstBundle))), "the CA replica A's certificate comes from is still trusted")
	g.Expect(readFile(t, optsB.CertDir, CertFile)).NotTo(BeEmpty(), "the new replica serves at once")

	g.Expect(a.Sync(ctx)).To(Succeed())
	g.Expect(readFile(t, opts.CertDir, CertFile)).To(Equal(servedByA), "replica A keeps its trusted certificate during the trust delay")
	g.Consistently(func() error { return deny(ctx, opts.Namespace) }, 2*time.Second, 200*time.Millisecond).Should(Succeed())

	// After the delay replica A moves to the new certificate.
	a.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	g.Expect(a.Sync(ctx)).To(Succeed())
	g.Expect(readFile(t, opts.CertDir, CertFile)).NotTo(Equal(servedByA))
	// Once every replica has had time to move, the lost Secret's CA is no longer trusted.
	g.Expect(string(injected(t, opts)[0])).NotTo(ContainSubstring(strings.TrimSpace(string(firstBundle))))
	left, err := parseCerts(injected(t, opts)[0])
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(left).To(HaveLen(1), "only the new CA")
}

// TestSecretNotCreatedByTheOperator: an Opaque Secret of the same name that holds something
// else is never changed, start-up does not fail (a Warning Event says why the webhooks do not
// work); one that holds a usable certificate is adopted and renewed without changing its type.
func TestSecretNotCreatedByTheOperator(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	opts := trustFixture(t, testenv.FreePort(t))
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: opts.Namespace, Name: DefaultSecretName},
		Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("hunter2")}}
	g.Expect(env.Client.Create(ctx, foreign)).To(Succeed())

	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{Scheme: Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Setup(ctx, mgr, opts)).To(Succeed(), "no crash loop")
	g.Expect(readFile(t, opts.CertDir, CertFile)).NotTo(BeEmpty(), "the webhook server can start")
	after := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), after)).To(Succeed())
	g.Expect(after.ResourceVersion).To(Equal(foreign.ResourceVersion), "left untouched")
	g.Expect(injected(t, opts)[0]).To(BeEmpty(), "nothing is injected")
	r, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	err = r.Sync(ctx)
	g.Expect(err).To(MatchError(ErrForeignSecret))
	g.Expect(err.Error()).To(ContainSubstring(opts.Namespace + "/" + DefaultSecretName))
	g.Expect(err.Error()).To(ContainSubstring("password"))
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mctx) }()
	g.Eventually(func(g Gomega) {
		evs := &eventsv1.EventList{}
		g.Expect(env.Client.List(ctx, evs, client.InNamespace(opts.Namespace))).To(Succeed())
		g.Expect(evs.Items).To(ContainElement(HaveField("Reason", "ForeignSecret")))
	}, 10*time.Second, 200*time.Millisecond).Should(Succeed())

	// The same Secret, now holding a CA and certificate in the operator's format: adopted.
	full, err := opts.withDefaults()
	g.Expect(err).NotTo(HaveOccurred())
	m, _, err := renew(nil, nil, full, time.Now())
	g.Expect(err).NotTo(HaveOccurred())
	material := &corev1.Secret{Data: m.data()}
	after.Data = material.Data
	g.Expect(env.Client.Update(ctx, after)).To(Succeed())
	g.Expect(r.Sync(ctx)).To(Succeed())
	g.Expect(readFile(t, opts.CertDir, CertFile)).To(Equal(material.Data[keyCert]))
	g.Expect(injected(t, opts)[0]).To(Equal(material.Data[keyCA]))

	// Renewal (here: a new service name) updates it in place; the type stays Opaque.
	opts.ServiceName = "renamed"
	r2, err := NewRotator(uncached(t), opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(r2.Sync(ctx)).To(Succeed())
	g.Expect(env.Client.Get(ctx, client.ObjectKeyFromObject(foreign), after)).To(Succeed())
	g.Expect(after.Type).To(Equal(corev1.SecretTypeOpaque))
	g.Expect(after.Data[keyCert]).NotTo(Equal(material.Data[keyCert]))
}
