package controller

import (
	"context"
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	libutils "github.com/openmcp-project/openmcp-operator/lib/utils"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	shippedrbac "github.com/otelop/otelop/config/rbac"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/guard"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// requeueDeletion is how soon a blocked or unfinished deletion is looked at again.
const requeueDeletion = 5 * time.Second

// Delete waits until no opentelemetry.io object is left in the control plane, then deletes what the
// provider created for the instance and nothing else: the Flux objects first (the CRDs release
// orphans the CRDs) and, once they are gone, the copies, the token holders, the access Secret, the
// control-plane identity and the namespaces (a namespace only when it holds nothing the provider
// did not create). Namespaces are deleted but not waited for.
func (s *Service) Delete(ctx context.Context, obj *spv1alpha1.OtelOperator, pc *spv1alpha1.ProviderConfig, cc *apireconciler.ClusterContext) (ctrl.Result, error) {
	if cc == nil {
		// Cluster access is already gone: the control plane and workload cluster cannot be
		// reached, but the platform objects can, and are removed.
		return s.deletePlatformOnly(ctx, obj)
	}
	remaining, err := guard.Remaining(ctx, cc.MCP.Client())
	if err != nil {
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, err.Error())
		return ctrl.Result{}, err
	}
	if len(remaining) > 0 {
		apireconciler.Terminating(obj, spv1alpha1.ReasonUserResourcesExist, guard.Message(remaining, 10))
		return ctrl.Result{RequeueAfter: requeueDeletion}, nil
	}
	apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "deleting managed resources")

	id := instance.ID(obj.Namespace, obj.Name)
	platformNS := cc.MCPAccessSecret.Namespace
	all := managed(*cc, s.Platform, obj.Name, id, platformNS, nil)
	// Only what the provider created for this instance is deleted: every object is checked for
	// the provider's labels on the live object first (removeOwned, removeNamespace).
	// 1. The Flux objects, last made first; the rest waits until they are gone, because the
	//    releases need the access Secrets, the CP identity and the namespaces to uninstall.
	for i := len(all) - 1; i >= 0; i-- {
		t := all[i]
		if !t.flux {
			continue
		}
		gone, err := removeOwned(ctx, t.c, t.obj, id)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone {
			apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, fmt.Sprintf("waiting for %s %s in the %s to be deleted", t.kind, key(t.obj), t.location))
			return ctrl.Result{RequeueAfter: requeueDeletion}, nil
		}
	}
	// 2. Copies, the chart secret and chart CA secret, every token holder (revoking the operator's CP tokens).
	wlNS := instance.WorkloadNamespace(id)
	if err := syncCopies(ctx, cc.Workload.Client(), id, wlNS, nil, nil); err != nil {
		return ctrl.Result{}, err
	}
	if err := syncChartSecret(ctx, s.Platform, obj.Name, id, platformNS, nil); err != nil {
		return ctrl.Result{}, err
	}
	if err := syncChartCASecret(ctx, s.Platform, obj.Name, id, platformNS, nil); err != nil {
		return ctrl.Result{}, err
	}
	if err := cpaccess.Revoke(ctx, cc.MCP.Client(), id); err != nil {
		return ctrl.Result{}, err
	}
	// 3. The access Secret and the CP identity, then the namespaces: a namespace only when it holds
	//    nothing the provider did not create (besides Kubernetes' own defaults). Namespaces are
	//    deleted but not waited for.
	pending := ""
	var kept []string
	for i := len(all) - 1; i >= 0; i-- {
		t := all[i]
		if t.flux {
			continue
		}
		if ns, isNS := t.obj.(*corev1.Namespace); isNS {
			cfg, allowed := cc.Workload.RESTConfig(), []string(nil)
			if t.location == spv1alpha1.LocationControlPlane {
				cfg, allowed = cc.MCP.RESTConfig(), operatorLeftovers(obj, pc)
			}
			if _, why, err := removeNamespace(ctx, t.c, cfg, ns.Name, id, allowed...); err != nil {
				return ctrl.Result{}, err
			} else if why != "" {
				kept = append(kept, why+" (in the "+string(t.location)+")")
			}
			continue
		}
		gone, err := removeOwned(ctx, t.c, t.obj, id)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone && pending == "" {
			pending = fmt.Sprintf("%s %s in the %s", t.kind, key(t.obj), t.location)
		}
	}
	if pending != "" {
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "waiting for "+pending+" to be deleted")
		return ctrl.Result{RequeueAfter: requeueDeletion}, nil
	}
	for _, k := range kept {
		log.FromContext(ctx).Info("not deleting a namespace", "reason", k)
	}
	return ctrl.Result{}, nil
}

// operatorLeftovers are the objects the installed operator itself keeps in its control-plane
// namespace (its leader-election Lease and webhook certificate Secret): they do not keep the
// namespace, which the provider created for the operator, from being deleted.
func operatorLeftovers(obj *spv1alpha1.OtelOperator, cfg *spv1alpha1.ProviderConfig) []string {
	cert := flux.WebhookCertSecret
	if cfg != nil {
		if v, ok := cfg.Version(obj.Spec.Version); ok {
			if values, err := flux.ParseValues(v.Version, v.HelmValues); err == nil {
				cert = flux.CertSecretName(values)
			}
		}
	}
	return []string{"Lease/" + shippedrbac.LeaderElectionLease, "Secret/" + cert}
}

// deletePlatformOnly removes the provider's objects in the tenant namespace of the platform
// cluster (Flux objects and the chart secret and chart CA copies) when no cluster access is left. Flux cannot
// uninstall without the access Secrets; whatever the releases installed stays in those clusters.
func (s *Service) deletePlatformOnly(ctx context.Context, obj *spv1alpha1.OtelOperator) (ctrl.Result, error) {
	platformNS, err := libutils.StableMCPNamespace(obj.Name, obj.Namespace)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("the platform namespace of %s/%s: %w", obj.Namespace, obj.Name, err)
	}
	id := instance.ID(obj.Namespace, obj.Name)
	meta := func(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: platformNS} }
	pending := ""
	for _, o := range []client.Object{
		&helmv2.HelmRelease{ObjectMeta: meta(instance.WorkloadReleaseName(obj.Name))},
		&helmv2.HelmRelease{ObjectMeta: meta(instance.CRDsReleaseName(obj.Name))},
		&sourcev1.OCIRepository{ObjectMeta: meta(instance.OCIRepositoryName(obj.Name))},
		&corev1.Secret{ObjectMeta: meta(instance.ChartPullSecretName(obj.Name))},
		&corev1.Secret{ObjectMeta: meta(instance.ChartCASecretName(obj.Name))},
	} {
		gone, err := removeOwned(ctx, s.Platform, o, id)
		if err != nil {
			return ctrl.Result{}, err
		}
		if !gone && pending == "" {
			pending = fmt.Sprintf("%T %s", o, key(o))
		}
	}
	if pending != "" {
		apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "cluster access already released; waiting for "+pending+" in the platform cluster to be deleted")
		return ctrl.Result{RequeueAfter: requeueDeletion}, nil
	}
	apireconciler.Terminating(obj, spv1alpha1.ReasonDeleting, "cluster access already released; platform objects deleted")
	return ctrl.Result{}, nil
}
