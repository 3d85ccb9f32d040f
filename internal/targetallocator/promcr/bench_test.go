package promcr

import (
	"fmt"
	"testing"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
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
