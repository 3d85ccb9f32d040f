package chart

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// The API server is started by the first test that needs it (lint and render tests do not) and
// stopped by TestMain.
var (
	envOnce sync.Once
	env     *testenv.Env
	envErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if env != nil {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping envtest:", err)
		}
	}
	os.Exit(code)
}

func apiServer(t *testing.T) *testenv.Env {
	t.Helper()
	envOnce.Do(func() {
		// No CRDs from config/: the chart's own CRDs are applied. cert-manager's kinds are
		// installed so that the cert-manager mode's objects can be checked.
		var empty string
		if empty, envErr = os.MkdirTemp("", "no-crds"); envErr != nil {
			return
		}
		defer os.RemoveAll(empty)
		env, envErr = testenv.Start(testenv.Options{
			CRDDirectoryPaths: []string{empty},
			CRDs:              certManagerCRDs(),
		})
	})
	if envErr != nil {
		t.Fatal(envErr)
	}
	return env
}

// applyAll server-side applies objs (strict field validation), as a dry run or for real.
func applyAll(t *testing.T, c client.Client, objs []*unstructured.Unstructured, dryRun bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, o := range objs {
		data, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		opts := []client.PatchOption{client.ForceOwnership, client.FieldOwner("chart-test"), client.FieldValidation(metav1.FieldValidationStrict)}
		if dryRun {
			opts = append(opts, client.DryRunAll)
		}
		obj := o.DeepCopy()
		if err := c.Patch(ctx, obj, client.RawPatch(types.ApplyPatchType, data), opts...); err != nil {
			t.Errorf("apply (dry run %v) %s %s/%s: %v", dryRun, o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

func ensureNamespace(t *testing.T, c client.Client, name string) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := c.Create(context.Background(), ns); err != nil && !isAlreadyExists(err) {
		t.Fatal(err)
	}
}

// TestServerSideDryRun: every object the chart renders, for each way it is installed, is accepted
// by a real kube-apiserver (server-side apply, dry run, strict field validation).
func TestServerSideDryRun(t *testing.T) {
	e := apiServer(t)
	user := map[string]any{"opentelemetry-operator": map[string]any{
		"manager": map[string]any{"extraEnvs": []any{map[string]any{"name": "GOMEMLIMIT", "value": "200MiB"}}},
	}}
	for name, r := range map[string]release{
		"default":                     {},
		"kube-stack CRDs release":     {values: flux.CRDsValues()},
		"kube-stack workload release": {name: "workload", namespace: "otel-workload", values: flux.WorkloadValues(user, []string{"pull"}, instance.ID("default", "otel"))},
		"cert-manager":                {values: map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}}},
		"cert-manager issuerRef": {values: map[string]any{"admissionWebhooks": map[string]any{"certManager": map[string]any{
			"enabled": true, "issuerRef": map[string]any{"kind": "ClusterIssuer", "name": "corp", "group": "cert-manager.io"},
			"duration": "2160h", "renewBefore": "360h"}}}},
		"files": {values: map[string]any{"admissionWebhooks": map[string]any{"autoGenerateCert": map[string]any{"enabled": false}, "caBundle": "Q0E="}}},
		"everything set": {name: "opentelemetry-operator", namespace: "opentelemetry-operator-system", values: map[string]any{
			"replicaCount":     2,
			"imagePullSecrets": []any{map[string]any{"name": "pull"}},
			"manager": map[string]any{
				"collectorImage":        map[string]any{"repository": "example.org/otelcol", "tag": "1.0"},
				"targetAllocatorImage":  map[string]any{"repository": "example.org/ta"},
				"opampBridgeImage":      map[string]any{"repository": "example.org/bridge", "tag": "2"},
				"featureGates":          "+operator.targetallocator.fallbackstrategy",
				"extraArgs":             []any{"--sync-period=1h"},
				"podAnnotations":        map[string]any{"a": "b"},
				"podLabels":             map[string]any{"team": "obs"},
				"deploymentAnnotations": map[string]any{"c": "d"},
				"serviceAccount":        map[string]any{"annotations": map[string]any{"e": "f"}},
			},
			"nodeSelector":      map[string]any{"kubernetes.io/os": "linux"},
			"tolerations":       []any{map[string]any{"key": "k", "operator": "Exists", "effect": "NoSchedule"}},
			"affinity":          map[string]any{"nodeAffinity": map[string]any{}},
			"priorityClassName": "system-cluster-critical",
			"topologySpreadConstraints": []any{map[string]any{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
				"whenUnsatisfiable": "ScheduleAnyway", "labelSelector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": "opentelemetry-operator"}}}},
		}},
		// Upstream chart values this chart carries out (ServiceMonitor and PrometheusRule are left
		// out: the API server has no prometheus-operator CRDs).
		"upstream values": {name: "up", values: map[string]any{
			"namespaceOverride":            "otel-override",
			"revisionHistoryLimit":         3,
			"minReadySeconds":              5,
			"additionalLabels":             map[string]any{"team": "{{ .Release.Name }}-obs"},
			"hostNetwork":                  true,
			"automountServiceAccountToken": false,
			"pdb":                          map[string]any{"create": true, "maxUnavailable": 1},
			"crds":                         map[string]any{"annotations": map[string]any{"example.com/owner": "platform"}},
			"extraObjects": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": `{{ include "opentelemetry-operator.fullname" . }}-extra`, "namespace": "otel-override"}}},
			"manager": map[string]any{
				"image":                    map[string]any{"imagePullPolicy": "Always"},
				"env":                      map[string]any{"ENABLE_WEBHOOKS": "true", "GOGC": "50"},
				"featureGatesMap":          map[string]any{"operator.targetallocator.fallbackstrategy": true, "operand.networkpolicy": false},
				"autoInstrumentationImage": map[string]any{"java": map[string]any{"repository": "example.org/java", "tag": "2.0"}},
				"autoInstrumentation":      map[string]any{"go": map[string]any{"enabled": true}},
				"metrics":                  map[string]any{"secure": false},
				"serviceAnnotations":       map[string]any{"a": "b"},
				"rolling":                  true,
				"ports":                    map[string]any{"pprofPort": 6060},
			},
			"admissionWebhooks": map[string]any{
				"failurePolicy":      "Ignore",
				"pods":               map[string]any{"failurePolicy": "Fail"},
				"namePrefix":         "0000",
				"timeoutSeconds":     15,
				"namespaceSelector":  map[string]any{"matchLabels": map[string]any{"otel": "on"}},
				"objectSelector":     map[string]any{"matchExpressions": []any{map[string]any{"key": "skip-otel", "operator": "DoesNotExist"}}},
				"serviceAnnotations": map[string]any{"c": "d"},
				"autoGenerateCert":   map[string]any{"certPeriodDays": 90},
			},
		}},
		"webhooks off": {values: map[string]any{"admissionWebhooks": map[string]any{"create": false}, "role": map[string]any{"create": false}}},
	} {
		t.Run(name, func(t *testing.T) {
			if r.namespace == "" {
				r.namespace = "observability"
			}
			objs := render(t, r)
			ensureNamespace(t, e.Client, r.namespace)
			ensureNamespace(t, e.Client, "otel-override")
			applyAll(t, e.Client, objs, true)
		})
	}
}

