package collector

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// GroupVersionKinds of the optional APIs Build emits as unstructured objects.
var (
	ServiceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}
	PodMonitorGVK     = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}
	RouteGVK          = schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}
	HTTPRouteGVK      = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}
)

// Kinds returns every kind Build can produce with opts, namespaced ones first, so that the
// controller knows what to watch and prune. ClusterRole and ClusterRoleBinding are the only
// cluster-scoped kinds and come last; they are listed only when opts.CreateRBAC is set.
func Kinds(opts Options) []schema.GroupVersionKind {
	kinds := []schema.GroupVersionKind{
		appsv1.SchemeGroupVersion.WithKind("Deployment"),
		appsv1.SchemeGroupVersion.WithKind("DaemonSet"),
		appsv1.SchemeGroupVersion.WithKind("StatefulSet"),
		policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
		corev1.SchemeGroupVersion.WithKind("ConfigMap"),
		autoscalingv2.SchemeGroupVersion.WithKind("HorizontalPodAutoscaler"),
		corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
		corev1.SchemeGroupVersion.WithKind("Service"),
		networkingv1.SchemeGroupVersion.WithKind("Ingress"),
		networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"),
		v1alpha1.GroupVersion.WithKind("TargetAllocator"),
	}
	if opts.PrometheusCRDs {
		kinds = append(kinds, ServiceMonitorGVK, PodMonitorGVK)
	}
	if opts.OpenShiftRoutes {
		kinds = append(kinds, RouteGVK)
	}
	if opts.GatewayAPI {
		kinds = append(kinds, HTTPRouteGVK)
	}
	if opts.CreateRBAC {
		kinds = append(kinds,
			rbacv1.SchemeGroupVersion.WithKind("ClusterRole"),
			rbacv1.SchemeGroupVersion.WithKind("ClusterRoleBinding"))
	}
	return kinds
}

// Build returns the objects the operator manages for otelcol, in a fixed order: the workload and
// its PodDisruptionBudget, ConfigMap, HorizontalPodAutoscaler, ServiceAccount, the four Services,
// Ingress, NetworkPolicy, TargetAllocator, ServiceMonitors or PodMonitor, ClusterRole and
// ClusterRoleBinding, the embedded target allocator's ClusterRole and ClusterRoleBinding, Routes,
// HTTPRoutes. Objects that do not apply are left out.
//
// otelcol is expected to be defaulted (see ApplyDefaults): spec.config is hashed as it is. Every object
// has its TypeMeta set; none has owner references. otelcol is not modified. An error names the
// field it comes from.
func Build(otelcol v1beta1.OpenTelemetryCollector, opts Options) ([]client.Object, error) {
	s, err := newState(&otelcol, opts)
	if err != nil {
		return nil, err
	}
	objs := make([]client.Object, 0, 16)
	switch otelcol.Spec.Mode {
	case v1beta1.ModeDeployment, "":
		objs = appendObj(objs, s.deployment())
		objs = appendObj(objs, s.podDisruptionBudget())
	case v1beta1.ModeStatefulSet:
		objs = appendObj(objs, s.statefulSet())
		objs = appendObj(objs, s.podDisruptionBudget())
	case v1beta1.ModeDaemonSet:
		objs = appendObj(objs, s.daemonSet())
	case v1beta1.ModeSidecar:
	default:
		return nil, fmt.Errorf("spec.mode: unsupported value %q", otelcol.Spec.Mode)
	}
	cm, err := s.configMap()
	if err != nil {
		return nil, err
	}
	objs = appendObj(objs, cm)
	objs = appendObj(objs, s.horizontalPodAutoscaler())
	objs = appendObj(objs, s.serviceAccount())
	// Sidecar collectors get the Services too, as upstream's do (they select no pods, since injected
	// pods do not carry the collector's selector labels, but a takeover must neither delete them nor
	// leave them without an owner that keeps them).
	base := s.service()
	objs = appendObj(objs, base)
	objs = appendObj(objs, s.headlessService(base))
	mon, err := s.monitoringService()
	if err != nil {
		return nil, err
	}
	objs = appendObj(objs, mon)
	objs = appendObj(objs, s.extensionService())
	objs = appendObj(objs, s.ingress())
	objs = appendObj(objs, s.networkPolicy())
	objs = appendObj(objs, s.targetAllocator())
	if otelcol.Spec.Observability.Metrics.EnableMetrics && opts.PrometheusCRDs {
		if s.sidecar() {
			objs = appendObj(objs, s.podMonitor())
		} else {
			objs = appendObj(objs, s.serviceMonitor())
			objs = appendObj(objs, s.monitoringServiceMonitor())
		}
	}
	if opts.CreateRBAC {
		objs = appendObj(objs, s.clusterRole())
		objs = appendObj(objs, s.clusterRoleBinding())
		role, binding, err := s.targetAllocatorClusterRBAC()
		if err != nil {
			return nil, err
		}
		objs = appendObj(objs, role)
		objs = appendObj(objs, binding)
	}
	for _, r := range s.routes() {
		objs = appendObj(objs, r)
	}
	for _, r := range s.httpRoutes() {
		objs = appendObj(objs, r)
	}
	return objs, nil
}

