package installtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onsi/gomega"
	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/test/proc"
)

// Timeout bounds how long a scenario waits for the operator.
const Timeout = 90 * time.Second

// Scenario is one check of an install, runnable as a test or subtest.
type Scenario struct {
	Name string
	Run  func(*testing.T)
}

// Scenarios lists every scenario, for installs that run them as subtests.
func (op *Operator) Scenarios() []Scenario {
	return []Scenario{
		{"V1alpha1RoundTripsThroughConversionWebhook", op.V1alpha1RoundTripsThroughConversionWebhook},
		{"ClusterReceiversGetTheirClusterRole", op.ClusterReceiversGetTheirClusterRole},
		{"MetricsNeedTheReaderRole", op.MetricsNeedTheReaderRole},
		{"LeaderElectionAndCertificateInOperatorNamespace", op.LeaderElectionAndCertificateInOperatorNamespace},
		{"ReadinessIncludesTheWebhookServer", op.ReadinessIncludesTheWebhookServer},
		{"PodWebhookSkipsSystemNamespaces", op.PodWebhookSkipsSystemNamespaces},
	}
}

// namespace creates a namespace for one scenario.
func (op *Operator) namespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "install-"}}
	if err := op.env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// create applies a manifest as a user would: unstructured, through the admission webhooks.
func (op *Operator) create(g gomega.Gomega, ns, manifest string) {
	u := &unstructured.Unstructured{}
	g.Expect(yaml.Unmarshal([]byte(manifest), &u.Object)).To(gomega.Succeed())
	u.SetNamespace(ns)
	g.Expect(op.env.Client.Create(context.Background(), u)).To(gomega.Succeed())
}

const v1alpha1Collector = `
apiVersion: opentelemetry.io/v1alpha1
kind: OpenTelemetryCollector
metadata:
  name: legacy
spec:
  config: |
    receivers:
      otlp:
        protocols:
          grpc: {}
    exporters:
      debug: {}
    service:
      pipelines:
        traces:
          receivers: [otlp]
          exporters: [debug]
`

// V1alpha1RoundTripsThroughConversionWebhook checks that the collector CRD as installed converts through the
// operator's /convert behind the install's webhook Service, with the CA bundle the operator
// injected. A v1alpha1 write is stored as v1beta1 (config becomes an object), and reads in both
// versions work.
func (op *Operator) V1alpha1RoundTripsThroughConversionWebhook(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	k8s := op.env.Client

	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Name: "opentelemetrycollectors.opentelemetry.io"}, crd)).To(gomega.Succeed())
	g.Expect(crd.Spec.Conversion.Strategy).To(gomega.Equal(apiextensionsv1.WebhookConverter))
	svc := crd.Spec.Conversion.Webhook.ClientConfig.Service
	g.Expect(svc).NotTo(gomega.BeNil())
	g.Expect([]string{svc.Namespace, svc.Name, ptr.Deref(svc.Path, "")}).To(gomega.Equal([]string{op.Namespace, op.WebhookService, "/convert"}))
	g.Eventually(func(g gomega.Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKey{Name: crd.Name}, crd)).To(gomega.Succeed())
		g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.CABundle).NotTo(gomega.BeEmpty(), "the operator injects the CA bundle")
	}).WithTimeout(30 * time.Second).WithPolling(time.Second).Should(gomega.Succeed())

	ns := op.namespace(t)
	op.create(g, ns, v1alpha1Collector)

	beta := &v1beta1.OpenTelemetryCollector{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, beta)).To(gomega.Succeed())
	g.Expect(beta.Spec.Config.Receivers.Object).To(gomega.HaveKey("otlp"))

	alpha := &unstructured.Unstructured{}
	alpha.SetAPIVersion("opentelemetry.io/v1alpha1")
	alpha.SetKind("OpenTelemetryCollector")
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "legacy"}, alpha)).To(gomega.Succeed())
	cfg, _, _ := unstructured.NestedString(alpha.Object, "spec", "config")
	g.Expect(cfg).To(gomega.ContainSubstring("otlp"), "v1alpha1 reads return the config as a string")

	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("opentelemetry.io/v1alpha1")
	list.SetKind("OpenTelemetryCollectorList")
	g.Expect(k8s.List(ctx, list, client.InNamespace(ns))).To(gomega.Succeed())
	g.Expect(list.Items).To(gomega.HaveLen(1))

	g.Eventually(func(g gomega.Gomega) {
		c := op.readyCondition(g, ns, "legacy")
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue), c.Message)
	}).WithTimeout(Timeout).WithPolling(time.Second).Should(gomega.Succeed())
}

const clusterCollector = `
apiVersion: opentelemetry.io/v1beta1
kind: OpenTelemetryCollector
metadata:
  name: cluster-view
spec:
  config:
    receivers:
      k8s_cluster: {}
      k8sobjects:
        objects:
        - {name: pods, mode: pull}
        - {name: events, group: events.k8s.io, mode: watch}
    exporters:
      debug: {}
    service:
      pipelines:
        metrics: {receivers: [k8s_cluster], exporters: [debug]}
        logs: {receivers: [k8sobjects], exporters: [debug]}
`

