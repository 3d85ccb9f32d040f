// Package sidecar builds the collector container the pod webhook injects into pods annotated with
// sidecar.opentelemetry.io/inject, as a pure function of the collector, the operator options and
// the pod.
package sidecar

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// Environment variables of the injected container.
const (
	// ConfigEnv holds the collector config of a sidecar taken from another namespace (see
	// ByReference); the container then runs with --config=env:OTEL_CONFIG.
	ConfigEnv = "OTEL_CONFIG"
	// ResourceAttributesEnv lists the pod's resource attributes as k=v pairs.
	ResourceAttributesEnv = "OTEL_RESOURCE_ATTRIBUTES"
	// PodNameEnv, PodUIDEnv and NodeNameEnv are referenced from OTEL_RESOURCE_ATTRIBUTES.
	PodNameEnv  = "OTEL_RESOURCE_ATTRIBUTES_POD_NAME"
	PodUIDEnv   = "OTEL_RESOURCE_ATTRIBUTES_POD_UID"
	NodeNameEnv = "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME"
)

// Owners are the pod's workload owners the webhook resolved (a ReplicaSet and its Deployment);
// their names and UIDs become resource attributes. Empty fields are left out.
type Owners struct {
	ReplicaSetName, ReplicaSetUID string
	DeploymentName, DeploymentUID string
}

// Container returns the otc-container injected into pod. A pod of the collector's own namespace
// gets the collector's container as the operator's workloads have it: --config=/conf/collector.yaml
// and the /conf mount of ConfigVolume, so that the config itself is never part of the pod (see
// ByReference). A pod of another namespace (which the collector must allow) cannot mount that
// ConfigMap and gets the config in OTEL_CONFIG with --config=env:OTEL_CONFIG, as upstream does
// for every pod. Unless the collector's env already sets OTEL_RESOURCE_ATTRIBUTES, the pod's
// resource attributes follow. With opts.NativeSidecars it is meant for initContainers:
// restartPolicy Always and, without a startup probe, the readiness probe as startup probe. The
// ReplicaSet is taken from the pod's controller owner reference; use ContainerWithOwners to pass
// the Deployment too.
func Container(otelcol v1beta1.OpenTelemetryCollector, opts collector.Options, pod corev1.Pod) (corev1.Container, error) {
	var owners Owners
	for _, ref := range pod.OwnerReferences {
		if ref.Kind == "ReplicaSet" && ref.Controller != nil && *ref.Controller {
			owners.ReplicaSetName, owners.ReplicaSetUID = ref.Name, string(ref.UID)
		}
	}
	return ContainerWithOwners(otelcol, opts, pod, owners)
}

// ContainerWithOwners is Container with the pod's owners given explicitly.
func ContainerWithOwners(otelcol v1beta1.OpenTelemetryCollector, opts collector.Options, pod corev1.Pod, owners Owners) (corev1.Container, error) {
	var c corev1.Container
	if ByReference(otelcol, pod) {
		c = collector.Container(otelcol, opts, true)
	} else {
		cfg, err := collector.ConfigYAML(otelcol)
		if err != nil {
			return corev1.Container{}, err
		}
		c = collector.Container(otelcol, opts, false)
		c.Args = append(c.Args, "--config=env:"+ConfigEnv)
		c.Env = append(c.Env, corev1.EnvVar{Name: ConfigEnv, Value: cfg})
	}
	if !manifestutils.HasEnv(c.Env, ResourceAttributesEnv) {
		c.Env = append(c.Env, resourceAttributesEnv(pod, otelcol.Namespace, owners)...)
	}
	if opts.NativeSidecars {
		always := corev1.ContainerRestartPolicyAlways
		c.RestartPolicy = &always
		if c.StartupProbe == nil {
			c.StartupProbe = c.ReadinessProbe
		}
	}
	return c, nil
}

// ByReference reports whether pod reads otelcol's config from the collector's ConfigMap (the pod
// is in the collector's namespace, or names none) rather than from OTEL_CONFIG. By reference, the
// admission response carries only the ConfigMap's name: whoever can call the webhook, and claim
// any namespace in the review, learns nothing of the config, and the kubelet mounts the ConfigMap
// only into a pod the API server really placed in that namespace.
func ByReference(otelcol v1beta1.OpenTelemetryCollector, pod corev1.Pod) bool {
	return pod.Namespace == "" || pod.Namespace == otelcol.Namespace
}

