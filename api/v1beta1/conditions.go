package v1beta1

// Condition types set on the operator's resources. They follow the kstatus conventions, so that
// kstatus-aware tools (kubectl wait, Flux, Argo CD, cli-utils) understand them:
//   - Ready is True when the workload is available and matches the latest generation.
//   - Reconciling is True while the operator is still making changes or waiting for the workload
//     to roll out (an "abnormal-true" condition: it is removed when the work is done).
//   - Stalled is True when the operator cannot make progress without a change to the spec or the
//     cluster (also abnormal-true).
const (
	// ConditionReady says whether the resource's workload is available.
	ConditionReady = "Ready"
	// ConditionReconciling says the operator is working towards the desired state.
	ConditionReconciling = "Reconciling"
	// ConditionStalled says the operator has stopped making progress and needs a change to
	// continue.
	ConditionStalled = "Stalled"
	// ConditionRolledBack says the current generation was rolled back to the last Ready one
	// (automatic rollback, an addition of ours; see docs/rollback.md): True while the operator
	// holds the collector there, that is until the spec changes.
	ConditionRolledBack = "RolledBack"
)

// Condition reasons. Reasons are CamelCase and say why a condition has its status; messages carry
// the details.
const (
	// ReasonReconciled: Ready=True; every generated object was applied and the workload is
	// available. Upstream sets this reason too.
	ReasonReconciled = "Reconciled"
	// ReasonReconcileError: Ready=False; applying the generated objects failed (transient API
	// errors, conflicts). Upstream sets this reason too. The operator retries.
	ReasonReconcileError = "ReconcileError"
	// ReasonStatusUpdateFailed: Ready=False; the status could not be written. Kept for
	// compatibility with upstream, which sets it.
	ReasonStatusUpdateFailed = "StatusUpdateFailed"
	// ReasonProgressing: Reconciling=True, Ready=False; objects were applied and the workload is
	// rolling out.
	ReasonProgressing = "Progressing"
	// ReasonWorkloadUnavailable: Ready=False; the workload exists but not enough pods are
	// available.
	ReasonWorkloadUnavailable = "WorkloadUnavailable"
	// ReasonCrashLoopBackOff: Ready=False, Stalled=True; the workload is not available because a
	// container of the collector's pods keeps exiting with an error (usually a configuration the
	// collector refuses at start). The message names the pod, the container, the exit code and
	// the last line of the termination message. It clears once the pods are available.
	ReasonCrashLoopBackOff = "CrashLoopBackOff"
	// ReasonImagePullBackOff: Ready=False, Stalled=True; the workload is not available because the
	// kubelet cannot pull the image of a container of the collector's pods (a typo in the image, a
	// missing imagePullSecret, an unreachable or private registry). The kubelet's waiting reasons
	// ErrImagePull, ImagePullBackOff, RegistryUnavailable and SignatureValidationFailed all give
	// this reason; the message names the pod, the container, the image, the kubelet's reason of
	// the failed pull and its message. It clears once the pods are available.
	ReasonImagePullBackOff = "ImagePullBackOff"
	// ReasonInvalidImageName: Ready=False, Stalled=True; the kubelet cannot parse the image
	// reference of a container of the collector's pods. The message names the pod, the container
	// and the image.
	ReasonInvalidImageName = "InvalidImageName"
	// ReasonErrImageNeverPull: Ready=False, Stalled=True; a container of the collector's pods has
	// imagePullPolicy Never and its image is not on the node.
	ReasonErrImageNeverPull = "ErrImageNeverPull"
	// ReasonImageInspectError: Ready=False, Stalled=True; the container runtime cannot inspect the
	// image of a container of the collector's pods.
	ReasonImageInspectError = "ImageInspectError"
	// ReasonCreateContainerConfigError: Ready=False, Stalled=True; the kubelet cannot build the
	// configuration of a container of the collector's pods, usually because an environment
	// variable refers to a ConfigMap, Secret or key that does not exist. The message names the
	// pod, the container, the image and the kubelet's message.
	ReasonCreateContainerConfigError = "CreateContainerConfigError"
	// ReasonCreateContainerError: Ready=False, Stalled=True; the container runtime refused to
	// create a container of the collector's pods (for example a volume mount it cannot make). The
	// message names the pod, the container, the image and the kubelet's message.
	ReasonCreateContainerError = "CreateContainerError"
	// ReasonInvalidSpec: Stalled=True, Ready=False; the spec cannot be built into objects (for
	// example an invalid collector configuration). Retrying will not help until the spec changes.
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonUpgradeFailed: Stalled=True, Ready=False; migrating the resource to the operator's
	// collector version failed.
	ReasonUpgradeFailed = "UpgradeFailed"
	// ReasonOwnershipConflict: Stalled=True, Ready=False; a cluster-scoped object the collector
	// needs (ClusterRole, ClusterRoleBinding) exists and belongs to another collector or was not
	// created by the operator. Nothing is applied until the name is free.
	ReasonOwnershipConflict = "OwnershipConflict"
	// ReasonTargetAllocatorNotFound: Stalled=True, Ready=False; the collector's
	// opentelemetry.io/target-allocator label names a TargetAllocator that does not exist in its
	// namespace. As upstream, nothing is applied until it exists; its creation triggers a reconcile.
	ReasonTargetAllocatorNotFound = "TargetAllocatorNotFound"
	// ReasonUnmanaged: Ready=Unknown; managementState is unmanaged and the operator does not
	// touch the resource.
	ReasonUnmanaged = "Unmanaged"
	// ReasonRolledBack: Ready=False and RolledBack=True; the current generation's pods crash-looped,
	// could not start or were not available within the deadline, and the operator restored the
	// last Ready generation's objects (automatic rollback, opt-in). The message names the failing
	// generation, the pod, the container and the error. It holds until the spec changes.
	ReasonRolledBack = "RolledBack"
)
