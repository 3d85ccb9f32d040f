package system

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/serviceprovider/app"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/serviceprovider/simprovider"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/simcluster"
)

const (
	// providerName names the ServiceProvider and its ProviderConfig; the controller-runtime
	// controller of each run takes it too, so each case of one test process has its own.
	providerName = "otel-operator"
	// chartVersion is the version the chart is pushed with, the OCI tag and OtelOperator.spec.version.
	chartVersion = "1.0.0"
	// upgradeVersion is the version our chart's case changes spec.version to in place.
	upgradeVersion = "1.1.0"
	tenant, cpName = "tenant", "my-cp"
	userNamespace  = "team-a"
)

// systemCase is one chart the provider installs, with the operator binary its Deployment runs.
type systemCase struct {
	name, chartDir, operatorBin string
	kind                        operatorKind
	// provider is the ServiceProvider name: controller names must be unique in a process.
	provider string
}

// TestWholeSystem installs a chart into a control plane and a workload cluster through the service
// provider and the real Flux, runs the installed operator's binary with the provider's credentials
// against the control plane, and deletes the installation again; once with our chart and our
// operator, once with upstream's opentelemetry-kube-stack 0.20.3 (the provider's default chart in
// upstream's provider) and upstream's operator v0.140.0 (bin/tools/upstream-operator; kube-stack
// 0.20.3 ships 0.154.0, which does not build here). The steps of a case share state and run in
// order; each logs its duration.
func TestWholeSystem(t *testing.T) {
	root := testenv.RepoRoot()
	kubeStack := filepath.Join(root, "..", "shared", "fixtures", "upstream-helm-charts", "opentelemetry-kube-stack-0.20.3")
	if _, err := os.Stat(kubeStack); err != nil {
		t.Fatalf("upstream's kube-stack chart is expected at %s (../shared/fixtures from the repository root): %v", kubeStack, err)
	}
	for _, c := range []systemCase{
		{name: "our chart", chartDir: filepath.Join(root, "charts", "opentelemetry-operator"), operatorBin: filepath.Join(root, "bin", "opentelemetry-operator"), kind: ourOperator, provider: providerName},
		{name: "upstream kube-stack", chartDir: kubeStack, operatorBin: filepath.Join(root, "bin", "tools", "upstream-operator"), kind: upstreamOperator, provider: providerName + "-kube-stack"},
	} {
		if _, err := os.Stat(c.operatorBin); err != nil {
			t.Fatalf("%s not found; `make test-system` builds it (make build; hack/build-tools.sh upstream-operator)", c.operatorBin)
		}
		if !t.Run(c.name, func(t *testing.T) { wholeSystem(t, c) }) {
			return
		}
	}
}

