package flux

import (
	"fmt"
	"time"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/fluxcd/pkg/apis/kustomize"
	"github.com/fluxcd/pkg/apis/meta"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// HelmChartLayer is the media type of a Helm chart layer in an OCI artifact.
const HelmChartLayer = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"

// Mount points in the operator container of the workload release.
const (
	// CPAccessMountPath is where the control-plane kubeconfig and token are mounted. The whole
	// Secret is mounted (no subPath), so the kubelet refreshes the files when the token rotates.
	CPAccessMountPath = "/var/run/secrets/otel-operator/cp"
	// CABundleMountPath is where the CA bundle ConfigMap is mounted; SSL_CERT_DIR points here.
	CABundleMountPath = "/etc/ssl/otel-operator-ca"
	// KubeconfigKey and TokenKey are the keys of the control-plane access Secret.
	KubeconfigKey = "kubeconfig"
	// TokenKey holds the current ServiceAccount token; the kubeconfig reads it as a tokenFile.
	TokenKey = "token"
	// CAKey holds the control plane's serving CA.
	CAKey = "ca.crt"
	// NamespaceKey holds the operator's namespace in the control plane (instance.CPNamespace). It
	// is mounted alone as the ServiceAccount namespace file (ServiceAccountDir), where both our
	// operator and upstream's look for their own namespace (leader election).
	NamespaceKey = "namespace"
	// ServiceAccountDir is the folder of the in-cluster ServiceAccount files. The workload token
	// is not mounted (automountServiceAccountToken: false); only NamespaceKey is, as `namespace`.
	ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"
	// CABundleFile is the file name of the CA bundle in CABundleMountPath.
	CABundleFile = "ca-bundle.crt"
)

// Inputs are the resolved facts the Flux objects are built from.
type Inputs struct {
	// Name of the OtelOperator (= control plane name); Flux objects are named after it.
	Name string
	// PlatformNamespace is the tenant namespace (mcp--<uuid>) in the platform cluster.
	PlatformNamespace string
	// InstanceID is instance.ID of the OtelOperator.
	InstanceID string
	// Version is the chart tag.
	Version string
	// ChartURL is the OCI URL of the chart.
	ChartURL string
	// ChartPullSecret is the platform copy of the chart pull secret, empty for none.
	ChartPullSecret string
	// ChartInsecure lets source-controller reach the registry over plain HTTP.
	ChartInsecure bool
	// ChartCASecret is the platform Secret (key ca.crt) with the registry's CA, empty for none.
	ChartCASecret string
	// Interval is the Flux reconcile interval (the provider's poll interval).
	Interval time.Duration
	// CPKubeconfigSecret is the AccessRequest Secret for the control plane, in PlatformNamespace.
	CPKubeconfigSecret string
	// WorkloadKubeconfigSecret is the AccessRequest Secret for the workload cluster.
	WorkloadKubeconfigSecret string
	// Values are the user's Helm values of the version.
	Values map[string]any
	// PullSecrets are the image pull secrets copied into the workload namespace.
	PullSecrets []string
	// CABundle says whether a CA bundle ConfigMap is copied and must be mounted.
	CABundle bool
}

// OCIRepository builds the chart source.
func OCIRepository(in Inputs) *sourcev1.OCIRepository {
	repo := &sourcev1.OCIRepository{
		TypeMeta:   metav1.TypeMeta{APIVersion: sourcev1.GroupVersion.String(), Kind: sourcev1.OCIRepositoryKind},
		ObjectMeta: objectMeta(instance.OCIRepositoryName(in.Name), in),
		Spec: sourcev1.OCIRepositorySpec{
			URL:           in.ChartURL,
			Reference:     &sourcev1.OCIRepositoryRef{Tag: in.Version},
			LayerSelector: &sourcev1.OCILayerSelector{MediaType: HelmChartLayer, Operation: sourcev1.OCILayerExtract},
			Interval:      metav1.Duration{Duration: in.Interval},
		},
	}
	if in.ChartPullSecret != "" {
		repo.Spec.SecretRef = &meta.LocalObjectReference{Name: in.ChartPullSecret}
	}
	if in.ChartCASecret != "" {
		repo.Spec.CertSecretRef = &meta.LocalObjectReference{Name: in.ChartCASecret}
	}
	repo.Spec.Insecure = in.ChartInsecure
	return repo
}

// CRDsRelease builds the release that installs only the CRDs into the control plane. Its uninstall
// orphans what it installed, so deleting it never deletes the CRDs and with them the users' objects.
func CRDsRelease(in Inputs) *helmv2.HelmRelease {
	hr := release(instance.CRDsReleaseName(in.Name), in, in.CPKubeconfigSecret, instance.CPNamespace)
	hr.Spec.Values = toJSON(CRDsValues())
	hr.Spec.Uninstall = &helmv2.Uninstall{DeletionPropagation: ptr.To("orphan"), KeepHistory: false}
	return hr
}

// WorkloadRelease builds the release that installs only the operator into the workload namespace,
// after the CRDs release, with a post-renderer that points the operator at the control plane.
func WorkloadRelease(in Inputs) *helmv2.HelmRelease {
	hr := release(instance.WorkloadReleaseName(in.Name), in, in.WorkloadKubeconfigSecret, instance.WorkloadNamespace(in.InstanceID))
	hr.Spec.Values = toJSON(WorkloadValues(in.Values, in.PullSecrets, in.InstanceID))
	// The release name is also the chart's full name (WorkloadValues): from the instance ID, so
	// that instances never share names in the shared workload cluster. (The CRDs release keeps
	// its name: it lives in the tenant's own control plane, and renaming it would make
	// helm-controller uninstall the old release, and with it the CRDs.)
	hr.Spec.ReleaseName = instance.WorkloadHelmReleaseName(in.InstanceID)
	// The CRDs of a version are in the control plane before its operator runs: helm-controller
	// upgrades this release only once the CRDs release runs in.Version (CRDsReleaseReadyExpr).
	hr.Spec.DependsOn = []helmv2.DependencyReference{{Name: instance.CRDsReleaseName(in.Name), ReadyExpr: CRDsReleaseReadyExpr(in.Version)}}
	hr.Spec.PostRenderers = []helmv2.PostRenderer{{Kustomize: &helmv2.Kustomize{Patches: append([]kustomize.Patch{{
		Patch: OperatorPatch(in.CABundle),
		Target: &kustomize.Selector{
			Group: "apps", Version: "v1", Kind: "Deployment",
			LabelSelector: "app.kubernetes.io/name=opentelemetry-operator",
		},
	}}, NoWebhookPatches()...)}}}
	return hr
}

// WebhookKinds are the admission webhook configuration kinds no workload release may install.
var WebhookKinds = []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}

