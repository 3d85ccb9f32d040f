package chartswitch

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/webhook/certs"
	"github.com/otelop/otelop/test/install/installtest"
	"github.com/otelop/otelop/test/upstreamop"
)

// upstreamSecret is the webhook certificate Secret upstream's chart generates (a Helm hook, in
// autoGenerateCert mode); ourSecret the one this operator issues (this chart's self mode).
const (
	upstreamSecret = fullname + "-controller-manager-service-cert"
	ourSecret      = fullname + "-webhook-cert"
)

// TestHelmSwitch: upstream's chart -> this chart (values file) -> upstream's chart (rollback) ->
// this chart (--reuse-values) -> upstream's chart (rollback), the user's collectors never
// restarted. Each step is what docs/migrating.md says to do.
func TestHelmSwitch(t *testing.T) {
	start := time.Now()
	values := userValues(t)
	up := upstreamChart(t)
	ours := ourChart(t)

	// 1. helm install upstream's chart with the user's values; upstream's operator runs as its pod
	// and reconciles the user's collectors.
	installed := helmInstall(t, up, values)
	upOp := runUpstream(t)
	createCollectors(t)
	upstreamCert := secretData(t, upstreamSecret)["tls.crt"]
	before := takeState(t)
	t.Logf("installed upstream's chart %s (revision %d) and 3 collectors in %s", installed.Chart.Metadata.Version,
		installed.Version, time.Since(start).Round(time.Second))
	if got := probe(t, "probe-upstream-installed"); !upstreamWrote(got) {
		t.Fatalf("positive control: upstream's operator did not generate the probe collector's Deployment (managers %v)", got)
	}

	// 2. helm upgrade to this chart with the values file unchanged.
	phase := time.Now()
	switched, ourOp := switchToOurs(t, "upgrade -f values.yaml", upOp, installed, upstreamCert,
		func() *release.Release { return helmUpgrade(t, ours, values, false) })
	sameState(t, "upgrade -f values.yaml", before)
	t.Logf("upgrade -f values.yaml: %s", time.Since(phase).Round(time.Second))

	// 3. helm rollback to upstream's revision.
	phase = time.Now()
	back, upOp := switchToUpstream(t, "rollback", ourOp, switched, upstreamCert,
		func() *release.Release { return helmRollback(t, installed.Version) })
	sameState(t, "rollback", before)
	t.Logf("rollback to revision %d: %s", installed.Version, time.Since(phase).Round(time.Second))

	// 4. helm upgrade --reuse-values to this chart.
	phase = time.Now()
	reused, ourOp := switchToOurs(t, "upgrade --reuse-values", upOp, back, upstreamCert,
		func() *release.Release { return helmUpgrade(t, ours, nil, true) })
	sameState(t, "upgrade --reuse-values", before)
	t.Logf("upgrade --reuse-values: %s", time.Since(phase).Round(time.Second))

	// 5. helm rollback to upstream's revision again.
	phase = time.Now()
	switchToUpstream(t, "second rollback", ourOp, reused, upstreamCert,
		func() *release.Release { return helmRollback(t, back.Version) })
	sameState(t, "second rollback", before)
	t.Logf("second rollback: %s; whole flow %s", time.Since(phase).Round(time.Second), time.Since(start).Round(time.Second))
}