// state is what the builders of one Build call share, computed once.
type state struct {
	col               *v1beta1.OpenTelemetryCollector
	opts              Options
	labelsFilter      manifestutils.Filter
	annotationsFilter manifestutils.Filter
	raw               map[string]any
	cfg               *collectorconfig.Config
	hash              string
	ports             collectorconfig.Ports
}

func newState(col *v1beta1.OpenTelemetryCollector, opts Options) (*state, error) {
	s := &state{col: col, opts: opts}
	var err error
	if s.labelsFilter, err = manifestutils.NewFilter(opts.LabelsFilter); err != nil {
		return nil, fmt.Errorf("options.labelsFilter: %w", err)
	}
	if s.annotationsFilter, err = manifestutils.NewFilter(opts.AnnotationsFilter); err != nil {
		return nil, fmt.Errorf("options.annotationsFilter: %w", err)
	}
	if s.hash, err = ConfigHash(col.Spec.Config); err != nil {
		return nil, err
	}
	s.raw = RawConfig(col.Spec.Config)
	s.cfg = collectorconfig.Parse(s.raw)
	s.ports = collectorconfig.InferPorts(s.cfg)
	return s, nil
}

func (s *state) sidecar() bool { return s.col.Spec.Mode == v1beta1.ModeSidecar }

// meta returns the ObjectMeta of a namespaced object with the standard labels (filtered by the
// labels filter when filterLabels is set, as upstream does for some kinds only) and the resource's
// filtered annotations.
func (s *state) meta(name string, filterLabels bool) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   s.col.Namespace,
		Labels:      s.labels(name, filterLabels),
		Annotations: manifestutils.Annotations(s.col.Annotations, s.annotationsFilter),
	}
}

func (s *state) labels(name string, filter bool) map[string]string {
	f := manifestutils.Filter{}
	if filter {
		f = s.labelsFilter
	}
	return manifestutils.Labels(s.col.ObjectMeta, name, s.col.Spec.Image, manifestutils.ComponentCollector, f)
}

func (s *state) selectorLabels() map[string]string {
	return manifestutils.SelectorLabels(s.col.ObjectMeta, manifestutils.ComponentCollector)
}

// serviceAccountName is the pods' ServiceAccount: spec.serviceAccount or <name>-collector.
func (s *state) serviceAccountName() string {
	if s.col.Spec.ServiceAccount != "" {
		return s.col.Spec.ServiceAccount
	}
	return naming.Collector(s.col.Name)
}

func typeMeta(gv schema.GroupVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}

// appendObj appends o unless it is a nil pointer (a builder's "not needed").
func appendObj[T any, P interface {
	*T
	client.Object
}](objs []client.Object, o P) []client.Object {
	if o == nil {
		return objs
	}
	return append(objs, o)
}
