package podmutation_test

import (
	"context"
	"testing"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

// The pod webhook sits in the path of every pod creation. Its configuration, as installed from
// config/webhook, states a timeout shorter than the API server's 10s default, so a slow or
// unreachable operator (failurePolicy Ignore) delays pods by at most that much.
func TestPodWebhookHasAnExplicitShortTimeout(t *testing.T) {
	g := NewWithT(t)
	list := &admissionregistrationv1.MutatingWebhookConfigurationList{}
	g.Expect(env.Client.List(context.Background(), list)).To(Succeed())
	found := false
	for _, cfg := range list.Items {
		for _, w := range cfg.Webhooks {
			if w.Name != "mpod.kb.io" {
				continue
			}
			found = true
			g.Expect(w.TimeoutSeconds).NotTo(BeNil())
			g.Expect(*w.TimeoutSeconds).To(BeNumerically("<=", 5))
			g.Expect(*w.FailurePolicy).To(Equal(admissionregistrationv1.Ignore))
		}
	}
	g.Expect(found).To(BeTrue(), "mpod.kb.io installed")
}
