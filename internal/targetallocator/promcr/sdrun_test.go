package promcr

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/discovery"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestScrapeConfigDiscoveryRuns runs two translated discoveries with Prometheus' discovery
// manager against registries on loopback that answer only a request carrying the credential
// from the ScrapeConfig's secret: Eureka with basic auth and PuppetDB with a bearer token. Each
// target arriving proves the section is not only parsed but works, with its credential. The
// positive control: each registry refuses a request without the credential.
func TestScrapeConfigDiscoveryRuns(t *testing.T) {
	eureka := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || u != "value-of-eureka-user" || p != "value-of-eureka-pass" || r.URL.Path != "/eureka/apps" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write([]byte(`<applications><application><name>API</name><instance><hostName>api.local</hostName>` +
			`<app>API</app><ipAddr>127.0.0.1</ipAddr><status>UP</status><port enabled="true">9101</port>` +
			`<instanceId>api-1</instanceId></instance></application></applications>`))
	}))
	defer eureka.Close()
	puppet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer value-of-puppetdb-token" || r.Method != http.MethodPost || r.URL.Path != "/pdb/query/v4" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[{"certname":"127.0.0.2","resource":"r1","type":"Class","title":"Node_exporter"}]`))
	}))
	defer puppet.Close()
	for _, u := range []string{eureka.URL + "/eureka/apps", puppet.URL + "/pdb/query/v4"} {
		resp, err := http.Post(u, "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s without a credential: %d, want 401 (the control)", u, resp.StatusCode)
		}
	}

	bearer := &monv1.SafeAuthorization{Credentials: ptr.To(sel("sd", "puppetdb-token"))}
	res := Resources{ScrapeConfigs: []*monv1alpha1.ScrapeConfig{
		{ObjectMeta: metav1.ObjectMeta{Name: "eureka", Namespace: "team-c"}, Spec: monv1alpha1.ScrapeConfigSpec{
			EurekaSDConfigs: []monv1alpha1.EurekaSDConfig{{Server: monv1alpha1.URL(eureka.URL + "/eureka"),
				BasicAuth: &monv1.BasicAuth{Username: sel("sd", "eureka-user"), Password: sel("sd", "eureka-pass")}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "puppetdb", Namespace: "team-c"}, Spec: monv1alpha1.ScrapeConfigSpec{
			PuppetDBSDConfigs: []monv1alpha1.PuppetDBSDConfig{{URL: monv1alpha1.URL(puppet.URL), Query: `resources { type = "Class" }`,
				Port: ptr.To[int32](9100), Authorization: bearer}}}},
	}}
	scs, errs := Translate(res, sdStore, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	loaded, errs := Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cfgs := map[string]discovery.Configs{}
	for _, sc := range loaded {
		cfgs[sc.JobName] = sc.ServiceDiscoveryConfigs
	}

	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a guard against a hang, not an assertion
	defer cancel()
	reg := prometheus.NewRegistry()
	sdMetrics, err := discovery.CreateAndRegisterSDMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	mgr := discovery.NewManager(ctx, slog.New(slog.DiscardHandler), reg, sdMetrics, discovery.Updatert(10*time.Millisecond))
	if err := mgr.ApplyConfig(cfgs); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Run() }()

	want := map[string]string{"scrapeConfig/team-c/eureka": "api.local:9101", "scrapeConfig/team-c/puppetdb": "127.0.0.2:9100"}
	found := map[string]bool{}
	for len(found) < len(want) {
		select {
		case <-ctx.Done():
			t.Fatalf("discovered %v of %v", found, want)
		case groups := <-mgr.SyncCh():
			for job, addr := range want {
				for _, g := range groups[job] {
					for _, tg := range g.Targets {
						if string(tg["__address__"]) == addr {
							found[job] = true
						}
					}
				}
			}
		}
	}
}
