package realnode_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/otelop/otelop/test/realnode"
)

// cluster is shared by the package's tests: starting a real node costs ~20 s.
var cluster *realnode.Cluster

func TestMain(m *testing.M) { os.Exit(realnode.Main(m, setup)) }

// setup starts the cluster (and the operator) once inside the namespaces; it returns a teardown.
func setup() (func(failed bool), error) {
	ctx := context.Background()
	start := time.Now()
	buildOperatorImage(ctx)
	bridgeImage.start(ctx, "operator-opamp-bridge", "TestOpAMPBridgeRollsWithTwoReplicas")
	allocatorImage.start(ctx, "target-allocator", "TestAuthenticatedScrapeThroughTheAllocator")
	promCollector.start("otelcol-prometheus", "TestAuthenticatedScrapeThroughTheAllocator", "remove_all_sd")
	var err error
	cluster, err = realnode.Start(ctx, realnode.Options{Progress: func(f string, a ...any) {
		fmt.Fprintf(os.Stderr, "realnode: "+f+"\n", a...)
	}})
	if err != nil {
		operatorImage.remove()
		bridgeImage.remove()
		allocatorImage.remove()
		promCollector.remove()
		return nil, err
	}
	stopOperator, err := startOperator(ctx)
	if err != nil {
		_ = cluster.Stop()
		operatorImage.remove()
		bridgeImage.remove()
		allocatorImage.remove()
		promCollector.remove()
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "realnode: cluster and operator ready in %s\n", time.Since(start).Round(100*time.Millisecond))
	return func(failed bool) {
		if failed {
			fmt.Fprintln(os.Stderr, cluster.LogTails(15))
			fmt.Fprintln(os.Stderr, cluster.NodeLogTails(30))
		}
		if os.Getenv("OTELOP_REALNODE_KEEP") != "" {
			fmt.Fprintln(os.Stderr, "realnode: logs kept in", cluster.Keep())
		}
		stopOperator()
		operatorImage.remove()
		bridgeImage.remove()
		allocatorImage.remove()
		promCollector.remove()
		t := time.Now()
		_ = cluster.Stop()
		fmt.Fprintf(os.Stderr, "realnode: cluster stopped in %s\n", time.Since(t).Round(100*time.Millisecond))
	}, nil
}
