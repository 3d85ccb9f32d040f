// Package server is the target allocator's HTTP API, with upstream's paths and JSON shapes so
// that the collector's prometheus receiver (target_allocator settings) uses it unchanged:
//
//	GET /scrape_configs                          job name -> scrape configuration
//	GET /jobs                                    job name -> {"_link": "/jobs/<job>/targets"}
//	GET /jobs/<job>/targets?collector_id=<pod>   [{"targets": ["<address>"], "labels": {...}}]
//	GET /jobs/<job>/targets                      collector -> {"_link": ..., "targets": [...]}
//	GET /livez, /readyz, /metrics
package server

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promcommon "github.com/prometheus/common/config"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/labels"
	yaml "go.yaml.in/yaml/v2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
)

// Server serves the API from an allocator and the current scrape configurations.
type Server struct {
	// InsecureSecrets, set before serving, makes /scrape_configs show secrets over plain HTTP
	// too (allow_insecure_auth_secrets: for clusters where a service mesh secures connections).
	InsecureSecrets bool

	alloc    *allocation.Allocator
	gatherer prometheus.Gatherer

	mu            sync.RWMutex
	scrapeConfigs []byte // secrets redacted
	withSecrets   []byte // secrets in clear, served over verified mutual TLS only (or InsecureSecrets)
}

// New returns a server for alloc; gatherer backs /metrics (nil: the default registry).
func New(alloc *allocation.Allocator, gatherer prometheus.Gatherer) *Server {
	if gatherer == nil {
		gatherer = prometheus.DefaultGatherer
	}
	return &Server{alloc: alloc, gatherer: gatherer}
}

// Handler returns the API's handler.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /scrape_configs", s.scrapeConfigsHandler)
	mux.HandleFunc("GET /jobs", s.jobsHandler)
	mux.HandleFunc("GET /jobs/{job}/targets", s.targetsHandler)
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /readyz", s.readyHandler)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.gatherer, promhttp.HandlerOpts{}))
	return mux
}

var marshalMu sync.Mutex // promcommon.MarshalSecretValue is a package variable

// SetScrapeConfigs renders the scrape configurations served by /scrape_configs, once with
// secrets redacted (plain HTTP) and once in clear (HTTPS). The server is ready from the first
// call on.
func (s *Server) SetScrapeConfigs(scs []*promconfig.ScrapeConfig) error {
	byJob := make(map[string]*promconfig.ScrapeConfig, len(scs))
	for _, sc := range scs {
		byJob[sc.JobName] = sc
	}
	redacted, err := render(byJob, false)
	if err != nil {
		return err
	}
	clear, err := render(byJob, true)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.scrapeConfigs, s.withSecrets = redacted, clear
	s.mu.Unlock()
	return nil
}

func render(byJob map[string]*promconfig.ScrapeConfig, secrets bool) ([]byte, error) {
	marshalMu.Lock()
	prev := promcommon.MarshalSecretValue
	promcommon.MarshalSecretValue = secrets
	y, err := yaml.Marshal(byJob)
	promcommon.MarshalSecretValue = prev
	marshalMu.Unlock()
	if err != nil {
		return nil, err
	}
	js, err := sigsyaml.YAMLToJSON(y)
	if err != nil {
		return nil, err
	}
	return dropEqualRegex(js)
}

// dropEqualRegex removes regex from keepequal/dropequal relabel rules: Prometheus writes the
// default regex for them but refuses it when reading (prometheus/prometheus#12534), which would
// break the collector's parsing.
func dropEqualRegex(js []byte) ([]byte, error) {
	var byJob map[string]map[string]any
	if err := json.Unmarshal(js, &byJob); err != nil {
		return nil, err
	}
	changed := false
	for _, sc := range byJob {
		for _, key := range []string{"relabel_configs", "metric_relabel_configs"} {
			rules, _ := sc[key].([]any)
			for _, r := range rules {
				rule, _ := r.(map[string]any)
				if a, _ := rule["action"].(string); a == "keepequal" || a == "dropequal" {
					delete(rule, "regex")
					changed = true
				}
			}
		}
	}
	if !changed {
		return js, nil
	}
	return json.Marshal(byJob)
}

func (s *Server) scrapeConfigsHandler(w http.ResponseWriter, r *http.Request) {
	s.mu.RLock()
	body := s.scrapeConfigs
	if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 || s.InsecureSecrets {
		body = s.withSecrets // only to a client whose certificate was verified, unless allowed
	}
	s.mu.RUnlock()
	if body == nil {
		body = []byte("{}")
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func (s *Server) readyHandler(w http.ResponseWriter, _ *http.Request) {
	s.mu.RLock()
	ready := s.scrapeConfigs != nil
	s.mu.RUnlock()
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

type link struct {
	Link string `json:"_link"`
}

func (s *Server) jobsHandler(w http.ResponseWriter, _ *http.Request) {
	jobs := s.alloc.Jobs()
	out := make(map[string]link, len(jobs))
	for _, j := range jobs {
		out[j] = link{Link: "/jobs/" + url.QueryEscape(j) + "/targets"}
	}
	writeJSON(w, out)
}

// targetGroup is one target as the collector's HTTP service discovery reads it.
type targetGroup struct {
	Targets []string      `json:"targets"`
	Labels  labels.Labels `json:"labels"`
}

type collectorTargets struct {
	Link    string        `json:"_link"`
	Targets []targetGroup `json:"targets"`
}

func (s *Server) targetsHandler(w http.ResponseWriter, r *http.Request) {
	job, err := jobFromPath(r.URL)
	if err != nil {
		http.Error(w, `{"error":"job: not a valid escaped name"}`, http.StatusBadRequest)
		return
	}
	ids, ok := r.URL.Query()["collector_id"]
	if ok && len(ids) > 0 {
		writeJSON(w, s.groups(ids[0], job))
		return
	}
	out := map[string]collectorTargets{}
	for _, c := range s.alloc.Collectors() {
		out[c.Name] = collectorTargets{
			Link:    "/jobs/" + url.QueryEscape(job) + "/targets?collector_id=" + url.QueryEscape(c.Name),
			Targets: s.groups(c.Name, job),
		}
	}
	writeJSON(w, out)
}

func (s *Server) groups(collector, job string) []targetGroup {
	items := s.alloc.Targets(collector, job)
	out := make([]targetGroup, len(items))
	for i, it := range items {
		out[i] = targetGroup{Targets: []string{it.TargetURL}, Labels: it.Labels}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		http.Error(w, strings.ReplaceAll(err.Error(), `"`, `'`), http.StatusInternalServerError)
	}
}

// jobFromPath reads the job name from /jobs/<job>/targets as /jobs links it (query-escaped), from
// the path as sent: the router's path value is already unescaped once, and unescaping it again
// served job "a+b" (linked as a%2Bb) the targets of job "a b".
func jobFromPath(u *url.URL) (string, error) {
	seg := strings.TrimSuffix(strings.TrimPrefix(u.EscapedPath(), "/jobs/"), "/targets")
	return url.QueryUnescape(seg)
}
