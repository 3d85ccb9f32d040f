package controller

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	fluxmeta "github.com/fluxcd/pkg/apis/meta"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	spv1alpha1 "github.com/otelop/otelop/api/serviceprovider/v1alpha1"
	"github.com/otelop/otelop/internal/serviceprovider/apireconciler"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// Service is the OtelOperator service logic.
type Service struct {
	// PodNamespace is the provider's namespace in the platform cluster, where the sources of the
	// pull secrets and the CA bundle are.
	PodNamespace string
	// Platform is a client of the platform cluster.
	Platform client.Client
	// Rotation decides the lifetime and renewal of the workload operator's control-plane token.
	Rotation cpaccess.Rotation
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

var (
	_ apireconciler.Reconciler[*spv1alpha1.OtelOperator, *spv1alpha1.ProviderConfig] = &Service{}
	_ apireconciler.Maintainer[*spv1alpha1.OtelOperator]                             = &Service{}
)

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// CreateOrUpdate runs the seven steps: Progressing, control-plane access, pull secrets and CA
// bundles, the CRDs release, the workload release, OCIRepository, status of every resource.
func (s *Service) CreateOrUpdate(ctx context.Context, obj *spv1alpha1.OtelOperator, cfg *spv1alpha1.ProviderConfig, cc apireconciler.ClusterContext) (ctrl.Result, error) {
	if obj.Status.Phase == "" || obj.Status.Phase == spv1alpha1.PhaseTerminating {
		apireconciler.Progressing(obj, spv1alpha1.ReasonReconciling, "reconciling")
	}
	res, err := s.createOrUpdate(ctx, obj, cfg, cc)
	var ie *inputError
	if errors.As(err, &ie) {
		// Bad input, or an object in the way that the provider did not create: nothing more is
		// applied and nothing is deleted; the watches on the ProviderConfig and the provider
		// namespace, and the poll interval, bring the object back. An operator that already runs
		// keeps its control-plane token renewed meanwhile: an input error must not log it out.
		apireconciler.Failed(obj, ie.reason, ie.msg)
		if err := s.Maintain(ctx, obj, cc); err != nil {
			return ctrl.Result{}, fmt.Errorf("%s; renewing the operator's control-plane access failed too: %w", ie.msg, err)
		}
		return ctrl.Result{}, nil
	}
	return res, err
}

// Maintain renews the running operator's control-plane token (and follows the control plane's
// address and CA) without any input from the ProviderConfig, so that neither bad input nor a
// missing ProviderConfig logs the operator out of its control plane. It creates nothing for an
// instance whose access Secret does not exist yet.
func (s *Service) Maintain(ctx context.Context, obj *spv1alpha1.OtelOperator, cc apireconciler.ClusterContext) error {
	id := instance.ID(obj.Namespace, obj.Name)
	wlNS := instance.WorkloadNamespace(id)
	cur := &corev1.Secret{}
	if err := cc.Workload.Client().Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, cur); err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("workload cluster: reading %s/%s: %w", wlNS, instance.CPAccessSecret, err)
	}
	if !ours(cur, id) {
		return nil
	}
	return s.reconcileAccessSecret(ctx, cc, id, wlNS)
}