// ConfigVolume returns the otc-internal volume of a sidecar that reads its config by reference:
// the collector's ConfigMap, <name>-collector-<hash of spec.config>, which the collector
// reconciler generates for sidecar collectors as for the others. otelcol must be the collector as
// the reconciler builds it (defaulted and migrated), or the name is that of a ConfigMap that does
// not exist and the kubelet does not start the pod until it does.
func ConfigVolume(otelcol v1beta1.OpenTelemetryCollector) (corev1.Volume, error) {
	hash, err := collector.ConfigHash(otelcol.Spec.Config)
	if err != nil {
		return corev1.Volume{}, err
	}
	return collector.ConfigMapVolume(otelcol.Name, hash), nil
}

// InjectAnnotation asks for a collector sidecar, on a pod or on its namespace: "true" (the one
// sidecar-mode collector of the pod's namespace), "false", "<name>" or "<namespace>/<name>".
const InjectAnnotation = "sidecar.opentelemetry.io/inject"

// AllowedNamespacesAnnotation on a sidecar-mode collector lists the other namespaces whose pods
// may name it ("<ns>,<ns>" or "*").
const AllowedNamespacesAnnotation = "sidecar.opentelemetry.io/allowed-namespaces"

// GenerationAnnotation records on a pod which collector generation its sidecar was built from:
// "<namespace>/<name>@<generation>". The catch-up controller compares it with the collector's
// current generation (a pod without it has no sidecar, or one injected before this record).
const GenerationAnnotation = "otelop.io/sidecar-injected"

// FormatGeneration returns the GenerationAnnotation value for otelcol.
func FormatGeneration(otelcol v1beta1.OpenTelemetryCollector) string {
	return fmt.Sprintf("%s/%s@%d", otelcol.Namespace, otelcol.Name, otelcol.Generation)
}

// ParseGeneration reads a GenerationAnnotation value; ok is false when it is not one.
func ParseGeneration(value string) (key types.NamespacedName, generation int64, ok bool) {
	ref, gen, found := strings.Cut(strings.TrimSpace(value), "@")
	ns, name, okRef := strings.Cut(ref, "/")
	g, err := strconv.ParseInt(gen, 10, 64)
	if !found || !okRef || ns == "" || name == "" || err != nil {
		return key, 0, false
	}
	return types.NamespacedName{Namespace: ns, Name: name}, g, true
}

// InjectedLabel marks pods that carry a sidecar: sidecar.opentelemetry.io/injected=<ns>.<name>.
const InjectedLabel = "sidecar.opentelemetry.io/injected"

// InjectedLabelValue returns the value of InjectedLabel for otelcol.
func InjectedLabelValue(otelcol v1beta1.OpenTelemetryCollector) string {
	return naming.Instance(otelcol.Namespace, otelcol.Name)
}

// resourceAttributesEnv returns the three field-ref variables and OTEL_RESOURCE_ATTRIBUTES with
// the k8s.* attributes sorted by key.
func resourceAttributesEnv(pod corev1.Pod, fallbackNamespace string, owners Owners) []corev1.EnvVar {
	ns := pod.Namespace
	if ns == "" {
		ns = fallbackNamespace
	}
	attrs := map[string]string{
		"k8s.pod.name":       "$(" + PodNameEnv + ")",
		"k8s.pod.uid":        "$(" + PodUIDEnv + ")",
		"k8s.node.name":      "$(" + NodeNameEnv + ")",
		"k8s.namespace.name": ns,
	}
	set := func(k, v string) {
		if v != "" {
			attrs[k] = v
		}
	}
	set("k8s.deployment.name", owners.DeploymentName)
	set("k8s.deployment.uid", owners.DeploymentUID)
	set("k8s.replicaset.name", owners.ReplicaSetName)
	set("k8s.replicaset.uid", owners.ReplicaSetUID)
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + attrs[k]
	}
	fieldRef := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}}
	}
	return []corev1.EnvVar{
		fieldRef(PodNameEnv, "metadata.name"),
		fieldRef(PodUIDEnv, "metadata.uid"),
		fieldRef(NodeNameEnv, "spec.nodeName"),
		{Name: ResourceAttributesEnv, Value: strings.Join(parts, ",")},
	}
}
