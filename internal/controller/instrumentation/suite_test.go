package instrumentation_test

import (
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/controller/instrumentation"
	"github.com/otelop/otelop/internal/controller/owned"
	"github.com/otelop/otelop/internal/operator/managertest"
	"github.com/otelop/otelop/internal/testenv"
)

const (
	timeout    = 20 * time.Second
	poll       = 100 * time.Millisecond
	syncPeriod = 2 * time.Second
	// interval is the scan interval of the suite's controller.
	interval = time.Second
	// restartsPerMinute is the suite's rate limit (one token every 10 s once the burst is spent).
	restartsPerMinute = 6
)

var (
	env *testenv.Env
	// k8s is an uncached admin client for the tests (not the operator's).
	k8s client.Client
	// writes counts the operator's write requests (every method but GET), by "METHOD path".
	writes *testenv.WriteCounter
	// apps is the apps/v1 API for the tests' scanners (Scanner.Apps).
	apps rest.Interface
)

// TestMain runs the catch-up controller alone in a manager with the operator's cache options
// (user workloads, ReplicaSets and pods are not cached: the controller reads them uncached). It
// acts on the Instrumentations without a shard label (suiteShard); the shard tests run their own.
func TestMain(m *testing.M) {
	managertest.Main(m, syncPeriod, func(mgr ctrl.Manager) error {
		shard, err := owned.ParseShard(suiteShard)
		if err != nil {
			return err
		}
		return instrumentation.SetupWithManager(mgr, instrumentation.Options{
			Shard:             shard,
			Interval:          interval,
			RestartsPerMinute: restartsPerMinute,
			PageSize:          3, // several pages even with a handful of pods
		})
	}, func(s managertest.Suite) {
		env, k8s, writes = s.Env, s.Env.Client, s.Writes
		var err error
		if apps, err = instrumentation.NewAppsREST(env.Config, nil); err != nil {
			panic(err)
		}
	})
}
