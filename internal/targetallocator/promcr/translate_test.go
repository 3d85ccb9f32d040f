package promcr

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	promcommon "github.com/prometheus/common/config"
	promconfig "github.com/prometheus/prometheus/config"
	yaml "go.yaml.in/yaml/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/internal/golden"
)

// mapStore serves secrets and config maps from "namespace/name/key".
type mapStore map[string]string

func (m mapStore) SecretKey(ns string, sel corev1.SecretKeySelector) (string, error) {
	return m.get("secret", ns, sel.Name, sel.Key, sel.Optional)
}

func (m mapStore) ConfigMapKey(ns string, sel corev1.ConfigMapKeySelector) (string, error) {
	return m.get("configmap", ns, sel.Name, sel.Key, sel.Optional)
}

func (m mapStore) get(kind, ns, name, key string, optional *bool) (string, error) {
	v, ok := m[kind+"/"+ns+"/"+name+"/"+key]
	if !ok && (optional == nil || !*optional) {
		return "", fmt.Errorf("%s %s/%s has no key %q", kind, ns, name, key)
	}
	return v, nil
}

var store = mapStore{
	"secret/team-a/creds/user":   "scraper",
	"secret/team-a/creds/pass":   "s3cret",
	"secret/team-a/token/token":  "tok-123",
	"secret/team-a/tls/key":      "KEY-PEM",
	"secret/team-a/tls/cert":     "CERT-PEM",
	"configmap/team-a/ca/ca.crt": "CA-PEM",
	"secret/team-b/oauth/id":     "client",
	"secret/team-b/oauth/secret": "client-secret",
}

func sel(name, key string) corev1.SecretKeySelector {
	return corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key}
}

//nolint:staticcheck // covers the deprecated bearerTokenSecret too
func resources() Resources {
	https := monv1.SchemeHTTPS
	return Resources{
		ServiceMonitors: []*monv1.ServiceMonitor{{
			ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "team-a"},
			Spec: monv1.ServiceMonitorSpec{
				JobLabel:     "app.kubernetes.io/name",
				TargetLabels: []string{"tier"},
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"},
					MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "In", Values: []string{"prod", "stage"}}}},
				Endpoints: []monv1.Endpoint{
					{Port: "metrics", Interval: "15s", Path: "/metrics", Scheme: &https,
						HTTPConfigWithProxyAndTLSFiles: monv1.HTTPConfigWithProxyAndTLSFiles{HTTPConfigWithTLSFiles: monv1.HTTPConfigWithTLSFiles{
							HTTPConfigWithoutTLS: monv1.HTTPConfigWithoutTLS{BasicAuth: &monv1.BasicAuth{Username: sel("creds", "user"), Password: sel("creds", "pass")}},
							TLSConfig: &monv1.TLSConfig{SafeTLSConfig: monv1.SafeTLSConfig{
								CA:   monv1.SecretOrConfigMap{ConfigMap: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "ca"}, Key: "ca.crt"}},
								Cert: monv1.SecretOrConfigMap{Secret: ptr.To(sel("tls", "cert"))}, KeySecret: ptr.To(sel("tls", "key")), ServerName: ptr.To("api.team-a")}},
						}},
						MetricRelabelConfigs: []monv1.RelabelConfig{{SourceLabels: []monv1.LabelName{"__name__"}, Regex: "go_.*", Action: "Drop"}}},
					{TargetPort: ptr.To(intstr.FromInt32(9100)), HTTPConfigWithProxyAndTLSFiles: monv1.HTTPConfigWithProxyAndTLSFiles{HTTPConfigWithTLSFiles: monv1.HTTPConfigWithTLSFiles{
						HTTPConfigWithoutTLS: monv1.HTTPConfigWithoutTLS{BearerTokenSecret: ptr.To(sel("token", "token"))}}}},
				},
				NamespaceSelector: monv1.NamespaceSelector{MatchNames: []string{"team-a", "team-a-canary"}},
				SampleLimit:       ptr.To[int64](5000),
			},
		}},
		PodMonitors: []*monv1.PodMonitor{{
			ObjectMeta: metav1.ObjectMeta{Name: "workers", Namespace: "team-a"},
			Spec: monv1.PodMonitorSpec{
				Selector:        metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "worker", Operator: "Exists"}}},
				PodTargetLabels: []string{"queue"},
				PodMetricsEndpoints: []monv1.PodMetricsEndpoint{{Port: ptr.To("http-metrics"), Interval: "1m",
					HTTPConfigWithProxy: monv1.HTTPConfigWithProxy{HTTPConfig: monv1.HTTPConfig{HTTPConfigWithoutTLS: monv1.HTTPConfigWithoutTLS{
						Authorization: &monv1.SafeAuthorization{Credentials: ptr.To(sel("token", "token"))}}}},
					RelabelConfigs: []monv1.RelabelConfig{{TargetLabel: "team", Replacement: ptr.To("a"), Action: "Replace"}}}},
				NamespaceSelector: monv1.NamespaceSelector{Any: true},
			},
		}},
		Probes: []*monv1.Probe{{
			ObjectMeta: metav1.ObjectMeta{Name: "sites", Namespace: "team-b"},
			Spec: monv1.ProbeSpec{Module: "http_2xx", ProberSpec: monv1.ProberSpec{URL: "blackbox.monitoring:9115"},
				Targets: monv1.ProbeTargets{StaticConfig: &monv1.ProbeTargetStaticConfig{Targets: []string{"https://example.test"}, Labels: map[string]string{"site": "main"}}}},
		}},
		ScrapeConfigs: []*monv1alpha1.ScrapeConfig{{
			ObjectMeta: metav1.ObjectMeta{Name: "external", Namespace: "team-b"},
			Spec: monv1alpha1.ScrapeConfigSpec{
				JobName:        ptr.To("external"),
				ScrapeInterval: ptr.To(monv1.Duration("45s")),
				StaticConfigs:  []monv1alpha1.StaticConfig{{Targets: []monv1alpha1.Target{"10.0.0.1:9100"}, Labels: map[string]string{"dc": "one"}}},
				HTTPSDConfigs: []monv1alpha1.HTTPSDConfig{{URL: "https://sd.example.test/targets",
					OAuth2: &monv1.OAuth2{ClientID: monv1.SecretOrConfigMap{Secret: ptr.To(sel("oauth", "id"))}, ClientSecret: sel("oauth", "secret"), TokenURL: "https://auth.example.test/token"}}},
			},
		}},
	}
}

