package apply

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ToUnstructured converts a typed desired object into the body of a server-side apply: status and
// server-set metadata are dropped, so we never claim ownership of fields we do not set. The object
// must carry its apiVersion and kind.
func ToUnstructured(obj client.Object) (*unstructured.Unstructured, error) {
	var u *unstructured.Unstructured
	if in, ok := obj.(*unstructured.Unstructured); ok {
		u = in.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			return nil, fmt.Errorf("converting %T %s: %w", obj, obj.GetName(), err)
		}
		u = &unstructured.Unstructured{Object: m}
	}
	if u.GetKind() == "" || u.GetAPIVersion() == "" {
		return nil, fmt.Errorf("%T %s/%s has no apiVersion/kind; builders must set TypeMeta", obj, obj.GetNamespace(), obj.GetName())
	}
	delete(u.Object, "status")
	for _, f := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	// Pod templates (Deployment, StatefulSet, DaemonSet, Job) carry an empty creationTimestamp.
	unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
	if vcts, ok, _ := unstructured.NestedSlice(u.Object, "spec", "volumeClaimTemplates"); ok {
		for i := range vcts {
			if m, ok := vcts[i].(map[string]any); ok {
				unstructured.RemoveNestedField(m, "metadata", "creationTimestamp")
				delete(m, "status")
			}
		}
		_ = unstructured.SetNestedSlice(u.Object, vcts, "spec", "volumeClaimTemplates")
	}
	if u.GetKind() == "Service" && u.GroupVersionKind().Group == "" {
		dropUnsetTargetPorts(u)
	}
	return u, nil
}

// dropUnsetTargetPorts removes targetPort 0 from a Service's ports: a typed ServicePort cannot leave
// targetPort out, 0 is no valid target, and the API server replaces it with the port. Sending
// it would claim a field whose stored value then differs from the one sent, so the applier could
// never see the desired state as in place (one needless write per restart).
func dropUnsetTargetPorts(u *unstructured.Unstructured) {
	ports, ok, _ := unstructured.NestedSlice(u.Object, "spec", "ports")
	if !ok {
		return
	}
	for _, p := range ports {
		if m, ok := p.(map[string]any); ok {
			if v, ok := m["targetPort"]; ok && (v == int64(0) || v == "") {
				delete(m, "targetPort")
			}
		}
	}
	_ = unstructured.SetNestedSlice(u.Object, ports, "spec", "ports")
}
