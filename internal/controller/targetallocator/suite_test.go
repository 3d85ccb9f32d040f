package targetallocator_test

import (
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
		return targetallocator.SetupWithManager(mgr, targetallocator.Options{Manifests: mta.DefaultOptions()})
	}, func(s managertest.Suite) {
		env, k8s, writes, restart = s.Env, s.Env.Client, s.Writes, s.Restart
	})
}