// TestTranslateGolden: the scrape configurations of each kind, secrets resolved, against
// testdata/translate.golden.yaml; Prometheus accepts every one of them.
func TestTranslateGolden(t *testing.T) {
	loaded := translateGolden(t, resources(), store, "translate.golden.yaml")
	byJob := map[string]time.Duration{}
	for _, sc := range loaded {
		byJob[sc.JobName] = time.Duration(sc.ScrapeInterval)
	}
	for job, want := range map[string]time.Duration{"serviceMonitor/team-a/api/0": 15 * time.Second,
		"serviceMonitor/team-a/api/1": 30 * time.Second, "scrapeConfig/team-b/external": 45 * time.Second} {
		if byJob[job] != want {
			t.Errorf("%s: scrape_interval %v, want %v", job, byJob[job], want)
		}
	}
	sm0 := loaded[indexOf(loaded, "serviceMonitor/team-a/api/0")]
	if sm0.HTTPClientConfig.BasicAuth == nil || sm0.HTTPClientConfig.BasicAuth.Password != promcommon.Secret("s3cret") {
		t.Errorf("basic auth not resolved: %+v", sm0.HTTPClientConfig.BasicAuth)
	}
}

// translateGolden translates res, checks the result against testdata/<name> and returns what
// Prometheus parses of it; every job must be accepted.
func translateGolden(t *testing.T, res Resources, s Store, name string) []*promconfig.ScrapeConfig {
	t.Helper()
	scs, errs := Translate(res, s, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	got, err := yaml.Marshal(map[string]any{"scrape_configs": scs})
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, name, got)
	loaded, errs := Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(loaded) != len(scs) {
		t.Fatalf("Prometheus loaded %d of %d jobs", len(loaded), len(scs))
	}
	return loaded
}

func indexOf(scs []*promconfig.ScrapeConfig, job string) int {
	for i, sc := range scs {
		if sc.JobName == job {
			return i
		}
	}
	return -1
}

