package install

import "testing"

// The scenarios are in installtest, shared with test/chart; each is documented there.

// TestV1alpha1RoundTripsThroughShippedConversionWebhook: the shipped CRD converts through the
// operator's /convert behind the shipped webhook Service.
func TestV1alpha1RoundTripsThroughShippedConversionWebhook(t *testing.T) {
	op.V1alpha1RoundTripsThroughConversionWebhook(t)
}

// TestClusterReceiversGetTheirClusterRole: the shipped RBAC lets the operator grant what
// k8s_cluster and k8sobjects need, without escalate.
func TestClusterReceiversGetTheirClusterRole(t *testing.T) { op.ClusterReceiversGetTheirClusterRole(t) }

// TestMetricsNeedTheShippedReaderRole: 401/403/200 with the shipped metrics-reader ClusterRole.
func TestMetricsNeedTheShippedReaderRole(t *testing.T) { op.MetricsNeedTheReaderRole(t) }

// TestLeaderElectionAndCertificateInOperatorNamespace: Lease and certificate Secret in the
// operator's namespace with the shipped namespaced Role.
func TestLeaderElectionAndCertificateInOperatorNamespace(t *testing.T) {
	op.LeaderElectionAndCertificateInOperatorNamespace(t)
}

// TestReadinessIncludesTheWebhookServer: the shipped readiness probe checks the webhook server.
func TestReadinessIncludesTheWebhookServer(t *testing.T) { op.ReadinessIncludesTheWebhookServer(t) }

// TestPodWebhookSkipsSystemNamespaces: the shipped pod webhook is not called for pods in
// kube-system or the operator's namespace, and still injects elsewhere.
func TestPodWebhookSkipsSystemNamespaces(t *testing.T) { op.PodWebhookSkipsSystemNamespaces(t) }
