package main

import (
	"io"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap/zapcore"
)

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

func TestParse(t *testing.T) {
	ns := env(map[string]string{"POD_NAMESPACE": "openmcp-system"})
	tests := []struct {
		name    string
		args    []string
		getenv  func(string) string
		wantErr string
		check   func(g *WithT, p *parsed)
	}{
		{name: "no command", args: nil, getenv: ns, wantErr: "missing command"},
		{name: "flag first", args: []string{"--provider-name=x"}, getenv: ns, wantErr: "missing command"},
		{name: "unknown command", args: []string{"serve"}, getenv: ns, wantErr: `unknown command "serve"`},
		{name: "no POD_NAMESPACE", args: []string{"run"}, getenv: env(nil), wantErr: "POD_NAMESPACE is not set"},
		{name: "bad verbosity", args: []string{"init", "--verbosity=LOUD"}, getenv: ns, wantErr: "--verbosity"},
		{name: "short ttl", args: []string{"run", "--cp-token-ttl=1m"}, getenv: ns, wantErr: "--cp-token-ttl"},
		{name: "stray argument", args: []string{"run", "extra"}, getenv: ns, wantErr: "unexpected arguments"},
		{name: "defaults", args: []string{"run"}, getenv: ns, check: func(g *WithT, p *parsed) {
			g.Expect(p.command).To(Equal("run"))
			g.Expect(p.opts.ProviderName).To(Equal("otel-operator"))
			g.Expect(p.opts.MetricsBindAddress).To(Equal("0"))
			g.Expect(p.opts.HealthProbeBindAddress).To(Equal(":8081"))
			g.Expect(p.opts.MetricsSecure).To(BeTrue())
			g.Expect(p.opts.EnableHTTP2).To(BeFalse())
			g.Expect(p.opts.LeaderElect).To(BeFalse())
			g.Expect(p.opts.WebhookCertName).To(Equal("tls.crt"))
			g.Expect(p.opts.WebhookCertKey).To(Equal("tls.key"))
			g.Expect(p.opts.MetricsCertName).To(Equal("tls.crt"))
			g.Expect(p.opts.MetricsCertKey).To(Equal("tls.key"))
			g.Expect(p.opts.PodNamespace).To(Equal("openmcp-system"))
			g.Expect(p.opts.Rotation.TTL).To(Equal(24 * time.Hour))
		}},
		{name: "as the openmcp-operator runs it", args: []string{"init", "--environment=debug", "--verbosity=DEBUG", "--provider-name=otel"}, getenv: ns, check: func(g *WithT, p *parsed) {
			g.Expect(p.command).To(Equal("init"))
			g.Expect(p.opts.Environment).To(Equal("debug"))
			g.Expect(p.opts.ProviderName).To(Equal("otel"))
			g.Expect(p.zap.Level).To(Equal(zapcore.DebugLevel))
		}},
		{name: "manager flags", args: []string{"run", "--leader-elect=true", "--metrics-bind-address=:8080", "--metrics-secure=false", "--zap-devel"}, getenv: ns, check: func(g *WithT, p *parsed) {
			g.Expect(p.opts.LeaderElect).To(BeTrue())
			g.Expect(p.opts.MetricsBindAddress).To(Equal(":8080"))
			g.Expect(p.opts.MetricsSecure).To(BeFalse())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p, err := parse(tt.args, io.Discard, tt.getenv)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			tt.check(g, p)
		})
	}
}
