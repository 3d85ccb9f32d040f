package owned

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// ShardLabel is the label whose value assigns a resource to an operator shard (`--shard=<value>`).
const ShardLabel = "sharding.opentelemetry.io/key"

// ParseShard reads the --shard flag: empty means every resource (no sharding); a bare label value
// such as "team-a" means ShardLabel=team-a; anything else is a label selector, e.g.
// "!sharding.opentelemetry.io/key" for the instance that takes every resource no shard claims.
func ParseShard(flag string) (labels.Selector, error) {
	flag = strings.TrimSpace(flag)
	if flag == "" {
		return labels.Everything(), nil
	}
	if len(validation.IsValidLabelValue(flag)) == 0 && !strings.ContainsAny(flag, "=!(), ") {
		flag = ShardLabel + "=" + flag
	}
	sel, err := labels.Parse(flag)
	if err != nil {
		return nil, fmt.Errorf("--shard: %q is neither a label value nor a label selector: %w", flag, err)
	}
	return sel, nil
}

// ShardLeaseID is the leader-election Lease name of a shard: base for no sharding, else base with
// a short hash of the selector, so that every shard elects its own leader.
func ShardLeaseID(base string, shard labels.Selector) string {
	if shard == nil || shard.Empty() {
		return base
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(shard.String()))
	return fmt.Sprintf("%s-shard-%08x", base, h.Sum32())
}

// InShard wraps a reconciler so that it acts only on resources whose labels match shard: a
// request for a resource of another shard is dropped before the reconciler sees it, so that
// instances sharing a cluster never write each other's objects. Resources that are gone pass
// through (the reconciler forgets them). newObj returns an empty object of the reconciled kind.
func InShard(c client.Reader, shard labels.Selector, newObj func() client.Object, r reconcile.Reconciler) reconcile.Reconciler {
	if shard == nil || shard.Empty() {
		return r
	}
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		obj := newObj()
		if err := c.Get(ctx, req.NamespacedName, obj); err != nil {
			if apierrors.IsNotFound(err) {
				return r.Reconcile(ctx, req)
			}
			return reconcile.Result{}, err
		}
		if !shard.Matches(labels.Set(obj.GetLabels())) {
			ctrl.LoggerFrom(ctx).V(2).Info("belongs to another shard; skipped", "shard", shard.String())
			return reconcile.Result{}, nil
		}
		return r.Reconcile(ctx, req)
	})
}
