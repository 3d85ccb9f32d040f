package controller

import (
	"context"
	"fmt"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// tracked is one managed resource to report.
type tracked struct {
	c        client.Client
	obj      client.Object
	group    string
	kind     string
	location spv1alpha1.Location
	flux     bool
	// version is the chart version a HelmRelease must run to be ready (empty: not checked).
	version string
}

// managed lists every resource of the instance, in the order they are made.
func managed(cc apireconciler.ClusterContext, platform client.Client, name, id, platformNS string, in *resolved) []tracked {
	version := ""
	if in != nil {
		version = in.version.Version
	}
	wlNS := instance.WorkloadNamespace(id)
	cp, wl := cc.MCP.Client(), cc.Workload.Client()
	objMeta := func(n, ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: n, Namespace: ns} }
	out := []tracked{
		{c: cp, obj: &corev1.Namespace{ObjectMeta: objMeta(instance.CPNamespace, "")}, kind: "Namespace", location: spv1alpha1.LocationControlPlane},
		{c: cp, obj: &corev1.ServiceAccount{ObjectMeta: objMeta(instance.CPServiceAccount, instance.CPNamespace)}, kind: "ServiceAccount", location: spv1alpha1.LocationControlPlane},
		{c: cp, obj: &rbacv1.ClusterRole{ObjectMeta: objMeta(instance.CPClusterRole, "")}, group: rbacv1.GroupName, kind: "ClusterRole", location: spv1alpha1.LocationControlPlane},
		{c: cp, obj: &rbacv1.ClusterRoleBinding{ObjectMeta: objMeta(instance.CPClusterRoleBinding, "")}, group: rbacv1.GroupName, kind: "ClusterRoleBinding", location: spv1alpha1.LocationControlPlane},
		{c: cp, obj: &rbacv1.Role{ObjectMeta: objMeta(instance.CPRole, instance.CPNamespace)}, group: rbacv1.GroupName, kind: "Role", location: spv1alpha1.LocationControlPlane},
		{c: cp, obj: &rbacv1.RoleBinding{ObjectMeta: objMeta(instance.CPRoleBinding, instance.CPNamespace)}, group: rbacv1.GroupName, kind: "RoleBinding", location: spv1alpha1.LocationControlPlane},
		{c: wl, obj: &corev1.Namespace{ObjectMeta: objMeta(wlNS, "")}, kind: "Namespace", location: spv1alpha1.LocationWorkloadCluster},
		{c: wl, obj: &corev1.Secret{ObjectMeta: objMeta(instance.CPAccessSecret, wlNS)}, kind: "Secret", location: spv1alpha1.LocationWorkloadCluster},
	}
	if in != nil {
		for _, s := range in.pullSecrets {
			out = append(out, tracked{c: wl, obj: &corev1.Secret{ObjectMeta: objMeta(s.Name, wlNS)}, kind: "Secret", location: spv1alpha1.LocationWorkloadCluster})
		}
		if in.caBundle != nil {
			out = append(out, tracked{c: wl, obj: &corev1.ConfigMap{ObjectMeta: objMeta(instance.CABundleConfigMap, wlNS)}, kind: "ConfigMap", location: spv1alpha1.LocationWorkloadCluster})
		}
		if in.chartSecret != nil {
			out = append(out, tracked{c: platform, obj: &corev1.Secret{ObjectMeta: objMeta(instance.ChartPullSecretName(name), platformNS)}, kind: "Secret", location: spv1alpha1.LocationPlatformCluster})
		}
		if in.chartCA != nil {
			out = append(out, tracked{c: platform, obj: &corev1.Secret{ObjectMeta: objMeta(instance.ChartCASecretName(name), platformNS)}, kind: "Secret", location: spv1alpha1.LocationPlatformCluster})
		}
	}
	return append(out,
		tracked{c: platform, obj: &sourcev1.OCIRepository{ObjectMeta: objMeta(instance.OCIRepositoryName(name), platformNS)}, group: sourcev1.GroupVersion.Group, kind: sourcev1.OCIRepositoryKind, location: spv1alpha1.LocationPlatformCluster, flux: true},
		tracked{c: platform, obj: &helmv2.HelmRelease{ObjectMeta: objMeta(instance.CRDsReleaseName(name), platformNS)}, group: helmv2.GroupVersion.Group, kind: helmv2.HelmReleaseKind, location: spv1alpha1.LocationPlatformCluster, flux: true, version: version},
		tracked{c: platform, obj: &helmv2.HelmRelease{ObjectMeta: objMeta(instance.WorkloadReleaseName(name), platformNS)}, group: helmv2.GroupVersion.Group, kind: helmv2.HelmReleaseKind, location: spv1alpha1.LocationPlatformCluster, flux: true, version: version},
	)
}

