// Package simprovider is a test harness for the service provider: four real API servers (platform,
// onboarding, control plane, workload) from internal/testenv, with the OpenMCP CRDs, the Flux CRDs
// (generated from the Flux API Go modules, see hack/gen-flux-crds.sh) and the OpenTelemetry CRDs
// installed where they belong, and a small simulated cluster provider that answers ClusterRequests
// and AccessRequests with real ServiceAccount tokens and kubeconfigs of those API servers.
package simprovider

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	clustersv1alpha1 "github.com/openmcp-project/openmcp-operator/api/clusters/v1alpha1"
	openmcpcrds "github.com/openmcp-project/openmcp-operator/api/crds"
	providerv1alpha1 "github.com/openmcp-project/openmcp-operator/api/provider/v1alpha1"
	libutils "github.com/openmcp-project/openmcp-operator/lib/utils"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/testenv"
)

// World is the four running API servers.
type World struct {
	// Platform runs the provider, holds ProviderConfig, requests and Flux objects.
	Platform *testenv.Env
	// Onboarding holds the OtelOperators.
	Onboarding *testenv.Env
	// CP is the tenant's control plane with the OpenTelemetry CRDs.
	CP *testenv.Env
	// Workload is where the operator would run.
	Workload *testenv.Env
	// PodNamespace is the provider's namespace in the platform cluster.
	PodNamespace string
}

// Options change what StartWith starts; the zero value is the world of the package tests.
type Options struct {
	// FluxCRDDirs replace the generated Flux CRDs on the platform, e.g. with the CRDs shipped in
	// the Flux controllers' own modules when the real controllers run.
	FluxCRDDirs []string
	// NoOTelCRDs starts the control plane without the stub OpenTelemetry CRDs, for a test in which
	// a real CRDs release installs them.
	NoOTelCRDs bool
	// Workload is an already running workload cluster (e.g. a simulated cluster with nodes, so
	// that Deployments become Available); nil starts a bare API server. Stop does not stop it
	// unless it is an Env with an Environment.
	Workload *testenv.Env
}

// Start starts the four API servers. scheme is used for every returned client.
func Start(scheme *kruntime.Scheme) (*World, error) { return StartWith(scheme, Options{}) }

// StartWith starts the API servers opts asks for. scheme is used for every returned client.
func StartWith(scheme *kruntime.Scheme, opts Options) (*World, error) {
	openmcp, err := openmcpcrds.CRDs()
	if err != nil {
		return nil, err
	}
	var platformCRDs []*apiextensionsv1.CustomResourceDefinition
	for _, c := range openmcp {
		if c.Labels["openmcp.cloud/cluster"] == "platform" {
			platformCRDs = append(platformCRDs, c)
		}
	}
	w := &World{PodNamespace: "openmcp-system"}
	start := func(opts testenv.Options) (*testenv.Env, error) {
		opts.Scheme = scheme
		return testenv.Start(opts)
	}
	fluxDirs := opts.FluxCRDDirs
	if len(fluxDirs) == 0 {
		fluxDirs = []string{FluxCRDDir()}
	}
	if w.Platform, err = start(testenv.Options{CRDDirectoryPaths: fluxDirs, CRDs: platformCRDs}); err != nil {
		return nil, err
	}
	// The onboarding and workload clusters start empty: init installs the OtelOperator CRD, and the
	// workload gets only what the provider puts there.
	if w.Onboarding, err = start(testenv.Options{CRDDirectoryPaths: []string{emptyDir()}}); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	var otel []*apiextensionsv1.CustomResourceDefinition
	if !opts.NoOTelCRDs {
		otel = OTelCRDs()
	}
	if w.CP, err = start(testenv.Options{CRDDirectoryPaths: []string{emptyDir()}, CRDs: otel}); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	if w.Workload = opts.Workload; w.Workload == nil {
		if w.Workload, err = start(testenv.Options{CRDDirectoryPaths: []string{emptyDir()}}); err != nil {
			return nil, errors.Join(err, w.Stop())
		}
	}
	ctx := context.Background()
	if err := w.Platform.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: w.PodNamespace}}); err != nil {
		return nil, errors.Join(err, w.Stop())
	}
	return w, nil
}

// Stop stops every API server that was started.
func (w *World) Stop() error {
	var errs []error
	for _, e := range []*testenv.Env{w.Workload, w.CP, w.Onboarding, w.Platform} {
		if e != nil {
			errs = append(errs, e.Stop())
		}
	}
	return errors.Join(errs...)
}

// AddServiceProvider creates the ServiceProvider object init registers the provided kinds at.
func (w *World) AddServiceProvider(ctx context.Context, name string) error {
	sp := &providerv1alpha1.ServiceProvider{ObjectMeta: metav1.ObjectMeta{Name: name}}
	sp.Spec.Image = "example.invalid/service-provider-otel-operator:test"
	if err := w.Platform.Client.Create(ctx, sp); err != nil {
		return err
	}
	// The openmcp-operator writes the status before it runs init.
	sp.Status.Phase = "Progressing"
	sp.Status.ObservedGeneration = sp.Generation
	return w.Platform.Client.Status().Update(ctx, sp)
}

// AddControlPlane does what the ControlPlane controller does for a ControlPlane name/namespace:
// the tenant namespace mcp--<uuid> and a ClusterRequest <name> (purpose mcp) there, which the
// simulated provider grants. It returns the tenant namespace.
func (w *World) AddControlPlane(ctx context.Context, name, namespace string) (string, error) {
	ns, err := libutils.StableMCPNamespace(name, namespace)
	if err != nil {
		return "", err
	}
	if err := w.Platform.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); client.IgnoreAlreadyExists(err) != nil {
		return "", err
	}
	cr := &clustersv1alpha1.ClusterRequest{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	cr.Spec.Purpose = PurposeMCP
	if err := w.Platform.Client.Create(ctx, cr); err != nil {
		return "", fmt.Errorf("creating the control plane's ClusterRequest: %w", err)
	}
	return ns, nil
}

// PurposeMCP is the purpose of a control plane's ClusterRequest.
const PurposeMCP = "mcp"

// FluxCRDDir is the folder of the generated Flux CRDs.
// (Found from the repository root, not from runtime.Caller: make test builds with -trimpath.)
func FluxCRDDir() string {
	return filepath.Join(testenv.RepoRoot(), "internal", "serviceprovider", "simprovider", "testdata", "flux-crds")
}

func emptyDir() string {
	return filepath.Join(testenv.RepoRoot(), "internal", "serviceprovider", "simprovider", "testdata", "empty")
}
