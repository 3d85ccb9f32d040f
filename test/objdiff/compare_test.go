package objdiff

import (
	"crypto/sha256"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelop/otelop/test/sidebyside"
)

// side builds an object of a side's namespace from JSON where <ns> stands for the namespace.
func side(t *testing.T, s, side string) read {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(strings.ReplaceAll(s, "<ns>", ns(side)))); err != nil {
		t.Fatal(err)
	}
	return read{obj: u}
}

// compare normalizes one object per side and returns the differences found.
func compare(t *testing.T, up, ours []read) []string {
	t.Helper()
	u, err := normalizeAll(up)
	if err != nil {
		t.Fatal(err)
	}
	o, err := normalizeAll(ours)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, key := range sidebyside.UnionKeys(u, o) {
		for _, d := range sidebyside.Diff("", u[key], o[key]) {
			got = append(got, key+" "+d.String())
		}
	}
	return got
}

const service = `{"apiVersion":"v1","kind":"Service","metadata":{"name":"c-collector","namespace":"<ns>","uid":"%s",
  "creationTimestamp":"2026-01-0%dT10:00:00Z","labels":{"app.kubernetes.io/instance":"<ns>.c"},
  "ownerReferences":[{"apiVersion":"opentelemetry.io/v1beta1","kind":"OpenTelemetryCollector","name":"c","uid":"%s"}]},
  "spec":{"clusterIP":"10.0.0.%d","clusterIPs":["10.0.0.%d"],"ports":[{"name":"otlp","port":%d}],
  "selector":{"app.kubernetes.io/instance":"%s"}}}`

// TestNormalizationKeepsRealDifferences is the normalization's positive control: what differs
// only by the side (namespace, UIDs, times, cluster IPs) compares equal, and a planted port or a
// value that differs beyond the namespace is still found.
func TestNormalizationKeepsRealDifferences(t *testing.T) {
	up := side(t, fmt.Sprintf(service, "11111111-1111-1111-1111-111111111111", 1, "21111111-1111-1111-1111-111111111111", 1, 1, 4317, "<ns>.c"), sidebyside.Upstream)
	ours := side(t, fmt.Sprintf(service, "31111111-1111-1111-1111-111111111111", 2, "41111111-1111-1111-1111-111111111111", 2, 2, 4317, "<ns>.c"), sidebyside.Otelop)
	if got := compare(t, []read{up}, []read{ours}); len(got) != 0 {
		t.Errorf("objects that differ only by their side differ: %q", got)
	}
	planted := side(t, fmt.Sprintf(service, "31111111-1111-1111-1111-111111111111", 2, "41111111-1111-1111-1111-111111111111", 2, 2, 4318, "<ns>.d"), sidebyside.Otelop)
	want := []string{
		`Service/c-collector spec.ports[otlp].port: upstream 4317, ours 4318`,
		`Service/c-collector spec.selector[app.kubernetes.io/instance]: upstream "objdiff-<side>.c", ours "objdiff-<side>.d"`,
	}
	if got := compare(t, []read{up}, []read{planted}); !reflect.DeepEqual(got, want) {
		t.Errorf("planted differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// a status is compared only where asked for
	withStatus := func(r read, replicas int, keep bool) read {
		r.obj = r.obj.DeepCopy()
		_ = unstructured.SetNestedField(r.obj.Object, int64(replicas), "status", "replicas")
		r.keepStatus = keep
		return r
	}
	if got := compare(t, []read{withStatus(up, 1, false)}, []read{withStatus(ours, 2, false)}); len(got) != 0 {
		t.Errorf("a generated object's status is compared: %q", got)
	}
	if got := compare(t, []read{withStatus(up, 1, true)}, []read{withStatus(ours, 2, true)}); len(got) != 1 {
		t.Errorf("a resource's status is not compared: %q", got)
	}
	// an observedGeneration is compared by whether it is the resource's generation
	generations := func(r read, generation, observed int) read {
		r = withStatus(r, 1, true)
		r.obj.SetGeneration(int64(generation))
		_ = unstructured.SetNestedField(r.obj.Object, int64(observed), "status", "observedGeneration")
		return r
	}
	if got := compare(t, []read{generations(up, 1, 1)}, []read{generations(ours, 2, 2)}); len(got) != 0 {
		t.Errorf("current observedGenerations differ: %q", got)
	}
	want = []string{`Service/c-collector status.observedGeneration: upstream "<generation>", ours 1`}
	if got := compare(t, []read{generations(up, 2, 2)}, []read{generations(ours, 2, 1)}); !reflect.DeepEqual(got, want) {
		t.Errorf("a stale observedGeneration:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestVerifiedHashes: a target allocator hash that is the SHA-256 of the side's own file compares
// equal across the sides; one that is not (a stale or wrong hash) is still found.
func TestVerifiedHashes(t *testing.T) {
	objs := func(s, file, hash string) []read {
		cm := side(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"t-targetallocator","namespace":"<ns>"},
		  "data":{"targetallocator.yaml":"`+file+`"}}`, s)
		dep := side(t, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t-targetallocator","namespace":"<ns>"},
		  "spec":{"template":{"metadata":{"annotations":{"`+taHashKey+`":"`+hash+`"}}}}}`, s)
		return []read{cm, dep}
	}
	sum := func(s string) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(s))) }
	upFile, ourFile := "instance: objdiff-upstream.c", "instance: objdiff-otelop.c"
	if got := compare(t, objs(sidebyside.Upstream, upFile, sum(upFile)), objs(sidebyside.Otelop, ourFile, sum(ourFile))); len(got) != 0 {
		t.Errorf("verified hashes differ: %q", got)
	}
	got := compare(t, objs(sidebyside.Upstream, upFile, sum(upFile)), objs(sidebyside.Otelop, ourFile, sum("stale")))
	want := []string{`Deployment/t-targetallocator spec.template.metadata.annotations[` + taHashKey + `]: upstream "` + verifiedHash + `", ours "` + sum("stale") + `"`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a wrong hash:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
