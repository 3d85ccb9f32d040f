package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

var collectorList = schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollectorList"}

// listCollectors makes the request the operator makes: list collectors in the CP.
func listCollectors(ctx context.Context, cfg *rest.Config) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	l := &unstructured.UnstructuredList{}
	l.SetGroupVersionKind(collectorList)
	return c.List(ctx, l)
}

// testOperatorRights checks, with the workload operator's control-plane credentials, what the
// operator does in the CP's operator namespace (its namespace there, from the mounted namespace file): take its
// leader-election Lease and keep its webhook certificate Secret; and that it cannot read Secrets
// anywhere else.
func testOperatorRights(g Gomega, ctx context.Context, op client.Client) {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: shippedrbac.LeaderElectionLease, Namespace: instance.CPNamespace}}
	g.Expect(op.Create(ctx, lease)).To(Succeed(), "the operator can create its Lease in the CP")
	g.Expect(op.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(Succeed())
	g.Expect(op.Update(ctx, lease)).To(Succeed())
	cert := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: flux.WebhookCertSecret, Namespace: instance.CPNamespace}}
	g.Expect(op.Create(ctx, cert)).To(Succeed(), "the operator can create its certificate Secret")
	g.Expect(op.Get(ctx, client.ObjectKeyFromObject(cert), cert)).To(Succeed())
	g.Expect(op.Update(ctx, cert)).To(Succeed())
	g.Expect(op.List(ctx, &corev1.SecretList{})).To(Satisfy(apierrors.IsForbidden), "no cluster-wide Secret access")
	// The certificate rotator's startup sync reads the webhook configurations the chart names in
	// its flags; they are not in the CP, and that must be NotFound (it goes on), not Forbidden.
	names := flux.InstanceOperatorNames(instance.ID("tenant", "my-cp"), nil)
	g.Expect(op.Get(ctx, client.ObjectKey{Name: names.MutatingWebhook}, &admissionregistrationv1.MutatingWebhookConfiguration{})).To(Satisfy(apierrors.IsNotFound))
	g.Expect(op.Get(ctx, client.ObjectKey{Name: names.ValidatingWebhook}, &admissionregistrationv1.ValidatingWebhookConfiguration{})).To(Satisfy(apierrors.IsNotFound))
	g.Expect(op.Get(ctx, client.ObjectKey{Namespace: "kube-system", Name: "x"}, &corev1.Secret{})).To(Satisfy(apierrors.IsForbidden))
	// What the operator made is its own, not the provider's; remove it for the later steps.
	g.Expect(world.CP.Client.Delete(ctx, lease)).To(Succeed())
	g.Expect(world.CP.Client.Delete(ctx, cert)).To(Succeed())
}

func testWorkloadAccess(t *testing.T, ctx context.Context, wlNS string) {
	g := newG(t)
	wl := world.Workload.Client
	key := client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}
	secret := &corev1.Secret{}
	g.Expect(wl.Get(ctx, key, secret)).To(Succeed())
	dir := t.TempDir()
	cfg := operatorConfig(g, secret, dir)
	g.Expect(cfg.Host).To(Equal(world.CP.Config.Host))
	g.Expect(listCollectors(ctx, cfg)).To(Succeed(), "the workload kubeconfig authenticates and is authorized in the CP")
	// One client for the whole test, as a running operator has.
	operator, err := client.New(cfg, client.Options{})
	g.Expect(err).NotTo(HaveOccurred())
	list := func() error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(collectorList)
		return operator.List(ctx, l)
	}
	g.Expect(list()).To(Succeed())
	testOperatorRights(g, ctx, operator)

	first := string(secret.Data["token"])
	withToken := func(tok string) *rest.Config {
		c := rest.AnonymousClientConfig(world.CP.Config)
		c.BearerToken = tok
		return c
	}
	rotate := func(old string) string {
		expireToken(g, ctx, wl, key)
		var next string
		g.Eventually(func(g Gomega) {
			s := &corev1.Secret{}
			g.Expect(wl.Get(ctx, key, s)).To(Succeed())
			next = string(s.Data["token"])
			if next == old {
				expireIfFresh(ctx, wl, s)
			}
			g.Expect(next).NotTo(Equal(old))
			writeMount(g, s, dir) // the kubelet refreshes the mounted files
		}).Should(Succeed())
		return next
	}
	start := time.Now()
	second := rotate(first)
	t.Logf("first rotation observed after %s", time.Since(start).Round(time.Millisecond))
	g.Expect(listCollectors(ctx, withToken(first))).To(Succeed(), "the previous token stays valid for one rotation")
	g.Expect(list()).To(Succeed())
	third := rotate(second)
	start = time.Now()
	g.Eventually(func() error { return listCollectors(ctx, withToken(first)) }).Should(Satisfy(apierrors.IsUnauthorized),
		"the token the operator started with is revoked after two rotations")
	t.Logf("first token rejected %s after the second rotation", time.Since(start).Round(time.Millisecond))
	g.Expect(listCollectors(ctx, withToken(third))).To(Succeed())
	// The operator's long-lived client re-reads the token file (client-go caches a tokenFile for at
	// most a minute) and keeps working; in a pod the previous token stays valid for one rotation
	// (TTL/2), far longer than the kubelet and that cache need.
	start = time.Now()
	g.Eventually(list).Should(Succeed())
	t.Logf("the operator's client recovered in %s", time.Since(start).Round(time.Millisecond))
	g.Consistently(list).WithTimeout(time.Second).Should(Succeed())
}

