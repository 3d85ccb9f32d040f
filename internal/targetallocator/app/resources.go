package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/model/relabel"
	yaml "go.yaml.in/yaml/v2"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/targetallocator/filter"
	"github.com/otelop/otelop/internal/targetallocator/pipeline"
	"github.com/otelop/otelop/internal/targetallocator/promcr"
	"github.com/otelop/otelop/internal/targetallocator/server"
)

// watchResources starts prometheus_cr discovery; its scrape configurations join the file's.
func watchResources(ctx context.Context, cfg config.Config, jobs *jobSet, log *slog.Logger, errc chan<- error) error {
	rc, err := restConfig(cfg.KubeConfigPath)
	if err != nil {
		return fmt.Errorf("prometheus_cr is enabled but there is no Kubernetes connection: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	w := &promcr.Watcher{Dynamic: dyn, Client: cs, CR: cfg.PrometheusCR, OwnNamespace: cfg.CollectorNamespace,
		OnChange: jobs.setResources, Log: log.With("component", "prometheus_cr")}
	go func() { errc <- w.Run(ctx) }()
	return nil
}

// jobSet is the union of the file's scrape configurations and the resources' ones; every
// change goes to service discovery, the relabel filter and the HTTP API.
type jobSet struct {
	mu   sync.Mutex
	file []*promconfig.ScrapeConfig
	// kubeconfig is the allocator's kubeconfig file, "" in a cluster (sdConfigs).
	kubeconfig string
	mgr        *discovery.Manager
	pipe       *pipeline.Pipeline
	relabel    *filter.Relabel
	srv        *server.Server
	log        *slog.Logger
	current    map[string][]*relabel.Config
}

func (j *jobSet) setResources(fromCR []*promconfig.ScrapeConfig) {
	j.mu.Lock()
	defer j.mu.Unlock()
	all := make([]*promconfig.ScrapeConfig, 0, len(j.file)+len(fromCR))
	seen := make(map[string]bool, cap(all))
	for _, sc := range j.file {
		all = append(all, sc)
		seen[sc.JobName] = true
	}
	for _, sc := range fromCR {
		if seen[sc.JobName] {
			j.log.Error("prometheus_cr: job name already used by config.scrape_configs; the resource's job is left out", "job", sc.JobName)
			continue
		}
		all = append(all, sc)
		seen[sc.JobName] = true
	}
	byJob := filter.FromScrapeConfigs(all)
	if j.current == nil {
		j.current = filter.FromScrapeConfigs(j.file)
	}
	changed := changedJobs(j.current, byJob)
	j.current = byJob
	j.pipe.Reconfigure(changed, func() { j.relabel.SetJobs(byJob) })
	if err := j.mgr.ApplyConfig(sdConfigs(all, j.kubeconfig)); err != nil {
		j.log.Error("prometheus_cr: service discovery refused the configuration", "error", err)
	}
	if err := j.srv.SetScrapeConfigs(all); err != nil {
		j.log.Error("prometheus_cr: rendering scrape configs", "error", err)
	}
	j.log.Info("prometheus_cr: scrape configurations updated", "resourceJobs", len(fromCR), "jobs", len(all))
}

// changedJobs names the jobs whose relabel configuration differs between old and new.
func changedJobs(old, new map[string][]*relabel.Config) map[string]bool {
	out := map[string]bool{}
	for job, rc := range new {
		if !sameRelabel(old[job], rc) {
			out[job] = true
		}
	}
	for job := range old {
		if _, ok := new[job]; !ok {
			out[job] = true
		}
	}
	return out
}

func sameRelabel(a, b []*relabel.Config) bool {
	if len(a) != len(b) {
		return false
	}
	ya, err1 := yaml.Marshal(a)
	yb, err2 := yaml.Marshal(b)
	return err1 == nil && err2 == nil && string(ya) == string(yb)
}
