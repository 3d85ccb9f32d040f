package filter

import (
	"testing"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
)

func TestRelabelKeepsWhatTheJobKeeps(t *testing.T) {
	cfg, err := promconfig.Load(`
scrape_configs:
- job_name: keep-prod
  relabel_configs:
  - {action: keep, source_labels: [env], regex: prod}
- job_name: uses-job-label
  relabel_configs:
  - {action: drop, source_labels: [job], regex: uses-job-label}
- job_name: no-address
  relabel_configs:
  - {action: labeldrop, regex: __address__}
- job_name: plain
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	scs, _ := cfg.GetScrapeConfigs()
	f := New("relabel-config", FromScrapeConfigs(scs))
	prod := labels.FromStrings("__address__", "a:1", "env", "prod")
	dev := labels.FromStrings("__address__", "a:1", "env", "dev")
	for _, c := range []struct {
		job  string
		l    labels.Labels
		keep bool
	}{
		{"keep-prod", prod, true}, {"keep-prod", dev, false},
		{"uses-job-label", prod, false}, {"no-address", prod, false},
		{"plain", dev, true}, {"unknown", dev, true},
	} {
		if _, got := f.Relabel(c.job, c.l); got != c.keep {
			t.Errorf("%s %v: keep=%v, want %v", c.job, c.l, got, c.keep)
		}
	}
	none := New("", nil)
	if _, keep := none.Relabel("keep-prod", dev); !keep {
		t.Error("no filter strategy must keep everything")
	}
}
