package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/identity"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
)

// These tests play a malicious or buggy OpAMP server (issue 14, item 12 and 13).

// pushAndWait pushes files and waits for the status of that hash.
func pushAndWait(g *WithT, srv *opamptest.Server, uid string, push map[string]*protobufs.AgentConfigFile) *protobufs.RemoteConfigStatus {
	hash, err := srv.PushConfig(context.Background(), uid, push)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(srv.Wait(wait, "a status", statusFor(srv, hash))).To(Succeed())
	return srv.Agent(uid).RemoteConfigStatus
}

func exists(ns, name string) bool {
	err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &v1beta1.OpenTelemetryCollector{})
	return !apierrors.IsNotFound(err)
}

func connected(g *WithT, srv *opamptest.Server) string {
	g.Expect(srv.Wait(wait, "the bridge to connect", func(m map[string]*opamptest.AgentState) bool { return len(m) == 1 })).To(Succeed())
	return onlyAgent(g, srv)
}

// TestForgedCreationMarksDoNotDelete: a server writes the bridge's created-by label and
// annotation into a hand-made collector; the next configuration without it must not delete it.
// The bridge deletes only what its own record (the identity ConfigMap) says it created.
func TestForgedCreationMarksDoNotDelete(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "forge")
	managed := map[string]string{collectors.ManagedLabel: "true"}
	createCollector(t, collectorYAML("forge", "hand", managed))
	srv := startServer(t)
	startBridge(t, testConfig(t, srv, "forge-bridge", "forge"), Options{})
	uid := connected(g, srv)

	forged := strings.Replace(string(collectorYAML("forge", "hand", map[string]string{
		collectors.ManagedLabel: "true", collectors.CreatedByLabel: collectors.CreatedByValue,
	})), "  labels:\n", "  annotations:\n    "+collectors.BridgeAnnotation+": forge/forge-bridge\n  labels:\n", 1)
	st := pushAndWait(g, srv, uid, files("forge/hand", []byte(forged), "forge/mine", collectorYAML("forge", "mine", managed)))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
	var hand v1beta1.OpenTelemetryCollector
	g.Expect(env.Client.Get(context.Background(), client.ObjectKey{Namespace: "forge", Name: "hand"}, &hand)).To(Succeed())
	g.Expect(hand.Labels).NotTo(HaveKey(collectors.CreatedByLabel), "the server cannot set the creation marks")
	g.Expect(hand.Annotations).NotTo(HaveKey(collectors.BridgeAnnotation))

	st = pushAndWait(g, srv, uid, files("forge/other", collectorYAML("forge", "other", managed)))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
	g.Expect(exists("forge", "hand")).To(BeTrue(), "the hand-made collector survives")
	g.Expect(exists("forge", "mine")).To(BeFalse(), "the bridge's own creation is deleted")
}

// TestNamespaceScoping: a bridge configured with namespaces reports and changes only those.
func TestNamespaceScoping(t *testing.T) {
	g := NewWithT(t)
	createNamespace(t, "scope-in")
	createNamespace(t, "scope-out")
	managed := map[string]string{collectors.ManagedLabel: "true"}
	createCollector(t, collectorYAML("scope-in", "a", managed))
	createCollector(t, collectorYAML("scope-out", "b", managed))
	srv := startServer(t)
	cfg := testConfig(t, srv, "scoped", "scope-in")
	cfg.Namespaces = []string{"scope-in"}
	startBridge(t, cfg, Options{})
	uid := connected(g, srv)
	g.Expect(srv.Wait(wait, "effective config", func(m map[string]*opamptest.AgentState) bool {
		return m[uid].EffectiveConfig.GetConfigMap().GetConfigMap()["scope-in/a"] != nil
	})).To(Succeed())
	g.Expect(srv.Agent(uid).EffectiveConfig.GetConfigMap().GetConfigMap()).NotTo(HaveKey("scope-out/b"))
	st := pushAndWait(g, srv, uid, files("scope-out/b", collectorYAML("scope-out", "b", managed, "otlp", "otlp/2")))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))
	g.Expect(st.ErrorMessage).To(ContainSubstring("outside the bridge's namespaces"))
}

// TestFailedApplyDoesNotDelete: the dry run passes but the real apply is refused (an admission
// policy that lets only dry runs through); the bridge must not go on to delete its creations.
func TestFailedApplyDoesNotDelete(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "fdel")
	policy := &admissionv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "fdel-real-writes-of-boom"},
		Spec: admissionv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptrTo(admissionv1.Fail),
			MatchConstraints: &admissionv1.MatchResources{
				ResourceRules: []admissionv1.NamedRuleWithOperations{{RuleWithOperations: admissionv1.RuleWithOperations{
					Operations: []admissionv1.OperationType{admissionv1.Create, admissionv1.Update},
					Rule:       admissionv1.Rule{APIGroups: []string{"opentelemetry.io"}, APIVersions: []string{"*"}, Resources: []string{"opentelemetrycollectors"}},
				}}},
			},
			Validations: []admissionv1.Validation{{
				Expression: "request.dryRun == true || object.metadata.namespace != 'fdel' || object.metadata.name != 'boom'",
				Message:    "real writes of fdel/boom are refused",
			}},
		},
	}
	g.Expect(env.Client.Create(ctx, policy)).To(Succeed())
	binding := &admissionv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "fdel-real-writes-of-boom"},
		Spec:       admissionv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: policy.Name, ValidationActions: []admissionv1.ValidationAction{admissionv1.Deny}},
	}
	g.Expect(env.Client.Create(ctx, binding)).To(Succeed())
	t.Cleanup(func() { _ = env.Client.Delete(ctx, binding); _ = env.Client.Delete(ctx, policy) })
	// Wait until the policy is in force.
	g.Eventually(func() error {
		err := env.Client.Create(ctx, collectorObject(t, collectorYAML("fdel", "boom", nil)))
		if err == nil {
			_ = env.Client.Delete(ctx, collectorObject(t, collectorYAML("fdel", "boom", nil)))
		}
		return err
	}, wait).Should(HaveOccurred())

	managed := map[string]string{collectors.ManagedLabel: "true"}
	srv := startServer(t)
	startBridge(t, testConfig(t, srv, "fdel-bridge", "fdel"), Options{})
	uid := connected(g, srv)
	st := pushAndWait(g, srv, uid, files("fdel/mine", collectorYAML("fdel", "mine", managed)))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
	st = pushAndWait(g, srv, uid, files("fdel/boom", collectorYAML("fdel", "boom", managed)))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))
	g.Expect(st.ErrorMessage).To(ContainSubstring("real writes of fdel/boom are refused"))
	g.Expect(exists("fdel", "mine")).To(BeTrue(), "a half-applied configuration deletes nothing")
}