// TestTranslateErrors: a resource that cannot be translated is left out with an error that
// names it and the field; the others are kept.
func TestTranslateErrors(t *testing.T) {
	res := resources()
	res.ServiceMonitors[0].Spec.Endpoints[0].BasicAuth.Password = sel("missing", "pass")
	fsProbe := resources().ServiceMonitors[0].DeepCopy()
	fsProbe.Name = "files"
	fsProbe.Spec.Endpoints = []monv1.Endpoint{{Port: "m", BearerTokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token"}}
	res.ServiceMonitors = append(res.ServiceMonitors, fsProbe)
	res.ScrapeConfigs[0].Spec.ConsulSDConfigs = []monv1alpha1.ConsulSDConfig{{Server: "consul:8500", TokenRef: ptr.To(sel("missing", "token"))}}
	scs, errs := Translate(res, store, Options{DenyFSAccess: true})
	msgs := fmt.Sprint(errs)
	for _, want := range []string{
		`ServiceMonitor team-a/api: spec.endpoints[0].basicAuth.password: secret team-a/missing has no key "pass"`,
		"ServiceMonitor team-a/files: spec.endpoints[0].bearerTokenFile: refused: deny_fs_access_through_sms is set",
		`ScrapeConfig team-b/external: spec.consulSDConfigs[0].tokenRef: secret team-b/missing has no key "token"`,
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("errors %s\nlack %q", msgs, want)
		}
	}
	if len(scs) != 2 { // the PodMonitor and the Probe
		t.Errorf("kept %d scrape configs, want 2", len(scs))
	}
}

// TestCredentialsAreNeverDropped is issue 33, finding 5: OAuth2 on a ServiceMonitor or PodMonitor
// endpoint and a Probe's authorization were dropped, so those targets were scraped without
// credentials (and enableHttp2, bodySizeLimit and the native-histogram settings were dropped too). Each now reaches the loaded Prometheus
// configuration; the positive control is that Prometheus accepts every job.
func TestCredentialsAreNeverDropped(t *testing.T) {
	oauth := &monv1.OAuth2{ClientID: monv1.SecretOrConfigMap{Secret: ptr.To(sel("oauth", "id"))}, ClientSecret: sel("oauth", "secret"),
		TokenURL: "https://auth.example.test/token"}
	withOAuth := monv1.HTTPConfigWithoutTLS{OAuth2: oauth, EnableHTTP2: ptr.To(false)}
	r := Resources{
		ServiceMonitors: []*monv1.ServiceMonitor{{
			ObjectMeta: metav1.ObjectMeta{Name: "sm", Namespace: "team-b"},
			Spec: monv1.ServiceMonitorSpec{BodySizeLimit: ptr.To(monv1.ByteSize("10MB")),
				NativeHistogramConfig: monv1.NativeHistogramConfig{ScrapeClassicHistograms: ptr.To(true), NativeHistogramBucketLimit: ptr.To[int64](50)},
				Endpoints: []monv1.Endpoint{{Port: "metrics",
					HTTPConfigWithProxyAndTLSFiles: monv1.HTTPConfigWithProxyAndTLSFiles{HTTPConfigWithTLSFiles: monv1.HTTPConfigWithTLSFiles{HTTPConfigWithoutTLS: withOAuth}}}}},
		}},
		PodMonitors: []*monv1.PodMonitor{{
			ObjectMeta: metav1.ObjectMeta{Name: "pm", Namespace: "team-b"},
			Spec: monv1.PodMonitorSpec{PodMetricsEndpoints: []monv1.PodMetricsEndpoint{{Port: ptr.To("metrics"),
				HTTPConfigWithProxy: monv1.HTTPConfigWithProxy{HTTPConfig: monv1.HTTPConfig{HTTPConfigWithoutTLS: withOAuth}}}}},
		}},
		Probes: []*monv1.Probe{{
			ObjectMeta: metav1.ObjectMeta{Name: "pr", Namespace: "team-a"},
			Spec: monv1.ProbeSpec{ProberSpec: monv1.ProberSpec{URL: "blackbox.monitoring:9115"},
				Authorization: &monv1.SafeAuthorization{Credentials: ptr.To(sel("token", "token"))},
				Targets:       monv1.ProbeTargets{StaticConfig: &monv1.ProbeTargetStaticConfig{Targets: []string{"https://example.test"}}}},
		}},
	}
	scs, errs := Translate(r, store, Options{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	loaded, errs := Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil)
	if len(errs) > 0 || len(loaded) != 3 {
		t.Fatalf("loaded %d of 3: %v", len(loaded), errs)
	}
	for _, job := range []string{"serviceMonitor/team-b/sm/0", "podMonitor/team-b/pm/0"} {
		i := indexOf(loaded, job)
		if i < 0 {
			t.Fatalf("no job %s", job)
		}
		hc := loaded[i].HTTPClientConfig
		if hc.OAuth2 == nil || hc.OAuth2.ClientSecret != promcommon.Secret("client-secret") || hc.OAuth2.ClientID != "client" {
			t.Errorf("%s: oauth2 = %+v, want the client credentials", job, hc.OAuth2)
		}
		if hc.EnableHTTP2 {
			t.Errorf("%s: enableHttp2: false was dropped", job)
		}
	}
	sm := loaded[indexOf(loaded, "serviceMonitor/team-b/sm/0")]
	if sm.BodySizeLimit != 10<<20 || sm.NativeHistogramBucketLimit != 50 || sm.AlwaysScrapeClassicHistograms == nil || !*sm.AlwaysScrapeClassicHistograms {
		t.Errorf("serviceMonitor: body_size_limit %d, native_histogram_bucket_limit %d, always_scrape_classic_histograms %v",
			sm.BodySizeLimit, sm.NativeHistogramBucketLimit, sm.AlwaysScrapeClassicHistograms)
	}
	pr := loaded[indexOf(loaded, "probe/team-a/pr")].HTTPClientConfig
	if pr.Authorization == nil || pr.Authorization.Credentials != promcommon.Secret("tok-123") {
		t.Errorf("probe: authorization = %+v, want the token", pr.Authorization)
	}
}

// TestScrapeClasses: prometheus_cr.scrape_classes as the Prometheus Operator applies them. A
// ServiceMonitor naming "mtls" gets its TLS files and authorization (it set neither), its
// relabelings after the generated rules and before its own, its metric relabelings before its
// own, and its fallback protocol; a PodMonitor naming none gets the default class, but keeps its
// own basic auth; a Probe naming an undefined class is left out with an error naming
// spec.scrapeClass.
func TestScrapeClasses(t *testing.T) {
	relabel := func(label, value string) monv1.RelabelConfig {
		return monv1.RelabelConfig{TargetLabel: label, Replacement: ptr.To(value), Action: "Replace"}
	}
	proto := monv1.ScrapeProtocol("PrometheusText0.0.4")
	opts := Options{OwnNamespace: "obs", ScrapeClasses: []monv1.ScrapeClass{
		{Name: "base", Default: ptr.To(true), Relabelings: []monv1.RelabelConfig{relabel("cluster", "one")}},
		{Name: "mtls", FallbackScrapeProtocol: &proto,
			TLSConfig:         &monv1.TLSConfig{TLSFilesConfig: monv1.TLSFilesConfig{CAFile: "/tls/ca.crt", CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key"}},
			Authorization:     &monv1.Authorization{SafeAuthorization: monv1.SafeAuthorization{Credentials: ptr.To(sel("class-token", "token"))}},
			Relabelings:       []monv1.RelabelConfig{relabel("mesh", "yes")},
			MetricRelabelings: []monv1.RelabelConfig{{SourceLabels: []monv1.LabelName{"__name__"}, Regex: "class_.*", Action: "Drop"}}},
	}}
	s := mapStore{"secret/obs/class-token/token": "class-secret", "secret/team-a/creds/user": "scraper", "secret/team-a/creds/pass": "s3cret"}
	r := Resources{
		ServiceMonitors: []*monv1.ServiceMonitor{{ObjectMeta: metav1.ObjectMeta{Name: "sm", Namespace: "team-a"},
			Spec: monv1.ServiceMonitorSpec{ScrapeClassName: ptr.To("mtls"), Endpoints: []monv1.Endpoint{{Port: "metrics",
				RelabelConfigs:       []monv1.RelabelConfig{relabel("own", "rule")},
				MetricRelabelConfigs: []monv1.RelabelConfig{{SourceLabels: []monv1.LabelName{"__name__"}, Regex: "own_.*", Action: "Drop"}}}}}}},
		PodMonitors: []*monv1.PodMonitor{{ObjectMeta: metav1.ObjectMeta{Name: "pm", Namespace: "team-a"},
			Spec: monv1.PodMonitorSpec{PodMetricsEndpoints: []monv1.PodMetricsEndpoint{{Port: ptr.To("metrics"),
				HTTPConfigWithProxy: monv1.HTTPConfigWithProxy{HTTPConfig: monv1.HTTPConfig{HTTPConfigWithoutTLS: monv1.HTTPConfigWithoutTLS{
					BasicAuth: &monv1.BasicAuth{Username: sel("creds", "user"), Password: sel("creds", "pass")}}}}}}}}},
		Probes: []*monv1.Probe{{ObjectMeta: metav1.ObjectMeta{Name: "pr", Namespace: "team-a"},
			Spec: monv1.ProbeSpec{ScrapeClassName: ptr.To("nope"), ProberSpec: monv1.ProberSpec{URL: "blackbox:9115"},
				Targets: monv1.ProbeTargets{StaticConfig: &monv1.ProbeTargetStaticConfig{Targets: []string{"https://example.test"}}}}}},
	}
	scs, errs := Translate(r, s, opts)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), `spec.scrapeClass: scrape class "nope" is not defined`) {
		t.Fatalf("errors: %v, want one naming the Probe's spec.scrapeClass", errs)
	}
	loaded, errs := Load(scs, Global{ScrapeInterval: 30 * time.Second}, nil)
	if len(errs) > 0 || len(loaded) != 2 {
		t.Fatalf("loaded %d of 2: %v", len(loaded), errs)
	}
	sm := loaded[indexOf(loaded, "serviceMonitor/team-a/sm/0")]
	tls := sm.HTTPClientConfig.TLSConfig
	if tls.CAFile != "/tls/ca.crt" || tls.CertFile != "/tls/tls.crt" || tls.KeyFile != "/tls/tls.key" {
		t.Errorf("class TLS files: %+v", tls)
	}
	if a := sm.HTTPClientConfig.Authorization; a == nil || a.Credentials != promcommon.Secret("class-secret") {
		t.Errorf("class authorization: %+v", a)
	}
	if sm.ScrapeFallbackProtocol != "PrometheusText0.0.4" {
		t.Errorf("fallback protocol: %q", sm.ScrapeFallbackProtocol)
	}
	order := func(rules []string, labels ...string) []int {
		var at []int
		for _, l := range labels {
			i := slices.Index(rules, l)
			at = append(at, i)
		}
		return at
	}
	var targets, metrics []string
	for _, rc := range sm.RelabelConfigs {
		targets = append(targets, rc.TargetLabel)
	}
	for _, rc := range sm.MetricRelabelConfigs {
		metrics = append(metrics, rc.Regex.String())
	}
	if at := order(targets, "endpoint", "mesh", "own"); at[0] < 0 || !(at[0] < at[1] && at[1] < at[2]) || slices.Contains(targets, "cluster") {
		t.Errorf("relabel order (generated, class, own; no default class): %v", targets)
	}
	if at := order(metrics, "class_.*", "own_.*"); at[0] < 0 || at[0] > at[1] {
		t.Errorf("metric relabel order (class, own): %v", metrics)
	}
	pm := loaded[indexOf(loaded, "podMonitor/team-a/pm/0")]
	if pm.HTTPClientConfig.BasicAuth == nil || pm.HTTPClientConfig.Authorization != nil {
		t.Errorf("the PodMonitor's own basic auth must stay and the class's authorization stay out: %+v", pm.HTTPClientConfig)
	}
	var pmTargets []string
	for _, rc := range pm.RelabelConfigs {
		pmTargets = append(pmTargets, rc.TargetLabel)
	}
	if !slices.Contains(pmTargets, "cluster") {
		t.Errorf("the default class's relabeling is missing: %v", pmTargets)
	}
}
