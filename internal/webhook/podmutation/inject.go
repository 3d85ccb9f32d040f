package podmutation

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/inject"
	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/internal/sidecar"
)

// Annotation asks for a collector sidecar, on a pod or on its namespace. Its values are "true"
// (the one sidecar-mode collector of the pod's namespace), "false" (no sidecar; an existing
// otc-container is removed), "<name>" (that collector of the pod's namespace) and "<ns>/<name>".
// "true" and "false" are case-insensitive.
const Annotation = sidecar.InjectAnnotation

// AllowedNamespacesAnnotation is set on a sidecar-mode collector: it lists the other namespaces whose pods
// may name it as "<ns>/<name>" (comma-separated, or "*" for every namespace). Without it only pods
// of the collector's own namespace get it: the sidecar carries the collector's whole configuration
// (credentials included) into the pod, so a tenant must not be able to copy another's.
const AllowedNamespacesAnnotation = sidecar.AllowedNamespacesAnnotation

// allowsNamespace reports whether pods of namespace may use otelcol as their sidecar.
func allowsNamespace(otelcol *v1beta1.OpenTelemetryCollector, namespace string) bool {
	return inject.AllowsNamespace(otelcol.Namespace, otelcol.Annotations[AllowedNamespacesAnnotation], namespace)
}

// Target parses a value that names a collector ("<name>" or "<ns>/<name>"); a bare name is
// looked up in podNamespace.
func Target(value, podNamespace string) (types.NamespacedName, error) {
	return inject.Target(Annotation, value, podNamespace)
}

// pickSidecar returns the single sidecar-mode collector of cols, or why there is none to pick.
func pickSidecar(cols []v1beta1.OpenTelemetryCollector, namespace string) (*v1beta1.OpenTelemetryCollector, error) {
	var found []*v1beta1.OpenTelemetryCollector
	for i := range cols {
		if cols[i].Spec.Mode == v1beta1.ModeSidecar {
			found = append(found, &cols[i])
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return nil, fmt.Errorf("%s=true but namespace %q has no OpenTelemetryCollector in sidecar mode", Annotation, namespace)
	default:
		names := make([]string, len(found))
		for i, c := range found {
			names[i] = c.Name
		}
		slices.Sort(names)
		return nil, fmt.Errorf("%s=true but namespace %q has %d OpenTelemetryCollectors in sidecar mode (%s); name one in the annotation",
			Annotation, namespace, len(found), strings.Join(names, ", "))
	}
}

// HasSidecar reports whether pod already has an otc-container, among its containers or its init
// containers (either way another one would make the pod invalid).
func HasSidecar(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.Containers, isSidecar) || slices.ContainsFunc(pod.Spec.InitContainers, isSidecar)
}

func isSidecar(c corev1.Container) bool { return c.Name == naming.Container }

// Remove drops the otc-container from pod's containers and, with native sidecars, from its init
// containers, and then the injected label and sidecar.GenerationAnnotation. It reports whether it
// removed a container. The collector's init containers and volumes are left: nothing tells them
// apart from the pod's own.
func Remove(pod *corev1.Pod, nativeSidecars bool) bool {
	n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers)
	pod.Spec.Containers = slices.DeleteFunc(pod.Spec.Containers, isSidecar)
	if nativeSidecars {
		pod.Spec.InitContainers = slices.DeleteFunc(pod.Spec.InitContainers, isSidecar)
	}
	if len(pod.Spec.Containers)+len(pod.Spec.InitContainers) == n {
		return false
	}
	delete(pod.Labels, sidecar.InjectedLabel)
	delete(pod.Annotations, sidecar.GenerationAnnotation)
	return true
}

// Inject adds otelcol to pod: the collector's init containers, then otc-container (the last init
// container with opts.NativeSidecars, else the last container), the otc-internal volume of the
// collector's ConfigMap when the sidecar reads its config by reference (sidecar.ByReference; a pod
// that already has a volume of that name gets no sidecar), the collector's volumes and one volume
// per spec.configmaps entry, the injected label and sidecar.GenerationAnnotation (the collector's
// generation, for the catch-up controller). otelcol must be the collector as the reconciler builds it (defaulted and migrated), so that the ConfigMap named is the one it made. An init container or volume whose name
// the pod already uses is skipped, and a warning says so, so that the pod stays valid. owners are
// the pod's ReplicaSet and Deployment, for the resource attributes.
func Inject(pod *corev1.Pod, otelcol v1beta1.OpenTelemetryCollector, opts collector.Options, owners sidecar.Owners) ([]string, error) {
	c, err := sidecar.ContainerWithOwners(otelcol, opts, *pod, owners)
	if err != nil {
		return nil, fmt.Errorf("building the sidecar of %s/%s: %w", otelcol.Namespace, otelcol.Name, err)
	}
	volumes := map[string]bool{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = true
	}
	var configVolume []corev1.Volume
	if sidecar.ByReference(otelcol, *pod) {
		if volumes[naming.ConfigMapVolume] {
			return nil, skipFor(reasonIncompatible, fmt.Errorf("the pod already has a volume named %q, which the sidecar of %s/%s mounts its config from",
				naming.ConfigMapVolume, otelcol.Namespace, otelcol.Name))
		}
		v, err := sidecar.ConfigVolume(otelcol)
		if err != nil {
			return nil, fmt.Errorf("building the sidecar of %s/%s: %w", otelcol.Namespace, otelcol.Name, err)
		}
		configVolume = append(configVolume, v)
	}
	var warnings []string
	containers := containerNames(pod)
	for _, ic := range otelcol.Spec.InitContainers {
		if containers[ic.Name] {
			warnings = append(warnings, fmt.Sprintf("init container %q of collector %s/%s not added: the pod already has a container of that name",
				ic.Name, otelcol.Namespace, otelcol.Name))
			continue
		}
		containers[ic.Name] = true
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, *ic.DeepCopy())
	}
	if opts.NativeSidecars {
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	} else {
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	for _, v := range slices.Concat(configVolume, otelcol.Spec.Volumes, collector.ExtraConfigMapVolumes(otelcol)) {
		if volumes[v.Name] {
			warnings = append(warnings, fmt.Sprintf("volume %q of collector %s/%s not added: the pod already has a volume of that name",
				v.Name, otelcol.Namespace, otelcol.Name))
			continue
		}
		volumes[v.Name] = true
		pod.Spec.Volumes = append(pod.Spec.Volumes, *v.DeepCopy())
	}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels[sidecar.InjectedLabel] = sidecar.InjectedLabelValue(otelcol)
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations[sidecar.GenerationAnnotation] = sidecar.FormatGeneration(otelcol)
	return warnings, nil
}

func containerNames(pod *corev1.Pod) map[string]bool {
	names := map[string]bool{}
	for _, c := range pod.Spec.Containers {
		names[c.Name] = true
	}
	for _, c := range pod.Spec.InitContainers {
		names[c.Name] = true
	}
	for _, c := range pod.Spec.EphemeralContainers {
		names[c.Name] = true
	}
	return names
}
