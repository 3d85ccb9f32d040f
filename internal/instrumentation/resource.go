package instrumentation

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1alpha1"
)

// ResourceAnnotationPrefix starts the pod annotations that set resource attributes
// (resource.opentelemetry.io/<attribute>).
const ResourceAnnotationPrefix = "resource.opentelemetry.io/"

// The app.kubernetes.io labels read with spec.defaults.useLabelsForResourceAttributes.
const (
	labelInstance = "app.kubernetes.io/instance"
	labelName     = "app.kubernetes.io/name"
	labelVersion  = "app.kubernetes.io/version"
)

// Owner is one object of a pod's owner chain.
type Owner struct {
	// APIVersion is the owner's API version, as in an owner reference (apps/v1, batch/v1).
	APIVersion string
	// Kind is the owner's kind, as in an owner reference (ReplicaSet, Deployment, StatefulSet,
	// DaemonSet, Job, CronJob).
	Kind string
	Name string
	UID  types.UID
}

// OwnersOf returns the owners named by refs, in order.
func OwnersOf(refs []metav1.OwnerReference) []Owner {
	out := make([]Owner, 0, len(refs))
	for _, r := range refs {
		out = append(out, Owner{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name, UID: r.UID})
	}
	return out
}

// NeedsLookup reports whether an owner's own owners matter for the resource attributes: those of a
// ReplicaSet (its Deployment) and of a Job (its CronJob).
func NeedsLookup(kind string) bool {
	k := strings.ToLower(kind)
	return k == "replicaset" || k == "job"
}

// ownerAttributes are the k8s.<kind>.name (and .uid) attributes of the owners.
func ownerAttributes(owners []Owner, uids bool, set func(k, v string)) {
	for _, o := range owners {
		kind := strings.ToLower(o.Kind)
		switch kind {
		case "replicaset", "deployment", "statefulset", "daemonset", "job", "cronjob":
		default:
			continue
		}
		set("k8s."+kind+".name", o.Name)
		if uids {
			set("k8s."+kind+".uid", string(o.UID))
		}
	}
}

// resourceInput is what the resource attributes of one instrumented container derive from.
type resourceInput struct {
	pod       *corev1.Pod
	namespace string
	owners    []Owner
	inst      *v1alpha1.Instrumentation
	app       *corev1.Container
}

// resourceMap returns the attributes for OTEL_RESOURCE_ATTRIBUTES, lowest precedence first: the
// Instrumentation's resourceAttributes, the k8s.* attributes, the pod's
// resource.opentelemetry.io/* annotations, service.namespace. A key the container's own
// OTEL_RESOURCE_ATTRIBUTES already has is never set.
func resourceMap(in resourceInput) (res map[string]string, existing map[string]bool) {
	existing = map[string]bool{}
	if i := envIndex(in.app.Env, EnvResourceAttributes); i >= 0 {
		for _, kv := range strings.Split(in.app.Env[i].Value, ",") {
			if k, _, ok := strings.Cut(strings.TrimSpace(kv), "="); ok {
				existing[k] = true
			}
		}
	}
	res = map[string]string{}
	set := func(k, v string) {
		if v != "" && !existing[k] {
			res[k] = v
		}
	}
	for k, v := range in.inst.Spec.Resource.Attributes {
		set(k, v)
	}
	set("k8s.namespace.name", in.namespace)
	set("k8s.container.name", in.app.Name)
	set("k8s.pod.name", in.pod.Name)
	set("k8s.pod.uid", string(in.pod.UID))
	set("k8s.node.name", in.pod.Spec.NodeName)
	set("service.instance.id", serviceInstanceID(in.pod, in.namespace, in.app.Name))
	ownerAttributes(in.owners, in.inst.Spec.Resource.AddK8sUIDAttributes, set)
	for k, v := range in.pod.Annotations {
		if key, ok := strings.CutPrefix(k, ResourceAnnotationPrefix); ok && key != "service.name" {
			set(key, v)
		}
	}
	ns := in.pod.Annotations[ResourceAnnotationPrefix+"service.namespace"]
	if ns == "" {
		ns = in.namespace
	}
	set("service.namespace", ns)
	return res, existing
}

// serviceInstanceID is the resource.opentelemetry.io/service.instance.id annotation, else
// <namespace>.<pod name>.<container>, the pod name taken from the downward API.
func serviceInstanceID(pod *corev1.Pod, namespace, container string) string {
	if v := pod.Annotations[ResourceAnnotationPrefix+"service.instance.id"]; v != "" {
		return v
	}
	if namespace == "" || container == "" {
		return ""
	}
	return namespace + ".$(" + EnvPodName + ")." + container
}

// labelOrAnnotation returns the resource.opentelemetry.io/<attr> annotation, else (with labels on)
// the first of labels the pod has.
func labelOrAnnotation(pod *corev1.Pod, useLabels bool, attr string, labels ...string) string {
	if v := pod.Annotations[ResourceAnnotationPrefix+attr]; v != "" {
		return v
	}
	if useLabels {
		for _, l := range labels {
			if v := pod.Labels[l]; v != "" {
				return v
			}
		}
	}
	return ""
}

// serviceName follows upstream's order: annotation (or, with labels on, the instance and name
// labels), then the Deployment, ReplicaSet, StatefulSet, DaemonSet, CronJob, Job, the pod's name
// and finally the container's name.
func serviceName(pod *corev1.Pod, useLabels bool, res map[string]string, container string) string {
	if v := labelOrAnnotation(pod, useLabels, "service.name", labelInstance, labelName); v != "" {
		return v
	}
	for _, k := range []string{"deployment", "replicaset", "statefulset", "daemonset", "cronjob", "job", "pod"} {
		if v := res["k8s."+k+".name"]; v != "" {
			return v
		}
	}
	return container
}

// serviceVersion is the annotation (or version label), else the image's tag and/or digest.
func serviceVersion(pod *corev1.Pod, useLabels bool, image string) string {
	if v := labelOrAnnotation(pod, useLabels, "service.version", labelVersion); v != "" {
		return v
	}
	return imageVersion(image)
}

// imageVersion returns "<tag>@<digest>", "<digest>" or "<tag>" of an image reference, or "".
func imageVersion(image string) string {
	name, digest, _ := strings.Cut(image, "@")
	tag := ""
	if i := strings.LastIndex(name, ":"); i >= 0 && !strings.Contains(name[i+1:], "/") {
		tag = name[i+1:]
	}
	switch {
	case digest != "" && tag != "":
		return tag + "@" + digest
	case digest != "":
		return digest
	}
	return tag
}

// attributesString joins res as k=v pairs sorted by key.
func attributesString(res map[string]string) string {
	keys := make([]string, 0, len(res))
	for k := range res {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + res[k])
	}
	return b.String()
}
