// Package instance names the objects that belong to one OtelOperator: its stable ID, the workload
// namespace, and the names of the copied secrets and Flux objects.
package instance

import (
	"crypto/sha1" //nolint:gosec // a stable name, not a security boundary.
	"encoding/base32"
	"strings"
)

// Fixed names used in every instance.
const (
	// CPNamespace is where the operator's ServiceAccount lives in the control plane.
	CPNamespace = "opentelemetry-operator-system"
	// CPServiceAccount is the control-plane identity of the workload operator.
	CPServiceAccount = "otel-operator-server"
	// CPClusterRole and CPClusterRoleBinding grant the workload operator its control-plane rights.
	CPClusterRole = "otel-operator-server"
	// CPClusterRoleBinding binds CPClusterRole to CPServiceAccount.
	CPClusterRoleBinding = "otel-operator-server"
	// CPRole and CPRoleBinding grant the workload operator its rights in CPNamespace (its webhook
	// certificate Secret and leader-election Lease).
	CPRole = "otel-operator-server"
	// CPRoleBinding binds CPRole to CPServiceAccount.
	CPRoleBinding = "otel-operator-server"
	// CPAccessSecret is the workload Secret holding the kubeconfig and token for the control plane.
	CPAccessSecret = "otel-operator-cp-access"
	// CABundleConfigMap is the workload copy of the ProviderConfig's caBundleRef.
	CABundleConfigMap = "otel-operator-ca-bundle"
	// ManagedByLabel marks every object the provider manages.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	// ManagedByValue is the value of ManagedByLabel.
	ManagedByValue = "service-provider-otel-operator"
	// InstanceLabel carries the instance ID on managed objects.
	InstanceLabel = "oteloperator.services.open-control-plane.io/instance-id"
	// SourceLabel marks a copied Secret or ConfigMap; its value is the source's name in the
	// provider's namespace, shortened with a hash when longer than a label value may be
	// (SourceLabelValue). SourceAnnotation holds the full name.
	SourceLabel = "oteloperator.services.open-control-plane.io/source"
	// SourceAnnotation names the source of a copy in full.
	SourceAnnotation = "oteloperator.services.open-control-plane.io/source"
)

// ID is the stable, DNS-label-safe identifier of the OtelOperator namespace/name: the lower-case
// base32 (no padding) of its SHA-1, 32 characters.
func ID(namespace, name string) string {
	sum := sha1.Sum([]byte(namespace + "/" + name)) //nolint:gosec // naming only.
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))
}

// WorkloadNamespace is the namespace in the workload cluster where the operator of the instance
// runs and its pull secrets, CA bundle and control-plane access secret are copied.
func WorkloadNamespace(id string) string { return "otel-operator-" + id }

// OCIRepositoryName is the name of the chart source in the platform namespace.
func OCIRepositoryName(name string) string { return name }

// CRDsReleaseName is the HelmRelease installing the CRDs into the control plane.
func CRDsReleaseName(name string) string { return name + "-crds" }

// WorkloadReleaseName is the HelmRelease installing the operator into the workload cluster.
func WorkloadReleaseName(name string) string { return name + "-workload" }

// MaxReleaseName is Helm's limit on a release name; Flux rejects a longer spec.releaseName.
const MaxReleaseName = 53

// HelmReleaseName is the Helm release name of the HelmRelease object named object: the object
// name when it fits MaxReleaseName, else its first characters and a hash of the whole name, so
// that distinct objects keep distinct releases.
func HelmReleaseName(object string) string {
	if len(object) <= MaxReleaseName {
		return object
	}
	sum := sha1.Sum([]byte(object)) //nolint:gosec // naming only.
	hash := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))[:10]
	return strings.TrimRight(object[:MaxReleaseName-len(hash)-1], "-.") + "-" + hash
}

// WorkloadHelmReleaseName is the Helm release name of the workload release, which is also the full
// name (fullnameOverride) the provider gives the chart's objects there: derived from the instance
// ID alone (46 characters), so that two instances never share a name in the shared workload
// cluster, also not for cluster-scoped objects such as ClusterRoles, and nothing of it is cut.
func WorkloadHelmReleaseName(id string) string { return "otel-operator-" + id }

// ChartPullSecretName is the platform copy of the version's chartPullSecret.
func ChartPullSecretName(name string) string { return "sp-otelop-" + name }

// ChartCASecretName is the platform Secret (key ca.crt) holding the version's chartCABundleRef,
// referenced from the OCIRepository's spec.certSecretRef.
func ChartCASecretName(name string) string { return "sp-otelop-" + name + "-ca" }

// maxLabelValue is Kubernetes' limit on a label value.
const maxLabelValue = 63

// SourceLabelValue is the SourceLabel value for a source named name: the name when it fits a
// label value, else its first characters and a hash of the whole name (Secret and ConfigMap names
// may have 253 characters; a longer label value fails the apply).
func SourceLabelValue(name string) string {
	if len(name) <= maxLabelValue {
		return name
	}
	sum := sha1.Sum([]byte(name)) //nolint:gosec // naming only.
	hash := strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:]))[:10]
	return strings.TrimRight(name[:maxLabelValue-len(hash)-1], "-.") + "-" + hash
}

// Labels are the labels put on every managed object of the instance.
func Labels(id string) map[string]string {
	return map[string]string{ManagedByLabel: ManagedByValue, InstanceLabel: id}
}
