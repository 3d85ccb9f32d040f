package pipeline

import (
	"testing"

	"github.com/prometheus/common/model"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/targetgroup"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/filter"
)

func relabelJobs(t *testing.T, env string) *promconfig.Config {
	t.Helper()
	cfg, err := promconfig.Load(`
scrape_configs:
- job_name: app
  relabel_configs:
  - {action: keep, source_labels: [env], regex: `+env+`}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReconfigureKeepsTheJobServed is issue 33, finding 6 (the last part): when a job's relabel
// rules change, its targets went away until the next discovery update (up to 5 s). Now the
// targets the new rules keep are there as soon as Reconfigure returns, with no further update;
// the positive control is that the old rules' target is gone.
func TestReconfigureKeepsTheJobServed(t *testing.T) {
	scs, _ := relabelJobs(t, "prod").GetScrapeConfigs()
	f := filter.New("relabel-config", filter.FromScrapeConfigs(scs))
	a, err := allocation.New(allocation.ConsistentHashing, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.SetCollectors([]allocation.Collector{{Name: "c0"}})
	p := New(a, f)
	p.Process(map[string][]*targetgroup.Group{"app": {{Source: "s", Targets: []model.LabelSet{
		{"__address__": "10.0.0.1:80", "env": "prod"}, {"__address__": "10.0.0.2:80", "env": "dev"}}}}})
	served := func() []string {
		var out []string
		for _, it := range a.Targets("c0", "app") {
			out = append(out, it.TargetURL)
		}
		return out
	}
	if got := served(); len(got) != 1 || got[0] != "10.0.0.1:80" {
		t.Fatalf("before: %v, want the prod target", got)
	}
	scs, _ = relabelJobs(t, "dev").GetScrapeConfigs()
	p.Reconfigure(map[string]bool{"app": true}, func() { f.SetJobs(filter.FromScrapeConfigs(scs)) })
	if got := served(); len(got) != 1 || got[0] != "10.0.0.2:80" {
		t.Fatalf("right after the relabel change: %v, want the dev target", got)
	}
}