// NoWebhookPatches are Kustomize patches that delete every admission webhook configuration the
// chart renders, whatever its name, also from a chart (version) without a switch to leave them
// out (our chart before admissionWebhooks.create): a webhook in the shared workload cluster
// answered by one tenant's operator would act on every tenant's pods.
func NoWebhookPatches() []kustomize.Patch {
	var out []kustomize.Patch
	for _, kind := range WebhookKinds {
		out = append(out, kustomize.Patch{
			Patch: fmt.Sprintf(`$patch: delete
apiVersion: admissionregistration.k8s.io/v1
kind: %s
metadata:
  name: any
`, kind),
			Target: &kustomize.Selector{Group: "admissionregistration.k8s.io", Version: "v1", Kind: kind},
		})
	}
	return out
}

func release(name string, in Inputs, kubeconfigSecret, targetNamespace string) *helmv2.HelmRelease {
	return &helmv2.HelmRelease{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv2.GroupVersion.String(), Kind: helmv2.HelmReleaseKind},
		ObjectMeta: objectMeta(name, in),
		Spec: helmv2.HelmReleaseSpec{
			ChartRef: &helmv2.CrossNamespaceSourceReference{
				Kind: sourcev1.OCIRepositoryKind,
				Name: instance.OCIRepositoryName(in.Name),
			},
			Interval:         metav1.Duration{Duration: in.Interval},
			KubeConfig:       &meta.KubeConfigReference{SecretRef: &meta.SecretKeyReference{Name: kubeconfigSecret, Key: "kubeconfig"}},
			ReleaseName:      instance.HelmReleaseName(name),
			TargetNamespace:  targetNamespace,
			StorageNamespace: targetNamespace,
			// Never take over objects the release did not create (helm-controller's default
			// would): a name collision fails the release instead of rewriting another
			// instance's or anybody's objects.
			Install: &helmv2.Install{
				CRDs:                    helmv2.Create,
				CreateNamespace:         true,
				DisableSchemaValidation: true,
				DisableTakeOwnership:    true,
				Remediation:             &helmv2.InstallRemediation{Retries: 3},
			},
			Upgrade: &helmv2.Upgrade{
				CRDs:                    helmv2.CreateReplace,
				DisableSchemaValidation: true,
				DisableTakeOwnership:    true,
				Remediation:             &helmv2.UpgradeRemediation{Retries: 3},
			},
		},
	}
}

// OperatorPatch is the strategic-merge patch for the operator Deployment: it mounts the
// control-plane access Secret and sets KUBECONFIG, so the operator watches the control plane, and
// with a CA bundle mounts it and adds it to SSL_CERT_DIR. It turns the workload ServiceAccount
// token mount off (the operator never talks to the workload API server) and mounts the access
// Secret's namespace key as the ServiceAccount namespace file instead, so that the operator, ours
// or upstream's (which has no flag for it and stops without that file when leader election is
// on), takes the control plane's operator namespace as its own: its leader-election Lease lands
// where it may write it, not in the workload pod's namespace, which does not exist in the control
// plane.
func OperatorPatch(caBundle bool) string {
	env := fmt.Sprintf(`        - name: KUBECONFIG
          value: %s/%s
`, CPAccessMountPath, KubeconfigKey)
	mounts := fmt.Sprintf(`        - name: otel-operator-cp-access
          mountPath: %s
          readOnly: true
        - name: otel-operator-cp-namespace
          mountPath: %s
          readOnly: true
`, CPAccessMountPath, ServiceAccountDir)
	volumes := fmt.Sprintf(`      - name: otel-operator-cp-access
        secret:
          secretName: %s
      - name: otel-operator-cp-namespace
        secret:
          secretName: %s
          items:
          - key: %s
            path: namespace
`, instance.CPAccessSecret, instance.CPAccessSecret, NamespaceKey)
	if caBundle {
		env += fmt.Sprintf(`        - name: SSL_CERT_DIR
          value: /etc/ssl/certs:%s
`, CABundleMountPath)
		mounts += fmt.Sprintf(`        - name: otel-operator-ca-bundle
          mountPath: %s
          readOnly: true
`, CABundleMountPath)
		volumes += fmt.Sprintf(`      - name: otel-operator-ca-bundle
        configMap:
          name: %s
`, instance.CABundleConfigMap)
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: opentelemetry-operator
spec:
  template:
    spec:
      automountServiceAccountToken: false
      containers:
      - name: manager
        env:
` + env + `        volumeMounts:
` + mounts + `      volumes:
` + volumes
}

func objectMeta(name string, in Inputs) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: in.PlatformNamespace, Labels: instance.Labels(in.InstanceID)}
}
