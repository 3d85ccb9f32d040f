package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// namespace holds every object the tool makes.
const namespace = "apicost"

// fieldOwner is the operator's field manager, so that server-side apply does what it does for it.
const fieldOwner = "opentelemetry-operator"

// kind is one kind of request: fn(i) sends request i. An alternating kind measures alt in chunks
// taken in turn with fn's.
type kind struct {
	name    string
	fn      func(i int) error
	altName string
	alt     func(i int) error
}

// requests builds the objects, shaped like the ones the operator makes for a collector.
type requests struct {
	ctx context.Context
	c   client.Client
}

var labels = map[string]string{"app.kubernetes.io/managed-by": "opentelemetry-operator", "app.kubernetes.io/component": "opentelemetry-collector"}

func meta(name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels}
}

func (r *requests) configMap(name, extra string) *corev1.ConfigMap {
	cfg := strings.Repeat("receivers: {otlp: {protocols: {grpc: {}, http: {}}}}\n", 20) + extra
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: meta(name),
		Data: map[string]string{"collector.yaml": cfg}}
}

func (r *requests) service(name string, headless bool) *corev1.Service {
	s := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(name),
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{
			{Name: "otlp-grpc", Port: 4317, TargetPort: intstr.FromInt32(4317), Protocol: corev1.ProtocolTCP},
			{Name: "otlp-http", Port: 4318, TargetPort: intstr.FromInt32(4318), Protocol: corev1.ProtocolTCP}}}}
	if headless {
		s.Spec.ClusterIP = corev1.ClusterIPNone
	}
	return s
}

func (r *requests) deployment(name string) *appsv1.Deployment {
	zero := int32(0)
	return &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta(name),
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "otc-container", Image: "otel/opentelemetry-collector:0.140.0",
					Args: []string{"--config=/conf/collector.yaml"}, Ports: []corev1.ContainerPort{{Name: "otlp-grpc", ContainerPort: 4317}}}}}}}}
}

func (r *requests) collector(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("opentelemetry.io/v1beta1")
	u.SetKind("OpenTelemetryCollector")
	u.SetName(name)
	u.SetNamespace(namespace)
	u.Object["spec"] = map[string]any{"mode": "deployment", "config": map[string]any{
		"receivers":  map[string]any{"otlp": map[string]any{"protocols": map[string]any{"grpc": map[string]any{}}}},
		"processors": map[string]any{"batch": map[string]any{}},
		"exporters":  map[string]any{"debug": map[string]any{}},
		"service": map[string]any{"pipelines": map[string]any{"traces": map[string]any{
			"receivers": []any{"otlp"}, "processors": []any{"batch"}, "exporters": []any{"debug"}}}}}}
	return u
}

// readyStatus is the status the operator writes when a collector's Deployment is available.
const readyStatus = `{"status":{"observedGeneration":1,"version":"0.140.0","image":"otel/opentelemetry-collector:0.140.0",` +
	`"scale":{"replicas":1,"statusReplicas":"1/1","selector":"app.kubernetes.io/component=opentelemetry-collector"},` +
	`"conditions":[{"type":"Ready","status":"True","reason":"Reconciled","message":"Deployment c-collector: 1/1 pods available",` +
	`"lastTransitionTime":"2026-12-01T00:00:00Z","observedGeneration":1}]}}`

func (r *requests) create(o client.Object) error {
	return r.c.Create(r.ctx, o, client.FieldOwner("apicost"))
}

// createJSON is a create sent as JSON, the way an unstructured object goes (a typed built-in
// object goes as protobuf).
func (r *requests) createJSON(o client.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	gvk, err := apiutil.GVKForObject(o, r.c.Scheme())
	if err != nil {
		return err
	}
	u.SetGroupVersionKind(gvk)
	return r.c.Create(r.ctx, u, client.FieldOwner("apicost"))
}

