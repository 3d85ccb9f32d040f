package plan

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// Rollout says whether a workload's pods are replaced, and why.
type Rollout struct {
	// Rolls: the pod template changes (or the workload is recreated), so every pod is replaced
	// by the workload's update strategy.
	Rolls bool `json:"rolls"`
	// Reasons name what changes in the pod template, one word each: config (the collector
	// configuration: its hash annotation or the ConfigMap the pods mount), image, env, args,
	// volumes, resources, ports, probes, labels, annotations, or the pod spec field's name;
	// "recreated" for an immutable field, "deleted" for a pruned workload.
	Reasons []string `json:"reasons,omitempty"`
	// Fields are the pod template paths that change.
	Fields []string `json:"fields,omitempty"`
}

const templatePrefix = "spec.template."

func isWorkload(gvk schema.GroupVersionKind) bool {
	return gvk.Group == "apps" && (gvk.Kind == "Deployment" || gvk.Kind == "DaemonSet" || gvk.Kind == "StatefulSet")
}

// statefulSetMutable are the StatefulSet spec fields the API server lets an update change.
var statefulSetMutable = []string{"replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds", "revisionHistoryLimit"}

// immutableChange reports whether changes touch a field the API server refuses to update, for
// which the applier deletes and recreates the object: a workload's selector, a StatefulSet's
// fields other than statefulSetMutable.
func immutableChange(gvk schema.GroupVersionKind, changes []apply.FieldChange) bool {
	if !isWorkload(gvk) {
		return false
	}
	for _, ch := range changes {
		if hasPrefix(ch.Path, "spec.selector") {
			return true
		}
		if gvk.Kind != "StatefulSet" || !hasPrefix(ch.Path, "spec") {
			continue
		}
		field, _, _ := strings.Cut(strings.TrimPrefix(ch.Path, "spec."), ".")
		field, _, _ = strings.Cut(field, "[")
		if !slices.Contains(statefulSetMutable, field) {
			return true
		}
	}
	return false
}

// rolloutOf derives the Rollout of a workload that is updated or recreated.
func rolloutOf(action Action, changes []apply.FieldChange) *Rollout {
	r := &Rollout{}
	if action == Recreate {
		r.Rolls = true
		r.Reasons = append(r.Reasons, "recreated")
	}
	for _, ch := range changes {
		if !strings.HasPrefix(ch.Path, templatePrefix) {
			continue
		}
		r.Rolls = true
		r.Fields = append(r.Fields, ch.Path)
		if reason := reasonOf(strings.TrimPrefix(ch.Path, templatePrefix)); !slices.Contains(r.Reasons, reason) {
			r.Reasons = append(r.Reasons, reason)
		}
	}
	return r
}

// containerFields maps a container's field to its reason.
var containerFields = map[string]string{
	"image": "image", "imagePullPolicy": "image",
	"env": "env", "envFrom": "env",
	"args": "args", "command": "args",
	"volumeMounts": "volumes", "volumeDevices": "volumes",
	"resources": "resources", "resizePolicy": "resources",
	"ports":         "ports",
	"livenessProbe": "probes", "readinessProbe": "probes", "startupProbe": "probes",
	"securityContext": "securityContext",
}

// reasonOf names what a pod template path (below spec.template.) is about.
func reasonOf(path string) string {
	configVolume := "spec.volumes[" + naming.ConfigMapVolume + "]"
	switch {
	case strings.Contains(path, manifestutils.ConfigHashAnnotation), hasPrefix(path, configVolume):
		return "config"
	case hasPrefix(path, "metadata.annotations"):
		return "annotations"
	case hasPrefix(path, "metadata.labels"):
		return "labels"
	case hasPrefix(path, "spec.volumes"):
		return "volumes"
	}
	rest, ok := strings.CutPrefix(path, "spec.")
	if !ok {
		return path
	}
	for _, list := range []string{"containers[", "initContainers["} {
		after, found := strings.CutPrefix(rest, list)
		if !found {
			continue
		}
		_, field, found := strings.Cut(after, "].")
		if !found {
			return "containers" // a container added or removed
		}
		field, _, _ = strings.Cut(field, ".")
		field, _, _ = strings.Cut(field, "[")
		if reason, ok := containerFields[field]; ok {
			return reason
		}
		return field
	}
	field, _, _ := strings.Cut(rest, ".")
	field, _, _ = strings.Cut(field, "[")
	return field
}
