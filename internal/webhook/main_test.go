package webhook

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/collector"
)

var (
	env    *testenv.Env
	scheme = runtime.NewScheme()
)

// TestMain starts kube-apiserver with the CRDs and the webhook configurations of config/webhook
// (envtest points them, and the CRD conversion, at 127.0.0.1 with its own serving certificate),
// then a manager whose webhook server has everything Setup registers.
func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	testenv.WebhookMain(m, scheme, func(e *testenv.Env) { env = e }, startManager)
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	_, done, err := env.StartWebhookManager(ctx, nil, scheme, func(mgr ctrl.Manager) error {
		manifests := mcollector.DefaultOptions()
		manifests.CreateRBAC = true
		return Setup(ctx, mgr, Options{Collector: collector.Options{Manifests: manifests}})
	})
	return done, err
}
