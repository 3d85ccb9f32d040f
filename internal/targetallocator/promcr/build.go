package promcr

import (
	"fmt"
	"log/slog"
	"sort"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	promconfig "github.com/prometheus/prometheus/config"
	yaml "go.yaml.in/yaml/v2"
)

// Resources are the selected resources of the four kinds.
type Resources struct {
	ServiceMonitors []*monv1.ServiceMonitor
	PodMonitors     []*monv1.PodMonitor
	Probes          []*monv1.Probe
	ScrapeConfigs   []*monv1alpha1.ScrapeConfig
}

// Translate renders the scrape configurations of res, sorted by job name. A resource that
// cannot be translated (a missing secret, a refused field) is left out and its error returned;
// the others are still translated.
func Translate(res Resources, store Store, opts Options) ([]yaml.MapSlice, []error) {
	var out []section
	var errs []error
	add := func(scs []section, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		out = append(out, scs...)
	}
	for _, sm := range res.ServiceMonitors {
		add(ServiceMonitor(sm, store, opts))
	}
	for _, pm := range res.PodMonitors {
		add(PodMonitor(pm, store, opts))
	}
	for _, p := range res.Probes {
		sc, err := Probe(p, store, opts)
		add([]section{sc}, err)
	}
	for _, c := range res.ScrapeConfigs {
		sc, err := ScrapeConfig(c, store, opts)
		add([]section{sc}, err)
	}
	sort.SliceStable(out, func(i, j int) bool { return jobName(out[i]) < jobName(out[j]) })
	return out, errs
}

func jobName(s section) string {
	name, _ := s[0].Value.(string)
	return name
}

// Global are the defaults that jobs without their own settings take: prometheus_cr's
// scrape_interval and scrape_protocols.
type Global struct {
	ScrapeInterval  time.Duration
	ScrapeProtocols []string
}

// Load parses translated scrape configurations as Prometheus does, with global's defaults. A
// configuration Prometheus refuses is left out and its error returned.
func Load(scs []yaml.MapSlice, global Global, log *slog.Logger) ([]*promconfig.ScrapeConfig, []error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := section{}
	if global.ScrapeInterval > 0 {
		g = append(g, yaml.MapItem{Key: "scrape_interval", Value: global.ScrapeInterval.String()})
	}
	put(&g, "scrape_protocols", global.ScrapeProtocols)
	var out []*promconfig.ScrapeConfig
	var errs []error
	for _, sc := range scs {
		doc := section{{Key: "global", Value: g}, {Key: "scrape_configs", Value: []section{sc}}}
		raw, err := yaml.Marshal(doc)
		if err == nil {
			var cfg *promconfig.Config
			if cfg, err = promconfig.Load(string(raw), log); err == nil {
				var loaded []*promconfig.ScrapeConfig
				if loaded, err = cfg.GetScrapeConfigs(); err == nil {
					out = append(out, loaded...)
					continue
				}
			}
		}
		errs = append(errs, fmt.Errorf("%s: the generated scrape configuration is refused by Prometheus: %w", jobName(sc), err))
	}
	return out, errs
}
