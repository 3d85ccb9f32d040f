package e2e

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/types"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// isWebhookUnavailable reports an error from calling a webhook whose certificate is not trusted yet.
func isWebhookUnavailable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed calling webhook") || strings.Contains(s, "x509")
}

// awaitPodWebhook waits until the pod webhook mutates a pod carrying annotations in namespace ns
// as matcher expects. The webhook reads collectors and Instrumentations from the operator's
// informer cache, which sees a new object some time after the API server stored it; a pod created
// before then is admitted without the injection. Each probe is a dry-run create through the real
// API server and its admission chain: the mutated pod comes back and nothing is stored (the webhook
// records no Event for a dry run).
func awaitPodWebhook(g Gomega, ns string, annotations map[string]string, matcher types.GomegaMatcher) {
	g.Eventually(func(g Gomega) {
		probe := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Namespace: ns, Annotations: annotations},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "probe", Image: "example.invalid/probe:1"}}},
		}
		g.Expect(k8s.Create(context.Background(), probe, client.DryRunAll)).To(Succeed())
		g.Expect(probe).To(matcher)
	}).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).Should(Succeed(),
		"the pod webhook never mutated a dry-run pod as expected")
}
