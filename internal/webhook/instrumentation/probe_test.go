package instrumentation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/webhook/instrumentation"
)

// TestReached: through the API server with the webhooks served, the dry run comes back defaulted
// and nothing is stored; against an API server that does not call the webhook (a fake client
// here: the object comes back as sent), Reached says so.
func TestReached(t *testing.T) {
	requireEnv(t)
	g := NewWithT(t)
	ctx := context.Background()
	g.Expect(instrumentation.Reached(ctx, k8s, "default")).To(Succeed())
	list := &v1alpha1.InstrumentationList{}
	g.Expect(k8s.List(ctx, list, client.InNamespace("default"))).To(Succeed())
	for _, in := range list.Items {
		g.Expect(in.Name).NotTo(HavePrefix(instrumentation.ProbeNamePrefix), "a dry run stores nothing")
	}

	unreached := fake.NewClientBuilder().WithScheme(scheme).Build()
	g.Expect(instrumentation.Reached(ctx, unreached, "default")).To(MatchError(ContainSubstring("the defaulting webhook was not called")))
}
