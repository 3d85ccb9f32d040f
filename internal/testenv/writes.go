package testenv

import (
	"net/http"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// WriteCounter counts the write requests (every method but GET, leader-election Leases excepted)
// that clients built from its Wrap'ed config send, by "METHOD path". Tests use it to prove that a
// reconcile which changes nothing writes nothing.
type WriteCounter struct {
	mu    sync.Mutex
	byReq map[string]int
	total int
}

// NewWriteCounter returns an empty counter.
func NewWriteCounter() *WriteCounter { return &WriteCounter{byReq: map[string]int{}} }

// Wrap returns a copy of cfg whose requests are counted.
func (w *WriteCounter) Wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method != http.MethodGet && !strings.Contains(r.URL.Path, "/leases/") {
				w.add(r)
			}
			return rt.RoundTrip(r)
		})
	}
	return cfg
}

func (w *WriteCounter) add(r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.total++
	w.byReq[r.Method+" "+r.URL.Path]++
}

// Snapshot returns the total so far and a copy of the per-request counts.
func (w *WriteCounter) Snapshot() (int, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	cp := make(map[string]int, len(w.byReq))
	for k, v := range w.byReq {
		cp[k] = v
	}
	return w.total, cp
}

// Since returns the per-request counts that grew between an earlier snapshot and now.
func (w *WriteCounter) Since(before map[string]int) map[string]int {
	_, now := w.Snapshot()
	diff := map[string]int{}
	for k, v := range now {
		if d := v - before[k]; d > 0 {
			diff[k] = d
		}
	}
	return diff
}

// SinceIn is Since restricted to requests for objects in namespace ns and to cluster-scoped ones:
// writes that other tests' objects cause late (an Event series update, say) are left out.
func (w *WriteCounter) SinceIn(before map[string]int, ns string) map[string]int {
	out := map[string]int{}
	for k, v := range w.Since(before) {
		if strings.Contains(k, "/namespaces/") && !strings.Contains(k, "/namespaces/"+ns+"/") {
			continue
		}
		out[k] = v
	}
	return out
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// ReconcileTotal returns controller-runtime's controller_runtime_reconcile_total for the named
// controller, summed over results, from the process's metrics registry.
func ReconcileTotal(controller string) (float64, error) {
	families, err := metrics.Registry.Gather()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total, nil
}