// switchToOurs runs helm (`helm upgrade` from upstream's release from to this chart): upstream's
// operator stops with its pod, this operator runs as the new pod and takes over.
func switchToOurs(t *testing.T, step string, upOp *upstreamop.Operator, from *release.Release, upstreamCert []byte, helm func() *release.Release) (*release.Release, *installtest.Operator) {
	t.Helper()
	old := holdPod(t)
	to := helm()
	terminate(t, old, func() {
		if err := upOp.Stop(); err != nil {
			t.Logf("%s: upstream's operator stopped: %v", step, err)
		}
	})
	checkReleaseObjects(t, step, from, to)
	op := runOurs(t)

	// The webhook certificate is this operator's (renewable: it holds the CA key) and is what the
	// webhook configurations trust.
	var data map[string][]byte
	poll(t, step+": the webhook certificate Secret issued by this operator", func(ctx context.Context) (bool, error) {
		s := &corev1.Secret{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ourSecret}, s); err != nil {
			return false, nil
		}
		data = s.Data
		return s.Annotations[certs.CreatedByAnnotation] != "" && len(s.Data["ca.key"]) > 0, nil
	})
	if bytes.Equal(data["tls.crt"], upstreamCert) {
		t.Errorf("%s: this operator serves the certificate upstream's chart generated", step)
	}
	// Upstream's Secret is a Helm hook of upstream's chart, not an object of the release: left
	// as it was, for a rollback.
	if got := secretData(t, upstreamSecret)["tls.crt"]; !bytes.Equal(got, upstreamCert) {
		t.Errorf("%s: upstream's webhook Secret changed", step)
	}
	poll(t, step+": the webhook configurations trust this operator's CA", func(ctx context.Context) (bool, error) {
		return bundlesHold(ctx, data["ca.crt"]), nil
	})

	// Positive control: this operator reconciled every collector (status at the current
	// generation, a condition upstream v0.140.0 does not write) and generates a new one.
	poll(t, step+": every collector's status written by this operator", func(ctx context.Context) (bool, error) {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollectorList"})
		if err := env.Client.List(ctx, l, client.InNamespace(appsNS)); err != nil || len(l.Items) != 3 {
			return false, nil
		}
		for _, c := range l.Items {
			og, _, _ := unstructured.NestedInt64(c.Object, "status", "observedGeneration")
			conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			if og != c.GetGeneration() || len(conds) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if got := probe(t, "probe-"+strings.ReplaceAll(strings.ReplaceAll(step, " ", "-"), ".", "")); !ourManager(got) {
		t.Errorf("%s: positive control: this operator did not generate the probe collector's Deployment (managers %v)", step, got)
	}
	return to, op
}

// switchToUpstream runs helm (`helm rollback` from this chart's release from to upstream's
// revision): this operator stops with its pod, upstream's operator runs as the new pod with the
// certificate Secret Helm restored, serves the webhooks and generates a new collector.
func switchToUpstream(t *testing.T, step string, op *installtest.Operator, from *release.Release, upstreamCert []byte, helm func() *release.Release) (*release.Release, *upstreamop.Operator) {
	t.Helper()
	old := holdPod(t)
	to := helm()
	terminate(t, old, op.Stop)
	checkReleaseObjects(t, step, from, to)
	if got := secretData(t, upstreamSecret)["tls.crt"]; !bytes.Equal(got, upstreamCert) {
		t.Errorf("%s: upstream's webhook Secret does not hold the certificate upstream's chart generated", step)
	}
	upOp := runUpstream(t)
	if got := probe(t, "probe-upstream-"+strings.ReplaceAll(step, " ", "-")); !upstreamWrote(got) {
		t.Errorf("%s: positive control: upstream's operator did not generate the probe collector's Deployment (managers %v)", step, got)
	}
	return to, upOp
}

// ourManager: this operator (field managers opentelemetry-operator and
// opentelemetry-operator-create-<hash>) created or applied the object.
func ourManager(managers []string) bool {
	return slices.ContainsFunc(managers, func(m string) bool { return strings.HasPrefix(m, "opentelemetry-operator") })
}

// upstreamWrote: upstream's operator (field manager named after its binary) created the object.
func upstreamWrote(managers []string) bool {
	return slices.Contains(managers, "upstream-operator:Update")
}

// checkReleaseObjects: every object of release to exists and is Helm's; every object of from that
// to lacks is gone (or kept by helm.sh/resource-policy: keep, logged).
func checkReleaseObjects(t *testing.T, step string, from, to *release.Release) {
	t.Helper()
	fromObjs, toObjs := releaseObjects(t, from), releaseObjects(t, to)
	removed := only(fromObjs, toObjs)
	added := only(toObjs, fromObjs)
	t.Logf("%s: %d objects kept (updated in place), %d removed %v, %d added %v", step,
		len(toObjs)-len(added), len(removed), removed, len(added), added)
	// As docs/migrating.md says: this chart has upstream's objects but for the namespaced RBAC
	// (upstream's <fullname>-leader-election, this chart's <fullname>-manager).
	upstreamOnly, oursOnly := namespacedRBAC(fullname+"-leader-election"), namespacedRBAC(fullname+"-manager")
	if from.Chart.Metadata.Version == "0.101.0" { // upstream's chart -> this one
		if fmt.Sprint(removed) != fmt.Sprint(upstreamOnly) || fmt.Sprint(added) != fmt.Sprint(oursOnly) {
			t.Errorf("%s: removed %v, added %v; docs/migrating.md says removed %v, added %v", step, removed, added, upstreamOnly, oursOnly)
		}
	} else if fmt.Sprint(removed) != fmt.Sprint(oursOnly) || fmt.Sprint(added) != fmt.Sprint(upstreamOnly) {
		t.Errorf("%s: removed %v, added %v; docs/migrating.md says removed %v, added %v", step, removed, added, oursOnly, upstreamOnly)
	}
	ctx := context.Background()
	for k := range toObjs {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(k.APIVersion)
		u.SetKind(k.Kind)
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u); err != nil {
			t.Errorf("%s: %s of the release: %v", step, k, err)
			continue
		}
		if u.GetAnnotations()["meta.helm.sh/release-name"] != releaseName {
			t.Errorf("%s: %s is not the release's (annotations %v)", step, k, u.GetAnnotations())
		}
	}
	for _, k := range removed {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(k.APIVersion)
		u.SetKind(k.Kind)
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: k.Namespace, Name: k.Name}, u)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			t.Errorf("%s: %s: %v", step, k, err)
		case u.GetDeletionTimestamp() != nil:
		case u.GetAnnotations()["helm.sh/resource-policy"] == "keep":
			t.Logf("%s: %s kept (helm.sh/resource-policy: keep)", step, k)
		default:
			t.Errorf("%s: %s of the previous release is left behind", step, k)
		}
	}
}

