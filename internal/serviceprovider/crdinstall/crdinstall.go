// Package crdinstall is the provider's init step: it installs or upgrades the provider's CRDs on
// the cluster each belongs to (ProviderConfig on the platform cluster, OtelOperator on the
// onboarding cluster), waits until they are served, and registers the provided kind on the
// ServiceProvider's status. Running it again changes nothing.
package crdinstall

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	providerv1alpha1 "github.com/openmcp-project/openmcp-operator/api/provider/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	crdfs "github.com/otelop/otelop/config/service-provider/crd"
)

// FieldOwner is the server-side apply field manager of init.
const FieldOwner = "service-provider-otel-operator-init"

// ClusterLabel names the cluster a CRD belongs on, as OpenMCP's service providers mark their
// CRDs: ClusterPlatform or ClusterOnboarding.
const ClusterLabel = "openmcp.cloud/cluster"

// Values of ClusterLabel.
const (
	ClusterPlatform   = "platform"
	ClusterOnboarding = "onboarding"
)

// CRDs returns the embedded CRDs.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(crdfs.FS, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		raw, err := fs.ReadFile(crdfs.FS, f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(raw, crd); err != nil {
			return nil, fmt.Errorf("embedded CRD %s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// Init installs each CRD on the cluster its ClusterLabel names and registers the OtelOperator kind at the ServiceProvider providerName.
func Init(ctx context.Context, platform, onboarding client.Client, providerName string) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	for _, crd := range crds {
		var target client.Client
		switch where := crd.Labels[ClusterLabel]; where {
		case ClusterPlatform:
			target = platform
		case ClusterOnboarding:
			target = onboarding
		default:
			return fmt.Errorf("embedded CRD %s: metadata.labels[%s] is %q; must be %q or %q", crd.Name, ClusterLabel, where, ClusterPlatform, ClusterOnboarding)
		}
		where := crd.Labels[ClusterLabel]
		if err := applyCRD(ctx, target, crd); err != nil {
			return fmt.Errorf("installing CRD %s on the %s cluster: %w", crd.Name, where, err)
		}
	}
	return Register(ctx, platform, providerName)
}

func applyCRD(ctx context.Context, c client.Client, crd *apiextensionsv1.CustomResourceDefinition) error {
	crd = crd.DeepCopy()
	crd.TypeMeta = metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: m}), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		got := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, got); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// ProvidedKinds are the kinds the provider offers on the onboarding cluster.
func ProvidedKinds() []metav1.GroupVersionKind {
	return []metav1.GroupVersionKind{{Group: spv1alpha1.GroupVersion.Group, Version: spv1alpha1.GroupVersion.Version, Kind: "OtelOperator"}}
}

// Register writes ProvidedKinds into the ServiceProvider's status.resources, unless they are there.
func Register(ctx context.Context, platform client.Client, providerName string) error {
	sp := &providerv1alpha1.ServiceProvider{}
	if err := platform.Get(ctx, client.ObjectKey{Name: providerName}, sp); err != nil {
		return fmt.Errorf("reading ServiceProvider %q on the platform cluster (is --provider-name right?): %w", providerName, err)
	}
	if equality.Semantic.DeepEqual(sp.Status.Resources, ProvidedKinds()) {
		return nil
	}
	patch := client.MergeFrom(sp.DeepCopy())
	sp.Status.Resources = ProvidedKinds()
	if err := platform.Status().Patch(ctx, sp, patch); err != nil {
		return fmt.Errorf("registering %v at ServiceProvider %q: %w", ProvidedKinds(), providerName, err)
	}
	return nil
}