func testCopies(t *testing.T, ctx context.Context, cfg *spv1alpha1.ProviderConfig, wlNS string, values func(map[string]any) *apiextensionsv1.JSON, goodValues map[string]any) {
	g := newG(t)
	pc, wl := world.Platform.Client, world.Workload.Client
	src := &corev1.Secret{}
	g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: world.PodNamespace, Name: "regcred"}, src)).To(Succeed())
	src.Data[".dockerconfigjson"] = []byte(`{"auths":{"r2":{}}}`)
	g.Expect(pc.Update(ctx, src)).To(Succeed())
	g.Eventually(func(g Gomega) []byte {
		s := &corev1.Secret{}
		g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: "regcred"}, s)).To(Succeed())
		return s.Data[".dockerconfigjson"]
	}).Should(Equal([]byte(`{"auths":{"r2":{}}}`)))

	ca := &corev1.ConfigMap{}
	g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: world.PodNamespace, Name: "custom-ca"}, ca)).To(Succeed())
	ca.Data["ca-bundle.crt"] = "-----BEGIN CERTIFICATE-----\nMIIB...two\n-----END CERTIFICATE-----\n"
	g.Expect(pc.Update(ctx, ca)).To(Succeed())
	g.Eventually(func(g Gomega) string {
		c := &corev1.ConfigMap{}
		g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CABundleConfigMap}, c)).To(Succeed())
		return c.Data["ca-bundle.crt"]
	}).Should(ContainSubstring("two"))

	// Remove both references: the copies go, the mount leaves the post-renderer.
	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
	cfg.Spec.CABundleRef = nil
	v := map[string]any{}
	for k, val := range goodValues {
		if k != "imagePullSecrets" {
			v[k] = val
		}
	}
	cfg.Spec.Versions[1].HelmValues = values(v)
	g.Expect(pc.Update(ctx, cfg)).To(Succeed())
	g.Eventually(func() error {
		return wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: "regcred"}, &corev1.Secret{})
	}).Should(Satisfy(apierrors.IsNotFound))
	g.Eventually(func() error {
		return wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CABundleConfigMap}, &corev1.ConfigMap{})
	}).Should(Satisfy(apierrors.IsNotFound))
	g.Expect(wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, &corev1.Secret{})).To(Succeed(), "the access secret is not a copy")

	// And back, for the rest of the test.
	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
	cfg.Spec.Versions[1].HelmValues = values(goodValues)
	g.Expect(pc.Update(ctx, cfg)).To(Succeed())
	g.Eventually(func() error {
		return wl.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: "regcred"}, &corev1.Secret{})
	}).Should(Succeed())
}

// inventory is what must never be deleted by bad input.
func inventory(g Gomega, ctx context.Context, platformNS, wlNS string) map[string]string {
	out := map[string]string{}
	add := func(c client.Client, o client.Object, key client.ObjectKey, label string) {
		g.Expect(c.Get(ctx, key, o)).To(Succeed(), label)
		out[label] = string(o.GetUID())
	}
	add(world.Platform.Client, &sourcev1.OCIRepository{}, client.ObjectKey{Namespace: platformNS, Name: "my-cp"}, "OCIRepository")
	add(world.Platform.Client, &helmv2.HelmRelease{}, client.ObjectKey{Namespace: platformNS, Name: "my-cp-crds"}, "crds release")
	add(world.Platform.Client, &helmv2.HelmRelease{}, client.ObjectKey{Namespace: platformNS, Name: "my-cp-workload"}, "workload release")
	add(world.Workload.Client, &corev1.Secret{}, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, "access secret")
	add(world.Workload.Client, &corev1.Secret{}, client.ObjectKey{Namespace: wlNS, Name: "regcred"}, "pull secret")
	add(world.Platform.Client, &corev1.Secret{}, client.ObjectKey{Namespace: platformNS, Name: instance.ChartCASecretName("my-cp")}, "chart CA secret")
	add(world.CP.Client, &corev1.ServiceAccount{}, client.ObjectKey{Namespace: instance.CPNamespace, Name: instance.CPServiceAccount}, "CP ServiceAccount")
	return out
}

