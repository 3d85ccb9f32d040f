package instrumentation_test

import (
	"context"
	"flag"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
)

var (
	env    *testenv.Env
	k8s    client.Client
	scheme = runtime.NewScheme()
)

// flagJavaImage stands for --auto-instrumentation-java-image in the suite's manager.
const flagJavaImage = "mirror.example/autoinstrumentation-java:flag"

// TestMain starts kube-apiserver with the CRDs and the webhook configurations of config/webhook
// (envtest points them at 127.0.0.1 with its own serving certificate), then a manager serving the
// Instrumentation webhooks with one image set by "flag". A fuzzing run (FuzzValidate needs no API
// server) skips all that: its worker processes would each start one.
func TestMain(m *testing.M) {
	flag.Parse()
	if fuzzing() {
		os.Exit(m.Run())
	}
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	testenv.WebhookMain(m, scheme, func(e *testenv.Env) { env, k8s = e, e.Client }, startManager)
}

func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

// requireEnv skips a test that needs the API server when TestMain did not start one.
func requireEnv(t *testing.T) {
	t.Helper()
	if env == nil {
		t.Skip("no API server while fuzzing")
	}
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	_, done, err := env.StartWebhookManager(ctx, nil, scheme, func(mgr ctrl.Manager) error {
		return instrumentation.Setup(mgr, instrumentation.Options{Images: instrumentation.Images{Java: flagJavaImage}})
	})
	return done, err
}