// observe reads every managed resource and reports its phase; Flux objects report their Ready
// condition, falling back to Stalled and Reconciling for the message.
func (s *Service) observe(ctx context.Context, cc apireconciler.ClusterContext, name, id, platformNS string, in *resolved) ([]spv1alpha1.ManagedResource, error) {
	var out []spv1alpha1.ManagedResource
	for _, t := range managed(cc, s.Platform, name, id, platformNS, in) {
		r := spv1alpha1.ManagedResource{APIGroup: t.group, Kind: t.kind, Name: t.obj.GetName(), Namespace: t.obj.GetNamespace(), Location: t.location}
		err := t.c.Get(ctx, client.ObjectKeyFromObject(t.obj), t.obj)
		switch {
		case apierrors.IsNotFound(err):
			r.Phase, r.Message = spv1alpha1.ResourcePending, "not created yet"
		case err != nil:
			r.Phase, r.Message = spv1alpha1.ResourceUnknown, err.Error()
		case !t.obj.GetDeletionTimestamp().IsZero():
			r.Phase = spv1alpha1.ResourceTerminating
		case t.flux:
			r.Phase, r.Message = fluxPhase(fluxConditions(t.obj), t.obj.GetGeneration())
			if hr, ok := t.obj.(*helmv2.HelmRelease); ok && t.version != "" {
				r.Phase, r.Message = releasePhase(hr, t.version, r.Phase, r.Message)
			}
		default:
			r.Phase = spv1alpha1.ResourceReady
		}
		out = append(out, r)
	}
	return out, nil
}

func fluxConditions(o client.Object) []metav1.Condition {
	switch f := o.(type) {
	case *sourcev1.OCIRepository:
		return f.Status.Conditions
	case *helmv2.HelmRelease:
		return f.Status.Conditions
	}
	return nil
}

// fluxPhase maps Flux's kstatus conditions to a resource phase and message. A Ready condition
// older than the object's generation is not trusted yet.
func fluxPhase(conds []metav1.Condition, generation int64) (spv1alpha1.ResourcePhase, string) {
	ready := meta.FindStatusCondition(conds, "Ready")
	msg := ""
	for _, t := range []string{"Ready", "Stalled", "Reconciling"} {
		if c := meta.FindStatusCondition(conds, t); c != nil && c.Message != "" {
			msg = c.Message
			break
		}
	}
	switch {
	case ready == nil:
		return spv1alpha1.ResourceProgressing, "waiting for Flux to report readiness"
	case ready.ObservedGeneration != 0 && ready.ObservedGeneration < generation:
		return spv1alpha1.ResourceProgressing, "waiting for Flux to observe the latest generation"
	case ready.Status == metav1.ConditionTrue:
		return spv1alpha1.ResourceReady, msg
	case meta.IsStatusConditionTrue(conds, "Stalled"):
		return spv1alpha1.ResourceFailed, msg
	default:
		return spv1alpha1.ResourceProgressing, msg
	}
}

// releasePhase narrows a HelmRelease's Flux phase to the chart version the OtelOperator asks
// for: Ready only once the release's latest Helm release is deployed from that version. Flux's
// Ready condition alone is no proof: after spec.version changes, it stays True for the old chart
// until helm-controller has picked up the new artifact and started the upgrade.
func releasePhase(hr *helmv2.HelmRelease, version string, phase spv1alpha1.ResourcePhase, msg string) (spv1alpha1.ResourcePhase, string) {
	if phase != spv1alpha1.ResourceReady {
		return phase, msg
	}
	installed, deployed := flux.InstalledChartVersion(hr)
	switch {
	case installed == "":
		return spv1alpha1.ResourceProgressing, fmt.Sprintf("installing chart version %s", version)
	case !flux.ChartVersionMatches(installed, version):
		return spv1alpha1.ResourceProgressing, fmt.Sprintf("upgrading to chart version %s (installed %s)", version, installed)
	case !deployed:
		return spv1alpha1.ResourceProgressing, fmt.Sprintf("chart version %s is not deployed yet", version)
	}
	return phase, msg
}

// failedRelease describes the first HelmRelease Flux gave up on (phase Failed: Stalled), if any.
func failedRelease(rs []spv1alpha1.ManagedResource) (string, bool) {
	for _, r := range rs {
		if r.Kind == helmv2.HelmReleaseKind && r.Phase == spv1alpha1.ResourceFailed {
			return fmt.Sprintf("HelmRelease %s/%s in the %s failed and Flux stopped retrying: %s; fix the cause, then annotate the OtelOperator with %s=%s to make Flux retry",
				r.Namespace, r.Name, r.Location, r.Message, apireconciler.OperationAnnotation, apireconciler.OperationReconcile), true
		}
	}
	return "", false
}

// summary says whether all resources are ready, or else describes the first that is not.
func summary(rs []spv1alpha1.ManagedResource) (string, bool) {
	for _, r := range rs {
		if r.Phase != spv1alpha1.ResourceReady {
			where := r.Name
			if r.Namespace != "" {
				where = r.Namespace + "/" + r.Name
			}
			msg := fmt.Sprintf("%s %s in the %s is %s", r.Kind, where, r.Location, r.Phase)
			if r.Message != "" {
				msg += ": " + r.Message
			}
			return msg, false
		}
	}
	return "", true
}