func wholeSystem(t *testing.T, c systemCase) {
	began := time.Now()
	top := t
	root := testenv.RepoRoot()
	operatorBin := c.operatorBin
	// OTELOP_SYSTEM_LOGS=<dir> keeps the Flux controllers' and the operator's logs there.
	logDir := os.Getenv("OTELOP_SYSTEM_LOGS")
	if logDir == "" {
		logDir = t.TempDir()
	} else {
		logDir = filepath.Join(logDir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.MkdirAll(logDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	var durations []string
	step := func(name string, f func(t *testing.T)) {
		t.Helper()
		s := time.Now()
		ok := t.Run(name, f)
		durations = append(durations, fmt.Sprintf("%6.1fs  %s", time.Since(s).Seconds(), name))
		if !ok {
			t.FailNow()
		}
	}
	defer func() {
		t.Logf("step durations (total %.0fs):\n%s", time.Since(began).Seconds(), strings.Join(durations, "\n"))
	}()

	var (
		world      *simprovider.World
		sc         *simcluster.Cluster
		chartURL   string
		registry   string
		platformNS string
		key        = client.ObjectKey{Namespace: tenant, Name: cpName}
		id         = instance.ID(tenant, cpName)
		wlNS       = instance.WorkloadNamespace(id)
	)
	// Cleanups run last-in first-out after the test: the operator, Flux and the registry (registered
	// later by the steps) stop before the providers and the API servers they talk to.
	t.Cleanup(func() {
		cancel() // the simulated cluster provider and the provider stop before their API servers
		if world != nil {
			if err := world.Stop(); err != nil {
				t.Logf("stopping the API servers: %v", err)
			}
		}
		if sc != nil {
			if err := sc.Stop(); err != nil {
				t.Logf("stopping the workload cluster: %v", err)
			}
		}
	})
	step("clusters: platform, onboarding and control plane (envtest), workload (simulated, 1 fake node)", func(t *testing.T) {
		g := NewWithT(t)
		var err error
		sc, err = simcluster.Start(ctx, simcluster.Options{Nodes: 1})
		g.Expect(err).NotTo(HaveOccurred())
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("workload cluster logs kept in %s", sc.Keep())
			}
		})
		wlCfg := rest.CopyConfig(sc.Config)
		g.Expect(rest.LoadTLSFiles(wlCfg)).To(Succeed()) // the AccessRequest kubeconfig carries the CA inline
		wlClient, err := client.New(wlCfg, client.Options{Scheme: app.Scheme()})
		g.Expect(err).NotTo(HaveOccurred())
		world, err = simprovider.StartWith(app.Scheme(), simprovider.Options{
			FluxCRDDirs: fluxCRDDirs(t, root), NoOTelCRDs: true,
			Workload: &testenv.Env{Config: wlCfg, Client: wlClient},
		})
		g.Expect(err).NotTo(HaveOccurred())
	})
	pc, oc, cp, wl := world.Platform.Client, world.Onboarding.Client, world.CP.Client, world.Workload.Client
	go (&simprovider.Provider{World: world, TokenTTL: time.Hour, Errors: func(err error) { t.Logf("simprovider: %v", err) }}).Run(ctx)

	registryCA := testenv.NewCA(t, "registry CA")
	step("registry: HTTPS with a private CA; our chart, packaged as `make chart` does, pushed with the Helm SDK", func(t *testing.T) {
		registry = startRegistry(top, registryCA)
		chartURL = pushChart(t, registry, registryCA, c.chartDir, chartVersion)
	})

	step("flux: source-controller and helm-controller healthy against the platform API server", func(t *testing.T) {
		kc := filepath.Join(logDir, "platform.kubeconfig")
		writeKubeconfig(t, world.Platform.Config, kc)
		startFlux(t, top, root, kc, logDir)
	})

	runErr := make(chan error, 1)
	step("provider: init, then run", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(world.AddServiceProvider(ctx, c.provider)).To(Succeed())
		o := app.Options{
			Platform: world.Platform.Config, PodNamespace: world.PodNamespace, ProviderName: c.provider,
			MetricsBindAddress: "0", HealthProbeBindAddress: "0",
			Rotation:           cpaccess.Rotation{TTL: time.Hour},
			ClusterAccessRetry: 300 * time.Millisecond, AccessTimeout: time.Minute,
		}
		g.Expect(app.Init(ctx, o)).To(Succeed())
		go func() { runErr <- app.Run(ctx, o) }()
	})
	defer func() {
		cancel()
		select {
		case err := <-runErr:
			if err != nil {
				t.Logf("provider run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("the provider did not stop")
		}
	}()

	step("OtelOperator created: Flux pulls the chart, CRDs land in the CP, the operator in the workload cluster, Ready", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(pc.Create(ctx, &spv1alpha1.ProviderConfig{
			ObjectMeta: metav1.ObjectMeta{Name: c.provider},
			Spec: spv1alpha1.ProviderConfigSpec{
				PollInterval: &metav1.Duration{Duration: 5 * time.Second},
				Versions:     []spv1alpha1.VersionConfig{{Version: chartVersion, ChartURL: chartURL}},
			},
		})).To(Succeed())
		g.Expect(oc.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tenant}})).To(Succeed())
		var err error
		platformNS, err = world.AddControlPlane(ctx, cpName, tenant)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(oc.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: cpName, Namespace: tenant},
			Spec: spv1alpha1.OtelOperatorSpec{Version: chartVersion}})).To(Succeed())

		// The registry's certificate is signed by a private CA: until the ProviderConfig names it,
		// source-controller cannot verify the registry, and the OtelOperator's status says why.
		g.Eventually(func(g Gomega) {
			_, c := readyCondition(g, ctx, oc, key)
			g.Expect(c.Message).To(And(ContainSubstring("OCIRepository"), ContainSubstring("x509")))
			t.Logf("before chartCABundleRef: %s", c.Message)
		}).WithTimeout(2*time.Minute).WithPolling(time.Second).Should(Succeed(), func() string { return describe(ctx, world, key, platformNS) })
		// The platform admin puts the CA into a ConfigMap in the provider's namespace and names it
		// in the version's chartCABundleRef; the provider copies it next to the OCIRepository.
		g.Expect(pc.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "registry-ca", Namespace: world.PodNamespace},
			Data: map[string]string{"ca.crt": string(registryCA.PEM())}})).To(Succeed())
		updateProviderConfig(g, ctx, pc, c.provider, func(cfg *spv1alpha1.ProviderConfig) {
			cfg.Spec.Versions[0].ChartCABundleRef = &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "registry-ca"}, Key: "ca.crt"}
		})

		waitReady(g, ctx, world, key, platformNS)

		// The real CRDs (with schemas) are in the CP, installed by helm-controller.
		crd := &apiextensionsv1.CustomResourceDefinition{}
		g.Expect(cp.Get(ctx, client.ObjectKey{Name: "opentelemetrycollectors.opentelemetry.io"}, crd)).To(Succeed())
		// Installed by the CRDs release (our chart renders them as templates, kube-stack ships
		// them in crds/; helm-controller labels both).
		g.Expect(crd.Labels).To(HaveKeyWithValue("helm.toolkit.fluxcd.io/name", instance.CRDsReleaseName(cpName)))
		served := map[string]bool{}
		for _, v := range crd.Spec.Versions {
			served[v.Name] = v.Served
			if v.Name == "v1beta1" {
				g.Expect(v.Schema.OpenAPIV3Schema.Properties).To(HaveKey("spec"), "a real schema, not an open stub")
			}
		}
		g.Expect(served).To(HaveKeyWithValue("v1beta1", true))
		for _, n := range []string{"instrumentations", "opampbridges", "targetallocators"} {
			g.Expect(cp.Get(ctx, client.ObjectKey{Name: n + ".opentelemetry.io"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed(), n)
		}
		// The operator Deployment in the workload cluster, Available on a fake node, pointed at the
		// CP by the provider's post-renderer.
		dep := operatorDeployment(g, ctx, wl, wlNS)
		g.Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
		pod := dep.Spec.Template.Spec
		g.Expect(*pod.AutomountServiceAccountToken).To(BeFalse())
		mgr := manager(g, dep)
		g.Expect(mgr.Env).To(ContainElement(HaveField("Name", "KUBECONFIG")))
		// Its namespace in the CP comes from the ServiceAccount namespace file, mounted from the
		// access Secret (no flag: upstream's operator has none for it).
		g.Expect(mgr.VolumeMounts).To(ContainElement(HaveField("MountPath", flux.ServiceAccountDir)))
		access := &corev1.Secret{}
		g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, access)).To(Succeed())
		g.Expect(access.Data).To(HaveKeyWithValue(flux.NamespaceKey, []byte(instance.CPNamespace)))
		// No admission webhooks of any tenant in the shared workload cluster: the post-renderer
		// removed our chart's configurations, and the operator serves none.
		g.Expect(mgr.Args).To(ContainElement("--enable-webhooks=false"))
		var mwcs admissionregistrationv1.MutatingWebhookConfigurationList
		var vwcs admissionregistrationv1.ValidatingWebhookConfigurationList
		g.Expect(wl.List(ctx, &mwcs)).To(Succeed())
		g.Expect(wl.List(ctx, &vwcs)).To(Succeed())
		g.Expect(mwcs.Items).To(BeEmpty())
		g.Expect(vwcs.Items).To(BeEmpty())
		// Verified with the CA alone: no insecure on the source.
		repo := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(cpName)}, repo)).To(Succeed())
		g.Expect(repo.Spec.Insecure).To(BeFalse())
		g.Expect(repo.Spec.CertSecretRef).NotTo(BeNil())
		g.Expect(repo.Spec.CertSecretRef.Name).To(Equal(instance.ChartCASecretName(cpName)))
		for _, hr := range []string{instance.CRDsReleaseName(cpName), instance.WorkloadReleaseName(cpName)} {
			r := &helmv2.HelmRelease{}
			g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: hr}, r)).To(Succeed())
			g.Expect(r.Status.History).NotTo(BeEmpty(), "helm-controller installed %s", hr)
			t.Logf("HelmRelease %s: %s", hr, ready(r.Status.Conditions))
		}
	})

	var operator *proc
	step("the operator binary with the provider's kubeconfig Secret and leader election (ours twice: one leads in the CP, the other takes over)", func(t *testing.T) {
		g := NewWithT(t)
		leaseKey := client.ObjectKey{Namespace: instance.CPNamespace, Name: shippedrbac.LeaderElectionLease}
		holder := func(g Gomega) string {
			l := &coordinationv1.Lease{}
			g.Expect(cp.Get(ctx, leaseKey, l)).To(Succeed())
			if l.Spec.HolderIdentity == nil {
				return ""
			}
			return *l.Spec.HolderIdentity
		}
		first := runOperator(t, top, g, ctx, wl, wlNS, operatorBin, c.kind, logDir, "opentelemetry-operator-1")
		var leader string
		g.Eventually(func(g Gomega) {
			leader = holder(g)
			g.Expect(leader).NotTo(BeEmpty())
		}).WithTimeout(2*time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), func() string { return first.tail(30) })
		if c.kind == upstreamOperator {
			// Upstream's binary leads in the CP's operator namespace, which it found in the
			// mounted namespace file; one replica (it has no flag to shorten the retry period).
			g.Expect(first.exited()).To(BeFalse(), func() string { return first.tail(30) })
			operator = first
			return
		}
		// A second replica waits while the first holds the Lease.
		// Its retry period is shortened from the chart's 26 s (up to 57 s with client-go's jitter)
		// to keep the test short; the takeover itself is the same.
		second := runOperator(t, top, g, ctx, wl, wlNS, operatorBin, c.kind, logDir, "opentelemetry-operator-2", "--leader-election-retry-period=2s")
		g.Consistently(holder).WithTimeout(5 * time.Second).WithPolling(500 * time.Millisecond).Should(Equal(leader))
		g.Expect(second.exited()).To(BeFalse(), func() string { return second.tail(30) })
		// The leader stops (and releases the Lease); the second takes over at its next retry.
		g.Expect(first.stop(30*time.Second)).To(Succeed(), "the operator stops cleanly on SIGTERM")
		g.Eventually(func(g Gomega) {
			now := holder(g)
			g.Expect(now).NotTo(BeEmpty())
			g.Expect(now).NotTo(Equal(leader))
		}).WithTimeout(time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), func() string { return second.tail(30) })
		operator = second
	})

	collector := &unstructured.Unstructured{}
	step("a collector created in the CP is reconciled there", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNamespace}})).To(Succeed())
		// The CP has no admission webhooks. Upstream's operator defaults spec.upgradeStrategy only
		// in its webhook and writes the empty value back, which its CRD's enum refuses ("Unsupported
		// value: \"\""), so with kube-stack a collector must set it (docs/service-provider.md); ours
		// defaults it in the reconciler.
		strategy := ""
		if c.kind == upstreamOperator {
			strategy = `"upgradeStrategy": "automatic", `
		}
		g.Expect(json.Unmarshal([]byte(`{
  "apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
  "metadata": {"name": "simple", "namespace": "`+userNamespace+`"},
  "spec": {`+strategy+`"mode": "deployment", "config": {
    "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"}}}},
    "exporters": {"debug": {}},
    "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}}}}`), &collector.Object)).To(Succeed())
		g.Expect(cp.Create(ctx, collector)).To(Succeed())
		g.Eventually(func(g Gomega) {
			d := &appsv1.Deployment{}
			g.Expect(cp.Get(ctx, client.ObjectKey{Namespace: userNamespace, Name: "simple-collector"}, d)).To(Succeed())
			g.Expect(d.Labels).To(HaveKeyWithValue("app.kubernetes.io/managed-by", "opentelemetry-operator"))
			g.Expect(cp.Get(ctx, client.ObjectKey{Namespace: userNamespace, Name: "simple-collector"}, &corev1.Service{})).To(Succeed())
			g.Expect(cp.Get(ctx, client.ObjectKey{Namespace: userNamespace, Name: "simple-collector"}, &corev1.ServiceAccount{})).To(Succeed())
		}).WithTimeout(2*time.Minute).WithPolling(500*time.Millisecond).Should(Succeed(), func() string { return operator.tail(30) })
		// Where the chart's values (and the provider's post-renderer) say: in the CP, not in the
		// workload cluster the operator's pod runs in.
		g.Expect(wl.Get(ctx, client.ObjectKey{Name: userNamespace}, &corev1.Namespace{})).To(Satisfy(apierrors.IsNotFound))
	})

	if c.kind == ourOperator {
		step("in-place spec.version upgrade: Ready only once both releases run the new chart, the CRDs release's upgrade first", func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(pushChart(t, registry, registryCA, c.chartDir, upgradeVersion)).To(Equal(chartURL))
			updateProviderConfig(g, ctx, pc, c.provider, func(cfg *spv1alpha1.ProviderConfig) {
				v := cfg.Spec.Versions[0]
				v.Version = upgradeVersion
				cfg.Spec.Versions = append(cfg.Spec.Versions, v)
			})
			upgrade{world: world, key: key, platformNS: platformNS, from: chartVersion, to: upgradeVersion}.run(t, ctx)
			g.Eventually(func(g Gomega) {
				dep := operatorDeployment(g, ctx, wl, wlNS)
				g.Expect(manager(g, dep).Image).To(HaveSuffix(":" + upgradeVersion))
				g.Expect(dep.Status.UpdatedReplicas).To(Equal(dep.Status.Replicas))
				g.Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
			}).WithTimeout(time.Minute).WithPolling(time.Second).Should(Succeed())
		})
	}

	step("deletion: blocked while the collector exists, completes after; CRDs and a user ConfigMap stay", func(t *testing.T) {
		g := NewWithT(t)
		userCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-settings", Namespace: instance.CPNamespace}, Data: map[string]string{"k": "v"}}
		g.Expect(cp.Create(ctx, userCM)).To(Succeed())
		g.Expect(oc.Delete(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: cpName, Namespace: tenant}})).To(Succeed())
		g.Eventually(func(g Gomega) {
			o := &spv1alpha1.OtelOperator{}
			g.Expect(oc.Get(ctx, key, o)).To(Succeed())
			c := meta.FindStatusCondition(o.Status.Conditions, spv1alpha1.ConditionReady)
			g.Expect(c).NotTo(BeNil())
			g.Expect(o.Status.Phase).To(Equal(spv1alpha1.PhaseTerminating))
			g.Expect(c.Reason).To(Equal(spv1alpha1.ReasonUserResourcesExist), c.Message)
			g.Expect(c.Message).To(ContainSubstring(userNamespace + "/simple"))
		}).WithTimeout(time.Minute).WithPolling(500 * time.Millisecond).Should(Succeed())
		// Still blocked: the Flux objects and the operator's access are untouched.
		g.Consistently(func(g Gomega) {
			g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.WorkloadReleaseName(cpName)}, &helmv2.HelmRelease{})).To(Succeed())
			g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, &corev1.Secret{})).To(Succeed())
		}).WithTimeout(6 * time.Second).WithPolling(time.Second).Should(Succeed())

		// The user deletes the collector; the running operator lets it go.
		g.Expect(cp.Delete(ctx, collector)).To(Succeed())
		g.Eventually(func() error { return cp.Get(ctx, client.ObjectKeyFromObject(collector), collector.DeepCopy()) }).
			WithTimeout(time.Minute).Should(Satisfy(apierrors.IsNotFound))
		// The operator has nothing left to do in the CP; the uninstall does not need it.
		g.Expect(operator.stop(30*time.Second)).To(Succeed(), "the operator stops cleanly on SIGTERM")
		g.Eventually(func(g Gomega) {
			err := oc.Get(ctx, key, &spv1alpha1.OtelOperator{})
			g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), func() string { return describe(ctx, world, key, platformNS) })
		}).WithTimeout(4 * time.Minute).WithPolling(time.Second).Should(Succeed())

		// Flux uninstalled the operator from the workload cluster; the CRDs release orphaned the CRDs.
		var hrs helmv2.HelmReleaseList
		g.Expect(pc.List(ctx, &hrs, client.InNamespace(platformNS))).To(Succeed())
		g.Expect(hrs.Items).To(BeEmpty())
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(cpName)}, &sourcev1.OCIRepository{})).To(Satisfy(apierrors.IsNotFound))
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.ChartCASecretName(cpName)}, &corev1.Secret{})).To(Satisfy(apierrors.IsNotFound), "the CA copy goes with the instance")
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: world.PodNamespace, Name: "registry-ca"}, &corev1.ConfigMap{})).To(Succeed(), "its source stays")
		var deps appsv1.DeploymentList
		g.Expect(wl.List(ctx, &deps, client.InNamespace(wlNS))).To(Succeed())
		g.Expect(deps.Items).To(BeEmpty(), "the workload release was uninstalled")
		for _, n := range []string{"opentelemetrycollectors", "instrumentations", "opampbridges", "targetallocators"} {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(cp.Get(ctx, client.ObjectKey{Name: n + ".opentelemetry.io"}, crd)).To(Succeed(), n)
			g.Expect(crd.DeletionTimestamp).To(BeNil(), n)
		}
		g.Expect(cp.Get(ctx, client.ObjectKeyFromObject(userCM), &corev1.ConfigMap{})).To(Succeed(), "the user's ConfigMap")
		ns := &corev1.Namespace{}
		g.Expect(cp.Get(ctx, client.ObjectKey{Name: instance.CPNamespace}, ns)).To(Succeed())
		g.Expect(ns.DeletionTimestamp).To(BeNil(), "the CP namespace holding the user's ConfigMap is kept")
	})

	if c.kind != ourOperator {
		return // the registry's transport does not depend on the chart
	}
	step("reinstall from a plain-HTTP registry (an in-cluster one) with chartInsecure: Flux pulls it, Ready", func(t *testing.T) {
		g := NewWithT(t)
		const httpVersion = "1.0.1"
		httpURL := pushChart(t, startRegistry(top, nil), nil, c.chartDir, httpVersion)
		updateProviderConfig(g, ctx, pc, c.provider, func(cfg *spv1alpha1.ProviderConfig) {
			cfg.Spec.Versions = append(cfg.Spec.Versions, spv1alpha1.VersionConfig{Version: httpVersion, ChartURL: httpURL, ChartInsecure: true})
		})
		// The same control plane again (its CRDs, kept by the first uninstall, are adopted by the
		// release of the same name).
		g.Expect(oc.Create(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: cpName, Namespace: tenant},
			Spec: spv1alpha1.OtelOperatorSpec{Version: httpVersion}})).To(Succeed())
		waitReady(g, ctx, world, key, platformNS)
		repo := &sourcev1.OCIRepository{}
		g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: instance.OCIRepositoryName(cpName)}, repo)).To(Succeed())
		g.Expect(repo.Spec.Insecure).To(BeTrue())
		g.Expect(repo.Spec.CertSecretRef).To(BeNil())
		g.Expect(repo.Spec.URL).To(Equal(httpURL))
		dep := operatorDeployment(g, ctx, wl, wlNS)
		g.Expect(dep.Status.AvailableReplicas).To(BeNumerically(">=", 1))
		g.Expect(manager(g, dep).Image).To(HaveSuffix(":"+httpVersion), "the chart pulled over HTTP, at its appVersion")
	})
}

