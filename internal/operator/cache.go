package operator

import (
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/autodetect"
	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// CacheOptions bounds the operator's memory by what it manages: every object type is cached only
// when it carries app.kubernetes.io/managed-by=opentelemetry-operator (the default selector), except
// our own custom resources, CRD metadata (for capability detection) and Namespace metadata (for the
// pod webhook's annotations, so that admitting a pod reads no namespace from the API server). Owned objects other than
// workloads are cached as metadata only, and managedFields are reduced to the operator's own Apply
// entry (the applier reads it to decide, across restarts, whether a write is needed; every other
// manager's entry is dropped, see apply.KeepOwnManagedFields). User
// Secrets, ConfigMaps and Pods without our label are never cached.
func CacheOptions(watchNamespaces []string) cache.Options {
	req, _ := labels.NewRequirement(collectorctrl.ManagedByLabel, selection.Equals, []string{collectorctrl.ManagedByValue})
	everything := cache.ByObject{Label: labels.Everything()}
	byObject := map[client.Object]cache.ByObject{
		&v1beta1.OpenTelemetryCollector{}: everything,
		&v1alpha1.OpAMPBridge{}:           everything,
		&v1alpha1.TargetAllocator{}:       everything,
		&v1alpha1.Instrumentation{}:       everything,
		autodetect.CacheObject():          everything,
		podmutation.NamespaceMetadata():   everything,
	}
	opts := cache.Options{
		DefaultLabelSelector: labels.NewSelector().Add(*req),
		DefaultTransform:     apply.KeepOwnManagedFields(collectorctrl.FieldOwner),
		ByObject:             byObject,
	}
	if len(watchNamespaces) > 0 {
		opts.DefaultNamespaces = map[string]cache.Config{}
		for _, ns := range watchNamespaces {
			if ns = strings.TrimSpace(ns); ns != "" {
				opts.DefaultNamespaces[ns] = cache.Config{}
			}
		}
	}
	return opts
}
