package installtest

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/webhook/admissionmetrics"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

const sidecarCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: %s
spec:
  mode: sidecar
  config:
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces: {receivers: [otlp], exporters: [debug]}
`

// injectedLabel is the label the pod webhook sets on a pod it gave a sidecar.
const injectedLabel = "sidecar.opentelemetry.io/injected"

// PodWebhookSkipsSystemNamespaces checks that the install's pod webhook configuration keeps pods
// in kube-system and in the operator's own namespace away from the operator: a pod asking for a
// sidecar of a collector in its namespace is created unchanged there, and the API server did not
// call the webhook for it (the operator's pod admission count does not move), while the same pod
// in an ordinary namespace gets its sidecar and is counted (the control, run before and after).
// Pods are created with dryRun, so nothing is left to schedule.
func (op *Operator) PodWebhookSkipsSystemNamespaces(t *testing.T) {
	g := gomega.NewWithT(t)
	ns := op.namespace(t)
	name := "sidecar-" + ns
	excluded := []string{"kube-system", op.Namespace}
	// The collectors of the excluded namespaces first: the operator's cache sees them before the
	// one in ns (one watch of collectors), so once ns's pod is injected, a missing sidecar in the
	// excluded namespaces is not cache lag.
	for _, n := range append(append([]string{}, excluded...), ns) {
		op.create(g, n, fmt.Sprintf(sidecarCollector, name))
		t.Cleanup(func() {
			_ = op.env.Client.Delete(context.Background(), &v1beta1.OpenTelemetryCollector{
				ObjectMeta: metav1.ObjectMeta{Namespace: n, Name: name}})
		})
	}
	token := op.metricsToken(g, ns)
	url := fmt.Sprintf("https://%s:%d/metrics", op.PodIP, op.MetricsPort)

	dryRun := func(g gomega.Gomega, n string) *corev1.Pod { return op.dryRunSidecarPod(g, n, name) }

	g.Eventually(func(g gomega.Gomega) {
		g.Expect(injected(dryRun(g, ns))).To(gomega.BeTrue(), "control: a pod in %s gets its sidecar", ns)
	}).WithTimeout(Timeout).WithPolling(500 * time.Millisecond).Should(gomega.Succeed())

	before := podAdmissions(g, url, token)
	for _, n := range excluded {
		p := dryRun(g, n)
		g.Expect(injected(p)).To(gomega.BeFalse(), "pod in %s mutated: labels %v", n, p.Labels)
		g.Expect(p.Spec.InitContainers).To(gomega.BeEmpty(), "pod in %s got init containers", n)
		g.Expect(p.Spec.Containers).To(gomega.HaveLen(1), "pod in %s got containers", n)
	}
	g.Expect(injected(dryRun(g, ns))).To(gomega.BeTrue(), "control: a pod in %s still gets its sidecar", ns)
	// Record runs before the webhook answers, so the count is final: only the control was counted.
	g.Expect(podAdmissions(g, url, token)).To(gomega.Equal(before+1),
		"pod webhook calls for the pods in %v and the control in %s", excluded, ns)
}

// dryRunSidecarPod creates (dryRun: nothing is stored or scheduled) a pod in ns asking for the
// sidecar of collector and returns it as admitted.
func (op *Operator) dryRunSidecarPod(g gomega.Gomega, ns, collector string) *corev1.Pod {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: ns,
			Annotations: map[string]string{"sidecar.opentelemetry.io/inject": collector}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
	}
	g.Expect(op.env.Client.Create(context.Background(), pod, client.DryRunAll)).To(gomega.Succeed())
	return pod
}

// injected reports whether the pod webhook gave p its sidecar.
func injected(p *corev1.Pod) bool { return p.Labels[injectedLabel] != "" }

// metricsToken returns a token allowed to read /metrics (bound to the install's metrics-reader
// ClusterRole).
func (op *Operator) metricsToken(g gomega.Gomega, ns string) string {
	ctx := context.Background()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "admissions-reader", Namespace: ns}}
	g.Expect(op.env.Client.Create(ctx, sa)).To(gomega.Succeed())
	g.Expect(op.env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-admissions-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: op.MetricsReader},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	})).To(gomega.Succeed())
	tr, err := op.env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa.Name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return tr.Status.Token
}

// podAdmissions scrapes url (waiting until the token is authorized) and sums the pod webhook's
// admission counter over outcomes and reasons; the counter must be there.
func podAdmissions(g gomega.Gomega, url, token string) float64 {
	return scrapePodAdmissions(g, url, token, true)
}

// scrapePodAdmissions is podAdmissions; without require, a process that has admitted no pod yet
// (no series) counts 0.
func scrapePodAdmissions(g gomega.Gomega, url, token string, require bool) float64 {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, loopback
	var total float64
	g.Eventually(func(g gomega.Gomega) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := c.Do(req)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		defer resp.Body.Close()
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK))
		total = 0
		found := false
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		webhook := `webhook="` + podmutation.MetricName + `"`
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, admissionmetrics.AdmissionsName+"{") || !strings.Contains(line, webhook) {
				continue
			}
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			g.Expect(err).NotTo(gomega.HaveOccurred(), line)
			total += v
			found = true
		}
		g.Expect(found || !require).To(gomega.BeTrue(), "no %s{%s} in the metrics", admissionmetrics.AdmissionsName, webhook)
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(gomega.Succeed())
	return total
}
