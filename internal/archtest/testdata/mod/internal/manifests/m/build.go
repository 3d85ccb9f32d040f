// Package m is a synthetic builder that reads from a client it should not hold.
package m

import (
	"context"

	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	v1 "example.com/mod/api/v1"
)

// Build returns one object, after a read no builder may make.
func Build(ctx context.Context, r crclient.Reader, _ v1.Thing) []crclient.Object {
	_ = r.List(ctx, nil)
	return nil
}
