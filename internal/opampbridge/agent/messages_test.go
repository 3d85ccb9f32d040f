package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/otelop/otelop/internal/opampbridge/collectors"
	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/opampbridge/health"
)

// parsingCollectors runs the pure parsing rules instead of talking to an API server, so the
// message handling can be tested and fuzzed on its own.
type parsingCollectors struct{ applied int }

func (p *parsingCollectors) EffectiveConfig(context.Context) (map[string][]byte, error) {
	return nil, nil
}
func (p *parsingCollectors) ApplyAll(_ context.Context, files map[string][]byte) error {
	var errs []error
	for k, body := range files {
		key, err := collectors.ParseKey(k)
		if err == nil {
			_, err = collectors.ParseCollector(key, body, collectors.Rules{Bridge: collectors.Bridge{Namespace: "ns", Name: "b"}})
		}
		errs = append(errs, err)
	}
	p.applied++
	return errors.Join(errs...)
}
func (p *parsingCollectors) Restart(context.Context, time.Time) ([]collectors.Key, error) {
	return nil, nil
}
func (p *parsingCollectors) HealthInput(context.Context) ([]health.Collector, error) { return nil, nil }
func (p *parsingCollectors) Changes() <-chan struct{}                                { return nil }

func newTestAgent(t testing.TB, c Collectors) *Agent {
	a, err := New(Options{
		Config:     &config.Config{Endpoint: "ws://127.0.0.1:1/v1/opamp", Mode: config.ModeOperator, Capabilities: map[string]bool{"AcceptsRemoteConfig": true}},
		UID:        uuid.Must(uuid.NewV7()),
		Collectors: c,
		Logger:     logr.Discard(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func rc(hash string, files map[string]string) *protobufs.AgentRemoteConfig {
	m := map[string]*protobufs.AgentConfigFile{}
	for k, v := range files {
		m[k] = &protobufs.AgentConfigFile{Body: []byte(v)}
	}
	return &protobufs.AgentRemoteConfig{ConfigHash: []byte(hash), Config: &protobufs.AgentConfigMap{ConfigMap: m}}
}

const good = "metadata: {labels: {opentelemetry.io/opamp-managed: \"true\"}}\nspec: {config: {receivers: {otlp: {}}}}\n"

func TestApplyRemoteConfig(t *testing.T) {
	g := NewWithT(t)
	c := &parsingCollectors{}
	a := newTestAgent(t, c)
	ctx := context.Background()

	st, changed := a.ApplyRemoteConfig(ctx, rc("h1", map[string]string{"ns/a": good}))
	g.Expect(changed).To(BeTrue())
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED))

	_, changed = a.ApplyRemoteConfig(ctx, rc("h1", map[string]string{"ns/a": good}))
	g.Expect(changed).To(BeFalse(), "same hash is a no-op")
	g.Expect(c.applied).To(Equal(1))

	st, changed = a.ApplyRemoteConfig(ctx, rc("h2", map[string]string{"ns/a": "spec: {}", "bad": good}))
	g.Expect(changed).To(BeTrue())
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED))
	g.Expect(st.ErrorMessage).To(And(ContainSubstring("lacks the label"), ContainSubstring(`key "bad"`)))

	// Keys that are instance UIDs (a proxied agent's file echoed back) are skipped.
	st, _ = a.ApplyRemoteConfig(ctx, rc("h3", map[string]string{uuid.NewString(): "anything", "ns/a": good}))
	g.Expect(st.Status).To(Equal(protobufs.RemoteConfigStatuses_RemoteConfigStatuses_APPLIED), st.ErrorMessage)
}

func TestDescription(t *testing.T) {
	g := NewWithT(t)
	a := newTestAgent(t, &parsingCollectors{})
	a.opts.Config.Description.NonIdentifyingAttributes = map[string]string{"team": "x", ModeAttribute: "forged"}
	d := a.Description()
	ident := map[string]string{}
	for _, kv := range d.IdentifyingAttributes {
		ident[kv.Key] = kv.Value.GetStringValue()
	}
	g.Expect(ident).To(HaveKeyWithValue("service.name", ServiceName))
	g.Expect(ident).To(HaveKeyWithValue("service.instance.id", a.opts.UID.String()))
	non := map[string]string{}
	for _, kv := range d.NonIdentifyingAttributes {
		non[kv.Key] = kv.Value.GetStringValue()
	}
	g.Expect(non).To(HaveKeyWithValue(ModeAttribute, "operator"))
	g.Expect(non).To(HaveKeyWithValue("team", "x"))
}

// FuzzServerToAgent feeds arbitrary ServerToAgent bytes through the message handler.
func FuzzServerToAgent(f *testing.F) {
	seed, _ := proto.Marshal(&protobufs.ServerToAgent{RemoteConfig: rc("h", map[string]string{"ns/a": good, "x": "{"})})
	f.Add(seed)
	f.Add([]byte{0x0a, 0x00})
	f.Fuzz(func(t *testing.T, data []byte) {
		var msg protobufs.ServerToAgent
		if proto.Unmarshal(data, &msg) != nil || msg.RemoteConfig == nil {
			return
		}
		a := newTestAgent(t, &parsingCollectors{})
		st, changed := a.ApplyRemoteConfig(context.Background(), msg.RemoteConfig)
		if !changed || st == nil || st.LastRemoteConfigHash == nil {
			t.Fatalf("a first remote config must produce a status with a hash: %v %v", st, changed)
		}
		if st.Status == protobufs.RemoteConfigStatuses_RemoteConfigStatuses_FAILED && st.ErrorMessage == "" {
			t.Fatal("FAILED without an error message")
		}
	})
}
