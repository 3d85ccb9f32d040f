package apply_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/apply"
)

// span is when the API server was asked to write one object, and when it answered.
type span struct{ start, end time.Time }

// slowClient returns a client whose writes each take at least delay, and records their spans by
// object name (the last path element).
func slowClient(t *testing.T, delay time.Duration) (client.Client, func() map[string]span) {
	var mu sync.Mutex
	spans := map[string]span{}
	cfg := rest.CopyConfig(env.Config)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodGet {
				return rt.RoundTrip(r)
			}
			start := time.Now()
			time.Sleep(delay)
			resp, err := rt.RoundTrip(r)
			name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
			mu.Lock()
			spans[name] = span{start, time.Now()}
			mu.Unlock()
			return resp, err
		})
	}
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() map[string]span {
		mu.Lock()
		defer mu.Unlock()
		out := make(map[string]span, len(spans))
		for k, v := range spans {
			out[k] = v
		}
		return out
	}
}

func namedConfigMap(ns, name string) *corev1.ConfigMap {
	cm := configMap(ns, name)
	cm.Name = name
	return cm
}

// stageOf puts ConfigMaps whose name starts with "a" in stage 0, the others in stage 1.
func stageOf(o client.Object) int {
	if strings.HasPrefix(o.GetName(), "a") {
		return 0
	}
	return 1
}

func TestApplyStagesWritesAStageTogetherAndTheNextAfterIt(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t, "apply-stages")
	c, spans := slowClient(t, 200*time.Millisecond)
	a := apply.New(c, "test")
	desired := []client.Object{namedConfigMap(ns, "a1"), namedConfigMap(ns, "a2"), namedConfigMap(ns, "a3"), namedConfigMap(ns, "b1")}
	changes, err := a.ApplyStages(context.Background(), desired, apply.Objects{}, stageOf)
	g.Expect(err).NotTo(HaveOccurred())
	var names []string
	for _, ch := range changes {
		g.Expect(ch.Action).To(Equal(apply.Created))
		names = append(names, ch.Name)
	}
	g.Expect(names).To(Equal([]string{"a1", "a2", "a3", "b1"}), "changes are reported in desired's order")
	s := spans()
	for _, x := range []string{"a1", "a2", "a3"} {
		for _, y := range []string{"a1", "a2", "a3"} {
			g.Expect(s[x].start.Before(s[y].end)).To(BeTrue(), "%s and %s (one stage) are written together", x, y)
		}
		g.Expect(s["b1"].start.After(s[x].end)).To(BeTrue(), "b1 (the next stage) waits for %s", x)
	}
}

func TestApplyStagesOneAtATimeWithParallelOne(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t, "apply-stages-serial")
	c, spans := slowClient(t, 50*time.Millisecond)
	a := apply.New(c, "test")
	a.Parallel = 1
	_, err := a.ApplyStages(context.Background(), []client.Object{namedConfigMap(ns, "a1"), namedConfigMap(ns, "a2")}, apply.Objects{}, stageOf)
	g.Expect(err).NotTo(HaveOccurred())
	s := spans()
	g.Expect(s["a2"].start.After(s["a1"].end)).To(BeTrue(), "with Parallel=1 the writes are sequential")
}

func TestApplyStagesStopsAfterTheStageThatFailed(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t, "apply-stages-fail")
	a := apply.New(env.Client, "test")
	bad := namedConfigMap(ns, "a-bad")
	bad.Labels = map[string]string{"not a valid key!": "x"}
	desired := []client.Object{namedConfigMap(ns, "a-good"), bad, namedConfigMap(ns, "b-later")}
	changes, err := a.ApplyStages(context.Background(), desired, apply.Objects{}, stageOf)
	g.Expect(err).To(HaveOccurred())
	g.Expect(err.Error()).To(ContainSubstring("a-bad"))
	g.Expect(changes).To(HaveLen(1))
	g.Expect(changes[0].Name).To(Equal("a-good"), "the rest of the failing stage is applied")
	g.Expect(live(t, namedConfigMap(ns, "a-good"))).NotTo(BeNil())
	g.Expect(live(t, namedConfigMap(ns, "b-later"))).To(BeNil(), "the next stage is not applied")
}
