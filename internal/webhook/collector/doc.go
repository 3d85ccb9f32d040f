// Package collector holds the admission webhooks of the v1beta1 OpenTelemetryCollector: the
// defaulter (mode, replicas, autoscaler, ingress and the persisted config defaults) and the
// validator (every rule of upstream's webhook plus the structural config checks, returned together
// as one field.ErrorList, and a privilege-escalation check on the RBAC the operator would grant).
//
// Admission here has no side effects: no events, no metrics, no writes. The only API requests made
// are SubjectAccessReviews, which do not persist anything, so dry-run requests are safe.
package collector
