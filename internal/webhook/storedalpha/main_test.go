// Package storedalpha_test proves, against a real kube-apiserver, that a v1alpha1 collector
// stored with a config that does not parse (as clusters that ran upstream while v1alpha1 was the
// storage version hold them) no longer breaks the v1beta1 API: lists and watches of collectors
// succeed and include it, and the v1alpha1 API still returns its exact text (upstream #4288,
// issue 29 finding 10). It has its own API server because the test rewrites the collector CRD's
// storage version and removes the admission webhooks for a moment.
package storedalpha_test

import (
	"context"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/internal/webhook"
	"github.com/otelop/otelop/internal/webhook/collector"
)

var (
	env    *testenv.Env
	mgr    ctrl.Manager
	scheme = runtime.NewScheme()
)

// TestMain starts kube-apiserver with the CRDs and the shipped webhook configurations (envtest
// points them, and the collector CRD's conversion, at 127.0.0.1), then a manager serving every
// webhook the operator serves, conversion included.
func TestMain(m *testing.M) {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))
	utilruntime.Must(v1alpha1.AddToScheme(scheme))
	utilruntime.Must(v1beta1.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	testenv.WebhookMain(m, scheme, func(e *testenv.Env) { env = e }, startManager)
}

func startManager(ctx context.Context) (<-chan struct{}, error) {
	var done <-chan struct{}
	var err error
	mgr, done, err = env.StartWebhookManager(ctx, nil, scheme, func(mgr ctrl.Manager) error {
		return webhook.Setup(ctx, mgr, webhook.Options{Collector: collector.Options{Manifests: mcollector.DefaultOptions()}})
	})
	return done, err
}
