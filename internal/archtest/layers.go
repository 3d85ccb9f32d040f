// Package archtest holds the layer rule of docs/architecture.md as data and the checker that holds
// every package of the module to it. The test next to it parses the imports of every non-test Go
// file, so `go test ./...` (and `make test`) fails when a package imports a higher layer, a sibling
// it should not, or is not placed in a layer at all. The table in docs/architecture.md is generated
// from Layers (`go test ./internal/archtest -update`).
package archtest

// Siblings says which imports between two packages of the same layer are allowed.
type Siblings int

const (
	// NoSiblings forbids imports inside the layer (a controller never imports another controller).
	NoSiblings Siblings = iota
	// SameComponent allows imports between packages that share their first two path elements
	// (internal/opampbridge/agent may import internal/opampbridge/health, not internal/serviceprovider/flux).
	SameComponent
	// AnySibling allows every import inside the layer.
	AnySibling
)

// Layer is one row of the layer table: the packages it holds, what they do and what they may import
// from their own layer. A package may import every lower layer.
type Layer struct {
	// Name is the layer's short name in messages.
	Name string
	// Packages are module-relative patterns: an exact directory ("internal/apply"), its direct
	// children ("internal/controller/*") or the directory and everything below ("test/...").
	// An exact pattern beats a wildcard; among wildcards the longest prefix wins.
	Packages []string
	// What the layer does (one line, shown in docs/architecture.md).
	What string
	// Siblings says which imports inside the layer are allowed.
	Siblings Siblings
	// Pure layers hold no client, recorder, logger or informer: they may not import Impure, and
	// from controller-runtime's client package they may use only the object types (ClientTypes).
	Pure bool
}