func (s *Service) createOrUpdate(ctx context.Context, obj *spv1alpha1.OtelOperator, cfg *spv1alpha1.ProviderConfig, cc apireconciler.ClusterContext) (ctrl.Result, error) {
	in, err := s.resolve(ctx, obj, cfg)
	if err != nil {
		return ctrl.Result{}, err
	}

	id := instance.ID(obj.Namespace, obj.Name)
	wlNS := instance.WorkloadNamespace(id)
	platformNS := cc.MCPAccessSecret.Namespace

	// Step 2: the operator's identity in the control plane and its kubeconfig in the workload cluster.
	opNames := flux.InstanceOperatorNames(id, in.values)
	for _, o := range cpaccessObjects(id, opNames) {
		if err := applyOwned(ctx, cc.MCP.Client(), o, id, "control plane"); err != nil {
			return ctrl.Result{}, fmt.Errorf("control plane: %w", err)
		}
	}
	if err := applyOwned(ctx, cc.Workload.Client(), namespace(wlNS, id), id, "workload cluster"); err != nil {
		return ctrl.Result{}, fmt.Errorf("workload cluster: %w", err)
	}
	if err := s.reconcileAccessSecret(ctx, cc, id, wlNS); err != nil {
		return ctrl.Result{}, err
	}

	// Step 3: pull secrets and the CA bundle, into the namespace where the operator runs.
	if err := syncCopies(ctx, cc.Workload.Client(), id, wlNS, in.pullSecrets, in.caBundle); err != nil {
		return ctrl.Result{}, fmt.Errorf("workload cluster: %w", err)
	}
	// The platform copies the OCIRepository references exist before it does; copies it no longer
	// references go only once it has stopped referencing them (below), so source-controller never
	// looks for a Secret that is already gone.
	chartSecret, chartCASecret := "", ""
	if in.chartSecret != nil {
		chartSecret = instance.ChartPullSecretName(obj.Name)
		if err := syncChartSecret(ctx, s.Platform, obj.Name, id, platformNS, in.chartSecret); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}
	if in.chartCA != nil {
		chartCASecret = instance.ChartCASecretName(obj.Name)
		if err := syncChartCASecret(ctx, s.Platform, obj.Name, id, platformNS, in.chartCA); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}

	// Steps 4-6: the chart source and the two releases.
	fin := flux.Inputs{
		Name: obj.Name, PlatformNamespace: platformNS, InstanceID: id,
		Version: in.version.Version, ChartURL: in.version.ChartURL, ChartPullSecret: chartSecret,
		ChartInsecure: in.version.ChartInsecure, ChartCASecret: chartCASecret,
		Interval: cfg.PollInterval(), CPKubeconfigSecret: cc.MCPAccessSecret.Name, WorkloadKubeconfigSecret: cc.WorkloadAccessSecret.Name,
		Values: in.values, PullSecrets: names(in.pullSecrets), CABundle: in.caBundle != nil,
	}
	crds, workload := flux.CRDsRelease(fin), flux.WorkloadRelease(fin)
	token := ""
	if apireconciler.OperationRequested(ctx) {
		token = s.now().UTC().Format(time.RFC3339Nano)
	}
	for _, hr := range []*helmv2.HelmRelease{crds, workload} {
		if err := s.retryRequest(ctx, hr, token); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}
	// The releases go first: a new spec.version changes the workload release's dependency
	// expression (flux.CRDsReleaseReadyExpr) before the OCIRepository's tag, so that
	// helm-controller, when the new artifact arrives, finds the workload release already waiting
	// for the CRDs release to run the new version instead of upgrading both at once.
	for _, o := range []client.Object{crds, workload, flux.OCIRepository(fin)} {
		if err := applyOwned(ctx, s.Platform, o, id, "platform cluster"); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}
	if in.chartSecret == nil {
		if err := syncChartSecret(ctx, s.Platform, obj.Name, id, platformNS, nil); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}
	if in.chartCA == nil {
		if err := syncChartCASecret(ctx, s.Platform, obj.Name, id, platformNS, nil); err != nil {
			return ctrl.Result{}, fmt.Errorf("platform cluster: %w", err)
		}
	}

	// Step 7: report.
	resources, err := s.observe(ctx, cc, obj.Name, id, platformNS, in)
	if err != nil {
		return ctrl.Result{}, err
	}
	obj.Status.Resources = resources
	if msg, failed := failedRelease(resources); failed {
		apireconciler.Failed(obj, spv1alpha1.ReasonReleaseFailed, msg)
	} else if msg, ready := summary(resources); ready {
		apireconciler.Ready(obj, spv1alpha1.ReasonReconcileSuccess, fmt.Sprintf("OpenTelemetry Operator %s is ready", in.version.Version))
	} else {
		apireconciler.Progressing(obj, spv1alpha1.ReasonReconciling, msg)
	}
	return ctrl.Result{}, nil
}

