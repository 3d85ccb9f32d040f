// Package filter implements filter_strategy relabel-config: a new target is kept only when the
// relabel_configs of its job keep it, so that collectors are not handed targets they would drop.
package filter

import (
	"github.com/prometheus/common/model"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
)

// Relabel keeps the targets that the relabel configuration of their job keeps.
type Relabel struct {
	byJob   map[string][]*relabel.Config
	builder *labels.Builder
}

// New returns the filter named strategy ("relabel-config"), or nil for "" (keep everything).
func New(strategy string, byJob map[string][]*relabel.Config) *Relabel {
	if strategy == "" {
		return nil
	}
	return &Relabel{byJob: byJob, builder: labels.NewBuilder(labels.EmptyLabels())}
}

// FromScrapeConfigs collects the relabel_configs of each job.
func FromScrapeConfigs(scs []*promconfig.ScrapeConfig) map[string][]*relabel.Config {
	out := make(map[string][]*relabel.Config, len(scs))
	for _, sc := range scs {
		if len(sc.RelabelConfigs) > 0 {
			out[sc.JobName] = sc.RelabelConfigs
		}
	}
	return out
}

// Relabel runs the job's relabel configs on the target's labels, with the job label set as
// Prometheus sets it before relabelling, and returns the result. Targets are kept when the result
// is not empty and, like Prometheus, when an __address__ remains. A job without relabel configs
// (or a nil filter) keeps its labels as they are.
func (r *Relabel) Relabel(job string, lbls labels.Labels) (labels.Labels, bool) {
	if r == nil {
		return lbls, true
	}
	cfgs := r.byJob[job]
	if len(cfgs) == 0 {
		return lbls, true
	}
	b := r.builder
	b.Reset(lbls)
	if b.Get(model.JobLabel) == "" {
		b.Set(model.JobLabel, job)
	}
	if !relabel.ProcessBuilder(b, cfgs...) || b.Get(model.AddressLabel) == "" {
		return labels.EmptyLabels(), false
	}
	return b.Labels(), true
}

// SetJobs replaces the relabel configurations; it must not run concurrently with Keep (the
// pipeline calls it under its lock). A nil filter ignores it.
func (r *Relabel) SetJobs(byJob map[string][]*relabel.Config) {
	if r != nil {
		r.byJob = byJob
	}
}
