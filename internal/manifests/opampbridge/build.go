package opampbridge

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

// Build returns the objects of bridge in apply order: ConfigMap, ServiceAccount (unless
// spec.serviceAccount names an existing one), Service and Deployment. Every object carries its
// apiVersion and kind, the app.kubernetes.io/managed-by label and no owner reference (the caller
// sets it). An error means the resource cannot be built, e.g. a filter pattern is invalid.
func Build(bridge v1alpha1.OpAMPBridge, opts Options) ([]client.Object, error) {
	s, err := newState(bridge, opts)
	if err != nil {
		return nil, err
	}
	cm, err := s.configMap()
	if err != nil {
		return nil, err
	}
	objs := []client.Object{cm}
	if sa := s.serviceAccount(); sa != nil {
		objs = append(objs, sa)
	}
	objs = append(objs, s.service(), s.deployment(configHash(cm)))
	return objs, nil
}

// state carries what every builder needs.
type state struct {
	bridge            v1alpha1.OpAMPBridge
	opts              Options
	labelsFilter      manifestutils.Filter
	annotationsFilter manifestutils.Filter
}

func newState(bridge v1alpha1.OpAMPBridge, opts Options) (*state, error) {
	lf, af, err := manifestutils.NewFilters(opts.LabelsFilter, opts.AnnotationsFilter)
	if err != nil {
		return nil, err
	}
	return &state{bridge: bridge, opts: opts, labelsFilter: lf, annotationsFilter: af}, nil
}

// Image returns the bridge image: spec.image, else the operator's default.
func Image(bridge v1alpha1.OpAMPBridge, opts Options) string {
	if bridge.Spec.Image != "" {
		return bridge.Spec.Image
	}
	return opts.Image
}

// labels are the resource's labels (filtered) plus the standard ones. The version label comes from
// the image the bridge actually runs (upstream reads it from spec.image only, so it says "latest"
// for the default image).
func (s *state) labels() map[string]string {
	return manifestutils.Labels(s.bridge.ObjectMeta, Name(s.bridge.Name), Image(s.bridge, s.opts), ComponentOpAMPBridge, s.labelsFilter)
}

// meta is the metadata of a generated object: labels and the resource's annotations, filtered.
func (s *state) meta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        Name(s.bridge.Name),
		Namespace:   s.bridge.Namespace,
		Labels:      s.labels(),
		Annotations: manifestutils.Annotations(s.bridge.Annotations, s.annotationsFilter),
	}
}

// SelectorLabels are the labels selecting the bridge's pods.
func SelectorLabels(bridge v1alpha1.OpAMPBridge) map[string]string {
	return manifestutils.SelectorLabels(bridge.ObjectMeta, ComponentOpAMPBridge)
}

// ServiceAccountName returns spec.serviceAccount, or the generated "<name>-opamp-bridge".
func ServiceAccountName(bridge v1alpha1.OpAMPBridge) string {
	if bridge.Spec.ServiceAccount != "" {
		return bridge.Spec.ServiceAccount
	}
	return Name(bridge.Name)
}

// serviceAccount is generated unless spec.serviceAccount names an existing one.
func (s *state) serviceAccount() *corev1.ServiceAccount {
	if s.bridge.Spec.ServiceAccount != "" {
		return nil
	}
	return &corev1.ServiceAccount{TypeMeta: typeMeta(corev1.SchemeGroupVersion, "ServiceAccount"), ObjectMeta: s.meta()}
}

func typeMeta(gv schema.GroupVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: gv.String(), Kind: kind}
}

// Kinds are the kinds Build can return, in apply order.
var Kinds = []schema.GroupVersionKind{
	corev1.SchemeGroupVersion.WithKind("ConfigMap"),
	corev1.SchemeGroupVersion.WithKind("ServiceAccount"),
	corev1.SchemeGroupVersion.WithKind("Service"),
	appsv1.SchemeGroupVersion.WithKind("Deployment"),
}
