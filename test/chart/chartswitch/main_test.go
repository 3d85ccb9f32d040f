// Package chartswitch proves the switch of a Helm release from upstream's chart to this project's
// chart and back, on the simulated cluster, as docs/migrating.md ("Switching a Helm install")
// tells a user to do it: `helm install` of upstream's chart opentelemetry-operator 0.101.0 with
// upstream's operator v0.140.0 running as the chart's pod, collectors in three modes Running on
// the fake nodes, `helm upgrade` of the same release to ./charts/opentelemetry-operator with the
// user's values file unchanged (then, after a rollback, with --reuse-values), this operator
// running as the new pod, and `helm rollback` to upstream's revision with upstream's operator
// running again. Every step is checked for collector pod restarts (pod UIDs, restart counts, the
// workloads' pod templates and revision hashes), for the operator in charge (it generates a new
// collector and serves the webhooks) and for the release's objects and webhook certificate.
//
// Helm runs in-process (the Helm SDK's install, upgrade and rollback actions, releases stored in
// Secrets, as the helm CLI does). Upstream's operator is bin/tools/upstream-operator run by
// test/upstreamop in its own network namespace; this one is the binary of cmd/opentelemetry-operator
// run by test/install/installtest. Both run with the token of the pod's ServiceAccount and the
// container's args, so the charts' RBAC and flags are what is tested.
package chartswitch

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/test/install/installtest"
	"github.com/otelop/otelop/test/upstreamop"
)

// env is the package's simulated cluster.
var env *installtest.Env

func TestMain(m *testing.M) {
	// Start re-runs this binary inside upstream's network namespace.
	upstreamop.RunChildIfAsked()
	os.Exit(run(m))
}

func run(m *testing.M) (code int) {
	ctrllog.SetLogger(logr.Discard())
	start := time.Now()
	var err error
	if env, err = installtest.Start(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { env.Stop(code != 0) }()
	fmt.Fprintf(os.Stderr, "simulated cluster started in %s\n", time.Since(start).Round(100*time.Millisecond))
	return m.Run()
}