// ClusterReceiversGetTheirClusterRole checks that the install's role lets the operator create the
// ClusterRole k8s_cluster and k8sobjects need (including pods/status and events.k8s.io events)
// without `escalate`, and the collector becomes Ready.
func (op *Operator) ClusterReceiversGetTheirClusterRole(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	k8s := op.env.Client
	ns := op.namespace(t)
	op.create(g, ns, clusterCollector)

	g.Eventually(func(g gomega.Gomega) {
		c := op.readyCondition(g, ns, "cluster-view")
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue), c.Message)
	}).WithTimeout(Timeout).WithPolling(time.Second).Should(gomega.Succeed())

	role := &rbacv1.ClusterRole{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Name: "cluster-view-" + ns + "-cluster-role"}, role)).To(gomega.Succeed())
	var granted []string
	for _, r := range role.Rules {
		for _, grp := range r.APIGroups {
			for _, res := range r.Resources {
				granted = append(granted, grp+"/"+res)
			}
		}
	}
	g.Expect(granted).To(gomega.ContainElements("/pods/status", "/replicationcontrollers/status", "/namespaces/status", "events.k8s.io/events"))
	binding := &rbacv1.ClusterRoleBinding{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Name: "cluster-view-" + ns + "-collector"}, binding)).To(gomega.Succeed())
}

// MetricsNeedTheReaderRole checks that the metrics endpoint (HTTPS, authn/authz through the API server)
// answers 401 without a token, 403 to a ServiceAccount without rights and 200 to one bound to the
// install's metrics-reader ClusterRole. The operator needs the install's proxy role for that.
func (op *Operator) MetricsNeedTheReaderRole(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	ns := op.namespace(t)
	token := func(name string) string {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
		g.Expect(op.env.Client.Create(ctx, sa)).To(gomega.Succeed())
		tr, err := op.env.Clientset.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(600))}}, metav1.CreateOptions{})
		g.Expect(err).NotTo(gomega.HaveOccurred())
		return tr.Status.Token
	}
	scraper, stranger := token("scraper"), token("stranger")
	g.Expect(op.env.Client.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: op.MetricsReader},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "scraper", Namespace: ns}},
	})).To(gomega.Succeed())

	url := fmt.Sprintf("https://%s:%d/metrics", op.PodIP, op.MetricsPort)
	g.Expect(scrape(g, url, "")).To(gomega.Equal(http.StatusUnauthorized))
	g.Expect(scrape(g, url, stranger)).To(gomega.Equal(http.StatusForbidden))
	g.Eventually(func(g gomega.Gomega) int { return scrape(g, url, scraper) }).
		WithTimeout(30 * time.Second).WithPolling(time.Second).Should(gomega.Equal(http.StatusOK))
}

// scrape GETs url with the bearer token and returns the status code; a 200 must carry metrics.
// The serving certificate is the self-signed one controller-runtime generates, so it is not
// verified (the address is the pod's loopback IP).
func scrape(g gomega.Gomega, url, token string) int {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed, loopback
	req, err := http.NewRequest(http.MethodGet, url, nil)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		g.Expect(string(body)).To(gomega.ContainSubstring("controller_runtime_reconcile_total"))
	}
	return resp.StatusCode
}

// LeaderElectionAndCertificateInOperatorNamespace checks that, with the install's namespaced Role only, the
// operator holds its Lease and keeps its certificate Secret in its own namespace, and no request
// of its ServiceAccount was refused.
func (op *Operator) LeaderElectionAndCertificateInOperatorNamespace(t *testing.T) {
	g := gomega.NewWithT(t)
	ctx := context.Background()
	k8s := op.env.Client
	g.Eventually(func(g gomega.Gomega) {
		lease := &coordinationv1.Lease{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op.Namespace, Name: LeaderElectionLease}, lease)).To(gomega.Succeed())
		g.Expect(ptr.Deref(lease.Spec.HolderIdentity, "")).NotTo(gomega.BeEmpty())
	}).WithTimeout(Timeout).WithPolling(time.Second).Should(gomega.Succeed())
	secret := &corev1.Secret{}
	g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: op.Namespace, Name: op.CertSecret}, secret)).To(gomega.Succeed())
	g.Expect(secret.Data).To(gomega.HaveKey("tls.crt"))

	identity := "system:serviceaccount:" + op.Namespace + ":" + op.ServiceAccount
	for _, line := range strings.Split(proc.Tail(op.Log, 100000), "\n") {
		if strings.Contains(line, "forbidden") && strings.Contains(line, identity) {
			t.Errorf("the operator was refused a request with the install's RBAC: %s", line)
		}
	}
}

// ReadinessIncludesTheWebhookServer checks that the install's readiness probe checks the webhook server
// (TestReadinessWaitsForWebhookServer in internal/operator shows it fails before it listens);
// liveness is a ping only.
func (op *Operator) ReadinessIncludesTheWebhookServer(t *testing.T) {
	g := gomega.NewWithT(t)
	body := func(path string) string {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d%s?verbose", op.PodIP, op.HealthPort, path))
		g.Expect(err).NotTo(gomega.HaveOccurred())
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK), string(b))
		return string(b)
	}
	g.Expect(body("/readyz")).To(gomega.ContainSubstring("[+]webhook-server ok"))
	g.Expect(body("/healthz")).NotTo(gomega.ContainSubstring("webhook-server"))
}

func (op *Operator) readyCondition(g gomega.Gomega, ns, name string) *metav1.Condition {
	col := &v1beta1.OpenTelemetryCollector{}
	g.Expect(op.env.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, col)).To(gomega.Succeed())
	c := meta.FindStatusCondition(col.Status.Conditions, v1beta1.ConditionReady)
	g.Expect(c).NotTo(gomega.BeNil())
	return c
}
