package objdiff

import (
	"encoding/json"
	"regexp"

	"github.com/otelop/otelop/test/sidebyside"
)

// collectors are the corpus's collectors (testdata/corpus.yaml), as cases.
var collectors = []string{
	"deploy-full", "daemon", "stateful", "sidecar", "metrics", "hpa-full", "hpa-plain", "ingress-path",
	"ingress-subdomain", "ta-consistent", "ta-per-node", "ta-least", "ta-linked", "alpha-deploy", "alpha-sidecar",
}

// cases are the keys <kind>/<name> of names.
func cases(kind string, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = kind + "/" + n
	}
	return out
}

// allocators are the corpus's TargetAllocators: the three embedded ones and the standalone one.
var allocators = []string{"ta-consistent", "ta-per-node", "ta-least", "ta-standalone"}

// bridgeObjects are the objects generated for the OpAMPBridge.
var bridgeObjects = []string{"ConfigMap/bridge-opamp-bridge", "Deployment/bridge-opamp-bridge",
	"Service/bridge-opamp-bridge", "ServiceAccount/bridge-opamp-bridge"}

// laterPromCRFields are the prometheus_cr settings of targetallocator.yaml that come from fields
// of a later upstream API, which the CRDs (this project's, on both sides) serve with defaults:
// evaluation_interval and the four *_namespace_selector blocks.
var laterPromCRFields = regexp.MustCompile(`(?m)^  evaluation_interval: .*\n|^  [a-z_]+_namespace_selector:\n(    .*\n)+`)

// sameButLaterPromCRFields says whether two targetallocator.yaml values (JSON strings) are the
// same once ours loses the prometheus_cr fields of the later API.
func sameButLaterPromCRFields(up, ours string) bool {
	var u, o string
	if json.Unmarshal([]byte(up), &u) != nil || json.Unmarshal([]byte(ours), &o) != nil {
		return false
	}
	return u != o && u == laterPromCRFields.ReplaceAllString(o, "")
}

