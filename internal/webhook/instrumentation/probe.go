package instrumentation

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1alpha1"
)

// ProbeNamePrefix starts the generated name of the Instrumentation Reached creates as a dry run.
const ProbeNamePrefix = "otelop-webhook-probe-"

// Reached reports whether the API server reaches this operator's Instrumentation defaulting
// webhook: it creates an Instrumentation in namespace as a dry run (nothing is stored, and no
// other controller sees it) and checks that the object the API server returns carries the
// default-image annotation the defaulter stamps. An error means the webhook was not reached (or
// the dry run failed): a webhook call the network refuses fails the request (failurePolicy Fail)
// or, with Ignore, returns the object undefaulted.
func Reached(ctx context.Context, c client.Client, namespace string) error {
	in := &v1alpha1.Instrumentation{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, GenerateName: ProbeNamePrefix}}
	if err := c.Create(ctx, in, client.DryRunAll); err != nil {
		return fmt.Errorf("dry-run create of an Instrumentation in %s: %w", namespace, err)
	}
	key := Languages[0].DefaultImageAnnotation()
	if _, ok := in.Annotations[key]; !ok {
		return fmt.Errorf("the dry-run Instrumentation came back without %s: the defaulting webhook was not called", key)
	}
	return nil
}
