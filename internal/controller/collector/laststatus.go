package collector

import (
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1beta1"
)

// writtenStatuses remembers, per collector, the status this process last wrote and the
// resourceVersion the API server gave the collector with it. A reconcile that comes right after a
// status write (the write's own watch events of owned objects trigger one) can read the collector
// from a cache that does not show the write yet; it then works from the written status, so the
// same status is neither written nor announced (a second Ready=True Event) twice. Safe for
// concurrent use; an entry lives as long as its collector.
type writtenStatuses struct {
	mu sync.Mutex
	m  map[types.NamespacedName]writtenStatus
}

type writtenStatus struct {
	resourceVersion string
	status          v1beta1.OpenTelemetryCollectorStatus
}

// record keeps the status of otelcol as the API server returned it from a status write.
func (w *writtenStatuses) record(otelcol *v1beta1.OpenTelemetryCollector) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[types.NamespacedName]writtenStatus{}
	}
	w.m[types.NamespacedName{Namespace: otelcol.Namespace, Name: otelcol.Name}] = writtenStatus{
		resourceVersion: otelcol.ResourceVersion, status: *otelcol.Status.DeepCopy()}
}

// catchUp replaces the status of otelcol, read from the cache, by the last written one when the
// cached copy is older than that write, and reports whether it did. Resource versions are compared
// as the integers the API server issues; when either is not one, the cached copy is used as is.
func (w *writtenStatuses) catchUp(otelcol *v1beta1.OpenTelemetryCollector) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	last, ok := w.m[types.NamespacedName{Namespace: otelcol.Namespace, Name: otelcol.Name}]
	if !ok || !olderThan(otelcol.ResourceVersion, last.resourceVersion) {
		return false
	}
	otelcol.Status = *last.status.DeepCopy()
	return true
}

// forget drops what is remembered of key (the collector is gone or unmanaged).
func (w *writtenStatuses) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, key)
}

// olderThan reports whether resourceVersion rv is older than written; false when either is not
// an integer.
func olderThan(rv, written string) bool {
	a, errA := strconv.ParseUint(rv, 10, 64)
	b, errB := strconv.ParseUint(written, 10, 64)
	return errA == nil && errB == nil && a < b
}
