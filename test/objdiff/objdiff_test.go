package objdiff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/sidebyside"
	"github.com/otelop/otelop/test/simcluster"
	"github.com/otelop/otelop/test/upstreamop"
)

func TestMain(m *testing.M) {
	upstreamop.RunChildIfAsked()
	os.Exit(m.Run())
}

// sideLabel routes a namespace's collectors, TargetAllocators and OpAMPBridges to one side's
// webhooks.
const sideLabel = "objdiff.otelop.io/webhooks"

// ns is a side's namespace.
func ns(side string) string { return "objdiff-" + side }

// Both sides run the same images, so that the images (and the version labels taken from their
// tags) are compared as the operators use them, not as their defaults differ (docs/differences.md
// lists the defaults).
const (
	collectorImage = "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.140.0"
	allocatorImage = "ghcr.io/open-telemetry/opentelemetry-operator/target-allocator:0.140.0"
	bridgeImage    = "ghcr.io/open-telemetry/opentelemetry-operator/operator-opamp-bridge:0.140.0"
)

// upstreamSA is the ServiceAccount upstream's RBAC check asks about (it runs with a client
// certificate here, but checks the ServiceAccount its Deployment would run as): bound to
// cluster-admin, as an install whose ServiceAccount holds the shipped rules.
const upstreamSA = "opentelemetry-operator-controller-manager"

// TestGeneratedObjectsMatchUpstream creates the corpus on both sides, waits until both have
// converged, and compares every generated object and every resource against the table.
func TestGeneratedObjectsMatchUpstream(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	started := time.Now()
	root := testenv.RepoRoot()
	e := sidebyside.Start(t, ctx, sidebyside.Options{
		Name: "objdiff", WebhookPrefix: "objdiff", SideLabel: sideLabel,
		Namespaces: func(side string) []*corev1.Namespace {
			return []*corev1.Namespace{{ObjectMeta: metav1.ObjectMeta{Name: ns(side)}}}
		},
		Cluster: simcluster.Options{Nodes: 1},
		// ServiceMonitor and PodMonitor (and the allocator's other Prometheus kinds), so that both
		// operators generate them.
		CRDDirs:       []string{filepath.Join(root, "internal", "targetallocator", "promcr", "testdata", "crds")},
		Resources:     []string{"opentelemetrycollectors", "targetallocators", "opampbridges"},
		FailResources: []string{"opentelemetrycollectors", "targetallocators", "opampbridges"},
		// collectors, TargetAllocators and OpAMPBridges: defaulting and validation each
		MinWebhooks: 6,
		ConvertCRDs: []string{"opentelemetrycollectors.opentelemetry.io"},
		UpstreamArgs: []string{"--collector-image=" + collectorImage, "--target-allocator-image=" + allocatorImage,
			"--operator-opamp-bridge-image=" + bridgeImage,
			// on by default here (beta); upstream v0.140.0 has it alpha, off
			"--feature-gates=operand.networkpolicy"},
		UpstreamEnv: []string{"SERVICE_ACCOUNT_NAME=" + upstreamSA, "NAMESPACE=default"},
		Ours: func(o *operator.Options) {
			o.CollectorImage, o.TargetAllocatorImage, o.OpAMPBridgeImage = collectorImage, allocatorImage, bridgeImage
		},
		Prepare: upstreamIdentity,
	})
	corpus := createCorpus(t, e)
	t.Logf("cluster, both operators and the corpus (%d resources per side) in %s", len(corpus), time.Since(started).Round(100*time.Millisecond))

	snaps := waitConverged(t, e, corpus)
	t.Logf("both sides converged after %s", time.Since(started).Round(100*time.Millisecond))

	var found []sidebyside.Observed
	up, ours := snaps[sidebyside.Upstream], snaps[sidebyside.Otelop]
	for _, key := range sidebyside.UnionKeys(up, ours) {
		u, uok := up[key]
		o, ook := ours[key]
		switch {
		case !uok:
			found = append(found, sidebyside.Observed{Case: key, Difference: sidebyside.Difference{Path: "object", Upstream: sidebyside.Absent, Ours: "generated"}})
		case !ook:
			found = append(found, sidebyside.Observed{Case: key, Difference: sidebyside.Difference{Path: "object", Upstream: "generated", Ours: sidebyside.Absent}})
		default:
			for _, d := range sidebyside.Diff("", u, o) {
				found = append(found, sidebyside.Observed{Case: key, Difference: d})
			}
			if err := sidebyside.Dump(os.Getenv("OBJDIFF_DUMP"), strings.ReplaceAll(key, "/", "."), u, o); err != nil {
				t.Error(err)
			}
		}
	}
	t.Logf("%d objects compared in %s; %d differences:\n%s", len(sidebyside.UnionKeys(up, ours)), time.Since(started).Round(100*time.Millisecond),
		len(found), sidebyside.Table(found))
	for _, msg := range sidebyside.Check(found, expected) {
		t.Error(msg)
	}
}

