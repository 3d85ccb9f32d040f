package collector

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/internal/golden"
	"github.com/otelop/otelop/internal/naming"
)

// TestConfigTextAsUpstream pins the collector.yaml text of the takeover test's collectors whose
// values are easy to render differently (quoted keys and values, multi-line strings, floats,
// empty values, nulls): gateway without and scraper with the target allocator rewrite. The
// takeover test (test/takeover) checks that upstream v0.140.0's operator renders these same
// collectors to the same bytes; this golden catches a change of ours (or of a YAML library) in a
// unit test.
func TestConfigTextAsUpstream(t *testing.T) {
	for _, name := range []string{"gateway", "scraper"} {
		t.Run(name, func(t *testing.T) {
			opts := DefaultOptions()
			col := loadCR(t, "configtext-"+name+".yaml", opts)
			objs, err := Build(col, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				if cm, ok := o.(*corev1.ConfigMap); ok && cm.Data[naming.ConfigMapKey] != "" {
					golden.Check(t, "configtext-"+name+".collector.yaml", []byte(cm.Data[naming.ConfigMapKey]))
					return
				}
			}
			t.Fatal("no collector ConfigMap built")
		})
	}
}
