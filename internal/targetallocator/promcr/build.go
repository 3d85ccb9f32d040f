package promcr

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"log/slog"
	"maps"
	"slices"
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
	var l Loader
	out, _, errs := l.Load(scs, global, log)
	return out, errs
}

// Loader is Load with memory: a job whose translation (and global) did not change since the last
// call is not parsed again (Prometheus' parsing, relabel regexes included, is most of the cost)
// and keeps its *ScrapeConfig, so service discovery sees it unchanged. Not safe for concurrent use.
type Loader struct {
	last map[string]loaded
}

type loaded struct {
	sum [sha256.Size]byte
	sc  *promconfig.ScrapeConfig
	err error
}

// Load is the package's Load; changed tells whether anything differs from the previous call.
func (l *Loader) Load(scs []yaml.MapSlice, global Global, log *slog.Logger) (out []*promconfig.ScrapeConfig, changed bool, errs []error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	g := section{}
	if global.ScrapeInterval > 0 {
		g = append(g, yaml.MapItem{Key: "scrape_interval", Value: global.ScrapeInterval.String()})
	}
	put(&g, "scrape_protocols", global.ScrapeProtocols)
	globalRaw, err := yaml.Marshal(g)
	if err != nil {
		return nil, false, []error{err}
	}
	next := make(map[string]loaded, len(scs))
	h := sha256.New()
	for _, sc := range scs {
		job := jobName(sc)
		h.Reset()
		h.Write(globalRaw)
		hashValue(h, sc)
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		prev, ok := l.last[job]
		if !ok || prev.sum != sum {
			changed = true
			prev = loaded{sum: sum}
			doc := section{{Key: "global", Value: g}, {Key: "scrape_configs", Value: []section{sc}}}
			raw, err := yaml.Marshal(doc)
			if err != nil {
				prev.err = err
			} else {
				prev.sc, prev.err = parse(raw, log)
			}
		}
		next[job] = prev
		if prev.err != nil {
			errs = append(errs, fmt.Errorf("%s: the generated scrape configuration is refused by Prometheus: %w", job, prev.err))
			continue
		}
		out = append(out, prev.sc)
	}
	if len(next) != len(l.last) {
		changed = true
	}
	l.last = next
	return out, changed, errs
}

func parse(raw []byte, log *slog.Logger) (*promconfig.ScrapeConfig, error) {
	cfg, err := promconfig.Load(string(raw), log)
	if err != nil {
		return nil, err
	}
	scs, err := cfg.GetScrapeConfigs()
	if err != nil {
		return nil, err
	}
	if len(scs) != 1 {
		return nil, fmt.Errorf("%d scrape configurations, want 1", len(scs))
	}
	return scs[0], nil
}

// hashValue writes an unambiguous encoding of a translated value (what Translate builds:
// sections, slices, string maps and scalars) to h; map keys are sorted.
func hashValue(h hash.Hash, v any) {
	str := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	switch x := v.(type) {
	case section:
		str("{")
		for _, it := range x {
			hashValue(h, it.Key)
			hashValue(h, it.Value)
		}
		str("}")
	case []section:
		str("[")
		for _, e := range x {
			hashValue(h, e)
		}
		str("]")
	case []string:
		str("[")
		for _, e := range x {
			str(e)
		}
		str("]")
	case map[string]string:
		keys := slices.Sorted(maps.Keys(x))
		str("{")
		for _, k := range keys {
			str(k)
			str(x[k])
		}
		str("}")
	case map[string][]string:
		keys := slices.Sorted(maps.Keys(x))
		str("{")
		for _, k := range keys {
			str(k)
			hashValue(h, x[k])
		}
		str("}")
	case string:
		str("s" + x)
	default:
		str(fmt.Sprintf("%T:%v", x, x))
	}
}
