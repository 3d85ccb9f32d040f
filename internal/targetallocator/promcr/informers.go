package promcr

import (
	"context"
	"fmt"
	"slices"
	"sort"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// newInformer lists and watches one kind, only the objects its selector matches, and stores
// them typed and stripped.
func newInformer(client dynamic.Interface, k *kind, namespace string) cache.SharedIndexInformer {
	sel := k.objSelector.String()
	inf := dynamicinformer.NewFilteredDynamicInformer(client, k.gvr, namespace, 0, cache.Indexers{},
		func(o *metav1.ListOptions) { o.LabelSelector = sel }).Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		typed := k.newTyped()
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
			return &badObject{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(),
				ResourceVersion: u.GetResourceVersion()}, err: fmt.Errorf("not a valid %s: %w", k.name, err)}, nil
		}
		strip(typed)
		return typed, nil
	})
	return inf
}

// strip drops what translation never reads.
func strip(obj metav1.Object) {
	obj.SetManagedFields(nil)
	obj.SetAnnotations(nil)
	obj.SetOwnerReferences(nil)
	switch o := obj.(type) {
	case *monv1.ServiceMonitor:
		o.Status = monv1.ConfigResourceStatus{}
	case *monv1.PodMonitor:
		o.Status = monv1.ConfigResourceStatus{}
	case *monv1.Probe:
		o.Status = monv1.ConfigResourceStatus{}
	case *monv1alpha1.ScrapeConfig:
		o.Status = monv1.ConfigResourceStatus{}
	}
}

// badObject stands for a resource that could not be read as its kind; it is reported, not
// translated.
type badObject struct {
	metav1.ObjectMeta
	err error
}

// newNamespaceInformer watches namespaces, keeping only their names and labels.
func newNamespaceInformer(client kubernetes.Interface) cache.SharedIndexInformer {
	inf := informers.NewSharedInformerFactory(client, 0).Core().V1().Namespaces().Informer()
	_ = inf.SetTransform(func(obj any) (any, error) {
		ns, ok := obj.(*corev1.Namespace)
		if !ok {
			return obj, nil
		}
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Labels: ns.Labels, ResourceVersion: ns.ResourceVersion}}, nil
	})
	return inf
}

func sortResources(r *Resources) {
	key := func(m metav1.Object) string { return m.GetNamespace() + "/" + m.GetName() }
	sort.Slice(r.ServiceMonitors, func(i, j int) bool { return key(r.ServiceMonitors[i]) < key(r.ServiceMonitors[j]) })
	sort.Slice(r.PodMonitors, func(i, j int) bool { return key(r.PodMonitors[i]) < key(r.PodMonitors[j]) })
	sort.Slice(r.Probes, func(i, j int) bool { return key(r.Probes[i]) < key(r.Probes[j]) })
	sort.Slice(r.ScrapeConfigs, func(i, j int) bool { return key(r.ScrapeConfigs[i]) < key(r.ScrapeConfigs[j]) })
}

// apiStore reads secrets and config maps from the API server, each once per translation.
// Secrets are read one by one (never listed or watched), so the allocator holds only those a
// selected resource names, in that resource's namespace.
// Secrets are read only in secretNS (nil: any namespace).
type apiStore struct {
	ctx      context.Context
	client   kubernetes.Interface
	secretNS []string
	secrets  map[string]map[string][]byte
	cms      map[string]map[string]string
}

func newAPIStore(ctx context.Context, client kubernetes.Interface, secretNS []string) *apiStore {
	return &apiStore{ctx: ctx, client: client, secretNS: secretNS, secrets: map[string]map[string][]byte{}, cms: map[string]map[string]string{}}
}

// SecretKey implements Store.
func (s *apiStore) SecretKey(ns string, sel corev1.SecretKeySelector) (string, error) {
	id := ns + "/" + sel.Name
	if s.secretNS != nil && !slices.Contains(s.secretNS, ns) {
		return "", fmt.Errorf("secret %s: namespace %s is not in prometheus_cr.secret_namespaces %v (default: the collectors' namespace)", id, ns, s.secretNS)
	}
	data, ok := s.secrets[id]
	if !ok {
		sec, err := s.client.CoreV1().Secrets(ns).Get(s.ctx, sel.Name, metav1.GetOptions{})
		if err != nil {
			if optional(sel.Optional) {
				return "", nil
			}
			return "", fmt.Errorf("secret %s: %w", id, err)
		}
		data = sec.Data
		s.secrets[id] = data
	}
	v, ok := data[sel.Key]
	if !ok && !optional(sel.Optional) {
		return "", fmt.Errorf("secret %s has no key %q", id, sel.Key)
	}
	return string(v), nil
}

// ConfigMapKey implements Store.
func (s *apiStore) ConfigMapKey(ns string, sel corev1.ConfigMapKeySelector) (string, error) {
	id := ns + "/" + sel.Name
	data, ok := s.cms[id]
	if !ok {
		cm, err := s.client.CoreV1().ConfigMaps(ns).Get(s.ctx, sel.Name, metav1.GetOptions{})
		if err != nil {
			if optional(sel.Optional) {
				return "", nil
			}
			return "", fmt.Errorf("config map %s: %w", id, err)
		}
		data = cm.Data
		s.cms[id] = data
	}
	v, ok := data[sel.Key]
	if !ok && !optional(sel.Optional) {
		return "", fmt.Errorf("config map %s has no key %q", id, sel.Key)
	}
	return v, nil
}

func optional(b *bool) bool { return b != nil && *b }
