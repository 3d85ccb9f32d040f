package app

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	providerv1alpha1 "github.com/openmcp-project/openmcp-operator/api/provider/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/crdinstall"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

const providerName = "otel-operator"

// clockOffset moves the provider's token-renewal clock (Options.Now) ahead of the wall clock.
var clockOffset atomic.Int64

func options() Options {
	return Options{
		Now:      func() time.Time { return time.Now().Add(time.Duration(clockOffset.Load())) },
		Platform: world.Platform.Config, PodNamespace: world.PodNamespace, ProviderName: providerName,
		MetricsBindAddress: "0", HealthProbeBindAddress: "0",
		Rotation:           cpaccess.Rotation{TTL: 10 * time.Minute},
		ClusterAccessRetry: 300 * time.Millisecond, AccessTimeout: 30 * time.Second,
	}
}

// TestServiceProvider runs init twice, then run, and walks one OtelOperator through its life on
// four real API servers. The steps share state, so they run in order.
func TestServiceProvider(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := newG(t)
	pc, oc, wl := world.Platform.Client, world.Onboarding.Client, world.Workload.Client
	g.Expect(world.AddServiceProvider(ctx, providerName)).To(Succeed())

	t.Run("init installs CRDs where they belong, registers the kind, and is idempotent", func(t *testing.T) {
		g := newG(t)
		g.Expect(Init(ctx, options())).To(Succeed())
		crd := func(c client.Client, name string) *apiextensionsv1.CustomResourceDefinition {
			o := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(c.Get(ctx, client.ObjectKey{Name: name}, o)).To(Succeed())
			return o
		}
		pcCRD := crd(pc, "providerconfigs.oteloperator.services.open-control-plane.io")
		ooCRD := crd(oc, "oteloperators.oteloperator.services.open-control-plane.io")
		g.Expect(oc.Get(ctx, client.ObjectKey{Name: pcCRD.Name}, &apiextensionsv1.CustomResourceDefinition{})).To(Satisfy(apierrors.IsNotFound))
		g.Expect(pc.Get(ctx, client.ObjectKey{Name: ooCRD.Name}, &apiextensionsv1.CustomResourceDefinition{})).To(Satisfy(apierrors.IsNotFound))
		g.Expect(pcCRD.Labels).To(HaveKeyWithValue(crdinstall.ClusterLabel, crdinstall.ClusterPlatform))
		g.Expect(ooCRD.Labels).To(HaveKeyWithValue(crdinstall.ClusterLabel, crdinstall.ClusterOnboarding))
		sp := &providerv1alpha1.ServiceProvider{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Name: providerName}, sp)).To(Succeed())
		g.Expect(sp.Status.Resources).To(Equal(crdinstall.ProvidedKinds()))

		g.Expect(Init(ctx, options())).To(Succeed())
		g.Expect(crd(pc, pcCRD.Name).ResourceVersion).To(Equal(pcCRD.ResourceVersion), "second init rewrote the ProviderConfig CRD")
		g.Expect(crd(oc, ooCRD.Name).ResourceVersion).To(Equal(ooCRD.ResourceVersion), "second init rewrote the OtelOperator CRD")
		sp2 := &providerv1alpha1.ServiceProvider{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Name: providerName}, sp2)).To(Succeed())
		g.Expect(sp2.ResourceVersion).To(Equal(sp.ResourceVersion), "second init rewrote the ServiceProvider")
		// The CRDs validate with field paths.
		bad := &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: spv1alpha1.ProviderConfigSpec{
			Versions: []spv1alpha1.VersionConfig{{Version: "1.0.0", ChartURL: "https://example.com/chart"}}}}
		g.Expect(pc.Create(ctx, bad)).To(MatchError(ContainSubstring("spec.versions[0].chartURL")))
		bad.Spec.Versions = []spv1alpha1.VersionConfig{{Version: "1.0.0", ChartInsecure: true, ChartCABundleRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "registry-ca"}, Key: "ca.crt"}}}
		g.Expect(pc.Create(ctx, bad)).To(MatchError(And(ContainSubstring("spec.versions[0].chartInsecure"), ContainSubstring("chartInsecure and chartCABundleRef are mutually exclusive"))))
		bad.Spec.Versions = nil
		g.Expect(pc.Create(ctx, bad)).To(MatchError(ContainSubstring("spec.versions")))
		g.Expect(oc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "validation"}})).To(Succeed())
		g.Expect(oc.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "validation"}})).To(MatchError(ContainSubstring("spec.version")))

		var ars clustersv1alpha1.AccessRequestList
		g.Expect(pc.List(ctx, &ars, client.InNamespace(world.PodNamespace))).To(Succeed())
		g.Expect(ars.Items).To(HaveLen(1), "one onboarding AccessRequest for init, reused")
	})

	t.Run("init fails without a ServiceProvider", func(t *testing.T) {
		o := options()
		o.ProviderName = "nobody"
		newG(t).Expect(Init(ctx, o)).To(MatchError(ContainSubstring(`ServiceProvider "nobody"`)))
	})

	runErr := make(chan error, 1)
	go func() { runErr <- Run(ctx, options()) }()
	defer func() {
		cancel()
		select {
		case err := <-runErr:
			if err != nil {
				t.Logf("run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("run did not stop")
		}
	}()

	const tenant, name = "tenant", "my-cp"
	key := client.ObjectKey{Namespace: tenant, Name: name}
	id := instance.ID(tenant, name)
	wlNS := instance.WorkloadNamespace(id)
	g.Expect(oc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}})).To(Succeed())
	platformNS, err := world.AddControlPlane(ctx, name, tenant)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(oc.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: tenant}, Spec: spv1alpha1.OtelOperatorSpec{Version: "0.20.8"}})).To(Succeed())

	t.Run("missing ProviderConfig", func(t *testing.T) {
		expectStatus(t, ctx, key, spv1alpha1.PhaseProgressing, spv1alpha1.ReasonProviderConfigMissing, `no provider configuration named "otel-operator"`)
		expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonProviderConfigMissing, "otel-operator")
	})

	values := func(v map[string]any) *apiextensionsv1.JSON {
		raw, _ := json.Marshal(v)
		return &apiextensionsv1.JSON{Raw: raw}
	}
	goodValues := map[string]any{
		"imagePullSecrets":       []any{map[string]any{"name": "regcred"}},
		"opentelemetry-operator": map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": false}}},
	}
	cfg := &spv1alpha1.ProviderConfig{
		ObjectMeta: metav1.ObjectMeta{Name: providerName},
		Spec: spv1alpha1.ProviderConfigSpec{
			PollInterval: &metav1.Duration{Duration: time.Second},
			CABundleRef:  &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "custom-ca"}, Key: "ca-bundle.crt"},
			Versions: []spv1alpha1.VersionConfig{
				{Version: "0.20.1"},
				{Version: "0.20.8", ChartPullSecret: "chartcred", HelmValues: values(goodValues)},
			},
		},
	}

	t.Run("missing source secret is reported, not retried hot, nothing made", func(t *testing.T) {
		g := newG(t)
		g.Expect(pc.Create(ctx, cfg)).To(Succeed())
		o := expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration, `spec.versions["0.20.8"].helmValues.imagePullSecrets: Secret openmcp-system/regcred not found`)
		expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonInvalidConfiguration, "regcred")
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: name}, &sourcev1.OCIRepository{})).To(Satisfy(apierrors.IsNotFound))
		// No hot loop: the status is not rewritten while nothing changes.
		g.Consistently(func(g Gomega) string {
			now := &spv1alpha1.OtelOperator{}
			g.Expect(oc.Get(ctx, key, now)).To(Succeed())
			return now.ResourceVersion
		}).WithTimeout(2 * time.Second).Should(Equal(o.ResourceVersion))
	})

	ca1 := "-----BEGIN CERTIFICATE-----\nMIIB...one\n-----END CERTIFICATE-----\n"
	t.Run("missing CA bundle and chart secret are named, then the whole flow", func(t *testing.T) {
		g := newG(t)
		g.Expect(pc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "regcred", Namespace: world.PodNamespace},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"r1":{}}}`)}})).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration, `spec.versions["0.20.8"].chartPullSecret: Secret openmcp-system/chartcred not found`)
		g.Expect(pc.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "chartcred", Namespace: world.PodNamespace},
			Type: corev1.SecretTypeDockerConfigJson, Data: map[string][]byte{".dockerconfigjson": []byte(`{"auths":{"ghcr.io":{}}}`)}})).To(Succeed())
		expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration, `spec.caBundleRef: ConfigMap openmcp-system/custom-ca not found`)
		g.Expect(pc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "custom-ca", Namespace: world.PodNamespace},
			Data: map[string]string{"ca-bundle.crt": ca1}})).To(Succeed())

		expectStatus(t, ctx, key, spv1alpha1.PhaseProgressing, spv1alpha1.ReasonReconciling, "OCIRepository")
		// The instance ID is written on the OtelOperator, as upstream's provider does.
		labelled := &spv1alpha1.OtelOperator{}
		g.Expect(oc.Get(ctx, key, labelled)).To(Succeed())
		g.Expect(labelled.Labels).To(HaveKeyWithValue(instance.InstanceLabel, id))

		// The Flux objects, with the right specs and kubeconfig references.
		mcpAR, wlAR := &clustersv1alpha1.AccessRequest{}, &clustersv1alpha1.AccessRequest{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: providerName + "--" + name + "--mcp"}, mcpAR)).To(Succeed())
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: providerName + "--" + name + "--wl"}, wlAR)).To(Succeed())
		repo := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: name}, repo)).To(Succeed())
		g.Expect(repo.Spec.URL).To(Equal(spv1alpha1.DefaultChartURL))
		g.Expect(repo.Spec.Reference.Tag).To(Equal("0.20.8"))
		g.Expect(repo.Spec.SecretRef.Name).To(Equal(instance.ChartPullSecretName(name)))
		chartCopy := &corev1.Secret{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.ChartPullSecretName(name)}, chartCopy)).To(Succeed())
		g.Expect(chartCopy.Type).To(Equal(corev1.SecretTypeDockerConfigJson))
		crds, wlr := &helmv2.HelmRelease{}, &helmv2.HelmRelease{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: name + "-crds"}, crds)).To(Succeed())
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: name + "-workload"}, wlr)).To(Succeed())
		g.Expect(crds.Spec.KubeConfig.SecretRef.Name).To(Equal(mcpAR.Status.SecretRef.Name))
		g.Expect(wlr.Spec.KubeConfig.SecretRef.Name).To(Equal(wlAR.Status.SecretRef.Name))
		g.Expect(*crds.Spec.Uninstall.DeletionPropagation).To(Equal("orphan"))
		g.Expect(wlr.Spec.DependsOn[0].Name).To(Equal(name + "-crds"))
		g.Expect(wlr.Spec.TargetNamespace).To(Equal(wlNS))
		g.Expect(wlr.Spec.PostRenderers[0].Kustomize.Patches[0].Patch).To(ContainSubstring("SSL_CERT_DIR"))

		// The workload namespace holds the pull secret and the CA bundle, where the operator runs.
		pull := &corev1.Secret{}
		g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: "regcred"}, pull)).To(Succeed())
		g.Expect(pull.Data[".dockerconfigjson"]).To(Equal([]byte(`{"auths":{"r1":{}}}`)))
		caCopy := &corev1.ConfigMap{}
		g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CABundleConfigMap}, caCopy)).To(Succeed())
		g.Expect(caCopy.Data[flux.CABundleFile]).To(Equal(ca1))

		// Flux reports ready: the OtelOperator becomes Ready with every resource listed.
		o := expectReadyWithFlux(t, ctx, key, platformNS, "0.20.8")
		g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation))
		kinds := map[string]int{}
		for _, r := range o.Status.Resources {
			g.Expect(r.Phase).To(Equal(spv1alpha1.ResourceReady), r.Kind+" "+r.Name)
			kinds[string(r.Location)+"/"+r.Kind]++
		}
		g.Expect(kinds).To(Equal(map[string]int{
			"ControlPlane/Namespace": 1, "ControlPlane/ServiceAccount": 1, "ControlPlane/ClusterRole": 1, "ControlPlane/ClusterRoleBinding": 1,
			"ControlPlane/Role": 1, "ControlPlane/RoleBinding": 1,
			"WorkloadCluster/Namespace": 1, "WorkloadCluster/Secret": 2, "WorkloadCluster/ConfigMap": 1,
			"PlatformCluster/Secret": 1, "PlatformCluster/OCIRepository": 1, "PlatformCluster/HelmRelease": 2,
		}))
		expectEvent(t, ctx, key, corev1.EventTypeNormal, spv1alpha1.ReasonReconcileSuccess, "")
		// Steady state (a reconcile every second): no status writes, no new events. The events of
		// the transitions before are written asynchronously (and, with the Flux watch, right
		// after each other), so the count is taken once it has settled for a second.
		var events int
		g.Eventually(func(g Gomega) {
			events = eventCount(g, ctx, key)
			g.Consistently(func(g Gomega) int { return eventCount(g, ctx, key) }).WithTimeout(time.Second).Should(Equal(events))
		}).Should(Succeed())
		g.Consistently(func(g Gomega) []string {
			now := &spv1alpha1.OtelOperator{}
			g.Expect(oc.Get(ctx, key, now)).To(Succeed())
			return []string{now.ResourceVersion, fmt.Sprint(eventCount(g, ctx, key))}
		}).WithTimeout(3 * time.Second).Should(Equal([]string{o.ResourceVersion, fmt.Sprint(events)}))
	})

	t.Run("flux messages reach the status; a Stalled release is Failed", func(t *testing.T) {
		g := newG(t)
		hr := &helmv2.HelmRelease{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: name + "-workload"}, hr)).To(Succeed())
		hr.Status.Conditions = []metav1.Condition{
			{Type: "Ready", Status: metav1.ConditionFalse, Reason: "InstallFailed", Message: "image pull backoff for manager", ObservedGeneration: hr.Generation, LastTransitionTime: metav1.Now()},
			{Type: "Stalled", Status: metav1.ConditionTrue, Reason: "RetriesExceeded", Message: "retries exhausted", LastTransitionTime: metav1.Now()},
		}
		g.Expect(pc.Status().Update(ctx, hr)).To(Succeed())
		o := expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonReleaseFailed, "image pull backoff for manager")
		expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonReleaseFailed, "Flux stopped retrying")
		found := false
		for _, r := range o.Status.Resources {
			if r.Kind == "HelmRelease" && r.Name == name+"-workload" {
				found = true
				g.Expect(r.Phase).To(Equal(spv1alpha1.ResourceFailed))
			}
		}
		g.Expect(found).To(BeTrue())
	})

	t.Run("the reconcile operation makes Flux reset its retries", func(t *testing.T) {
		testFluxRetryReset(t, ctx, key, platformNS)
		expectReadyWithFlux(t, ctx, key, platformNS, "")
	})

	t.Run("Flux status changes are watched, not waited for at the poll interval", func(t *testing.T) {
		testFluxWatched(t, ctx, key, platformNS, cfg)
	})

	t.Run("an in-place version change is Ready only once both releases run the new chart", func(t *testing.T) {
		testVersionChange(t, ctx, key, platformNS)
	})

	t.Run("the provider's CP credentials: the operator's token and namespace only", func(t *testing.T) {
		testProviderCPRights(t, ctx, platformNS, name)
	})

	t.Run("the workload kubeconfig authenticates to the CP and survives token rotation", func(t *testing.T) {
		testWorkloadAccess(t, ctx, wlNS)
	})

	t.Run("copies follow their sources and go when unreferenced", func(t *testing.T) {
		testCopies(t, ctx, cfg, wlNS, values, goodValues)
		// The values went back and forth, so the workload release has a new generation for Flux.
		expectReadyWithFlux(t, ctx, key, platformNS, "")
	})

	t.Run("chart registry: a private CA copied next to the OCIRepository, or plain HTTP; bad settings named", func(t *testing.T) {
		testChartRegistry(t, ctx, key, platformNS, cfg)
	})

	t.Run("bad input: version not offered and malformed helmValues; nothing deleted", func(t *testing.T) {
		testBadInput(t, ctx, key, platformNS, wlNS, cfg, values)
	})

	t.Run("the CP token is renewed while the version is not offered and while the ProviderConfig is missing", func(t *testing.T) {
		testRenewalDespiteInputErrors(t, ctx, key, wlNS, cfg)
	})

	t.Run("operation annotations", func(t *testing.T) {
		testOperations(t, ctx, key, platformNS, cfg)
	})

	t.Run("deletion waits for every opentelemetry.io kind, then cleans up", func(t *testing.T) {
		testDeletion(t, ctx, key, platformNS, wlNS)
	})
}
