package opampbridge_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/opampbridge"
)

var (
	env    *testenv.Env
	k8s    client.Client
	scheme = runtime.NewScheme()
)

// TestMain starts kube-apiserver with the CRDs and the webhook configurations of config/webhook
// (envtest points them at 127.0.0.1 with its own serving certificate), then a manager serving the
// OpAMPBridge webhooks.
func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	testenv.WebhookMain(m, scheme, func(e *testenv.Env) { env, k8s = e, e.Client }, startManager)
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	_, done, err := env.StartWebhookManager(ctx, nil, scheme, func(mgr ctrl.Manager) error {
		return opampbridge.Setup(mgr, opampbridge.Options{})
	})
	return done, err
}

func newNamespace(t *testing.T, name string) string {
	t.Helper()
	if err := k8s.Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	return name
}

func bridge(ns, name string) *v1alpha1.OpAMPBridge {
	return &v1alpha1.OpAMPBridge{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: v1alpha1.OpAMPBridgeSpec{
			Endpoint:     "ws://opamp-server:4320/v1/opamp",
			Capabilities: map[v1alpha1.OpAMPBridgeCapability]bool{v1alpha1.OpAMPBridgeCapabilityAcceptsRemoteConfig: true},
		},
	}
}

// TestDefaultsThroughTheAPIServer creates a bridge with the minimum and reads back the defaults;
// an update without changes keeps them as they are.
func TestDefaultsThroughTheAPIServer(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "defaults")
	g.Expect(k8s.Create(ctx, bridge(ns, "b"))).To(Succeed())
	got := &v1alpha1.OpAMPBridge{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b"}, got)).To(Succeed())
	g.Expect(got.Spec.UpgradeStrategy).To(Equal(v1alpha1.UpgradeStrategyAutomatic))
	g.Expect(got.Spec.Replicas).NotTo(BeNil())
	g.Expect(*got.Spec.Replicas).To(Equal(int32(1)))
	g.Expect(got.Spec.Capabilities).To(HaveKeyWithValue(v1alpha1.OpAMPBridgeCapabilityReportsStatus, true))
	rv := got.ResourceVersion
	g.Expect(k8s.Update(ctx, got)).To(Succeed())
	g.Expect(got.ResourceVersion).To(Equal(rv), "an update that changes nothing stores nothing")
}

// TestRejections sends invalid bridges (dry run for creates) and checks that every problem comes
// back with its field path, in one answer.
func TestRejections(t *testing.T) {
	ctx := context.Background()
	ns := newNamespace(t, "rejections")
	tests := []struct {
		name   string
		mutate func(*v1alpha1.OpAMPBridge)
		fields []string
	}{{
		name: "endpoint, tls and ports together",
		mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Endpoint = "opamp-server:4320"
			b.Spec.TLS = &v1alpha1.OpAMPBridgeTLSConfig{Insecure: true, InsecureSkipVerify: true}
			b.Spec.Ports = []corev1.ServicePort{{Name: "opamp-bridge", Port: 9000}}
		},
		fields: []string{"spec.endpoint", "spec.tls.insecure_skip_verify", "spec.ports[0].name"},
	}, {
		name:   "unknown capability",
		mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Capabilities["ReportsEverything"] = true },
		fields: []string{"spec.capabilities[ReportsEverything]"},
	}, {
		name:   "missing endpoint",
		mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "" },
		fields: []string{"spec.endpoint"},
	}, {
		name:   "unknown componentsAllowed section",
		mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.ComponentsAllowed = map[string][]string{"pipelines": {"x"}} },
		fields: []string{"spec.componentsAllowed[pipelines]"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			b := bridge(ns, "invalid")
			tt.mutate(b)
			err := k8s.Create(ctx, b, client.DryRunAll)
			g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
			for _, f := range tt.fields {
				g.Expect(err.Error()).To(ContainSubstring(f))
			}
		})
	}
}

// TestInvalidUpdateRejectedDeleteAllowed: an update is validated like a create; a delete never is.
func TestInvalidUpdateRejectedDeleteAllowed(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	ns := newNamespace(t, "updates")
	b := bridge(ns, "u")
	g.Expect(k8s.Create(ctx, b)).To(Succeed())
	b.Spec.Endpoint = "ftp://opamp-server/v1/opamp"
	err := k8s.Update(ctx, b)
	g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "got %v", err)
	g.Expect(err.Error()).To(ContainSubstring("spec.endpoint"))
	g.Expect(k8s.Delete(ctx, bridge(ns, "u"))).To(Succeed())
}
