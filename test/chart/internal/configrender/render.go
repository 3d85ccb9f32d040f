// Package configrender renders the kustomize directories under config/ with the kustomize library
// (krusty, the same code as `kubectl kustomize`) and sorts the result for the Helm chart: the
// generator copies CRDs, RBAC and webhook configurations into the chart's files/ folder, and the
// chart tests compare what the chart renders with what config/default renders at test time.
package configrender

import (
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// NamePrefix is the namePrefix of config/default; the chart replaces it with the release's
// full name.
const NamePrefix = "opentelemetry-operator-"

// Namespace is the namespace of config/default.
const Namespace = "opentelemetry-operator-system"

// Render runs kustomize on dir (e.g. <repo>/config/default) and returns its objects in output order.
func Render(dir string) ([]*unstructured.Unstructured, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range resMap.Resources() {
		// Through JSON, so that numbers are int64 or float64 as in every other unstructured object.
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil {
			return nil, fmt.Errorf("kustomize build %s: %s: %w", dir, r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, nil
}

// Group says where an object of config/default goes in the chart.
type Group string

// The groups of objects the generator copies into the chart.
const (
	GroupCRD     Group = "crds"
	GroupRBAC    Group = "rbac"
	GroupWebhook Group = "webhooks"
	// GroupTemplate objects are written by hand in the chart's templates (Deployment,
	// ServiceAccount, Services, Namespace) because values change them.
	GroupTemplate Group = ""
)

// GroupOf returns the group of o.
func GroupOf(o *unstructured.Unstructured) Group {
	switch o.GetKind() {
	case "CustomResourceDefinition":
		return GroupCRD
	case "ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding":
		return GroupRBAC
	case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
		return GroupWebhook
	}
	return GroupTemplate
}

// FileName is the name of o's file in the chart's files/<group>/ folder: kind and name without
// the config prefix, e.g. clusterrole-manager-role.yaml or opentelemetrycollectors.opentelemetry.io.yaml.
func FileName(o *unstructured.Unstructured) string {
	if o.GetKind() == "CustomResourceDefinition" {
		return o.GetName() + ".yaml"
	}
	return strings.ToLower(o.GetKind()) + "-" + strings.TrimPrefix(o.GetName(), NamePrefix) + ".yaml"
}

// Marshal returns o as YAML.
func Marshal(o *unstructured.Unstructured) ([]byte, error) {
	return yaml.Marshal(o.Object)
}
