package targetallocator_test

import (
	"sync/atomic"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/controller/targetallocator"
	mta "github.com/otelop/otelop/internal/manifests/targetallocator"
	"github.com/otelop/otelop/internal/operator/managertest"
	"github.com/otelop/otelop/internal/testenv"
)

const (
	timeout    = 20 * time.Second
	poll       = 100 * time.Millisecond
	syncPeriod = 2 * time.Second
)

// clock is the certificate issuer's clock: real time plus an offset the rotation test moves.
var clock offsetClock

type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

var (
	env *testenv.Env
	// k8s is an uncached admin client for the tests (not the operator's).
	k8s client.Client
	// writes counts the operator's write requests (every method but GET), by "METHOD path".
	writes *testenv.WriteCounter
	// restart stops the operator and starts a new one.
	restart func() error
)

// TestMain runs the controller alone in a manager with the operator's cache options.
func TestMain(m *testing.M) {
	managertest.Main(m, syncPeriod, func(mgr ctrl.Manager) error {
		opts := mta.DefaultOptions()
		opts.MTLS = true // operator.targetallocator.mtls: only target allocators with prometheusCR
		return targetallocator.SetupWithManager(mgr, targetallocator.Options{Manifests: opts, Now: clock.now})
	}, func(s managertest.Suite) {
		env, k8s, writes, restart = s.Env, s.Env.Client, s.Writes, s.Restart
	})
}