// upstreamIdentity creates upstreamSA in default, bound to cluster-admin.
func upstreamIdentity(ctx context.Context, c client.Client) error {
	if err := c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: upstreamSA, Namespace: "default"}}); err != nil {
		return err
	}
	return c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "objdiff-upstream-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: upstreamSA, Namespace: "default"}},
	})
}

// createCorpus creates testdata/corpus.yaml in both sides' namespaces (retrying while a side's
// webhooks are not served yet) and returns the resources as read from the file.
func createCorpus(t *testing.T, e *sidebyside.Env) []*unstructured.Unstructured {
	t.Helper()
	objs, err := simcluster.ReadManifestFile(filepath.Join("testdata", "corpus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range sidebyside.Sides {
		for _, o := range objs {
			obj := o.DeepCopy()
			obj.SetNamespace(ns(side))
			var last error
			err := wait.PollUntilContextTimeout(e.Ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				last = e.Admin.Create(ctx, obj.DeepCopy())
				return last == nil, nil
			})
			if err != nil {
				t.Fatalf("creating %s %s/%s: %v (last error: %v)\nupstream's operator:\n%s", obj.GetKind(), obj.GetNamespace(),
					obj.GetName(), err, last, e.Up.Tail(20))
			}
		}
	}
	return objs
}

// generated are the kinds the operators generate in a namespace.
var generated = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"},
	{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"},
}

// clusterGenerated are the cluster-scoped kinds, matched to a side by their instance label.
var clusterGenerated = []schema.GroupVersionKind{
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
}

