package bridge

import (
	"context"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/opampbridge/agent"
	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
)

const wait = 30 * time.Second

func attr(kvs []*protobufs.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func onlyAgent(g *WithT, srv *opamptest.Server) string {
	uids := srv.Agents()
	g.Expect(uids).To(HaveLen(1))
	return uids[0]
}

func files(kv ...any) map[string]*protobufs.AgentConfigFile {
	m := map[string]*protobufs.AgentConfigFile{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = &protobufs.AgentConfigFile{Body: kv[i+1].([]byte), ContentType: "text/yaml"}
	}
	return m
}

func statusFor(srv *opamptest.Server, hash []byte) func(map[string]*opamptest.AgentState) bool {
	return func(agents map[string]*opamptest.AgentState) bool {
		for _, a := range agents {
			if a.RemoteConfigStatus != nil && string(a.RemoteConfigStatus.LastRemoteConfigHash) == string(hash) {
				return true
			}
		}
		return false
	}
}

// TestBridgeEndToEnd runs the bridge against a real API server and a real OpAMP server, as one
// user story: discovery, effective config, remote config (allowed, forbidden, unlabelled, same
// hash, deletion), restart, and a stable UID across a restart of the bridge.
func TestBridgeEndToEnd(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	createNamespace(t, "obs")
	createNamespace(t, "apps")
	// The bridge runs in obs and changes collectors in apps: it must list apps and be named by
	// the collectors (opamp-managed=true gives a collector to its own namespace's bridges only).
	managed := map[string]string{collectors.ManagedLabel: "bridge"}
	createCollector(t, collectorYAML("apps", "managed-a", managed))
	createCollector(t, collectorYAML("apps", "report-b", map[string]string{collectors.ReportingLabel: "true"}))
	createCollector(t, collectorYAML("apps", "plain-c", nil))
	createCollector(t, collectorYAML("apps", "both-d", map[string]string{collectors.ManagedLabel: "bridge", collectors.ReportingLabel: "true"}))

	srv := startServer(t)
	cfg := testConfig(t, srv, "bridge", "obs")
	cfg.Namespaces = []string{"apps"}
	b := startBridge(t, cfg, Options{})

	// First message: description and capabilities.
	g.Expect(srv.Wait(wait, "the bridge to connect", func(m map[string]*opamptest.AgentState) bool { return len(m) == 1 })).To(Succeed())
	uid := onlyAgent(g, srv)
	first := srv.Agent(uid).Messages[0]
	g.Expect(attr(first.GetAgentDescription().GetIdentifyingAttributes(), "service.name")).To(Equal(agent.ServiceName))
	g.Expect(attr(first.GetAgentDescription().GetIdentifyingAttributes(), "service.version")).To(Equal("0.1.0-test"))
	g.Expect(attr(first.GetAgentDescription().GetNonIdentifyingAttributes(), agent.ModeAttribute)).To(Equal("operator"))
	g.Expect(first.GetCapabilities()).To(Equal(uint64(0x1 | 0x2 | 0x4 | 0x400 | 0x800 | 0x1000)))

	// Effective config: managed and reporting collectors, each once, as YAML.
	g.Expect(srv.Wait(wait, "effective config with 3 collectors", func(m map[string]*opamptest.AgentState) bool {
		a := m[uid]
		return a.EffectiveConfig != nil && len(a.EffectiveConfig.GetConfigMap().GetConfigMap()) == 3
	})).To(Succeed())
	ec := srv.Agent(uid).EffectiveConfig.GetConfigMap().GetConfigMap()
	g.Expect(ec).To(HaveKey("apps/managed-a"))
	g.Expect(ec).To(HaveKey("apps/report-b"))
	g.Expect(ec).To(HaveKey("apps/both-d"))
	g.Expect(ec["apps/managed-a"].ContentType).To(Equal("text/yaml"))
	g.Expect(string(ec["apps/managed-a"].Body)).To(ContainSubstring("name: managed-a"))
	g.Expect(string(ec["apps/managed-a"].Body)).NotTo(ContainSubstring("managedFields"))

	// Health: one child per collector.
	g.Expect(srv.Agent(uid).Health.GetComponentHealthMap()).To(HaveKey("apps/managed-a"))

	t.Run("apply creates and updates; same hash is a no-op", func(t *testing.T) {
		g := NewWithT(t)
		push := files(
			"apps/managed-a", collectorYAML("apps", "managed-a", managed, "otlp", "otlp/2"),
			"apps/new-e", collectorYAML("apps", "new-e", map[string]string{collectors.ManagedLabel: "bridge"}),
		)
		hash, err := srv.PushConfig(ctx, uid, push)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(srv.Wait(wait, "APPLIED", statusFor(srv, hash))).To(Succeed())
		st := srv.Agent(uid).RemoteConfigStatus
		g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)

		var e v1beta1.OpenTelemetryCollector
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "new-e"}, &e)).To(Succeed())
		g.Expect(e.Labels).To(HaveKeyWithValue(collectors.CreatedByLabel, collectors.CreatedByValue))
		g.Expect(e.Annotations).To(HaveKeyWithValue(collectors.BridgeAnnotation, "obs/bridge"))
		var a v1beta1.OpenTelemetryCollector
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "managed-a"}, &a)).To(Succeed())
		g.Expect(a.Spec.Config.Receivers.Object).To(HaveKey("otlp/2"))
		g.Expect(a.Labels).NotTo(HaveKey(collectors.CreatedByLabel), "a hand-made collector is never marked as created by the bridge")

		g.Expect(srv.Wait(wait, "effective config with new-e", func(m map[string]*opamptest.AgentState) bool {
			return m[uid].EffectiveConfig.GetConfigMap().GetConfigMap()["apps/new-e"] != nil
		})).To(Succeed())

		before := len(srv.Agent(uid).Messages)
		_, err = srv.PushConfig(ctx, uid, push)
		g.Expect(err).NotTo(HaveOccurred())
		time.Sleep(time.Second)
		for _, m := range srv.Agent(uid).Messages[before:] {
			g.Expect(m.RemoteConfigStatus).To(BeNil(), "no status after a no-op")
		}
	})

	failed := func(g *WithT, push map[string]*protobufs.AgentConfigFile, want ...string) {
		hash, err := srv.PushConfig(ctx, uid, push)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(srv.Wait(wait, "a status", statusFor(srv, hash))).To(Succeed())
		st := srv.Agent(uid).RemoteConfigStatus
		g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))
		for _, w := range want {
			g.Expect(st.ErrorMessage).To(ContainSubstring(w))
		}
	}
	rv := func(name string) string {
		var c v1beta1.OpenTelemetryCollector
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: name}, &c); err != nil {
			return err.Error()
		}
		return c.ResourceVersion
	}

	t.Run("forbidden component and unlabelled target fail and change nothing", func(t *testing.T) {
		g := NewWithT(t)
		a, e, c := rv("managed-a"), rv("new-e"), rv("plain-c")
		failed(g, files(
			"apps/managed-a", collectorYAML("apps", "managed-a", managed, "jaeger"),
			"apps/new-e", collectorYAML("apps", "new-e", map[string]string{collectors.ManagedLabel: "bridge"}),
		), "apps/managed-a", "receivers.jaeger")
		failed(g, files(
			"apps/plain-c", collectorYAML("apps", "plain-c", managed),
			"apps/report-b", collectorYAML("apps", "report-b", managed),
			"apps/new-e", collectorYAML("apps", "new-e", nil),
			"apps/new-e", collectorYAML("apps", "new-e", map[string]string{collectors.ManagedLabel: "bridge"}),
			"bad-key", []byte("x"),
		), "apps/plain-c: the existing collector lacks the label", "apps/report-b: the existing collector is labelled opentelemetry.io/opamp-reporting=true", "bad-key")
		g.Expect([]string{rv("managed-a"), rv("new-e"), rv("plain-c")}).To(Equal([]string{a, e, c}))
	})

	t.Run("restart touches only managed collectors' workloads", func(t *testing.T) {
		g := NewWithT(t)
		for _, name := range []string{"managed-a-collector", "report-b-collector"} {
			g.Expect(env.Client.Create(ctx, deployment("apps", name))).To(Succeed())
		}
		g.Expect(srv.SendCommand(ctx, uid)).To(Succeed())
		g.Eventually(func() string {
			var d appsv1.Deployment
			_ = env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "managed-a-collector"}, &d)
			return d.Spec.Template.Annotations[collectors.RestartedAtAnnotation]
		}, wait).ShouldNot(BeEmpty())
		var d appsv1.Deployment
		g.Expect(env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "report-b-collector"}, &d)).To(Succeed())
		g.Expect(d.Spec.Template.Annotations).NotTo(HaveKey(collectors.RestartedAtAnnotation))
	})

	t.Run("UID and last status survive a restart; deletes only its own creations", func(t *testing.T) {
		g := NewWithT(t)
		lastHash := srv.Agent(uid).RemoteConfigStatus.LastRemoteConfigHash
		b.stop(t)
		g.Expect(srv.Wait(wait, "the bridge to disconnect", func(m map[string]*opamptest.AgentState) bool { return !m[uid].Connected })).To(Succeed())
		before := len(srv.Agent(uid).Messages)
		startBridge(t, cfg, Options{})
		g.Expect(srv.Wait(wait, "the bridge to reconnect", func(m map[string]*opamptest.AgentState) bool {
			return m[uid].Connected && len(m[uid].Messages) > before
		})).To(Succeed())
		g.Expect(srv.Agents()).To(HaveLen(1), "same instance UID after a restart")
		g.Expect(srv.Agent(uid).Messages[before].GetRemoteConfigStatus().GetLastRemoteConfigHash()).To(Equal(lastHash))

		// A config without new-e and managed-a: new-e (created by the bridge) goes, managed-a (hand-made) stays.
		hash, err := srv.PushConfig(ctx, uid, files("apps/new-f", collectorYAML("apps", "new-f", managed)))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(srv.Wait(wait, "APPLIED", statusFor(srv, hash))).To(Succeed())
		g.Expect(srv.Agent(uid).RemoteConfigStatus.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), srv.Agent(uid).RemoteConfigStatus.ErrorMessage)
		err = env.Client.Get(ctx, client.ObjectKey{Namespace: "apps", Name: "new-e"}, &v1beta1.OpenTelemetryCollector{})
		g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "new-e deleted")
		g.Expect(rv("managed-a")).NotTo(ContainSubstring("not found"))
		g.Expect(rv("new-f")).NotTo(ContainSubstring("not found"))
	})
}

func deployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "otel/collector"}}},
			},
		},
	}
}

var _ = strings.TrimSpace
