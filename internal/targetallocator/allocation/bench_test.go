package allocation

import "testing"

// BenchmarkCollectorChurn: 100,000 targets over 10 collectors; each iteration adds an 11th
// collector and removes it again (what a rollout of one pod does).
func BenchmarkCollectorChurn(b *testing.B) {
	for _, s := range []string{ConsistentHashing, LeastWeighted, PerNode} {
		b.Run(s, func(b *testing.B) {
			a, _ := New(s, ConsistentHashing, nil)
			a.Apply(items(100000, 10), nil)
			ten, eleven := collectors(10), collectors(11)
			a.SetCollectors(ten)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a.SetCollectors(eleven)
				a.SetCollectors(ten)
			}
		})
	}
}