func testBadInput(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS, wlNS string, cfg *spv1alpha1.ProviderConfig, values func(map[string]any) *apiextensionsv1.JSON) {
	g := newG(t)
	oc, pc := world.Onboarding.Client, world.Platform.Client
	before := inventory(g, ctx, platformNS, wlNS)

	o := &spv1alpha1.OtelOperator{}
	g.Expect(oc.Get(ctx, key, o)).To(Succeed())
	o.Spec.Version = "9.9.9"
	g.Expect(oc.Update(ctx, o)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonVersionNotAllowed, `spec.version "9.9.9" is not offered by ProviderConfig "otel-operator"; allowed versions (spec.versions[].version): 0.20.1, 0.20.8`)
	expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonVersionNotAllowed, "9.9.9")
	g.Expect(inventory(g, ctx, platformNS, wlNS)).To(Equal(before))
	g.Expect(oc.Get(ctx, key, o)).To(Succeed())
	g.Expect(o.Status.ObservedGeneration).To(Equal(o.Generation), "bad input is a terminal state of this generation, not an error")
	o.Spec.Version = "0.20.8"
	g.Expect(oc.Update(ctx, o)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")

	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
	good := cfg.Spec.Versions[1].HelmValues
	cfg.Spec.Versions[1].HelmValues = values(map[string]any{"imagePullSecrets": "regcred"})
	g.Expect(pc.Update(ctx, cfg)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonInvalidConfiguration, `spec.versions["0.20.8"].helmValues.imagePullSecrets: must be a list of {name: <secret>}`)
	expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonInvalidConfiguration, "helmValues.imagePullSecrets")
	g.Expect(inventory(g, ctx, platformNS, wlNS)).To(Equal(before))

	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(cfg), cfg)).To(Succeed())
	cfg.Spec.Versions[1].HelmValues = good
	g.Expect(pc.Update(ctx, cfg)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseReady, spv1alpha1.ReasonReconcileSuccess, "")
}

func setAnnotation(g Gomega, ctx context.Context, c client.Client, o client.Object, value string) {
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Succeed())
	a := o.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if value == "" {
		delete(a, apireconciler.OperationAnnotation)
	} else {
		a[apireconciler.OperationAnnotation] = value
	}
	o.SetAnnotations(a)
	g.Expect(c.Update(ctx, o)).To(Succeed())
}

func testOperations(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS string, cfg *spv1alpha1.ProviderConfig) {
	pc, oc := world.Platform.Client, world.Onboarding.Client
	repoKey := client.ObjectKey{Namespace: platformNS, Name: key.Name}
	deleteRepo := func(g Gomega) {
		g.Expect(pc.Delete(ctx, &sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Name: repoKey.Name, Namespace: repoKey.Namespace}})).To(Succeed())
	}
	repoGone := func() error { return pc.Get(ctx, repoKey, &sourcev1.OCIRepository{}) }
	for _, tc := range []struct {
		name   string
		c      client.Client
		target client.Object
	}{
		{"on the OtelOperator", oc, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}},
		{"on the ProviderConfig", pc, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: cfg.Name}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newG(t)
			setAnnotation(g, ctx, tc.c, tc.target, apireconciler.OperationIgnore)
			time.Sleep(1500 * time.Millisecond) // let an in-flight reconcile finish
			deleteRepo(g)
			// Ignored: with a 1s poll interval the repository would be back within a second.
			g.Consistently(repoGone).WithTimeout(3 * time.Second).Should(Satisfy(apierrors.IsNotFound))
			setAnnotation(g, ctx, tc.c, tc.target, apireconciler.OperationReconcile)
			g.Eventually(repoGone).Should(Succeed())
			g.Eventually(func(g Gomega) map[string]string {
				g.Expect(tc.c.Get(ctx, client.ObjectKeyFromObject(tc.target), tc.target)).To(Succeed())
				return tc.target.GetAnnotations()
			}).ShouldNot(HaveKey(apireconciler.OperationAnnotation), "reconcile is one-shot")
			expectReadyWithFlux(t, ctx, key, platformNS, "")
		})
	}
}