// Layers is the layer rule, highest layer first; imports point down only. Add a new package to
// the layer it belongs to (or a wildcard that covers it), then run
// `go test ./internal/archtest -update` to regenerate the table in docs/architecture.md.
var Layers = []Layer{
	{
		Name:     "harness",
		Packages: []string{"test/...", "bench/...", "hack/..."},
		What:     "end-to-end, install and real-node tests, benchmarks, dev tools (simcluster, images)",
		Siblings: AnySibling,
	},
	{
		Name: "test support",
		Packages: []string{"internal/testenv", "internal/operator/managertest", "internal/opampbridge/opamptest",
			"internal/serviceprovider/simprovider", "api/crdtest", "internal/archtest", "internal/golden"},
		What:     "libraries for tests: real API servers (envtest), an OpAMP server, the provider's clusters, golden files, this layer check; product code never imports them",
		Siblings: AnySibling,
	},
	{
		Name:     "release tooling",
		Packages: []string{"internal/imagebuild", "internal/sbom", "internal/imagesign"},
		What:     "the OCI image builder behind `make images` (hack/images), the SBOM writer behind `make release`, the signer behind `make push SIGNING_KEY=`; no binary imports them",
	},
	{
		Name:     "binaries",
		Packages: []string{"cmd/*"},
		What:     "flags, wiring, signals (thin)",
	},
	{
		Name:     "wiring",
		Packages: []string{"internal/operator", "internal/render", "internal/opampbridge/bridge", "internal/serviceprovider/app"},
		What:     "the manager (flags, cache scoping, controllers, webhooks), `render`, the bridge daemon, the service provider's commands",
	},
	{
		Name:     "plan",
		Packages: []string{"internal/plan"},
		What:     "`render --diff`: what a reconcile would create, change, prune and roll, computed with reads only from a controller's own functions",
	},
	{
		Name:     "daemon components",
		Packages: []string{"internal/opampbridge/*", "internal/serviceprovider/*", "internal/targetallocator/..."},
		What:     "the OpAMP bridge's, the service provider's and the target allocator's own packages; they import each other within one daemon only",
		Siblings: SameComponent,
	},
	{
		Name:     "controllers",
		Packages: []string{"internal/controller/*"},
		What:     "Reconcile: load -> build desired -> apply -> prune -> status (collector, opampbridge, targetallocator, instrumentation catch-up)",
	},
	{
		Name:     "reconcile helpers",
		Packages: []string{"internal/controller/owned", "internal/controller/statuswrite"},
		What:     "what controllers share: owned objects as the cache holds them, the reconcile skeleton, when to write a status",
	},
	{
		Name:     "webhook server",
		Packages: []string{"internal/webhook"},
		What:     "registers the admission and conversion webhooks and their certificates",
	},
	{
		Name:     "webhooks",
		Packages: []string{"internal/webhook/*"},
		What:     "admission (default, validate -> field.ErrorList), conversion, the pod webhook, certificates",
	},
	{
		Name:     "webhook helpers",
		Packages: []string{"internal/webhook/admissionmetrics"},
		What:     "what the webhooks share: admission outcome counters and latency histograms",
	},
	{
		Name:     "pure logic on builders",
		Packages: []string{"internal/instrumentation", "internal/sidecar", "internal/upgrade"},
		What:     "PURE: auto-instrumentation injection, the collector sidecar, CR version upgrades",
		Pure:     true,
	},
	{
		Name:     "builders",
		Packages: []string{"internal/manifests/*"},
		What:     "PURE builders: (CR, Options) -> []client.Object",
		Pure:     true,
	},
	{
		Name:     "builder helpers",
		Packages: []string{"internal/manifests/manifestutils"},
		What:     "PURE: labels, hashes, encoding shared by the builders",
		Pure:     true,
	},
	{
		Name:     "collector config",
		Packages: []string{"internal/collectorconfig"},
		What:     "PURE: the collector config model: components, pipelines, ports, RBAC, probes, defaults, validation (fuzzed)",
		Pure:     true,
	},
	{
		Name:     "applier",
		Packages: []string{"internal/apply"},
		What:     "ONE generic applier: create what is missing (ownership judged on a failed create), server-side apply, skip unchanged, recreate on immutable change, delete with UID precondition",
	},
	{
		Name:     "autodetect",
		Packages: []string{"internal/autodetect"},
		What:     "optional APIs (Prometheus Operator, Gateway API, routes, cert-manager) watched at run time",
	},
	{
		Name:     "leaf helpers",
		Packages: []string{"internal/naming", "internal/version", "internal/inject", "internal/redact", "internal/distributions"},
		What:     "PURE: generated object names, the version stamp, the rules shared by injection annotations, redaction of secrets in messages, the official collector distributions' components",
		Pure:     true,
	},
	{
		Name:     "API (spokes)",
		Packages: []string{"api/v1alpha1", "api/serviceprovider/v1alpha1"},
		What:     "PURE: v1alpha1 opentelemetry.io types (conversion to the hub), the service provider's OtelOperator and ProviderConfig",
		Pure:     true,
	},
	{
		Name:     "API (hub)",
		Packages: []string{"api/v1beta1"},
		What:     "PURE: v1beta1 opentelemetry.io types, CRD markers, condition constants",
		Pure:     true,
	},
	{
		Name:     "embedded manifests",
		Packages: []string{"config/..."},
		What:     "generated YAML embedded in Go (RBAC, the service provider's CRDs)",
	},
}

// Exception is an import the rule forbids but the project accepts for now. Every exception says
// why; an exception that no longer matches an import fails the test, so the list only shrinks.
type Exception struct {
	From, To string
	Why      string
}

// Exceptions are the accepted violations of Layers.
var Exceptions = []Exception{}

// Impure are the import path prefixes Pure layers may not import: clients, informers, recorders
// and loggers.
var Impure = []string{
	"sigs.k8s.io/controller-runtime",
	"k8s.io/client-go",
	"github.com/go-logr",
	"k8s.io/klog",
	"log",
}

// PureAllowed are the packages under an Impure prefix that Pure layers may import anyway: the API
// types' scheme and conversion helpers and the client package (restricted to ClientTypes).
var PureAllowed = []string{
	"sigs.k8s.io/controller-runtime/pkg/client",
	"sigs.k8s.io/controller-runtime/pkg/conversion",
	"sigs.k8s.io/controller-runtime/pkg/scheme",
}

// ClientPath is controller-runtime's client package.
const ClientPath = "sigs.k8s.io/controller-runtime/pkg/client"

// ClientTypes are the identifiers of ClientPath a Pure package may use: object types, no client.
var ClientTypes = []string{"Object", "ObjectList", "ObjectKey", "ObjectKeyFromObject"}
