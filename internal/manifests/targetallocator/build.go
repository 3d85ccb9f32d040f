package targetallocator

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// ServiceMonitorGVK is the Prometheus Operator's ServiceMonitor.
var ServiceMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}

// SecretGVK is the kind of the mutual TLS certificate Secrets (CertificateSecrets): owned only when
// the operator.targetallocator.mtls gate is on, since the operator then needs Secret rights in the
// target allocators' namespaces.
var SecretGVK = corev1.SchemeGroupVersion.WithKind("Secret")

// Kinds are the kinds Build can return, in apply order.
var Kinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	rbacv1.SchemeGroupVersion.WithKind("Role"),
	rbacv1.SchemeGroupVersion.WithKind("RoleBinding"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	appsv1.SchemeGroupVersion.WithKind("Deployment"),
	policyv1.SchemeGroupVersion.WithKind("PodDisruptionBudget"),
	networkingv1.SchemeGroupVersion.WithKind("NetworkPolicy"),
	ServiceMonitorGVK,
}

// Build returns the objects of ta in apply order: ConfigMap, ServiceAccount, Role and RoleBinding
// (unless spec.serviceAccount names an existing one; the rules are
// manifestutils.TargetAllocatorRBAC's Namespaced, its Cluster part is the collector builder's), Service, Deployment, PodDisruptionBudget (unless the
// allocation strategy is least-weighted), NetworkPolicy (spec.networkPolicy.enabled) and
// ServiceMonitor (spec.observability.metrics.enableMetrics with opts.PrometheusCRDs).
//
// collector is the collector that uses ta (its owner, or the one labelled
// opentelemetry.io/target-allocator=<ta>), nil for a standalone target allocator. With a collector,
// the file selects the collector's pods and takes the scrape configs of its prometheus receiver
// after spec.scrapeConfigs, and its global section unless spec.global is set.
//
// Every object carries its apiVersion and kind, the app.kubernetes.io/managed-by label and no
// owner reference (the caller sets it). An error means the resource cannot be built: a filter
// pattern is invalid, or the collector's prometheus receiver has the wrong shape.
func Build(ta v1alpha1.TargetAllocator, collector *v1beta1.OpenTelemetryCollector, opts Options) ([]client.Object, error) {
	s, err := newState(ta, opts)
	if err != nil {
		return nil, err
	}
	data, err := ConfigFile(ta, collector, opts)
	if err != nil {
		return nil, err
	}
	perms, err := manifestutils.TargetAllocatorRBAC(ta, collector, opts.MTLS)
	if err != nil {
		return nil, err
	}
	objs := []client.Object{s.configMap(data)}
	if sa := s.serviceAccount(); sa != nil {
		objs = append(objs, sa)
	}
	if role := s.role(perms); role != nil {
		objs = append(objs, role, s.roleBinding(perms))
	}
	hash := configHash(data)
	objs = append(objs, s.service(), s.deployment(hash))
	if pdb := s.podDisruptionBudget(hash); pdb != nil {
		objs = append(objs, pdb)
	}
	if np := s.networkPolicy(); np != nil {
		objs = append(objs, np)
	}
	if sm := s.serviceMonitor(); sm != nil {
		objs = append(objs, sm)
	}
	return objs, nil
}

// state carries what every builder needs.
type state struct {
	ta                v1alpha1.TargetAllocator
	opts              Options
	labelsFilter      manifestutils.Filter
	annotationsFilter manifestutils.Filter
}

func newState(ta v1alpha1.TargetAllocator, opts Options) (*state, error) {
	lf, af, err := manifestutils.NewFilters(opts.LabelsFilter, opts.AnnotationsFilter)
	if err != nil {
		return nil, err
	}
	return &state{ta: ta, opts: opts, labelsFilter: lf, annotationsFilter: af}, nil
}

// Image returns the target allocator image: spec.image, else the operator's default.
func Image(ta v1alpha1.TargetAllocator, opts Options) string {
	if ta.Spec.Image != "" {
		return ta.Spec.Image
	}
	return opts.Image
}

// labels are the resource's labels (filtered) plus the standard ones, for an object called name.
func (s *state) labels(name string) map[string]string {
	// As upstream: the version label is spec.image's tag ("latest" when spec.image is empty), not the
	// default image's, so that a takeover from upstream does not roll the target allocator's pods.
	return manifestutils.Labels(s.ta.ObjectMeta, name, s.ta.Spec.Image, ComponentTargetAllocator, s.labelsFilter)
}

// meta is the metadata of a generated object called name: labels and the resource's annotations,
// filtered.
func (s *state) meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   s.ta.Namespace,
		Labels:      s.labels(name),
		Annotations: manifestutils.Annotations(s.ta.Annotations, s.annotationsFilter),
	}
}

// SelectorLabels are the labels selecting the target allocator's pods. Unlike the collector's,
// they include app.kubernetes.io/name: the resource's own value of that label, else
// "<name>-targetallocator" (upstream's rule; the Deployment selector is immutable).
func SelectorLabels(ta v1alpha1.TargetAllocator) map[string]string {
	out := manifestutils.SelectorLabels(ta.ObjectMeta, ComponentTargetAllocator)
	if v, ok := ta.Labels[manifestutils.LabelName]; ok {
		out[manifestutils.LabelName] = v
	} else {
		out[manifestutils.LabelName] = Name(ta.Name)
	}
	return out
}

// CollectorSelectorLabels are the labels of the pods of collector, which the target allocator
// shares its targets among.
func CollectorSelectorLabels(collector *v1beta1.OpenTelemetryCollector) map[string]string {
	return manifestutils.SelectorLabels(collector.ObjectMeta, manifestutils.ComponentCollector)
}

// ServiceAccountName returns spec.serviceAccount, or the generated "<name>-targetallocator".
func ServiceAccountName(ta v1alpha1.TargetAllocator) string {
	if ta.Spec.ServiceAccount != "" {
		return ta.Spec.ServiceAccount
	}
	return Name(ta.Name)
}

// serviceAccount is generated unless spec.serviceAccount names an existing one.
func (s *state) serviceAccount() *corev1.ServiceAccount {
	if s.ta.Spec.ServiceAccount != "" {
		return nil
	}
	return &corev1.ServiceAccount{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "ServiceAccount"), ObjectMeta: s.meta(Name(s.ta.Name))}
}

func typeMeta(gv schema.GroupVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}