// requeueAfter is a little more than the provider's deletion requeue (5s).
const requeueAfter = 6 * time.Second

func testDeletion(t *testing.T, ctx context.Context, key client.ObjectKey, platformNS, wlNS string) {
	g := newG(t)
	oc, pc, cp := world.Onboarding.Client, world.Platform.Client, world.CP.Client
	g.Expect(cp.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "apps"}})).To(Succeed())
	var users []*unstructured.Unstructured
	for _, k := range []struct{ version, kind string }{
		{"v1beta1", "OpenTelemetryCollector"}, {"v1alpha1", "OpenTelemetryCollector"}, {"v1alpha1", "Instrumentation"},
		{"v1alpha1", "OpAMPBridge"}, {"v1alpha1", "TargetAllocator"},
	} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("opentelemetry.io/" + k.version)
		u.SetKind(k.kind)
		u.SetNamespace("apps")
		u.SetName(fmt.Sprintf("%s-%s", lower(k.kind), k.version))
		u.Object["spec"] = map[string]any{}
		g.Expect(cp.Create(ctx, u)).To(Succeed())
		users = append(users, u)
	}
	// Objects the provider did not create: a user's ConfigMap in the CP operator namespace, and the
	// ClusterRoleBinding once its provider labels are gone (as if a user had made it). The provider
	// neither adopts nor deletes them, and keeps the namespace that holds user data.
	userData := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "user-data", Namespace: instance.CPNamespace}, Data: map[string]string{"k": "v"}}
	g.Expect(cp.Create(ctx, userData)).To(Succeed())
	crb := &rbacv1.ClusterRoleBinding{}
	g.Expect(cp.Get(ctx, client.ObjectKey{Name: instance.CPClusterRoleBinding}, crb)).To(Succeed())
	crb.Labels = map[string]string{"team": "theirs"}
	g.Expect(cp.Update(ctx, crb)).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseFailed, spv1alpha1.ReasonResourceNotOwned,
		"ClusterRoleBinding otel-operator-server exists in the control plane and was not created by the provider")
	g.Expect(cp.Get(ctx, client.ObjectKeyFromObject(crb), crb)).To(Succeed())
	g.Expect(crb.Labels).To(Equal(map[string]string{"team": "theirs"}), "not adopted")

	// Flux is slow to uninstall the workload release (a finalizer stands in for helm-controller):
	// the access Secret and the CP tokens it needs must outlive it.
	wlRelease := &helmv2.HelmRelease{}
	g.Expect(pc.Get(ctx, client.ObjectKey{Namespace: platformNS, Name: key.Name + "-workload"}, wlRelease)).To(Succeed())
	wlRelease.Finalizers = append(wlRelease.Finalizers, "test.otelop.io/uninstalling")
	g.Expect(pc.Update(ctx, wlRelease)).To(Succeed())
	// The ProviderConfig is deleted first: deletion does not need it and must not wait for it.
	g.Expect(pc.Delete(ctx, &spv1alpha1.ProviderConfig{ObjectMeta: metav1.ObjectMeta{Name: providerName}})).To(Succeed())
	g.Expect(oc.Delete(ctx, &spv1alpha1.OtelOperator{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}})).To(Succeed())
	expectStatus(t, ctx, key, spv1alpha1.PhaseTerminating, spv1alpha1.ReasonUserResourcesExist, "waiting for 5 opentelemetry.io object(s)")
	expectEvent(t, ctx, key, corev1.EventTypeWarning, spv1alpha1.ReasonUserResourcesExist, "")
	before := inventory(g, ctx, platformNS, wlNS)
	// Each kind alone keeps blocking.
	for i, u := range users {
		g.Expect(cp.Delete(ctx, u)).To(Succeed())
		if i == len(users)-1 {
			break
		}
		next := users[i+1]
		expectStatus(t, ctx, key, spv1alpha1.PhaseTerminating, spv1alpha1.ReasonUserResourcesExist,
			fmt.Sprintf("waiting for %d opentelemetry.io object(s)", len(users)-i-1))
		expectStatus(t, ctx, key, spv1alpha1.PhaseTerminating, spv1alpha1.ReasonUserResourcesExist, next.GetKind()+" apps/"+next.GetName())
		g.Expect(inventory(g, ctx, platformNS, wlNS)).To(Equal(before), "nothing deleted while blocked")
	}
	expectStatus(t, ctx, key, spv1alpha1.PhaseTerminating, spv1alpha1.ReasonDeleting, "waiting for HelmRelease "+platformNS+"/"+key.Name+"-workload")
	g.Consistently(func(g Gomega) {
		g.Expect(world.Workload.Client.Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, &corev1.Secret{})).To(Succeed())
		var holders corev1.SecretList
		g.Expect(cp.List(ctx, &holders, client.InNamespace(instance.CPNamespace), client.MatchingLabels{instance.InstanceLabel: instance.ID(key.Namespace, key.Name)})).To(Succeed())
		g.Expect(holders.Items).NotTo(BeEmpty())
	}).WithTimeout(2*requeueAfter).Should(Succeed(), "nothing the release needs goes while it uninstalls")
	g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(wlRelease), wlRelease)).To(Succeed())
	wlRelease.Finalizers = nil
	g.Expect(pc.Update(ctx, wlRelease)).To(Succeed())
	g.Eventually(func() error { return oc.Get(ctx, key, &spv1alpha1.OtelOperator{}) }).Should(Satisfy(apierrors.IsNotFound))

	// Managed resources are gone, access released, the CRDs stay.
	for _, o := range []client.Object{
		&sourcev1.OCIRepository{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: key.Name}},
		&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: key.Name + "-crds"}},
		&helmv2.HelmRelease{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: key.Name + "-workload"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: instance.ChartPullSecretName(key.Name)}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: platformNS, Name: instance.ChartCASecretName(key.Name)}},
	} {
		g.Expect(pc.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Satisfy(apierrors.IsNotFound), fmt.Sprintf("%T %s", o, o.GetName()))
	}
	for _, o := range []client.Object{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: wlNS, Name: instance.CPAccessSecret}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: wlNS, Name: "regcred"}},
	} {
		g.Expect(world.Workload.Client.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Satisfy(apierrors.IsNotFound))
	}
	g.Expect(cp.Get(ctx, client.ObjectKey{Namespace: instance.CPNamespace, Name: instance.CPServiceAccount}, &corev1.ServiceAccount{})).To(Satisfy(apierrors.IsNotFound))
	var holders corev1.SecretList
	g.Expect(cp.List(ctx, &holders, client.InNamespace(instance.CPNamespace), client.MatchingLabels{instance.InstanceLabel: instance.ID(key.Namespace, key.Name)})).To(Succeed())
	g.Expect(holders.Items).To(BeEmpty(), "every token revoked")
	for _, o := range []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: instance.CPClusterRole}},
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: instance.CPNamespace, Name: instance.CPRole}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: instance.CPNamespace, Name: instance.CPRoleBinding}},
	} {
		g.Expect(cp.Get(ctx, client.ObjectKeyFromObject(o), o)).To(Satisfy(apierrors.IsNotFound), fmt.Sprintf("%T", o))
	}
	// What the provider did not create is still there, and so is the namespace that holds it.
	g.Expect(cp.Get(ctx, client.ObjectKeyFromObject(crb), crb)).To(Succeed())
	g.Expect(crb.DeletionTimestamp).To(BeNil())
	g.Expect(cp.Get(ctx, client.ObjectKeyFromObject(userData), userData)).To(Succeed())
	cpNS := &corev1.Namespace{}
	g.Expect(cp.Get(ctx, client.ObjectKey{Name: instance.CPNamespace}, cpNS)).To(Succeed())
	g.Expect(cpNS.DeletionTimestamp).To(BeNil(), "a namespace holding user data is not deleted")
	// The workload namespace held only the provider's objects: it is deleted (no namespace
	// controller runs here to finish it).
	wlNSObj := &corev1.Namespace{}
	if err := world.Workload.Client.Get(ctx, client.ObjectKey{Name: wlNS}, wlNSObj); err == nil {
		g.Expect(wlNSObj.DeletionTimestamp).NotTo(BeNil(), "the provider's own namespace is deleted")
	} else {
		g.Expect(err).To(Satisfy(apierrors.IsNotFound))
	}
	g.Expect(cp.Get(ctx, client.ObjectKey{Name: "opentelemetrycollectors.opentelemetry.io"}, &apiextensionsv1.CustomResourceDefinition{})).To(Succeed())
	var ars clustersv1alpha1.AccessRequestList
	g.Expect(pc.List(ctx, &ars, client.InNamespace(platformNS))).To(Succeed())
	g.Expect(ars.Items).To(BeEmpty(), "cluster access released")
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
