package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery/targetgroup"
	"github.com/prometheus/prometheus/model/labels"
	yaml "go.yaml.in/yaml/v2"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/targetallocator/target"
)

const configFile = `
config:
  scrape_configs:
  - job_name: app
    static_configs:
    - targets: ["10.0.0.1:8080", "10.0.0.2:8080"]
    relabel_configs:
    - action: keepequal
      source_labels: [__address__]
      target_label: __address__
  - job_name: secured
    basic_auth:
      username: u
      password: hunter2
    static_configs:
    - targets: ["10.0.0.3:8080"]
`

func newServer(t *testing.T) (*Server, *allocation.Allocator) {
	t.Helper()
	cfg, err := config.Parse([]byte(configFile), nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := allocation.New(allocation.LeastWeighted, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.SetCollectors([]allocation.Collector{{Name: "col-0", NodeName: "n"}, {Name: "col-1", NodeName: "n"}})
	var its []*target.Item
	for i, addr := range []string{"10.0.0.1:8080", "10.0.0.2:8080"} {
		its = append(its, target.NewItem("app", labels.FromStrings("__address__", addr, "__meta_x", "y"), uint64(i+1)))
	}
	a.Apply(its, nil)
	s := New(a, nil)
	scs, err := cfg.Prometheus.GetScrapeConfigs()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetScrapeConfigs(scs); err != nil {
		t.Fatal(err)
	}
	return s, a
}

func get(t *testing.T, h http.Handler, path string, tlsOn bool) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if tlsOn {
		// A verified client certificate, as the mutual-TLS listener guarantees.
		r.TLS = &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{{}}}}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	return w.Code, string(b)
}

// The expected bodies are upstream's shapes (cmd/otel-allocator, v0.140.0): /jobs maps job
// names to a _link object; targets with collector_id are a list of HTTP SD groups with one
// address each; an unknown collector gets [] (not null).
func TestAPIShapes(t *testing.T) {
	s, a := newServer(t)
	h := s.Handler()

	code, body := get(t, h, "/jobs", false)
	if want := `{"app":{"_link":"/jobs/app/targets"}}` + "\n"; code != 200 || body != want {
		t.Fatalf("/jobs = %d %s, want %s", code, body, want)
	}

	var all []string
	for _, c := range a.Collectors() {
		code, body = get(t, h, "/jobs/app/targets?collector_id="+c.Name, false)
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		it := a.Targets(c.Name, "app")[0]
		want := `[{"targets":["` + it.TargetURL + `"],"labels":{"__address__":"` + it.TargetURL + `","__meta_x":"y"}}]` + "\n"
		if body != want {
			t.Fatalf("targets of %s = %s, want %s", c.Name, body, want)
		}
		// The collector reads this with Prometheus' HTTP service discovery format.
		var groups []*targetgroup.Group
		if err := json.Unmarshal([]byte(body), &groups); err != nil || len(groups) != 1 {
			t.Fatalf("not HTTP SD groups: %v", err)
		}
		all = append(all, string(groups[0].Targets[0]["__address__"]))
	}
	if len(all) != 2 || all[0] == all[1] {
		t.Fatalf("each collector should have one distinct target, got %v", all)
	}

	if _, body = get(t, h, "/jobs/app/targets?collector_id=nobody", false); body != "[]\n" {
		t.Fatalf("unknown collector: %q", body)
	}
	if _, body = get(t, h, "/jobs/other/targets?collector_id=col-0", false); body != "[]\n" {
		t.Fatalf("unknown job: %q", body)
	}

	_, body = get(t, h, "/jobs/app/targets", false)
	var byCollector map[string]struct {
		Link    string            `json:"_link"`
		Targets []json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal([]byte(body), &byCollector); err != nil {
		t.Fatal(err)
	}
	if len(byCollector) != 2 || byCollector["col-0"].Link != "/jobs/app/targets?collector_id=col-0" || len(byCollector["col-1"].Targets) != 1 {
		t.Fatalf("targets without collector_id: %s", body)
	}
}

func TestScrapeConfigsRoundTripAndSecrets(t *testing.T) {
	s, _ := newServer(t)
	h := s.Handler()
	for _, tlsOn := range []bool{false, true} {
		code, body := get(t, h, "/scrape_configs", tlsOn)
		if code != 200 {
			t.Fatalf("status %d", code)
		}
		var byJob map[string]any
		if err := json.Unmarshal([]byte(body), &byJob); err != nil {
			t.Fatal(err)
		}
		if len(byJob) != 2 {
			t.Fatalf("jobs: %v", byJob)
		}
		// The collector turns each entry back into a Prometheus scrape configuration.
		for job, v := range byJob {
			raw, _ := yaml.Marshal(v)
			var sc promconfig.ScrapeConfig
			if err := yaml.Unmarshal(raw, &sc); err != nil {
				t.Fatalf("%s does not parse back (tls=%v): %v\n%s", job, tlsOn, err, raw)
			}
		}
		hasSecret := strings.Contains(body, "hunter2")
		if hasSecret != tlsOn {
			t.Fatalf("tls=%v: password in body = %v", tlsOn, hasSecret)
		}
	}
}

func TestProbes(t *testing.T) {
	a, _ := allocation.New(allocation.ConsistentHashing, "", nil)
	s := New(a, nil)
	h := s.Handler()
	if code, _ := get(t, h, "/livez", false); code != 200 {
		t.Fatalf("livez %d", code)
	}
	if code, _ := get(t, h, "/readyz", false); code != 503 {
		t.Fatalf("readyz before configuration %d", code)
	}
	if err := s.SetScrapeConfigs(nil); err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, h, "/readyz", false); code != 200 {
		t.Fatalf("readyz after configuration %d", code)
	}
	if code, _ := get(t, h, "/metrics", false); code != 200 {
		t.Fatalf("metrics %d", code)
	}
}

