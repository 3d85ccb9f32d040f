/*
Copyright The otelop Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Finalizer keeps an OtelOperator until its managed resources are gone.
const Finalizer = "oteloperator.services.open-control-plane.io/finalizer"

// ConditionReady is the condition type summarising an OtelOperator.
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	// ReasonReconcileSuccess: every managed resource is ready.
	ReasonReconcileSuccess = "ReconcileSuccess"
	// ReasonReconciling: the provider applied everything and waits for resources to become ready.
	ReasonReconciling = "Reconciling"
	// ReasonWaitingForClusterAccess: the control plane or workload cluster access is not granted yet.
	ReasonWaitingForClusterAccess = "WaitingForClusterAccess"
	// ReasonProviderConfigMissing: no ProviderConfig named after the provider exists.
	ReasonProviderConfigMissing = "ProviderConfigMissing"
	// ReasonVersionNotAllowed: spec.version is not in the ProviderConfig's versions.
	ReasonVersionNotAllowed = "VersionNotAllowed"
	// ReasonInvalidConfiguration: the ProviderConfig or a source it references is invalid or missing.
	ReasonInvalidConfiguration = "InvalidConfiguration"
	// ReasonResourceNotOwned: an object with a name the provider uses exists and was not created by
	// it; the provider neither adopts nor deletes it.
	ReasonResourceNotOwned = "ResourceNotOwned"
	// ReasonReleaseFailed: Flux stopped retrying a HelmRelease (Stalled); the message is Flux's.
	// The operation annotation openmcp.cloud/operation=reconcile on the OtelOperator asks Flux to
	// reset its retries.
	ReasonReleaseFailed = "ReleaseFailed"
	// ReasonReconcileError: applying a managed resource failed; it is retried with backoff.
	ReasonReconcileError = "ReconcileError"
	// ReasonUserResourcesExist: deletion waits for opentelemetry.io resources in the control plane.
	ReasonUserResourcesExist = "UserResourcesExist"
	// ReasonDeleting: managed resources are being deleted.
	ReasonDeleting = "Deleting"
)

// GetConditions returns a pointer to the conditions, for condition helpers.
func (o *OtelOperator) GetConditions() *[]metav1.Condition { return &o.Status.Conditions }

// GetObservedGeneration returns status.observedGeneration.
func (o *OtelOperator) GetObservedGeneration() int64 { return o.Status.ObservedGeneration }

// SetObservedGeneration sets status.observedGeneration.
func (o *OtelOperator) SetObservedGeneration(g int64) { o.Status.ObservedGeneration = g }

// GetPhase returns status.phase.
func (o *OtelOperator) GetPhase() string { return string(o.Status.Phase) }

// SetPhase sets status.phase.
func (o *OtelOperator) SetPhase(p string) { o.Status.Phase = Phase(p) }

// GetStatus returns the status, compared before and after a reconcile to skip no-op writes.
func (o *OtelOperator) GetStatus() any { return &o.Status }

// Finalizer returns the finalizer the provider puts on an OtelOperator.
func (o *OtelOperator) Finalizer() string { return Finalizer }

// PollInterval returns spec.pollInterval or DefaultPollInterval.
func (c *ProviderConfig) PollInterval() time.Duration {
	if c.Spec.PollInterval == nil || c.Spec.PollInterval.Duration <= 0 {
		return DefaultPollInterval
	}
	return c.Spec.PollInterval.Duration
}

// Version returns the entry of spec.versions for version, and whether it exists.
func (c *ProviderConfig) Version(version string) (VersionConfig, bool) {
	for _, v := range c.Spec.Versions {
		if v.Version == version {
			return v, true
		}
	}
	return VersionConfig{}, false
}

// AllowedVersions lists spec.versions[].version in order.
func (c *ProviderConfig) AllowedVersions() []string {
	out := make([]string, 0, len(c.Spec.Versions))
	for _, v := range c.Spec.Versions {
		out = append(out, v.Version)
	}
	return out
}
