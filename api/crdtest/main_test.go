package crdtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

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
	e, err := testenv.Start(opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env = e
	ctx, cancel := context.WithCancel(context.Background())
	done, err := serveConversion(ctx, scheme, &e.Environment.WebhookInstallOptions)
	code := 1
	if err == nil {
		code = m.Run()
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	// Stop the webhook server before envtest removes its certificates.
	cancel()
	<-done
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping envtest:", err)
	}
	os.Exit(code)
}

// serveConversion serves /convert until ctx ends; done closes when the server has stopped.
func serveConversion(ctx context.Context, scheme *runtime.Scheme, o *envtest.WebhookInstallOptions) (<-chan struct{}, error) {
	srv := webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
	srv.Register("/convert", conversion.NewWebhookHandler(scheme, conversion.NewRegistry()))
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		errc <- srv.Start(ctx)
	}()
	// Wait until the server answers (or fails to start).
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-errc:
			return done, fmt.Errorf("conversion webhook server: %w", err)
		default:
		}
		if srv.StartedChecker()(nil) == nil {
			return done, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return done, fmt.Errorf("conversion webhook server did not start within 30s")
}
