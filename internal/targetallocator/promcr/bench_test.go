package promcr

import (
	"fmt"
	runtime2 "runtime"
	"strings"
	"testing"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// BenchmarkTranslateAndLoad: one rebuild of the scrape configurations (translation, secret
// look-ups from a map, Prometheus' parsing) for n ServiceMonitors of one endpoint with basic
// auth, what the watcher does after each change (and each secret resync).
func BenchmarkTranslateAndLoad(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("servicemonitors=%d", n), func(b *testing.B) {
			res := Resources{}
			for i := range n {
				sm := resources().ServiceMonitors[0].DeepCopy()
				sm.Name = fmt.Sprintf("sm-%d", i)
				sm.Spec.Endpoints = sm.Spec.Endpoints[:1]
				sm.Spec.Endpoints[0].TLSConfig = nil
				sm.Spec.Endpoints[0].Scheme = ptrScheme(monv1.SchemeHTTP)
				res.ServiceMonitors = append(res.ServiceMonitors, sm)
			}
			b.ReportAllocs()
			for b.Loop() {
				scs, errs := Translate(res, store, Options{})
				if len(errs) > 0 {
					b.Fatal(errs)
				}
				if _, errs := Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil); len(errs) > 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}

func ptrScheme(s monv1.Scheme) *monv1.Scheme { return &s }

// BenchmarkResync: a rebuild in which nothing changed (the periodic secret re-read): translation
// and hashing only, no parsing.
func BenchmarkResync(b *testing.B) {
	res := Resources{}
	for i := range 1000 {
		sm := resources().ServiceMonitors[0].DeepCopy()
		sm.Name = fmt.Sprintf("sm-%d", i)
		sm.Spec.Endpoints = sm.Spec.Endpoints[:1]
		sm.Spec.Endpoints[0].TLSConfig = nil
		res.ServiceMonitors = append(res.ServiceMonitors, sm)
	}
	var l Loader
	scs, _ := Translate(res, store, Options{})
	l.Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil)
	b.ReportAllocs()
	for b.Loop() {
		scs, _ := Translate(res, store, Options{})
		if _, changed, _ := l.Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil); changed {
			b.Fatal("changed")
		}
	}
}

// BenchmarkStoredServiceMonitor: what the informer keeps per ServiceMonitor (heap retained per
// object, "B/kept"), typed and stripped by the transform, against the unstructured object as
// listed (with managed fields and a last-applied annotation, as kubectl apply leaves them).
func BenchmarkStoredServiceMonitor(b *testing.B) {
	sm := resources().ServiceMonitors[0].DeepCopy()
	sm.APIVersion, sm.Kind = "monitoring.coreos.com/v1", "ServiceMonitor"
	sm.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("x", 1500)}
	sm.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: "Apply", APIVersion: "monitoring.coreos.com/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(managedFields(60))}}
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(sm)
	if err != nil {
		b.Fatal(err)
	}
	k := &kind{name: "ServiceMonitor", newTyped: func() metav1.Object { return &monv1.ServiceMonitor{} }}
	const n = 2000
	measure := func(b *testing.B, stored func(u *unstructured.Unstructured) any) {
		for b.Loop() {
			keep := make([]any, 0, n)
			runtime2.GC()
			var before, after runtime2.MemStats
			runtime2.ReadMemStats(&before)
			for range n {
				u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(raw)}
				keep = append(keep, stored(u))
			}
			runtime2.GC()
			runtime2.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/kept")
			runtime2.KeepAlive(keep)
		}
	}
	b.Run("unstructured", func(b *testing.B) { measure(b, func(u *unstructured.Unstructured) any { return u }) })
	b.Run("typed-stripped", func(b *testing.B) {
		measure(b, func(u *unstructured.Unstructured) any {
			typed := k.newTyped()
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
				b.Fatal(err)
			}
			strip(typed)
			return typed
		})
	})
}

// managedFields is a FieldsV1 document naming n spec fields.
func managedFields(n int) string {
	var b strings.Builder
	b.WriteString(`{"f:spec":{`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f:field%d":{}`, i)
	}
	b.WriteString("}}")
	return b.String()
}
