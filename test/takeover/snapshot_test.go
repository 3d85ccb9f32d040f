package takeover

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/simcluster"
)

// watched are the kinds the snapshots hold: what the operators own, plus the pods and the objects
// whose churn means a rollout (ReplicaSets, ControllerRevisions).
var watched = []schema.GroupVersionKind{
	{Group: "opentelemetry.io", Version: "v1beta1", Kind: "OpenTelemetryCollector"},
	{Group: "opentelemetry.io", Version: "v1alpha1", Kind: "TargetAllocator"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"},
	{Group: "apps", Version: "v1", Kind: "ReplicaSet"},
	{Group: "apps", Version: "v1", Kind: "ControllerRevision"},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Version: "v1", Kind: "Pod"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"},
}

// snapshot maps "Kind/name" to the object without the fields every write changes
// (resourceVersion, managedFields) and without status (reported apart).
type snapshot map[string]map[string]any

func takeSnapshot(ctx context.Context, c client.Client, ns string) (snapshot, error) {
	s := snapshot{}
	for _, gvk := range watched {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.InNamespace(ns)}
		if gvk.Group == "rbac.authorization.k8s.io" {
			// cluster-scoped: the collectors' own, by their instance label
			opts = []client.ListOption{client.HasLabels{"app.kubernetes.io/instance"}}
		}
		if err := c.List(ctx, l, opts...); err != nil {
			return nil, fmt.Errorf("listing %s: %w", gvk.Kind, err)
		}
		for _, o := range l.Items {
			if gvk.Kind == "ConfigMap" && o.GetName() == "kube-root-ca.crt" ||
				gvk.Group == "rbac.authorization.k8s.io" && !strings.HasPrefix(o.GetLabels()["app.kubernetes.io/instance"], ns+".") {
				continue
			}
			m := o.Object
			unstructured.RemoveNestedField(m, "metadata", "resourceVersion")
			unstructured.RemoveNestedField(m, "metadata", "managedFields")
			if gvk.Kind == "OpenTelemetryCollector" {
				// The collectors' status is reported, apart: both operators write it.
				if st, ok := m["status"]; ok {
					s["OpenTelemetryCollector.status/"+o.GetName()] = map[string]any{"status": st}
				}
			}
			if gvk.Kind != "Pod" {
				unstructured.RemoveNestedField(m, "status")
			}
			s[gvk.Kind+"/"+o.GetName()] = m
		}
	}
	return s, nil
}

// podUIDs returns pod name -> UID.
func (s snapshot) podUIDs() map[string]string {
	out := map[string]string{}
	for k, o := range s {
		if strings.HasPrefix(k, "Pod/") {
			uid, _, _ := unstructured.NestedString(o, "metadata", "uid")
			out[k] = uid
		}
	}
	return out
}

// change is one difference between two snapshots.
type change struct {
	Object string
	Path   string
	Before any
	After  any
}

func (c change) String() string {
	return fmt.Sprintf("%s %s: %s -> %s", c.Object, c.Path, short(c.Before), short(c.After))
}

func short(v any) string {
	if v == nil {
		return "(absent)"
	}
	b, _ := json.Marshal(v)
	s := string(b)
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// diff lists added and removed objects and every changed leaf path of the others.
func diff(before, after snapshot) []change {
	var out []change
	for _, k := range sortedKeys(before, after) {
		b, inB := before[k]
		a, inA := after[k]
		switch {
		case !inA:
			out = append(out, change{Object: k, Path: "(object)", Before: "present"})
		case !inB:
			out = append(out, change{Object: k, Path: "(object)", After: "created"})
		default:
			diffValue(k, "", b, a, &out)
		}
	}
	return out
}

func diffValue(obj, path string, b, a any, out *[]change) {
	bm, bok := b.(map[string]any)
	am, aok := a.(map[string]any)
	if bok && aok {
		for _, k := range sortedKeys(bm, am) {
			diffValue(obj, path+"."+k, bm[k], am[k], out)
		}
		return
	}
	if !reflect.DeepEqual(b, a) {
		*out = append(*out, change{Object: obj, Path: path, Before: b, After: a})
	}
}

func sortedKeys[V any](ms ...map[string]V) []string {
	seen := map[string]bool{}
	var keys []string
	for _, m := range ms {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// auditEvent is the part of an API server audit event the write counts need.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// auditWrites returns the completed write requests of user in the audit log from byte offset on,
// as "verb resource[/subresource] name" -> count, and the log's new end offset. Leader election
// leases and the twins namespace are left out.
func auditWrites(path, user string, offset int64) (map[string]int, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, offset, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, 0); err != nil {
		return nil, offset, err
	}
	out := map[string]int{}
	r := bufio.NewReaderSize(f, 1<<20)
	pos := offset
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial last line is read again next time
		}
		pos += int64(len(line))
		var e auditEvent
		if json.Unmarshal(line, &e) != nil || e.Stage != "ResponseComplete" || e.User.Username != user {
			continue
		}
		if e.ObjectRef.Namespace == twinsNamespace || strings.Contains(e.ObjectRef.Name, "-"+twinsNamespace+"-") {
			continue // the twins check's collectors are not part of the switch
		}
		res := e.ObjectRef.Resource
		if res == "leases" || res == "tokenreviews" || res == "subjectaccessreviews" || res == "selfsubjectaccessreviews" {
			continue
		}
		if e.ObjectRef.Subresource != "" {
			res += "/" + e.ObjectRef.Subresource
		}
		key := fmt.Sprintf("%s %s %s", e.Verb, res, e.ObjectRef.Name)
		if e.ResponseStatus.Code >= 300 {
			key += fmt.Sprintf(" (%d)", e.ResponseStatus.Code)
		}
		out[key]++
	}
	return out, pos, nil
}

// byKindAndVerb sums auditWrites' counts per "verb resource".
func byKindAndVerb(w map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range w {
		f := strings.Fields(k)
		out[f[0]+" "+f[1]] += n
	}
	return out
}

func total(w map[string]int) int {
	n := 0
	for _, v := range w {
		n += v
	}
	return n
}

func fileSize(path string) int64 {
	size, err := simcluster.AuditOffset(path)
	if err != nil {
		return 0
	}
	return size
}
