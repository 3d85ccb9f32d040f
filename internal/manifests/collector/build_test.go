package collector

import (
	"bytes"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/otelop/otelop/internal/golden"
)

func goldenCases() []struct {
	name string
	opts func(*Options)
} {
	return []struct {
		name string
		opts func(*Options)
	}{
		{"deployment", func(o *Options) {
			o.LabelsFilter = []string{`drop\.me/.*`}
		}},
		{"daemonset", nil},
		{"statefulset", nil},
		{"sidecar", func(o *Options) { o.PrometheusCRDs = true }},
		{"ingress", func(o *Options) { o.GatewayAPI = true }},
		{"route", func(o *Options) { o.OpenShiftRoutes = true }},
		{"autoscaler", nil},
		{"targetallocator", nil},
		// operator.targetallocator.mtls: the client certificate mounted at /tls, https on 443.
		{"targetallocator-mtls", func(o *Options) { o.TargetAllocatorMTLS = true }},
		{"linkedtargetallocator", nil},
		{"rbac", func(o *Options) { o.CreateRBAC = true }},
		// The embedded target allocator's ClusterRole for its cluster-wide discovery (pods of every
		// namespace, ServiceMonitors selected by namespace labels); no aggregation label.
		{"targetallocator-rbac", func(o *Options) { o.CreateRBAC = true }},
		{"observability", func(o *Options) { o.PrometheusCRDs = true }},
	}
}

func TestBuildGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			opts := DefaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			col := loadCR(t, tc.name+".yaml", opts)
			objs, err := Build(col, opts)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.name+".golden.yaml", render(t, objs))
		})
	}
}

func TestBuildIsDeterministicAndSetsTypeMeta(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			opts := DefaultOptions()
			if tc.opts != nil {
				tc.opts(&opts)
			}
			col := loadCR(t, tc.name+".yaml", opts)
			before := render(t, nil)
			first, err := Build(col, opts)
			g.Expect(err).NotTo(HaveOccurred())
			want := render(t, first)
			for range 5 {
				again, err := Build(col, opts)
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(bytes.Equal(render(t, again), want)).To(BeTrue())
			}
			kinds := map[schema.GroupVersionKind]bool{}
			for _, k := range Kinds(DefaultOptionsWithAll()) {
				kinds[k] = true
			}
			for _, o := range first {
				gvk := o.GetObjectKind().GroupVersionKind()
				g.Expect(gvk.Kind).NotTo(BeEmpty(), "%T has no kind", o)
				g.Expect(gvk.Version).NotTo(BeEmpty(), "%T has no apiVersion", o)
				g.Expect(kinds).To(HaveKey(gvk), "Kinds does not list %v", gvk)
				g.Expect(o.GetOwnerReferences()).To(BeEmpty())
			}
			_ = before
		})
	}
}

// DefaultOptionsWithAll turns every capability on.
func DefaultOptionsWithAll() Options {
	o := DefaultOptions()
	o.PrometheusCRDs, o.GatewayAPI, o.OpenShiftRoutes, o.CreateRBAC = true, true, true, true
	return o
}

func TestBuildErrorsNameTheField(t *testing.T) {
	g := NewWithT(t)
	opts := DefaultOptions()
	col := loadCR(t, "targetallocator.yaml", opts)
	col.Spec.Config.Receivers.Object = map[string]any{"otlp": map[string]any{}}
	_, err := Build(col, opts)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("spec.config.receivers"))
}

func TestBuildDoesNotModifyInput(t *testing.T) {
	g := NewWithT(t)
	opts := DefaultOptions()
	col := loadCR(t, "deployment.yaml", opts)
	before := render(t, nil)
	snapshot := col.DeepCopy()
	_, err := Build(col, opts)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(col).To(Equal(*snapshot))
	_ = before
	_ = strings.TrimSpace
}