// TestHelmInstallUpgradeUninstall installs the chart with the Helm SDK against the API server as
// `helm install` does (release stored in a Secret, objects created in Helm's order), upgrades it to
// cert-manager mode and back, and uninstalls it: every object is removed but the CRDs, which
// helm.sh/resource-policy: keep leaves in place.
func TestHelmInstallUpgradeUninstall(t *testing.T) {
	e := apiServer(t)
	const ns = "otel-install"
	ensureNamespace(t, e.Client, ns)
	cfg := helmConfig(t, e, ns)

	install := action.NewInstall(cfg)
	install.ReleaseName = "otel"
	install.Namespace = ns
	rel, err := install.Run(loadChart(t), nil)
	if err != nil {
		t.Fatalf("helm install: %v", err)
	}
	objs := render(t, release{namespace: ns})
	for _, o := range objs {
		if err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o.DeepCopy()); err != nil {
			t.Errorf("%s %s not found after helm install: %v", o.GetKind(), o.GetName(), err)
		}
	}
	// The release Secret must stay under the API server's 1 MiB limit with room for the CRDs to
	// grow: the CRDs are in a library subchart, which Helm does not store.
	secret := &corev1.Secret{}
	if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.otel.v1"}, secret); err != nil {
		t.Fatal(err)
	}
	size := len(secret.Data["release"])
	t.Logf("release Secret %d bytes (manifest %d bytes)", size, len(rel.Manifest))
	if size > 700<<10 {
		t.Errorf("release Secret is %d bytes: close to the 1 MiB limit; keep large files out of the parent chart", size)
	}

	for _, vals := range []map[string]any{
		{"admissionWebhooks": map[string]any{"certManager": map[string]any{"enabled": true}}},
		nil,
	} {
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		up.ResetValues = true // without values, helm upgrade would reuse the last release's
		if _, err := up.Run("otel", loadChart(t), vals); err != nil {
			t.Fatalf("helm upgrade %v: %v", vals, err)
		}
	}
	cert := &unstructured.Unstructured{}
	cert.SetAPIVersion("cert-manager.io/v1")
	cert.SetKind("Certificate")
	if err := e.Client.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: full + "-serving-cert"}, cert); !apierrors.IsNotFound(err) {
		t.Errorf("the Certificate of the cert-manager upgrade is still there after upgrading back: %v", err)
	}

	if _, err := action.NewUninstall(cfg).Run("otel"); err != nil {
		t.Fatalf("helm uninstall: %v", err)
	}
	for _, o := range objs {
		err := e.Client.Get(context.Background(), client.ObjectKeyFromObject(o), o.DeepCopy())
		switch {
		case o.GetKind() == "CustomResourceDefinition" && err != nil:
			t.Errorf("CRD %s was deleted by helm uninstall: %v", o.GetName(), err)
		case o.GetKind() != "CustomResourceDefinition" && !apierrors.IsNotFound(err):
			t.Errorf("%s %s still there after helm uninstall (err %v)", o.GetKind(), o.GetName(), err)
		}
	}
}

// helmConfig is an action.Configuration for the API server, as the helm CLI builds it from a
// kubeconfig, storing releases in Secrets.
func helmConfig(t *testing.T, e *testenv.Env, namespace string) *action.Configuration {
	t.Helper()
	user, err := e.Environment.ControlPlane.AddUser(envtest.User{Name: "helm", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &path
	flags.Namespace = &namespace
	cfg := &action.Configuration{}
	if err := cfg.Init(flags, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg
}