// retryRequest sets Flux's request annotations on hr: with a token (a reconcile asked for with the
// operation annotation), the token in both requestedAt and resetAt, which makes helm-controller
// reset the release's failure counts and try again (what `flux reconcile helmrelease --reset`
// does; it acts only when both are equal); otherwise the values the live object carries, so that
// a reconcile that changes nothing writes nothing.
func (s *Service) retryRequest(ctx context.Context, hr *helmv2.HelmRelease, token string) error {
	keys := []string{fluxmeta.ReconcileRequestAnnotation, helmv2.ResetRequestAnnotation}
	values := map[string]string{}
	if token != "" {
		for _, k := range keys {
			values[k] = token
		}
	} else {
		cur, err := existing(ctx, s.Platform, hr)
		if err != nil || cur == nil {
			return err
		}
		for _, k := range keys {
			if v, ok := cur.GetAnnotations()[k]; ok {
				values[k] = v
			}
		}
	}
	if len(values) == 0 {
		return nil
	}
	if hr.Annotations == nil {
		hr.Annotations = map[string]string{}
	}
	for k, v := range values {
		hr.Annotations[k] = v
	}
	return nil
}

// reconcileAccessSecret keeps the workload operator's kubeconfig Secret current: the kubeconfig
// follows the control plane's address and CA, and the token is renewed before it expires. The
// token of the rotation before is revoked one rotation later, once the kubelet has had time to
// refresh the mounted file.
func (s *Service) reconcileAccessSecret(ctx context.Context, cc apireconciler.ClusterContext, id, wlNS string) error {
	cfg := cc.MCP.RESTConfig()
	ca, err := caData(cfg)
	if err != nil {
		return err
	}
	kubeconfig, err := cpaccess.Kubeconfig(cfg.Host, ca)
	if err != nil {
		return fmt.Errorf("rendering the control-plane kubeconfig: %w", err)
	}
	current := &corev1.Secret{}
	if err := cc.Workload.Client().Get(ctx, client.ObjectKey{Namespace: wlNS, Name: instance.CPAccessSecret}, current); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("workload cluster: reading %s/%s: %w", wlNS, instance.CPAccessSecret, err)
		}
		current = nil
	}
	tok, previous := cpaccess.TokenFrom(current), ""
	if current != nil {
		previous = current.Annotations[cpaccess.PreviousHolderAnnotation]
	}
	minted := ""
	if s.Rotation.Due(current, s.now()) {
		m, err := s.Rotation.Mint(ctx, cc.MCP.Client(), id)
		if err != nil {
			return err
		}
		previous, tok, minted = tok.Holder, m, m.Holder
	}
	if err := applyOwned(ctx, cc.Workload.Client(), cpaccess.AccessSecret(wlNS, id, kubeconfig, ca, tok, previous), id, "workload cluster"); err != nil {
		// The new token was never handed over: revoke it now, or every retry would leave another
		// valid token behind. The caller's context may be the one that ran out.
		if minted != "" {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), revokeTimeout)
			defer cancel()
			if rerr := cpaccess.RevokeHolder(rctx, cc.MCP.Client(), id, minted); rerr != nil {
				return fmt.Errorf("workload cluster: %w; revoking the token minted for it failed too (the next successful renewal revokes it): %v", err, rerr)
			}
		}
		return fmt.Errorf("workload cluster: %w", err)
	}
	if err := cpaccess.Revoke(ctx, cc.MCP.Client(), id, tok.Holder, previous); err != nil {
		return err
	}
	return nil
}

// revokeTimeout bounds revoking a token whose hand-over failed.
const revokeTimeout = 10 * time.Second

func caData(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		b, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the control plane's CA file: %w", err)
		}
		return b, nil
	}
	return nil, nil
}

func cpaccessObjects(id string, names flux.OperatorNames) []client.Object {
	var out []client.Object
	for _, o := range cpaccess.CPObjects(id, names) {
		out = append(out, o.(client.Object))
	}
	return out
}

func namespace(name, id string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: instance.Labels(id)},
	}
}

func names(secrets []*corev1.Secret) []string {
	out := make([]string, 0, len(secrets))
	for _, s := range secrets {
		out = append(out, s.Name)
	}
	return out
}
