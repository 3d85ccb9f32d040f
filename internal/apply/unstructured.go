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
	return u, nil
}
