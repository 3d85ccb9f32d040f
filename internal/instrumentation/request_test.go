package instrumentation

import (
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
)

func TestRequests(t *testing.T) {
	g := NewWithT(t)
	pod := map[string]string{
		InjectAnnotation(Java):   "true",
		InjectAnnotation(Python): "other/py",
		InjectAnnotation(NodeJS): "false",
	}
	ns := map[string]string{
		InjectAnnotation(Java):   "mine",
		InjectAnnotation(NodeJS): "true",
		InjectAnnotation(DotNet): "true",
	}
	g.Expect(Requests(pod, ns)).To(Equal([]Request{
		{Language: DotNet, Value: "true"},
		{Language: Java, Value: "mine"},
		{Language: Python, Value: "other/py"},
	}))
	g.Expect(Requests(nil, nil)).To(BeEmpty())
	g.Expect(NeedsNamespace(pod)).To(BeTrue())
	all := map[string]string{}
	for _, l := range Languages {
		all[InjectAnnotation(l)] = "false"
	}
	g.Expect(NeedsNamespace(all)).To(BeFalse())
}

func TestInjectedRoundTrip(t *testing.T) {
	g := NewWithT(t)
	list := []Injected{
		{Language: Python, Instrumentation: types.NamespacedName{Namespace: "apps", Name: "i"}, Generation: 3},
		{Language: Java, Instrumentation: types.NamespacedName{Namespace: "apps", Name: "i"}, Generation: 2},
	}
	v := FormatInjected(list)
	g.Expect(v).To(Equal("java=apps/i@2,python=apps/i@3"))
	back, err := ParseInjected(v)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back).To(ConsistOf(list))
	for _, bad := range []string{"java", "java=apps@1", "java=apps/i", "java=apps/i@x", "=a/b@1"} {
		_, err := ParseInjected(bad)
		g.Expect(err).To(MatchError(ContainSubstring(InjectedAnnotation)), bad)
	}
	empty, err := ParseInjected("")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(empty).To(BeEmpty())
}

func FuzzParseInjected(f *testing.F) {
	f.Add("java=apps/i@2,python=apps/i@3")
	f.Add("x=/@")
	f.Fuzz(func(t *testing.T, v string) {
		list, err := ParseInjected(v)
		if err != nil {
			return
		}
		again, err := ParseInjected(FormatInjected(list))
		if err != nil || len(again) != len(list) {
			t.Fatalf("%q: reparse of %q: %v %v", v, FormatInjected(list), again, err)
		}
	})
}
