package pipeline

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/relabel"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/filter"
)

// BenchmarkFair is our side of make bench-ta's one comparison with upstream's allocator
// (bench/targetallocator/fair runs upstream's side, bench/targetallocator/upstream/fair, in the
// same run and prints the ratios). Both sides get the same data: upstream's benchmark data
// shape (5 targets per group, 20 groups per job, an EndpointSlice target's labels) with a
// distinct address per target, 10 collectors registered so that the strategy places every
// target, and, in the relabel variant, upstream's keep-even-jobs/drop-odd-jobs rules. Scenarios:
//   - cold: a fresh allocator takes the whole discovery result (the first update after start);
//   - reload10: updates alternate between two results that differ in 10% of the targets;
//   - unchanged: the same result again (what most updates are).
//
// Each reports ns/op, B/op, allocs/op and retained-MB, the heap the allocator holds afterwards.
func BenchmarkFair(b *testing.B) {
	for _, strategy := range []string{allocation.ConsistentHashing, allocation.LeastWeighted} {
		for _, variant := range []string{"plain", "relabel"} {
			for _, n := range []int{1000, 10000, 100000} {
				a, changed := fairData(n)
				cfgs := map[string][]*relabel.Config{}
				if variant == "relabel" {
					cfgs = keepEvenJobs(a)
				}
				start := func() *Pipeline {
					alloc, err := allocation.New(strategy, "", nil)
					if err != nil {
						b.Fatal(err)
					}
					alloc.SetCollectors(fairCollectors())
					return New(alloc, filter.New("relabel-config", cfgs))
				}
				b.Run(fmt.Sprintf("%s/%s/cold/%d", strategy, variant, n), func(b *testing.B) {
					b.ReportAllocs()
					var p *Pipeline
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						p = nil
						before := heapInUse()
						p = start()
						b.StartTimer()
						p.Process(a)
						b.StopTimer()
						b.ReportMetric(float64(heapInUse()-before)/(1<<20), "retained-MB")
						b.StartTimer()
					}
					runtime.KeepAlive(p)
				})
				b.Run(fmt.Sprintf("%s/%s/reload10/%d", strategy, variant, n), func(b *testing.B) {
					p := start()
					p.Process(a)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if i%2 == 0 {
							p.Process(changed)
						} else {
							p.Process(a)
						}
					}
				})
				b.Run(fmt.Sprintf("%s/%s/unchanged/%d", strategy, variant, n), func(b *testing.B) {
					p := start()
					p.Process(a)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						p.Process(a)
					}
				})
			}
		}
	}
}

// fairData is upstream's benchmark data with a distinct address per target, and a copy in which
// every tenth target has another target_id (10% of the targets changed).
func fairData(n int) (a, changed map[string][]*targetgroup.Group) {
	a = benchmarkData(n, 5, 20)
	changed = map[string][]*targetgroup.Group{}
	for job, groups := range a {
		var cg []*targetgroup.Group
		for _, g := range groups {
			ng := &targetgroup.Group{Labels: g.Labels, Source: g.Source}
			for _, t := range g.Targets {
				id, _ := strconv.Atoi(string(t["target_id"]))
				t["__address__"] = model.LabelValue(fmt.Sprintf("10.%d.%d.%d:9006", id>>16&255, id>>8&255, id&255))
				c := t
				if id%10 == 0 {
					c = t.Clone()
					c["target_id"] = model.LabelValue("changed-" + strconv.Itoa(id))
				}
				ng.Targets = append(ng.Targets, c)
			}
			cg = append(cg, ng)
		}
		changed[job] = cg
	}
	return a, changed
}

// keepEvenJobs keeps every target of even jobs and drops those of odd jobs (the rules of upstream's
// relabel benchmark).
func keepEvenJobs(tsets map[string][]*targetgroup.Group) map[string][]*relabel.Config {
	cfgs := map[string][]*relabel.Config{}
	for job := range tsets {
		nr, _ := strconv.Atoi(strings.Split(job, "-")[1])
		action := relabel.Keep
		if nr%2 != 0 {
			action = relabel.Drop
		}
		cfgs[job] = []*relabel.Config{{Action: action, Regex: relabel.MustNewRegexp(".*"),
			SourceLabels: model.LabelNames{"__address__"}, Separator: ";", Replacement: "$1"}}
	}
	return cfgs
}

func fairCollectors() []allocation.Collector {
	out := make([]allocation.Collector, 10)
	for i := range out {
		out[i] = allocation.Collector{Name: fmt.Sprintf("collector-%d", i), NodeName: fmt.Sprintf("node-%d", i)}
	}
	return out
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}
