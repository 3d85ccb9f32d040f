package operator

// The operator's own permissions, generated into config/rbac/role.yaml by `make generate`: a
// ClusterRole and, for the objects the operator keeps in its own namespace, a Role (namespace
// "system", renamed to the install namespace by kustomize). TestShippedRoleCoversGrantableRules
// (rbac_test.go) fails when the ClusterRole does not cover every rule the operator can put into a
// collector's ClusterRole: without `escalate`, the API server refuses to let the operator create a
// role granting more than the operator holds.
//
// Kept narrow on purpose (see docs/differences.md):
//   - Secrets: only the webhook certificate Secret, in the operator's namespace (Role below).
//   - Its leader-election Lease: by name, in the operator's namespace (Role below).
//   - Webhook configurations and the collector CRD: patched only by name (CA bundle injection).
//   - No `escalate` or `bind`.
// Names in resourceNames are the defaults of --webhook-cert-secret, --leader-election-id and
// --webhook-cert-inject-*; a deployment that changes those flags must extend the roles.

// Custom resources.
// +kubebuilder:rbac:groups=opentelemetry.io,resources=opentelemetrycollectors;opampbridges;instrumentations;targetallocators,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=opentelemetry.io,resources=opentelemetrycollectors/status;opampbridges/status;instrumentations/status;targetallocators/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=opentelemetry.io,resources=opentelemetrycollectors/finalizers;opampbridges/finalizers;targetallocators/finalizers,verbs=update

// Objects the controllers own, in every watched namespace.
// +kubebuilder:rbac:groups="",resources=configmaps;services;serviceaccounts,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments;daemonsets;statefulsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=autoscaling,resources=horizontalpodautoscalers,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=networking.k8s.io,resources=ingresses;networkpolicies,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=rbac.authorization.k8s.io,resources=clusterroles;clusterrolebindings;roles;rolebindings,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=servicemonitors;podmonitors,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=route.openshift.io,resources=routes;routes/custom-host,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=httproutes,verbs=get;list;watch;create;update;patch;delete

// Events the operator records.
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Capability detection (CRD metadata is watched) and CA bundle injection (by name only).
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;list;watch
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,resourceNames=opentelemetrycollectors.opentelemetry.io,verbs=patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=opentelemetry-operator-mutating-webhook-configuration,verbs=get;patch
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=opentelemetry-operator-validating-webhook-configuration,verbs=get;patch

// The collector webhook's privilege check (SubjectAccessReview for the requesting user) and the
// start-up check whether the operator may create cluster RBAC (SelfSubjectAccessReview).
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews;selfsubjectaccessreviews,verbs=create

// In the operator's namespace only: the self-managed webhook certificate Secret and the
// leader-election Lease. `create` cannot be limited to a name, so it is limited to the namespace.
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,verbs=create
// +kubebuilder:rbac:groups="",namespace=system,resources=secrets,resourceNames=opentelemetry-operator-webhook-cert,verbs=get;update
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=system,resources=leases,resourceNames=9f7554c3.opentelemetry.io,verbs=get;update

// What the operator grants to collectors and therefore must hold itself. Derived from the
// component registry (internal/collectorconfig: k8sattributes, resourcedetection, k8s_cluster,
// k8s_events, kubeletstats, k8s_observer, k8s_leader_elector, and k8sobjects for the common
// objects listed in rbac_test.go). The pod webhook also reads namespaces and replicasets.
// +kubebuilder:rbac:groups="",resources=pods;pods/status;namespaces;namespaces/status;nodes;nodes/spec;events;endpoints;persistentvolumes;persistentvolumeclaims;replicationcontrollers;replicationcontrollers/status;resourcequotas,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=nodes/stats;nodes/proxy,verbs=get
// +kubebuilder:rbac:groups=apps;extensions,resources=replicasets;deployments;daemonsets;statefulsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list;watch
// +kubebuilder:rbac:groups=discovery.k8s.io,resources=endpointslices,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=get;list;watch
// +kubebuilder:rbac:groups=config.openshift.io,resources=infrastructures;infrastructures/status,verbs=get;list;watch
// +kubebuilder:rbac:groups=quota.openshift.io,resources=clusterresourcequotas,verbs=get;list;watch
// What the operator grants to target allocators' generated ServiceAccounts
// (manifestutils.TargetAllocatorRBAC) beyond the above: reading every Prometheus Operator kind.
// +kubebuilder:rbac:groups=monitoring.coreos.com,resources=probes;scrapeconfigs,verbs=get;list;watch
// Leases: only the verbs the k8s_leader_elector extension is granted (client-go's Lease lock: get,
// create, update); no list, watch, patch or delete on the cluster's Leases (kube-node-lease
// included). The operator's default Lease is covered by name in the Role below; the Leases of
// --shard instances (<id>-shard-<hash>, names not known in advance) use this rule.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;create;update
