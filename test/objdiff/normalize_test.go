package objdiff

import (
	"crypto/sha256"
	"fmt"
	"regexp"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/test/sidebyside"
)

// The normalizations, each for a value that differs between the sides for a reason that is not
// the operators':
//   - sideNames: the namespace names (objdiff-upstream, objdiff-otelop) wherever they appear
//     (instance labels, ClusterRole names, service.namespace attributes, selectors);
//   - sidebyside.UIDs: the owners' and resources' UIDs;
//   - timestamps: the conditions' lastTransitionTime and any other RFC 3339 time;
//   - serverAssigned: fields the API server fills in per object (a Service's cluster IPs);
//   - currentGeneration: a status.observedGeneration equal to metadata.generation (which counts
//     the spec's writes, the HPA's included, at times of their own on each side);
//   - verifyHashes: the target allocator's configuration hash, checked against the side's own
//     file and then replaced (the file is compared, and names the namespace).
//
// Besides, sidebyside.Normalizer drops uid, resourceVersion, creationTimestamp, managedFields,
// namespace and generation from metadata, the owner references' uids, and the status of the
// generated objects (the cluster's controllers write it, not the operators; the resources keep
// theirs).
var (
	sideNames  = regexp.MustCompile(`objdiff-(upstream|otelop)`)
	timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
)

var normalizer = sidebyside.Normalizer{Replace: []sidebyside.Replacement{
	{Re: sideNames, With: "objdiff-<side>"},
	{Re: sidebyside.UIDs, With: "<uid>"},
	{Re: timestamps, With: "<time>"},
}}

// currentGeneration replaces a status.observedGeneration that is the resource's generation.
const currentGeneration = "<generation>"

// serverAssigned are the paths of fields the API server assigns per object.
var serverAssigned = map[string][][]string{
	"Service": {{"spec", "clusterIP"}, {"spec", "clusterIPs"}},
}

// normalize turns an object into the map the comparison walks; keepStatus keeps its status (for
// the corpus's resources).
func normalize(obj map[string]any, keepStatus bool) (map[string]any, error) {
	n := normalizer
	n.KeepStatus = keepStatus
	m, err := n.Normalize(obj)
	if err != nil {
		return nil, err
	}
	g, _, _ := unstructured.NestedFieldNoCopy(obj, "metadata", "generation")
	og, _, _ := unstructured.NestedFieldNoCopy(m, "status", "observedGeneration")
	if g != nil && og != nil && fmt.Sprint(g) == fmt.Sprint(og) {
		_ = unstructured.SetNestedField(m, currentGeneration, "status", "observedGeneration")
	}
	kind, _ := m["kind"].(string)
	for _, path := range serverAssigned[kind] {
		drop(m, path)
	}
	return m, nil
}

// drop removes the field at path.
func drop(m map[string]any, path []string) {
	for i, k := range path {
		if i == len(path)-1 {
			delete(m, k)
			return
		}
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
}

// taHashKey is the annotation with the SHA-256 of a target allocator's targetallocator.yaml, on
// its Deployment, pod template and PodDisruptionBudget (upstream's key and rule, and ours). The
// file names the collectors' namespace (their instance label), so the hash differs between the
// sides whatever the operators do.
const (
	taHashKey  = "opentelemetry-targetallocator-config/hash"
	taFileName = "targetallocator.yaml"
)

// verifiedHash replaces a taHashKey value that is the SHA-256 of the file in the side's own
// ConfigMap of the same name: the file itself is compared, and a hash that is not of it is left
// as it is (and so differs).
const verifiedHash = "<sha256 of this side's targetallocator.yaml>"

// verifyHashes replaces, in obj's annotations and its pod template's, every taHashKey value that
// is the SHA-256 of targetallocator.yaml in configMaps[obj's name] with verifiedHash.
func verifyHashes(obj *unstructured.Unstructured, configMaps map[string]*unstructured.Unstructured) {
	cm, ok := configMaps[obj.GetName()]
	if !ok {
		return
	}
	file, found, _ := unstructured.NestedString(cm.Object, "data", taFileName)
	if !found {
		return
	}
	want := fmt.Sprintf("%x", sha256.Sum256([]byte(file)))
	for _, path := range [][]string{{"metadata", "annotations"}, {"spec", "template", "metadata", "annotations"}} {
		ann, found, _ := unstructured.NestedStringMap(obj.Object, path...)
		if !found || ann[taHashKey] != want {
			continue
		}
		ann[taHashKey] = verifiedHash
		_ = unstructured.SetNestedStringMap(obj.Object, ann, path...)
	}
}
