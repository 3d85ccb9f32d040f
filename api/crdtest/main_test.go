package crdtest

import (
	"context"
	"fmt"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/testenv"
)

var env *testenv.Env

// TestMain starts kube-apiserver with the generated CRDs. Because the scheme knows that the
// v1alpha1 collector converts through the v1beta1 hub, envtest points the CRD's conversion at a
// local webhook; the test serves it with controller-runtime's conversion handler over the API
// types' ConvertTo/ConvertFrom, so v1alpha1 objects really round-trip through the API server.
func TestMain(m *testing.M) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, v1alpha1.AddToScheme, v1beta1.AddToScheme} {
		if err := add(scheme); err != nil {
			panic(err)
		}
	}
	opts := testenv.Options{
		Scheme:                scheme,
		WebhookInstallOptions: envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"},
	}
	testenv.Main(m, opts, func(e *testenv.Env) {
		env = e
		if err := serveConversion(scheme, &e.Environment.WebhookInstallOptions); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	})
}

func serveConversion(scheme *runtime.Scheme, o *envtest.WebhookInstallOptions) error {
	srv := webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
	srv.Register("/convert", conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Start(context.Background()) }()
	select {
	case err := <-errc:
		return fmt.Errorf("conversion webhook server: %w", err)
	default:
	}
	return nil
}