// expected is the contract: every difference between what upstream's operator (v0.140.0) and ours
// generate and store for the corpus. docs/differences.md ("Compared with upstream's generated
// objects (test/objdiff)") lists the same rows.
var expected = []sidebyside.Expected{
	// The resources as stored.
	{Cases: cases("OpenTelemetryCollector", sidebyside.Without(collectors, "daemon", "ta-consistent")...), Path: "metadata.finalizers",
		Upstream: `["opentelemetrycollector.opentelemetry.io/finalizer"]`, Ours: sidebyside.Absent,
		Why: "a finalizer only on collectors whose config needs cluster RBAC (daemon's k8sattributes, ta-consistent's target allocator); upstream puts it on every collector once it may create cluster RBAC"},
	// The target allocators' RBAC (issue 33): upstream leaves it to users.
	{Cases: []string{"ClusterRole/ta-consistent-objdiff-<side>-targetallocator", "ClusterRoleBinding/ta-consistent-objdiff-<side>-targetallocator"},
		Path: "object", Upstream: sidebyside.Absent, Ours: "generated",
		Why: "the embedded allocator's generated ServiceAccount gets what its config discovers; ServiceMonitors of every namespace need cluster-wide reads, owned by the collector"},
	{Cases: cases("Role", "ta-least-targetallocator", "ta-per-node-targetallocator", "ta-standalone-targetallocator"),
		Path: "object", Upstream: sidebyside.Absent, Ours: "generated",
		Why: "an allocator reading only its own namespace (its collectors' pods) gets a Role there, owned by the TargetAllocator"},
	{Cases: cases("RoleBinding", "ta-least-targetallocator", "ta-per-node-targetallocator", "ta-standalone-targetallocator"),
		Path: "object", Upstream: sidebyside.Absent, Ours: "generated",
		Why: "the Role's binding to the allocator's generated ServiceAccount"},
	{Cases: cases("OpenTelemetryCollector", collectors...), Path: "spec.httpRoute",
		Upstream: sidebyside.Absent, Ours: `{"enabled":false,"gateway":""}`,
		Why: "a field of a later upstream API that the CRD serves; upstream v0.140.0's defaulting webhook removes every field its types lack"},
	{Cases: cases("OpenTelemetryCollector", "stateful"), Path: "spec.podManagementPolicy",
		Upstream: sidebyside.Absent, Ours: `"Parallel"`,
		Why: "the same: upstream v0.140.0's defaulting webhook removes the field it does not know (its StatefulSets are Parallel anyway, as ours)"},
	{Cases: cases("OpenTelemetryCollector", collectors...), Path: "status.conditions", Upstream: sidebyside.Absent, Ours: "*",
		Why: "Ready (Reconciling, Stalled) conditions that say whether the workload is available; upstream v0.140.0 writes none"},
	{Cases: cases("OpenTelemetryCollector", collectors...), Path: "status.observedGeneration", Upstream: sidebyside.Absent, Ours: `"<generation>"`,
		Why: "observedGeneration of the last successful reconcile; upstream v0.140.0 writes none"},
	{Cases: cases("OpenTelemetryCollector", "sidecar", "alpha-sidecar"), Path: "status.sidecars",
		Upstream: sidebyside.Absent, Ours: `{"current":0,"outdated":0}`,
		Why: "the sidecar catch-up's counts of workloads whose pods run an outdated or missing sidecar (issue 32); upstream has no such field"},
	{Cases: cases("OpenTelemetryCollector", "deploy-full"), Path: "status.image",
		Upstream: `"example.invalid/side:1"`, Ours: `"example.invalid/collector:1.2.3"`,
		Why: "the collector container's image; upstream reports the last container's, an additionalContainers image"},
	{Cases: cases("TargetAllocator", allocators...), Path: "status.image", Upstream: sidebyside.Absent, Ours: "*",
		Why: "the image the allocator's Deployment runs"},
	{Cases: cases("TargetAllocator", allocators...), Path: "status.version", Upstream: `"0.140.0"`, Ours: sidebyside.Absent,
		Why: "with --target-allocator-image set (both sides run the same pinned image) the version of that image is unknown and not reported; upstream reports its own allocator version whatever image runs"},
	{Cases: []string{"OpAMPBridge/bridge"}, Path: "status", Upstream: `{"version":"0.140.0"}`, Ours: sidebyside.Absent,
		Why: "the same rule for --operator-opamp-bridge-image"},

	// The generated objects.
	{Cases: []string{"ClusterRole/daemon-objdiff-<side>-cluster-role", "ClusterRoleBinding/daemon-objdiff-<side>-collector"},
		Path: "metadata.annotations", Upstream: sidebyside.Absent, Ours: "*",
		Why: "operator.opentelemetry.io/owner and owner-uid name the collector that owns cluster RBAC (names collide across namespaces)"},
	{Cases: []string{"ConfigMap/ta-consistent-targetallocator", "ConfigMap/ta-standalone-targetallocator"},
		Path: "data[targetallocator.yaml]", Equivalent: sameButLaterPromCRFields,
		Why: "with prometheusCR enabled, the file also holds evaluation_interval (30s) and the empty namespace selectors (every namespace, as their absence): defaults of later upstream API fields the CRD serves, which upstream v0.140.0 does not read"},
	{Cases: bridgeObjects, Path: "metadata.labels[app.kubernetes.io/version]", Upstream: `"latest"`, Ours: `"0.140.0"`,
		Why: "the version label comes from the image that runs; upstream's from spec.image only (unset: latest)"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "spec.template.metadata.labels[app.kubernetes.io/version]",
		Upstream: `"latest"`, Ours: `"0.140.0"`, Why: "the same, on the pods"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "metadata.annotations[opentelemetry-opampbridge-config/hash]",
		Upstream: sidebyside.Absent, Ours: "*", Why: "the configuration's hash, which rolls the bridge when its ConfigMap changes"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "spec.template.spec.containers[opamp-bridge-container].args",
		Upstream: sidebyside.Absent, Ours: `["--name=bridge","--heartbeat-interval=30s"]`,
		Why: "the bridge's name and heartbeat are passed (OpAMPBridge arguments, above)"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "spec.template.spec.containers[opamp-bridge-container].ports",
		Upstream: sidebyside.Absent, Ours: "*", Why: "the container declares its OpAMP and health ports"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "spec.template.spec.containers[opamp-bridge-container].livenessProbe",
		Upstream: sidebyside.Absent, Ours: "*", Why: "the bridge's /healthz is probed"},
	{Cases: []string{"Deployment/bridge-opamp-bridge"}, Path: "spec.template.spec.containers[opamp-bridge-container].readinessProbe",
		Upstream: sidebyside.Absent, Ours: "*", Why: "the same"},
	{Cases: []string{"PodMonitor/sidecar-collector"}, Path: "spec.podMetricsEndpoints[0].bearerTokenSecret",
		Upstream: `{"key":"","name":""}`, Ours: sidebyside.Absent,
		Why: "no empty Secret reference (upstream's Prometheus types serialize the unset struct); the same meaning"},
}
