package injectdiff

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/test/sidebyside"
	"github.com/otelop/otelop/test/simcluster"
	"github.com/otelop/otelop/test/upstreamop"
)

// The two sides: the operator whose webhooks serve a namespace.
const (
	sideUpstream = sidebyside.Upstream
	sideOtelop   = sidebyside.Otelop
)

// sides in the order every report lists them.
var sides = sidebyside.Sides

// sideLabel is the namespace label that routes a namespace's pods and Instrumentations to one
// operator's webhooks; its value is the side ("upstream" or "otelop").
const sideLabel = "injectdiff.otelop.io/webhooks"

// nsSuffixes are the namespaces each side gets (injdiff-<side>-<suffix>): main holds most
// Instrumentations and pods, other the one referenced as <ns>/<name>, single one Instrumentation
// for the "true" form, nsannot one Instrumentation and an inject annotation on the Namespace.
var nsSuffixes = []string{"main", "other", "single", "nsannot"}

// nsannotAnnotations are the annotations of the nsannot Namespaces.
var nsannotAnnotations = map[string]string{"instrumentation.opentelemetry.io/inject-python": "true"}

// ns is the name of a side's namespace.
func ns(side, suffix string) string { return "injdiff-" + side + "-" + suffix }

// env is the running cluster with both operators.
type env struct {
	t     *testing.T
	ctx   context.Context
	admin client.Client
	up    *upstreamop.Operator
}

// start brings up the simulated cluster (no nodes: pods are only admitted, never run), this
// project's CRDs, the namespaces of both sides, both operators' pod and Instrumentation webhooks
// (the pod webhook's failurePolicy Fail, so that an operator that cannot be reached fails the
// test instead of admitting pods unchanged) and both operators, every language enabled on both.
func start(t *testing.T, ctx context.Context) *env {
	t.Helper()
	se := sidebyside.Start(t, ctx, sidebyside.Options{
		Name: "injectdiff", WebhookPrefix: "injdiff", SideLabel: sideLabel,
		Namespaces: func(side string) []*corev1.Namespace {
			var out []*corev1.Namespace
			for _, s := range nsSuffixes {
				// The label lets ours inject the Go agent there (upstream needs no opt-in).
				n := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns(side, s),
					Labels: map[string]string{instrumentation.GoAgentNamespaceLabel: "true"}}}
				if s == "nsannot" {
					n.Annotations = nsannotAnnotations
				}
				out = append(out, n)
			}
			return out
		},
		Cluster:   simcluster.Options{NoFakeNodes: true},
		Resources: []string{"pods", "instrumentations"}, FailResources: []string{"pods"},
		// the pod webhook and the Instrumentation defaulting and validation
		MinWebhooks:  3,
		UpstreamArgs: upstreamFlags,
		Ours: func(o *operator.Options) {
			o.Instrumentation = operator.InstrumentationFlags{Java: true, NodeJS: true, Python: true, DotNet: true,
				ApacheHttpd: true, Go: true, Nginx: true, Multi: true}
		},
	})
	return &env{t: t, ctx: ctx, admin: se.Admin, up: se.Up}
}
