package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "remoteconfiguration.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const validFile = `
endpoint: ws://opamp-server:4320/v1/opamp
headers:
  Authorization: "Bearer ${TOKEN}"
capabilities:
  AcceptsRemoteConfig: true
  ReportsEffectiveConfig: true
  ReportsHealth: true
  ReportsRemoteConfig: true
componentsAllowed:
  receivers: [otlp, "otlp/2"]
  connectors: [forward]
heartbeatInterval: 10s
name: file-bridge
description:
  non_identifying_attributes:
    team: a
`

func TestLoadPrecedence(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		wantName  string
		wantHB    time.Duration
		wantListn string
	}{
		{"file wins over flag defaults", nil, "file-bridge", 10 * time.Second, ":8080"},
		{"explicit flags win over file", []string{"--name=cli", "--heartbeat-interval=0", "--listen-addr=127.0.0.1:9"}, "cli", 0, "127.0.0.1:9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			p := writeFile(t, validFile)
			cfg, err := Load(NewFlagSet(), append([]string{"--config-file=" + p}, tt.args...), env(map[string]string{"TOKEN": "s3cret", "OTELCOL_NAMESPACE": "obs"}))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(cfg.Name).To(Equal(tt.wantName))
			g.Expect(cfg.HeartbeatInterval).To(Equal(tt.wantHB))
			g.Expect(cfg.ListenAddr).To(Equal(tt.wantListn))
			g.Expect(cfg.HTTPHeader().Get("Authorization")).To(Equal("Bearer s3cret"))
			g.Expect(cfg.Namespace).To(Equal("obs"))
			g.Expect(cfg.Mode).To(Equal(ModeOperator))
			caps, err := cfg.AgentCapabilities()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(caps).To(Equal(protobufs.AgentCapabilities(0x1 | 0x2 | 0x4 | 0x800 | 0x1000)))
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []string
	}{
		{"empty file", "", []string{"empty"}},
		{"unknown key", "endpoint: ws://a\ncapabilities: {ReportsHealth: true}\nbogus: 1\n", []string{"bogus"}},
		{"everything wrong", `
endpoint: ftp://x
tls: {insecure: true, insecure_skip_verify: true}
capabilities: {Teleports: true}
componentsAllowed: {pipelines: [x]}
heartbeatInterval: -1s
name: Not_A_Name
mode: standalone
fieldsAllowed: [replicas, image]
`, []string{"endpoint", "mutually exclusive", "capabilities.Teleports", "componentsAllowed.pipelines", "negative", "name", "standalone", `fieldsAllowed[1] "image"`}},
		{"no endpoint no capabilities", "name: x\n", []string{"endpoint: the OpAMP server endpoint is not specified", "capabilities: none specified"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			_, err := Load(NewFlagSet(), []string{"--config-file=" + writeFile(t, tt.file)}, env(nil))
			g.Expect(err).To(HaveOccurred())
			for _, w := range tt.want {
				g.Expect(err.Error()).To(ContainSubstring(w))
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	g := NewWithT(t)
	_, err := Load(NewFlagSet(), []string{"--config-file=/nonexistent/x.yaml"}, env(nil))
	g.Expect(err).To(MatchError(ContainSubstring("--config-file")))
}

func TestTransport(t *testing.T) {
	tests := []struct {
		endpoint string
		tls      TLS
		http     bool
		tlsOn    bool
	}{
		{"ws://a:4320/v1/opamp", TLS{}, false, false},
		{"wss://a:4320/v1/opamp", TLS{}, false, true},
		{"wss://a:4320/v1/opamp", TLS{Insecure: true}, false, false},
		{"http://a:4320/v1/opamp", TLS{InsecureSkipVerify: true}, true, false},
		{"https://a:4320/v1/opamp", TLS{InsecureSkipVerify: true}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			g := NewWithT(t)
			c := &Config{Endpoint: tt.endpoint, TLS: tt.tls}
			g.Expect(c.UsesHTTP()).To(Equal(tt.http))
			tc, err := c.ClientTLS()
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(tc != nil).To(Equal(tt.tlsOn))
			if tc != nil {
				g.Expect(tc.InsecureSkipVerify).To(Equal(tt.tls.InsecureSkipVerify))
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add(validFile)
	f.Add("endpoint: [\n")
	f.Add("capabilities: {ReportsStatus: false}\nheartbeatInterval: 1h\n")
	f.Fuzz(func(t *testing.T, s string) {
		cfg := &Config{Mode: ModeOperator, Name: DefaultName}
		if err := Parse([]byte(s), env(nil), cfg); err != nil {
			return
		}
		// Validation must never panic, whatever was decoded.
		if err := cfg.Validate(); err != nil && strings.TrimSpace(err.Error()) == "" {
			t.Fatal("empty error message")
		}
	})
}

// An OpAMPBridge resource may be called "fleet.eu": the operator passes --name=fleet.eu, which
// must start (issue 14, item 13). Names that cannot be a label value still fail.
func TestNameMayHaveDots(t *testing.T) {
	g := NewWithT(t)
	p := writeFile(t, validFile)
	cfg, err := Load(NewFlagSet(), []string{"--config-file=" + p, "--name=fleet.eu-west"}, env(nil))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cfg.Name).To(Equal("fleet.eu-west"))
	for _, bad := range []string{"Fleet", "a..b", strings.Repeat("a", 64), "-a"} {
		_, err := Load(NewFlagSet(), []string{"--config-file=" + p, "--name=" + bad}, env(nil))
		g.Expect(err).To(MatchError(ContainSubstring("name")), bad)
	}
}

// Capabilities that make opamp-go's Start fail are refused at load, naming the capability
// (issue 14, item 13).
func TestUnstartableCapabilitiesRefused(t *testing.T) {
	for name := range UnstartableCapabilities {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			p := writeFile(t, "endpoint: ws://a:1/v1/opamp\ncapabilities: {ReportsHealth: true, "+name+": true}\n")
			_, err := Load(NewFlagSet(), []string{"--config-file=" + p}, env(nil))
			g.Expect(err).To(MatchError(ContainSubstring("capabilities." + name)))
			p = writeFile(t, "endpoint: ws://a:1/v1/opamp\ncapabilities: {ReportsHealth: true, "+name+": false}\n")
			_, err = Load(NewFlagSet(), []string{"--config-file=" + p}, env(nil))
			g.Expect(err).NotTo(HaveOccurred())
		})
	}
}