// waitReady waits (up to 6 minutes) for the OtelOperator key to be Ready, describing the
// installation's objects on failure.
func waitReady(g Gomega, ctx context.Context, world *simprovider.World, key client.ObjectKey, platformNS string) {
	g.Eventually(func(g Gomega) {
		o := &spv1alpha1.OtelOperator{}
		g.Expect(world.Onboarding.Client.Get(ctx, key, o)).To(Succeed())
		g.Expect(o.Status.Phase).To(Equal(spv1alpha1.PhaseReady), func() string { return describe(ctx, world, key, platformNS) })
	}).WithTimeout(6 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

// updateProviderConfig applies change to the ProviderConfig name, retrying on conflicts.
func updateProviderConfig(g Gomega, ctx context.Context, pc client.Client, name string, change func(*spv1alpha1.ProviderConfig)) {
	g.Eventually(func() error {
		cfg := &spv1alpha1.ProviderConfig{}
		if err := pc.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
			return err
		}
		change(cfg)
		return pc.Update(ctx, cfg)
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// operatorDeployment returns the chart's operator Deployment in the workload namespace.
func operatorDeployment(g Gomega, ctx context.Context, wl client.Client, ns string) *appsv1.Deployment {
	var list appsv1.DeploymentList
	g.Expect(wl.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app.kubernetes.io/name": "opentelemetry-operator"})).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	return &list.Items[0]
}

// manager returns the operator container of the Deployment.
func manager(g Gomega, d *appsv1.Deployment) corev1.Container {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == "manager" {
			return c
		}
	}
	g.Expect(d.Spec.Template.Spec.Containers).To(ContainElement(HaveField("Name", "manager")))
	return corev1.Container{}
}

// readyCondition returns the OtelOperator key and its Ready condition (which must exist).
func readyCondition(g Gomega, ctx context.Context, oc client.Client, key client.ObjectKey) (*spv1alpha1.OtelOperator, *metav1.Condition) {
	o := &spv1alpha1.OtelOperator{}
	g.Expect(oc.Get(ctx, key, o)).To(Succeed())
	c := meta.FindStatusCondition(o.Status.Conditions, spv1alpha1.ConditionReady)
	g.Expect(c).NotTo(BeNil())
	return o, c
}

// ready summarizes a Ready condition.
func ready(conds []metav1.Condition) string {
	c := meta.FindStatusCondition(conds, "Ready")
	if c == nil {
		return "no Ready condition"
	}
	return fmt.Sprintf("Ready=%s %s: %s", c.Status, c.Reason, c.Message)
}

// describe is the state of the OtelOperator and its Flux objects, for failure messages.
func describe(ctx context.Context, w *simprovider.World, key client.ObjectKey, platformNS string) string {
	var b strings.Builder
	o := &spv1alpha1.OtelOperator{}
	if err := w.Onboarding.Client.Get(ctx, key, o); err != nil {
		fmt.Fprintf(&b, "OtelOperator: %v\n", err)
	} else {
		fmt.Fprintf(&b, "OtelOperator: phase %s, %s\n", o.Status.Phase, ready(o.Status.Conditions))
	}
	var repos sourcev1.OCIRepositoryList
	_ = w.Platform.Client.List(ctx, &repos, client.InNamespace(platformNS))
	for _, r := range repos.Items {
		fmt.Fprintf(&b, "OCIRepository %s: %s\n", r.Name, ready(r.Status.Conditions))
	}
	var hrs helmv2.HelmReleaseList
	_ = w.Platform.Client.List(ctx, &hrs, client.InNamespace(platformNS))
	for _, r := range hrs.Items {
		fmt.Fprintf(&b, "HelmRelease %s: %s\n", r.Name, ready(r.Status.Conditions))
	}
	return b.String()
}
