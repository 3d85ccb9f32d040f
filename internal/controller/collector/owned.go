package collector

import (
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
)

// Labels every generated object carries; the operator's caches only hold objects with ManagedByLabel.
const (
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "opentelemetry-operator"
	InstanceLabel  = "app.kubernetes.io/instance"
	ComponentLabel = "app.kubernetes.io/component"
	// ConfigMapComponent marks the collector's versioned config ConfigMaps (kept configVersions deep).
	ConfigMapComponent = "opentelemetry-collector"
)

// ownedKind is a kind of object the collector controller generates.
type ownedKind struct {
	gvk schema.GroupVersionKind
	// typed: the controller reads the full object (workload status); otherwise metadata only.
	typed func() client.Object
	// clusterScoped objects carry no owner reference; they are found by labels.
	clusterScoped bool
	// capability names the optional API the kind needs ("" = always served).
	capability string
	// stage is the apply stage (see stagePodInputs).
	stage int
}

// Capability names, matching autodetect.Capabilities fields.
const (
	CapPrometheus = "prometheus"
	CapGatewayAPI = "gateway"
	CapRoutes     = "routes"
)

func gvk(gv schema.GroupVersion, kind string) schema.GroupVersionKind { return gv.WithKind(kind) }

// Apply stages: the objects of one stage are written together (concurrently); a stage starts once
// the one before it is applied. What the pods need comes first (their ConfigMap, ServiceAccount
// and RBAC), then the workload, so that its pods start as early as possible, then everything
// that only refers to the workload or its pods, which nothing waits for.
const (
	stagePodInputs = iota // ConfigMap, ServiceAccount, ClusterRole
	stageBinding          // ClusterRoleBinding: its ClusterRole exists first (the API server checks the binder may grant it)
	stageWorkload         // Deployment, DaemonSet, StatefulSet
	stageRest             // Services, PodDisruptionBudget, HPA, Ingress, NetworkPolicy, TargetAllocator, monitors, routes
)

// ownedKinds lists everything the collector builders can produce, in apply order (see the stages).
var ownedKinds = []ownedKind{
	{gvk: gvk(corev1.SchemeGroupVersion, "ConfigMap"), stage: stagePodInputs},
	{gvk: gvk(corev1.SchemeGroupVersion, "ServiceAccount"), stage: stagePodInputs},
	{gvk: gvk(rbacv1.SchemeGroupVersion, "ClusterRole"), clusterScoped: true, stage: stagePodInputs},
	{gvk: gvk(rbacv1.SchemeGroupVersion, "ClusterRoleBinding"), clusterScoped: true, stage: stageBinding},
	{gvk: gvk(appsv1.SchemeGroupVersion, "Deployment"), typed: func() client.Object { return &appsv1.Deployment{} }, stage: stageWorkload},
	{gvk: gvk(appsv1.SchemeGroupVersion, "DaemonSet"), typed: func() client.Object { return &appsv1.DaemonSet{} }, stage: stageWorkload},
	{gvk: gvk(appsv1.SchemeGroupVersion, "StatefulSet"), typed: func() client.Object { return &appsv1.StatefulSet{} }, stage: stageWorkload},
	{gvk: gvk(corev1.SchemeGroupVersion, "Service"), stage: stageRest},
	{gvk: gvk(policyv1.SchemeGroupVersion, "PodDisruptionBudget"), stage: stageRest},
	{gvk: gvk(autoscalingv2.SchemeGroupVersion, "HorizontalPodAutoscaler"), stage: stageRest},
	{gvk: gvk(networkingv1.SchemeGroupVersion, "Ingress"), stage: stageRest},
	{gvk: gvk(networkingv1.SchemeGroupVersion, "NetworkPolicy"), stage: stageRest},
	{gvk: gvk(v1alpha1.GroupVersion, "TargetAllocator"), stage: stageRest},
	{gvk: schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "ServiceMonitor"}, capability: CapPrometheus, stage: stageRest},
	{gvk: schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}, capability: CapPrometheus, stage: stageRest},
	{gvk: schema.GroupVersionKind{Group: "route.openshift.io", Version: "v1", Kind: "Route"}, capability: CapRoutes, stage: stageRest},
	{gvk: schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"}, capability: CapGatewayAPI, stage: stageRest},
}

// kindIndex is o's position in ownedKinds (len(ownedKinds) for a kind that is not listed).
func kindIndex(o client.Object) int {
	gvk := o.GetObjectKind().GroupVersionKind()
	for i, k := range ownedKinds {
		if k.gvk.Group == gvk.Group && k.gvk.Kind == gvk.Kind {
			return i
		}
	}
	return len(ownedKinds)
}

// applyStage is o's apply stage; a kind that is not listed goes last, in a stage of its own.
func applyStage(o client.Object) int {
	if i := kindIndex(o); i < len(ownedKinds) {
		return ownedKinds[i].stage
	}
	return stageRest + 1
}

// metadataObject returns an empty metadata-only object of kind k, for watches and cache reads.
func (k ownedKind) metadataObject() *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(k.gvk)
	return m
}

// watchObject is the object type the cache holds for k.
func (k ownedKind) watchObject() client.Object {
	if k.typed != nil {
		return k.typed()
	}
	return k.metadataObject()
}

// listObject returns an empty list for k: typed for workloads, metadata-only otherwise.
func (k ownedKind) listObject() client.ObjectList {
	if k.typed != nil {
		switch k.gvk.Kind {
		case "Deployment":
			return &appsv1.DeploymentList{}
		case "DaemonSet":
			return &appsv1.DaemonSetList{}
		case "StatefulSet":
			return &appsv1.StatefulSetList{}
		}
	}
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(k.gvk.GroupVersion().WithKind(k.gvk.Kind + "List"))
	return l
}

// OwnedObjectTypes returns the cache object types the manager should restrict to our labels
// (metadata-only where the full object is not needed). The operator wires its cache with these.
func OwnedObjectTypes() []client.Object {
	var out []client.Object
	for _, k := range ownedKinds {
		if k.capability == "" {
			out = append(out, k.watchObject())
		}
	}
	return out
}
