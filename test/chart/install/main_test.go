// Package install proves the Helm chart as shipped on the simulated cluster: the chart is installed
// with the Helm SDK (the `helm install` action, releases stored in Secrets), kwok schedules the
// chart's operator pod, and the operator binary runs as that pod (the chart's ServiceAccount token,
// the chart's container args, the pod's loopback IP; installtest.Env.RunOperator). Then the
// scenarios test/install runs against config/default run against the chart's objects: conversion
// through the chart's webhook Service, collector RBAC with the chart's ClusterRole, metrics with the
// chart's metrics-reader, leader election and readiness. One cluster serves the package: the
// default-values release first, then (after helm uninstall and deleting the kept CRDs) the two
// releases the OpenMCP service provider makes with its kube-stack values.
package install

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/otelop/otelop/test/install/installtest"
)

// env is the package's simulated cluster.
var env *installtest.Env

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) (code int) {
	// The API server's warnings (v1alpha1 is deprecated) are expected; keep the output readable.
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
