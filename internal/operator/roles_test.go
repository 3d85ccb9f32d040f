package operator_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/pem"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
)

// TestRolesRefuseAnInstanceThatDoesNothing: --enable-reconcilers=false needs the webhooks, and a
// webhook-only instance takes no shard; both are refused before any cluster is contacted.
func TestRolesRefuseAnInstanceThatDoesNothing(t *testing.T) {
	for name, set := range map[string]func(*operator.Options){
		"neither": func(o *operator.Options) { o.EnableReconcilers, o.EnableWebhooks = false, false },
		"shard":   func(o *operator.Options) { o.EnableReconcilers, o.Shard = false, "team-a" },
	} {
		o := operator.DefaultOptions()
		set(&o)
		_, err := operator.New(context.Background(), env.Config, o)
		if err == nil || !strings.Contains(err.Error(), "--enable-reconcilers=false") {
			t.Errorf("%s: err = %v, want a refusal naming --enable-reconcilers=false", name, err)
		}
	}
}

// instance is one manager of TestWebhookAndReconcilerInstances.
type instance struct {
	probe   string
	webhook string // host:port of the webhook server; empty without webhooks
}

// startInstance runs operator.New(o) on loopback ports until the test ends.
func startInstance(t *testing.T, o operator.Options, webhooks bool) instance {
	t.Helper()
	in := instance{probe: testenv.FreeAddr(t)}
	o.ProbeAddr, o.MetricsAddr, o.MetricsSecure = in.probe, "0", false
	o.SkipControllerNameValidation = true
	o.EnableLeaderElection = true
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 15*time.Second, 10*time.Second, time.Second
	o.Certs.Namespace = "default"
	o.Certs.CertDir = filepath.Join(t.TempDir(), "certs")
	o.Certs.ExtraIPs = []net.IP{net.ParseIP("127.0.0.1")}
	if webhooks {
		o.WebhookHost, o.WebhookPort = "127.0.0.1", testenv.FreePort(t)
		in.webhook = net.JoinHostPort(o.WebhookHost, strconv.Itoa(o.WebhookPort))
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := operator.New(ctx, env.Config, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return in
}

// TestWebhookAndReconcilerInstances: the split the chart's manager.webhookDeployment makes. Two
// webhook-only replicas (--enable-reconcilers=false) and one reconciler-only instance
// (--enable-webhooks=false) run side by side: all three become ready (the reconciler's readiness
// does not wait for a webhook server it does not have), both webhook replicas serve the one
// certificate of the shared Secret, and the two roles elect their leaders on different Leases, so
// neither can keep the other from working.
func TestWebhookAndReconcilerInstances(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	o := operator.DefaultOptions()
	o.LeaderElectionID = "roles-test"
	webhookOnly := o
	webhookOnly.EnableReconcilers = false
	reconcilerOnly := o
	reconcilerOnly.EnableWebhooks = false

	replicas := []instance{startInstance(t, webhookOnly, true), startInstance(t, webhookOnly, true)}
	rec := startInstance(t, reconcilerOnly, false)
	for _, in := range append(replicas, rec) {
		g.Eventually(func() int {
			resp, err := http.Get("http://" + in.probe + "/readyz")
			if err != nil {
				return 0
			}
			_ = resp.Body.Close()
			return resp.StatusCode
		}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Equal(http.StatusOK), "readiness of %s", in.probe)
	}

	secret := &corev1.Secret{}
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: o.Certs.SecretName}, secret)).To(Succeed())
	for _, in := range replicas {
		g.Eventually(func(g Gomega) {
			conn, err := tls.Dial("tcp", in.webhook, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // compared below
			g.Expect(err).NotTo(HaveOccurred())
			defer conn.Close()
			leaf := conn.ConnectionState().PeerCertificates[0].Raw
			g.Expect(bytes.Equal(certDER(secret.Data[corev1.TLSCertKey]), leaf)).To(BeTrue(),
				"replica %s serves a certificate other than the Secret's", in.webhook)
		}).WithTimeout(30 * time.Second).WithPolling(200 * time.Millisecond).Should(Succeed())
	}

	for _, id := range []string{o.LeaderElectionID, o.LeaderElectionID + operator.WebhookLeaseSuffix} {
		g.Eventually(func(g Gomega) {
			lease := &coordinationv1.Lease{}
			g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: id}, lease)).To(Succeed())
			g.Expect(lease.Spec.HolderIdentity).NotTo(BeNil())
			g.Expect(*lease.Spec.HolderIdentity).NotTo(BeEmpty())
		}).WithTimeout(30*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(), "Lease %s held", id)
	}
}

// certDER is the first certificate of a PEM bundle, or nil.
func certDER(pemData []byte) []byte {
	if b, _ := pem.Decode(pemData); b != nil {
		return b.Bytes
	}
	return nil
}