// apply is a server-side apply as the operator's applier sends it (unstructured, forced).
func (r *requests) apply(o client.Object) error {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: m}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return r.c.Apply(r.ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner(fieldOwner), client.ForceOwnership)
}

func name(prefix string, i int) string { return fmt.Sprintf("%s-%d", prefix, i) }

func kinds(r *requests) []kind {
	return []kind{
		{name: "ConfigMap create", fn: func(i int) error { return r.create(r.configMap(name("cm-post", i), "")) },
			altName: "ConfigMap create, as JSON", alt: func(i int) error { return r.createJSON(r.configMap(name("cm-json", i), "")) }},
		{name: "ConfigMap server-side apply, creating", fn: func(i int) error { return r.apply(r.configMap(name("cm-ssa", i), "")) }},
		{name: "ConfigMap server-side apply, changing", fn: func(i int) error { return r.apply(r.configMap(name("cm-ssa", i), "# changed\n")) }},
		{name: "ConfigMap get, not found", fn: func(i int) error {
			return client.IgnoreNotFound(r.c.Get(r.ctx, client.ObjectKey{Namespace: namespace, Name: name("none", i)}, &corev1.ConfigMap{}))
		}},
		{name: "ConfigMap get metadata-only, not found (the ownership check's read)", fn: func(i int) error {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			return client.IgnoreNotFound(r.c.Get(r.ctx, client.ObjectKey{Namespace: namespace, Name: name("none", i)}, m))
		}},
		{name: "ConfigMap get metadata-only from the watch cache (resourceVersion 0), not found", fn: func(i int) error {
			m := &metav1.PartialObjectMetadata{}
			m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
			return client.IgnoreNotFound(r.c.Get(r.ctx, client.ObjectKey{Namespace: namespace, Name: name("none", i)}, m,
				&client.GetOptions{Raw: &metav1.GetOptions{ResourceVersion: "0"}}))
		}},
		{name: "Service, headless: create", fn: func(i int) error { return r.create(r.service(name("hl-post", i), true)) },
			altName: "Service, headless: server-side apply, creating", alt: func(i int) error { return r.apply(r.service(name("hl-ssa", i), true)) }},
		{name: "Service, ClusterIP: create", fn: func(i int) error { return r.create(r.service(name("ip-post", i), false)) },
			altName: "Service, ClusterIP: server-side apply, creating", alt: func(i int) error { return r.apply(r.service(name("ip-ssa", i), false)) }},
		{name: "Event (events.k8s.io/v1) create", fn: func(i int) error {
			return r.create(&eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name("ev", i), Namespace: namespace},
				EventTime: metav1.NewMicroTime(time.Now()), ReportingController: "opentelemetry-operator", ReportingInstance: "apicost",
				Action: "Apply", Reason: "Applied", Type: corev1.EventTypeNormal, Note: "ConfigMap/c-collector-1a2b3c4d created, Service/c-collector created",
				Regarding: corev1.ObjectReference{APIVersion: "opentelemetry.io/v1beta1", Kind: "OpenTelemetryCollector", Namespace: namespace, Name: "c"}})
		}},
		{name: "OpenTelemetryCollector create (no admission webhooks)", fn: func(i int) error { return r.create(r.collector(name("col", i))) }},
		{name: "OpenTelemetryCollector status merge patch (Ready)", fn: func(i int) error {
			return r.c.Status().Patch(r.ctx, r.collector(name("col", i)), client.RawPatch(types.MergePatchType, []byte(readyStatus)))
		}},
		// Last: kube-controller-manager makes a ReplicaSet for each, work that outlasts the batch.
		{name: "Deployment (0 replicas): create", fn: func(i int) error { return r.create(r.deployment(name("dep-post", i))) },
			altName: "Deployment (0 replicas): create, as JSON", alt: func(i int) error { return r.createJSON(r.deployment(name("dep-json", i))) }},
		{name: "Deployment (0 replicas): server-side apply, creating", fn: func(i int) error { return r.apply(r.deployment(name("dep-ssa", i))) }},
	}
}
