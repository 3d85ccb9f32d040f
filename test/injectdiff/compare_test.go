package injectdiff

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestDiffFindsEachKindOfChange is the comparison's positive control: a value, an order, a
// missing and an extra entry, a repeated name, a mount (keyed by its path), a list of strings and
// the namespace and token-volume normalization.
func TestDiffFindsEachKindOfChange(t *testing.T) {
	up := decode(t, `{"metadata":{"name":"p","uid":"1","namespace":"injdiff-upstream-main"},
	  "spec":{"initContainers":[{"name":"init","command":["cp","-r","/a","/b"]}],
	  "containers":[{"name":"app","env":[{"name":"A","value":"1"},{"name":"B","value":"x"},{"name":"B","value":"again"},{"name":"C","value":"injdiff-upstream-other/i"}],
	    "volumeMounts":[{"name":"v","mountPath":"/one"},{"name":"v","mountPath":"/two"},{"name":"kube-api-access-abcde","mountPath":"/var/run"}]}],
	  "volumes":[{"name":"v","emptyDir":{}},{"name":"gone"}]}}`)
	ours := decode(t, `{"metadata":{"name":"p","uid":"2","namespace":"injdiff-otelop-main"},
	  "spec":{"initContainers":[{"name":"init","command":["cp","-a","/a","/b"]},{"name":"extra"}],
	  "containers":[{"name":"app","env":[{"name":"B","value":"x"},{"name":"A","value":"2"},{"name":"C","value":"injdiff-otelop-other/i"}],
	    "volumeMounts":[{"name":"v","mountPath":"/one"},{"name":"w","mountPath":"/two"},{"name":"kube-api-access-vwxyz","mountPath":"/var/run"}]}],
	  "volumes":[{"name":"v","emptyDir":{"sizeLimit":"1Gi"}}]}}`)
	var got []string
	for _, d := range diff("", up, ours) {
		got = append(got, d.String())
	}
	want := []string{
		`spec.containers[app].env[A].value: upstream "1", ours "2"`,
		`spec.containers[app].env[B#2]: upstream {"name":"B","value":"again"}, ours <absent>`,
		`spec.containers[app].env (order): upstream A,B,C, ours B,A,C`,
		`spec.containers[app].volumeMounts[/two].name: upstream "v", ours "w"`,
		`spec.initContainers[init].command[1]: upstream "-r", ours "-a"`,
		`spec.initContainers[extra]: upstream <absent>, ours {"name":"extra"}`,
		`spec.volumes[v].emptyDir.sizeLimit: upstream <absent>, ours "1Gi"`,
		`spec.volumes[gone]: upstream {"name":"gone"}, ours <absent>`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := diff("", up, up); len(d) != 0 {
		t.Errorf("an object differs from itself: %v", d)
	}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	m := map[string]any{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	n, err := normalize(m)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