// TestScrapeConfigsSecretsNeedAVerifiedClient: a TLS connection whose client presented no
// verified certificate gets the redacted body, as plain HTTP does (issue 33, finding 1).
func TestScrapeConfigsSecretsNeedAVerifiedClient(t *testing.T) {
	s, _ := newServer(t)
	r := httptest.NewRequest(http.MethodGet, "/scrape_configs", nil)
	r.TLS = &tls.ConnectionState{} // TLS, but no client certificate
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, r)
	b, _ := io.ReadAll(w.Result().Body)
	if w.Code != 200 || strings.Contains(string(b), "hunter2") || !strings.Contains(string(b), `\u003csecret\u003e`) {
		t.Fatalf("TLS without a verified client certificate: %d %s", w.Code, b)
	}
}

// TestJobLinksServeTheirOwnJob is issue 33, finding 6: job "a+b" is linked as /jobs/a%2Bb/targets;
// the name was unescaped twice and that link served the targets of job "a b". Every link that
// /jobs hands out must serve its own job's targets (the positive control: "a b" keeps its own).
func TestJobLinksServeTheirOwnJob(t *testing.T) {
	a, err := allocation.New(allocation.LeastWeighted, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	a.SetCollectors([]allocation.Collector{{Name: "col-0", NodeName: "n"}})
	a.Apply([]*target.Item{
		target.NewItem("a+b", labels.FromStrings("__address__", "10.0.0.1:1"), 1),
		target.NewItem("a b", labels.FromStrings("__address__", "10.0.0.2:2"), 2),
		target.NewItem("a/b", labels.FromStrings("__address__", "10.0.0.3:3"), 3),
	}, nil)
	h := New(a, nil).Handler()
	code, body := get(t, h, "/jobs", false)
	if code != 200 {
		t.Fatalf("/jobs = %d %s", code, body)
	}
	var links map[string]struct {
		Link string `json:"_link"`
	}
	if err := json.Unmarshal([]byte(body), &links); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a+b": "10.0.0.1:1", "a b": "10.0.0.2:2", "a/b": "10.0.0.3:3"}
	if len(links) != len(want) {
		t.Fatalf("/jobs: %s", body)
	}
	for job, l := range links {
		code, body := get(t, h, l.Link+"?collector_id=col-0", false)
		if code != 200 || !strings.Contains(body, want[job]) {
			t.Errorf("job %q via %s = %d %s, want its target %s", job, l.Link, code, body, want[job])
		}
		for other, addr := range want {
			if other != job && strings.Contains(body, addr) {
				t.Errorf("job %q via %s served job %q's target %s", job, l.Link, other, addr)
			}
		}
	}
}

// TestInsecureSecretsServeOverPlainHTTP: allow_insecure_auth_secrets (upstream's option for clusters
// whose service mesh secures connections) serves the secrets over plain HTTP; without it plain
// HTTP gets them redacted (TestScrapeConfigsRoundTripAndSecrets).
func TestInsecureSecretsServeOverPlainHTTP(t *testing.T) {
	s, _ := newServer(t)
	s.InsecureSecrets = true
	if code, body := get(t, s.Handler(), "/scrape_configs", false); code != 200 || !strings.Contains(body, "hunter2") {
		t.Fatalf("allow_insecure_auth_secrets over plain HTTP: %d %s", code, body)
	}
}