// resources are the corpus's kinds, read in their storage versions.
var resources = []schema.GroupVersionKind{
	{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollector"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "TargetAllocator"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "OpAMPBridge"},
}

// managedBy is the label both operators put on what they generate.
const managedBy = "app.kubernetes.io/managed-by"

// snapshot reads what a side has: every object it generated (labelled managed-by
// opentelemetry-operator, or owned by one of its resources) and every resource, normalized and
// keyed by <Kind>/<name>.
func snapshot(ctx context.Context, c client.Client, side string) (map[string]map[string]any, error) {
	var raw []read
	list := func(gvk schema.GroupVersionKind, keepStatus bool, keep func(*unstructured.Unstructured) bool, opts ...client.ListOption) error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := c.List(ctx, l, opts...); err != nil {
			return fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for i := range l.Items {
			l.Items[i].SetGroupVersionKind(gvk)
			if keep(&l.Items[i]) {
				raw = append(raw, read{obj: &l.Items[i], keepStatus: keepStatus})
			}
		}
		return nil
	}
	all := func(*unstructured.Unstructured) bool { return true }
	for _, gvk := range resources {
		if err := list(gvk, true, all, client.InNamespace(ns(side))); err != nil {
			return nil, err
		}
	}
	for _, gvk := range generated {
		if err := list(gvk, false, isGenerated, client.InNamespace(ns(side))); err != nil {
			return nil, err
		}
	}
	ofSide := func(u *unstructured.Unstructured) bool {
		return strings.HasPrefix(u.GetLabels()["app.kubernetes.io/instance"], ns(side)+".")
	}
	for _, gvk := range clusterGenerated {
		if err := list(gvk, false, ofSide, client.MatchingLabels{managedBy: "opentelemetry-operator"}); err != nil {
			return nil, err
		}
	}
	return normalizeAll(raw)
}

// read is an object as listed, and whether its status is compared.
type read struct {
	obj        *unstructured.Unstructured
	keepStatus bool
}

// normalizeAll checks the configuration hashes of a side's objects against its own ConfigMaps
// (verifyHashes), then normalizes every object, keyed by <Kind>/<name>.
func normalizeAll(raw []read) (map[string]map[string]any, error) {
	configMaps := map[string]*unstructured.Unstructured{}
	for _, r := range raw {
		if r.obj.GetKind() == "ConfigMap" {
			configMaps[r.obj.GetName()] = r.obj
		}
	}
	out := map[string]map[string]any{}
	for _, r := range raw {
		obj := r.obj.DeepCopy()
		verifyHashes(obj, configMaps)
		m, err := normalize(obj.Object, r.keepStatus)
		if err != nil {
			return nil, err
		}
		// cluster-scoped names embed the namespace (<collector>-<namespace>-cluster-role)
		out[obj.GetKind()+"/"+sideNames.ReplaceAllString(obj.GetName(), "objdiff-<side>")] = m
	}
	return out, nil
}

// isGenerated says whether an object of a side's namespace is the operators': labelled
// managed-by opentelemetry-operator or owned by a resource of opentelemetry.io.
func isGenerated(u *unstructured.Unstructured) bool {
	if u.GetLabels()[managedBy] == "opentelemetry-operator" {
		return true
	}
	return slices.ContainsFunc(u.GetOwnerReferences(), func(r metav1.OwnerReference) bool {
		return strings.HasPrefix(r.APIVersion, "opentelemetry.io/")
	})
}

// converged says whether a side's snapshot shows every resource reconciled: each collector has a
// status.version (TargetAllocators and OpAMPBridges may have no status on one side: what is in it
// is compared once the snapshots stop changing).
func converged(snap map[string]map[string]any, corpus []*unstructured.Unstructured) string {
	for _, o := range corpus {
		key := o.GetKind() + "/" + o.GetName()
		m, ok := snap[key]
		if !ok {
			return key + " missing"
		}
		if o.GetKind() != "OpenTelemetryCollector" {
			continue
		}
		if v, _, _ := unstructured.NestedString(m, "status", "version"); v == "" {
			return key + " has no status.version"
		}
	}
	return ""
}

// stablePolls is how many polls in a row (2s apart) both sides' snapshots must stay the same.
const stablePolls = 4

// waitConverged waits until both sides have reconciled every resource and what the test compares
// has stopped changing, and returns the last snapshots.
func waitConverged(t *testing.T, e *sidebyside.Env, corpus []*unstructured.Unstructured) map[string]map[string]map[string]any {
	t.Helper()
	var last map[string]map[string]map[string]any
	var lastRender, why, lastWhy string
	same := 0
	err := wait.PollUntilContextTimeout(e.Ctx, 2*time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		snaps := map[string]map[string]map[string]any{}
		why = ""
		for _, side := range sidebyside.Sides {
			s, err := snapshot(ctx, e.Admin, side)
			if err != nil {
				if ctx.Err() == nil {
					why = err.Error()
				}
				return false, nil
			}
			if w := converged(s, corpus); w != "" && why == "" {
				why = side + ": " + w
			}
			snaps[side] = s
		}
		r := sidebyside.Render(snaps)
		if why == "" && r == lastRender {
			same++
		} else {
			same = 0
		}
		if why == "" && same == 0 && lastRender != "" {
			why = "still changing"
		}
		if why != lastWhy {
			t.Logf("%s: %s", time.Now().Format("15:04:05"), why)
			lastWhy = why
		}
		last, lastRender = snaps, r
		return same >= stablePolls, nil
	})
	if err != nil {
		t.Fatalf("the two sides did not converge: %v (%s)\nupstream's operator:\n%s", err, why, e.Up.Tail(30))
	}
	return last
}