// TestIdentityTruncatesHugeErrors: an error larger than a ConfigMap can hold is stored truncated.
func TestIdentityTruncatesHugeErrors(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "trunc")
	store := identity.New(env.Client, "trunc", "trunc")
	_, err := store.Load(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	huge := strings.Repeat("é", 1<<20) // 2 MiB
	g.Expect(store.SaveRemoteConfigStatus(ctx, &protobufs.RemoteConfigStatus{
		LastRemoteConfigHash: []byte{1}, Status: protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED, ErrorMessage: huge,
	})).To(Succeed())
	st, err := store.Load(ctx)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(len(st.RemoteConfigStatus.ErrorMessage)).To(BeNumerically("<=", identity.MaxErrorBytes))
	g.Expect(st.RemoteConfigStatus.ErrorMessage).To(HavePrefix("éé"))
	g.Expect(st.RemoteConfigStatus.ErrorMessage).To(ContainSubstring("more bytes"))
}

func ptrTo[T any](v T) *T { return &v }

// TestFailedConfigIsRetried: a configuration FAILED because a collector lacked the managed
// label; once someone labels it, the bridge applies the same configuration again by itself (the
// server does not resend a hash the bridge already answered) and reports APPLIED (issue 14,
// item 13).
func TestFailedConfigIsRetried(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "retry")
	createCollector(t, collectorYAML("retry", "plain", nil))
	srv := startServer(t)
	startBridge(t, testConfig(t, srv, "retry-bridge", "retry"), Options{RetryBackoff: 200 * time.Millisecond})
	uid := connected(g, srv)
	managed := map[string]string{collectors.ManagedLabel: "true"}
	hash, err := srv.PushConfig(ctx, uid, files("retry/plain", collectorYAML("retry", "plain", managed, "otlp", "otlp/2")))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(srv.Wait(wait, "FAILED", statusFor(srv, hash))).To(Succeed())
	g.Expect(srv.Agent(uid).RemoteConfigStatus.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))

	var c v1beta1.OpenTelemetryCollector
	g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "retry", Name: "plain"}, &c)).To(Succeed())
	c.Labels = managed
	g.Expect(env.Client.Update(ctx, &c)).To(Succeed())
	g.Expect(srv.Wait(wait, "the same hash APPLIED", func(m map[string]*opamptest.AgentState) bool {
		st := m[uid].RemoteConfigStatus
		return string(st.GetLastRemoteConfigHash()) == string(hash) && st.GetStatus() == protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED
	})).To(Succeed())
}

// TestServerMessageLimit: a WebSocket message from the server over the limit drops the
// connection before it is read; the bridge reconnects and handles the next, smaller one.
func TestServerMessageLimit(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "bigmsg")
	srv := startServer(t)
	startBridge(t, testConfig(t, srv, "bigmsg-bridge", "bigmsg"), Options{MaxServerMessageBytes: 1 << 20})
	uid := connected(g, srv)
	managed := map[string]string{collectors.ManagedLabel: "true"}
	big := append(collectorYAML("bigmsg", "big", managed), []byte("# "+strings.Repeat("x", 2<<20)+"\n")...)
	// The write may fail: the bridge drops the connection as soon as the frame header announces
	// the size, before the payload is through.
	hash, _ := srv.PushConfig(ctx, uid, files("bigmsg/big", big))
	g.Expect(srv.Wait(3*time.Second, "a status for the oversized configuration", statusFor(srv, hash))).NotTo(Succeed())
	var small []byte
	g.Eventually(func() error {
		h, err := srv.PushConfig(ctx, uid, files("bigmsg/small", collectorYAML("bigmsg", "small", managed)))
		small = h
		return err
	}, wait, 200*time.Millisecond).Should(Succeed(), "the bridge reconnects")
	g.Expect(srv.Wait(wait, "APPLIED", statusFor(srv, small))).To(Succeed())
	st := srv.Agent(uid).RemoteConfigStatus
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
	g.Expect(exists("bigmsg", "big")).To(BeFalse())
}

// TestClientRateIsBounded: whatever the caller passes (client-go's unset rate, or the unlimited
// -1 the bridge used to set), the bridge talks to the API server at a bounded rate.
func TestClientRateIsBounded(t *testing.T) {
	g := NewWithT(t)
	for _, in := range []*rest.Config{{}, {QPS: -1}, {QPS: 20, Burst: 40}} {
		out := ClientConfig(in)
		g.Expect(out.QPS).To(BeNumerically(">", 0))
		g.Expect(out.QPS).To(BeNumerically("<=", DefaultQPS))
		g.Expect(out.Burst).To(BeNumerically(">", 0))
	}
	g.Expect(ClientConfig(&rest.Config{QPS: 20, Burst: 40}).QPS).To(Equal(float32(20)))
}
