package install

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/test/install/installtest"
)

// chartNames are the object names the chart gives release name in namespace (fullname
// <release>-opentelemetry-operator).
func chartNames(name, namespace string) installtest.Names {
	full := name + "-opentelemetry-operator"
	return installtest.Names{
		Namespace:      namespace,
		Deployment:     full,
		WebhookService: full + "-webhook",
		MetricsService: full,
		MetricsReader:  full + "-metrics", // upstream chart's name
		CertSecret:     full + "-webhook-cert",
	}
}

// TestChartDefaultValues: `helm install otel ./charts/opentelemetry-operator --namespace
// observability --create-namespace` with the chart's default values; the operator runs as the
// chart's pod and every installtest scenario passes against the chart's objects.
func TestChartDefaultValues(t *testing.T) {
	const name, ns = "otel", "observability"
	rel := helmInstall(t, name, ns, nil)
	t.Logf("release %s: %v", name, manifestKinds(rel))
	op := runScenarios(t, chartNames(name, ns), nil)
	if !t.Failed() {
		uninstall(t, op, map[string]string{name: ns}, true)
	}
}

// TestChartWebhookDeploymentFailover: with manager.webhookDeployment on, the webhooks run in
// <fullname>-webhook (two replicas, --enable-reconcilers=false) and the main Deployment reconciles
// without webhooks. Each webhook replica and the main instance run as their pods; conversion
// goes through the webhook replicas and a cluster receiver gets its ClusterRole from the
// reconciler (the split works), then installtest.WebhookFailover kills the replica that served
// the latest pod and shows every pod create injected by the other once the endpoints drop it.
func TestChartWebhookDeploymentFailover(t *testing.T) {
	const name, ns = "split", "observability"
	rel := helmInstall(t, name, ns, map[string]any{"manager": map[string]any{
		"webhookDeployment": map[string]any{"enabled": true, "replicas": 2}}})
	t.Logf("release %s: %v", name, manifestKinds(rel))
	names := chartNames(name, ns)
	webhookNames := names
	webhookNames.Deployment = names.Deployment + "-webhook"
	webhookNames.MetricsService = names.Deployment + "-webhook-metrics"
	ctx := context.Background()
	var replicas []*installtest.Operator
	for range 2 {
		start := time.Now()
		r, err := env.RunReplica(ctx, webhookNames, replicas)
		t.Cleanup(r.Stop)
		if err != nil {
			t.Fatalf("running a webhook replica: %v", err)
		}
		t.Logf("webhook replica %s (%s) ready in %s", r.Pod, r.PodIP, time.Since(start).Round(100*time.Millisecond))
		replicas = append(replicas, r)
	}
	start := time.Now()
	op, err := env.RunOperator(ctx, names)
	t.Cleanup(op.Stop)
	if err != nil {
		t.Fatalf("running the reconciler: %v", err)
	}
	t.Logf("reconciler %s ready in %s", op.Pod, time.Since(start).Round(100*time.Millisecond))
	t.Run("V1alpha1RoundTripsThroughConversionWebhook", op.V1alpha1RoundTripsThroughConversionWebhook)
	t.Run("ClusterReceiversGetTheirClusterRole", op.ClusterReceiversGetTheirClusterRole)
	t.Run("WebhookFailover", func(t *testing.T) { installtest.WebhookFailover(t, replicas) })
	if !t.Failed() {
		uninstall(t, op, map[string]string{name: ns}, true)
	}
}

// TestChartKubeStackReleases: the two releases the OpenMCP service provider makes with its
// opentelemetry-kube-stack values, in one cluster: the CRDs release (flux.CRDsValues: CRDs only)
// and the workload release (flux.WorkloadValues: the operator without CRDs and, since the
// provider serves no admission webhooks in the shared workload cluster, without webhooks). Both
// install; the workload operator itself is not started here: it talks to a control plane (its
// Lease and namespace are there, --webhook-cert-namespace), which this single cluster does not
// model, and installtest.RunOperator needs a webhook Service (test/system runs it for real).
func TestChartKubeStackReleases(t *testing.T) {
	const name = "otel"
	crdsNS, workloadNS := instance.CPNamespace, instance.WorkloadNamespace(instance.ID("default", name))
	crdsRel := helmInstall(t, instance.CRDsReleaseName(name), crdsNS, flux.CRDsValues())
	id := instance.ID("default", name)
	workloadRel := helmInstall(t, instance.WorkloadReleaseName(name), workloadNS, flux.WorkloadValues(map[string]any{}, nil, id))
	crdKinds, workloadKinds := manifestKinds(crdsRel), manifestKinds(workloadRel)
	t.Logf("CRDs release: %v; workload release: %v", crdKinds, workloadKinds)
	if len(crdKinds) != 1 || crdKinds["CustomResourceDefinition"] == 0 {
		t.Errorf("the CRDs release must hold CRDs only: %v", crdKinds)
	}
	if workloadKinds["CustomResourceDefinition"] != 0 || workloadKinds["Deployment"] != 1 {
		t.Errorf("the workload release must hold the operator and no CRD: %v", workloadKinds)
	}

	// The CRDs release has no operator to convert with: its collector CRD serves v1beta1 only, with
	// no conversion webhook, so a v1alpha1 request is refused as an unknown version (nothing can
	// reach storage unconverted) while v1beta1 works through the workload operator.
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Name: "opentelemetrycollectors.opentelemetry.io"}, crd); err != nil {
		t.Fatal(err)
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextensionsv1.NoneConverter {
		t.Errorf("CRDs-only release: conversion = %+v, want strategy None", crd.Spec.Conversion)
	}
	for _, v := range crd.Spec.Versions {
		if v.Served != (v.Name == "v1beta1") {
			t.Errorf("CRDs-only release: version %s served=%v, want only v1beta1 served", v.Name, v.Served)
		}
	}
	v1alpha1 := &unstructured.Unstructured{}
	v1alpha1.SetAPIVersion("opentelemetry.io/v1alpha1")
	v1alpha1.SetKind("OpenTelemetryCollector")
	v1alpha1.SetNamespace(workloadNS)
	v1alpha1.SetName("old-style")
	if err := env.Client.Create(context.Background(), v1alpha1); !apimeta.IsNoMatchError(err) && !apierrors.IsNotFound(err) {
		t.Errorf("creating a v1alpha1 collector against the CRDs-only release: %v, want the version refused", err)
	}

	for _, k := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Certificate"} {
		if workloadKinds[k] != 0 {
			t.Errorf("the workload release holds a %s; the provider's values turn the webhooks off", k)
		}
	}
	// This is the package's last test and its cluster is discarded, so the CRDs are not waited
	// out: in two CI runs under load, the API server's CRD finalizer, started seconds after these
	// CRDs were created, hit "storage is (re)initializing" once and then never finished (nothing
	// more logged for 4 min), while alone or under CPU load it finishes in under a second.
	if !t.Failed() {
		uninstall(t, &installtest.Operator{}, map[string]string{instance.CRDsReleaseName(name): crdsNS, instance.WorkloadReleaseName(name): workloadNS}, false)
	}
}