// namespacedRBAC is the Role and RoleBinding name in the release namespace.
func namespacedRBAC(name string) []objectKey {
	return []objectKey{
		{"rbac.authorization.k8s.io/v1", "Role", namespace, name},
		{"rbac.authorization.k8s.io/v1", "RoleBinding", namespace, name},
	}
}

// secretData is the data of Secret name.
func secretData(t *testing.T, name string) map[string][]byte {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(context.Background(), client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		t.Fatalf("webhook certificate Secret: %v", err)
	}
	return s.Data
}

// bundlesHold reports whether every webhook of the release's webhook configurations and the
// collector CRD's conversion webhook trust ca.
func bundlesHold(ctx context.Context, ca []byte) bool {
	mw := &admissionregistrationv1.MutatingWebhookConfiguration{}
	vw := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if env.Client.Get(ctx, client.ObjectKey{Name: fullname + "-mutation"}, mw) != nil ||
		env.Client.Get(ctx, client.ObjectKey{Name: fullname + "-validation"}, vw) != nil {
		return false
	}
	var bundles [][]byte
	for _, w := range mw.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	for _, w := range vw.Webhooks {
		bundles = append(bundles, w.ClientConfig.CABundle)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if env.Client.Get(ctx, client.ObjectKey{Name: "opentelemetrycollectors.opentelemetry.io"}, crd) != nil ||
		crd.Spec.Conversion == nil || crd.Spec.Conversion.Webhook == nil || crd.Spec.Conversion.Webhook.ClientConfig == nil {
		return false
	}
	bundles = append(bundles, crd.Spec.Conversion.Webhook.ClientConfig.CABundle)
	for _, b := range bundles {
		if !bytes.Contains(b, bytes.TrimSpace(ca)) {
			return false
		}
	}
	return len(bundles) > 0
}
