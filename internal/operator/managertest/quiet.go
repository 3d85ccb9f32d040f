package managertest

import (
	"testing"
	"time"

	"github.com/otelop/otelop/internal/testenv"
)

// Settle is how long ExpectQuiet lets the last watch events of a convergence arrive before it
// starts counting.
const Settle = 2 * time.Second

// Quiet says what ExpectQuiet proves.
type Quiet struct {
	// Controller is the controller whose reconcile_total is read (e.g. "opampbridge").
	Controller string
	// Namespace limits the writes checked to that namespace and cluster-scoped objects (another
	// test's objects may still see a late Event update in theirs); empty checks every write.
	Namespace string
	// MinReconciles is how many reconciles the action must cause at the least (resyncs, or the
	// new manager reconciling every object).
	MinReconciles float64
	// What names the action in the log and in failures ("during the idle window", "after the
	// restart").
	What string
}

// ExpectQuiet is the zero-write proof of the controller suites: once the test's objects have
// converged, it lets the last watch events settle, runs action (an idle window of resyncs, or
// an operator restart and its reconciles), and fails t unless the controller reconciled at least
// q.MinReconciles times meanwhile and the operator sent no write request.
func ExpectQuiet(t testing.TB, writes *testenv.WriteCounter, q Quiet, action func() error) {
	t.Helper()
	time.Sleep(Settle)
	_, before := writes.Snapshot()
	reconcilesBefore, err := testenv.ReconcileTotal(q.Controller)
	if err != nil {
		t.Fatal(err)
	}
	if err := action(); err != nil {
		t.Fatal(err)
	}
	got := writes.Since(before)
	if q.Namespace != "" {
		got = writes.SinceIn(before, q.Namespace)
	}
	reconcilesAfter, err := testenv.ReconcileTotal(q.Controller)
	if err != nil {
		t.Fatal(err)
	}
	reconciles := reconcilesAfter - reconcilesBefore
	t.Logf("%.0f reconciles %s, write requests: %v", reconciles, q.What, got)
	if reconciles < q.MinReconciles {
		t.Errorf("%.0f reconciles of %s %s, want at least %.0f", reconciles, q.Controller, q.What, q.MinReconciles)
	}
	if len(got) > 0 {
		t.Errorf("write requests %s, want none: %v", q.What, got)
	}
}

// Idle is an ExpectQuiet action: wait d (an idle window of resyncs).
func Idle(d time.Duration) func() error {
	return func() error {
		time.Sleep(d)
		return nil
	}
}

// RestartThenWait is an ExpectQuiet action: restart the operator (Suite.Restart), then wait d for
// the new manager's reconciles.
func RestartThenWait(restart func() error, d time.Duration) func() error {
	return func() error {
		if err := restart(); err != nil {
			return err
		}
		time.Sleep(d)
		return nil
	}
}
