package instrumentation

import (
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/internal/inject"
	inst "github.com/otelop/otelop/internal/instrumentation"
)

// The workload kinds the controller follows.
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	KindDaemonSet   = "DaemonSet"
)

// Annotations the controller reads and writes.
const (
	// RestartOptInAnnotation on an Instrumentation: "true" lets the controller restart the
	// workloads pending for it, "false" forbids it even when --restart-pending-workloads is set.
	// A workload of another namespace than the Instrumentation is restarted only when it also
	// carries this annotation set to "true" itself (on the Deployment, StatefulSet or DaemonSet).
	RestartOptInAnnotation = "otelop.io/restart-pending-workloads"
	// RestartedAtAnnotation is the pod template annotation `kubectl rollout restart` sets.
	RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"
	// RestartedForAnnotation is set on the pod template next to RestartedAtAnnotation: the
	// instrumentation record (inst.InjectedAnnotation format) the restart was for. The controller
	// never restarts a workload twice for the same record, so a webhook that keeps not injecting
	// cannot cause a restart loop.
	RestartedForAnnotation = "otelop.io/restarted-for"
	// DeploymentRevisionAnnotation is set by the Deployment controller on a Deployment and its
	// ReplicaSets; the ReplicaSet with the Deployment's revision is the current one.
	DeploymentRevisionAnnotation = "deployment.kubernetes.io/revision"
)

// The reasons a workload is pending (PendingWorkload.Reason).
const (
	ReasonNotInjected         = "NotInjected"
	ReasonOutdated            = "Outdated"
	ReasonRollingOut          = "RollingOut"
	ReasonRestartDidNotInject = "RestartDidNotInject"
)

// Index is what the controller needs of the Instrumentations, by namespace and name: their
// generations and the other namespaces they serve.
type Index map[string]map[string]IndexEntry

// IndexEntry is one Instrumentation in an Index.
type IndexEntry struct {
	Generation int64
	// Allowed is its inst.AllowedNamespacesAnnotation: the other namespaces whose workloads may
	// name it.
	Allowed string
}

// NewIndex indexes list.
func NewIndex(list []v1alpha1.Instrumentation) Index {
	ix := Index{}
	for _, in := range list {
		if ix[in.Namespace] == nil {
			ix[in.Namespace] = map[string]IndexEntry{}
		}
		ix[in.Namespace][in.Name] = IndexEntry{Generation: in.Generation, Allowed: in.Annotations[inst.AllowedNamespacesAnnotation]}
	}
	return ix
}

// Resolve returns the Instrumentation that serves req for a pod in namespace ns and its
// generation: "true" means the only Instrumentation of ns; a name or namespace/name must exist,
// and one of another namespace must list ns in its inst.AllowedNamespacesAnnotation. ok is false
// when nothing serves it (the webhook injects nothing either): such a workload is not followed,
// not counted in the Instrumentation's status and never restarted for it.
func (ix Index) Resolve(req inst.Request, ns string) (key types.NamespacedName, generation int64, ok bool) {
	if inject.IsTrue(req.Value) {
		if len(ix[ns]) != 1 {
			return key, 0, false
		}
		for name, e := range ix[ns] {
			return types.NamespacedName{Namespace: ns, Name: name}, e.Generation, true
		}
	}
	key, err := inject.Target(inst.InjectAnnotation(req.Language), req.Value, ns)
	if err != nil {
		return key, 0, false
	}
	e, ok := ix[key.Namespace][key.Name]
	if !ok || !inject.AllowsNamespace(key.Namespace, e.Allowed, ns) {
		return key, 0, false
	}
	return key, e.Generation, true
}

// Workload is the compact view of a Deployment, StatefulSet or DaemonSet that asks for
// instrumentation: all the controller keeps of it while it counts its pods.
type Workload struct {
	Kind      string
	Namespace string
	Name      string
	UID       types.UID
	// Want is, sorted by language, what its pods should carry: each language it asks for, with
	// the Instrumentation (and its current generation) that serves it.
	Want []inst.Injected
	// RestartedFor is the pod template's RestartedForAnnotation.
	RestartedFor string
	// Revision is the current revision (Deployments: the revision annotation; StatefulSets:
	// status.updateRevision); empty counts every pod. While the workload is not rolling out, pods
	// of other revisions (left-over failed pods) are not counted.
	Revision string
	// RollingOut is true while the workload's controller is replacing or creating pods.
	RollingOut bool
	// NoRestart says why a template patch would not restart the pods ("" when it would).
	NoRestart string
	// OptIn is the workload's own RestartOptInAnnotation ("true": it may be restarted for an
	// Instrumentation of another namespace, which that Instrumentation's opt-in alone never allows).
	OptIn bool

	// restartedForKey is the pod template annotation RestartedFor is read from and restarts write.
	restartedForKey string
	// record reads what a pod carries (as the webhook recorded it).
	record  func(podAnn map[string]string) []inst.Injected
	tallies map[types.NamespacedName]*tally
}

// tally counts a workload's pods for one Instrumentation.
type tally struct{ pods, missing, outdated int }

// Record returns the instrumentation record its pods should carry (RestartedForAnnotation).
func (w *Workload) Record() string { return inst.FormatInjected(w.Want) }

// restartedForAnnotation is the pod template annotation restarts of w record w.Record() in.
func (w *Workload) restartedForAnnotation() string {
	if w.restartedForKey == "" {
		return RestartedForAnnotation
	}
	return w.restartedForKey
}

// Ref names the workload in status and Events.
func (w *Workload) Ref() v1alpha1.PendingWorkload {
	return v1alpha1.PendingWorkload{Kind: w.Kind, Namespace: w.Namespace, Name: w.Name}
}

// FromDeployment returns the workload view of d, or nil when it asks for no instrumentation an
// Instrumentation in ix serves. nsAnn are its namespace's annotations; enabled filters languages
// (nil: all).
func FromDeployment(d *appsv1.Deployment, nsAnn map[string]string, ix Index, enabled func(inst.Language) bool) *Workload {
	return withDeployment(instrumentationWorkload(KindDeployment, &d.ObjectMeta, &d.Spec.Template, nsAnn, ix, enabled), d)
}

// FromStatefulSet is FromDeployment for a StatefulSet.
func FromStatefulSet(s *appsv1.StatefulSet, nsAnn map[string]string, ix Index, enabled func(inst.Language) bool) *Workload {
	return withStatefulSet(instrumentationWorkload(KindStatefulSet, &s.ObjectMeta, &s.Spec.Template, nsAnn, ix, enabled), s)
}

// FromDaemonSet is FromDeployment for a DaemonSet.
func FromDaemonSet(ds *appsv1.DaemonSet, nsAnn map[string]string, ix Index, enabled func(inst.Language) bool) *Workload {
	return withDaemonSet(instrumentationWorkload(KindDaemonSet, &ds.ObjectMeta, &ds.Spec.Template, nsAnn, ix, enabled), ds)
}

// withDeployment fills in what w (nil: none) needs of d's rollout.
func withDeployment(w *Workload, d *appsv1.Deployment) *Workload {
	if w == nil {
		return nil
	}
	w.Revision = d.Annotations[DeploymentRevisionAnnotation]
	w.RollingOut = deploymentRollingOut(d)
	if d.Spec.Paused {
		w.NoRestart = "paused"
	}
	return w
}

func withStatefulSet(w *Workload, s *appsv1.StatefulSet) *Workload {
	if w == nil {
		return nil
	}
	w.Revision = s.Status.UpdateRevision
	w.RollingOut = statefulSetRollingOut(s)
	if s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		w.NoRestart = "updateStrategy OnDelete"
	}
	return w
}

func withDaemonSet(w *Workload, ds *appsv1.DaemonSet) *Workload {
	if w == nil {
		return nil
	}
	w.RollingOut = daemonSetRollingOut(ds)
	if ds.Spec.UpdateStrategy.Type == appsv1.OnDeleteDaemonSetStrategyType {
		w.NoRestart = "updateStrategy OnDelete"
	}
	return w
}

func instrumentationWorkload(kind string, meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec, nsAnn map[string]string, ix Index, enabled func(inst.Language) bool) *Workload {
	if meta.DeletionTimestamp != nil {
		return nil
	}
	var want []inst.Injected
	for _, req := range inst.Requests(tmpl.Annotations, nsAnn) {
		if enabled != nil && !enabled(req.Language) {
			continue
		}
		key, gen, ok := ix.Resolve(req, meta.Namespace)
		if !ok {
			continue
		}
		want = append(want, inst.Injected{Language: req.Language, Instrumentation: key, Generation: gen})
	}
	if len(want) == 0 {
		return nil
	}
	slices.SortFunc(want, func(a, b inst.Injected) int { return strings.Compare(string(a.Language), string(b.Language)) })
	return newWorkload(kind, meta, tmpl, want, RestartedForAnnotation, instrumentationRecord)
}

// instrumentationRecord reads what a pod carries of Instrumentations (an unreadable record is no
// record).
func instrumentationRecord(podAnn map[string]string) []inst.Injected {
	got, err := inst.ParseInjected(podAnn[inst.InjectedAnnotation])
	if err != nil {
		return nil
	}
	return got
}

// newWorkload returns the view of a workload whose pods should carry want: restartedFor is the
// pod template annotation its restarts record want in, record reads what a pod carries.
func newWorkload(kind string, meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec, want []inst.Injected, restartedFor string,
	record func(podAnn map[string]string) []inst.Injected) *Workload {
	return &Workload{Kind: kind, Namespace: meta.Namespace, Name: meta.Name, UID: meta.UID, Want: want,
		RestartedFor: tmpl.Annotations[restartedFor], OptIn: inject.IsTrue(meta.Annotations[RestartOptInAnnotation]),
		restartedForKey: restartedFor, record: record, tallies: map[types.NamespacedName]*tally{}}
}

// Observe counts one of the workload's live pods from its annotations; revision is the pod's
// (its ReplicaSet's revision, or its controller-revision-hash label).
func (w *Workload) Observe(podAnn map[string]string, revision string) {
	if !w.RollingOut && w.Revision != "" && revision != w.Revision {
		return
	}
	record := w.record
	if record == nil {
		record = instrumentationRecord
	}
	got := record(podAnn)
	seen := map[types.NamespacedName]bool{}
	for _, want := range w.Want {
		t := w.tallies[want.Instrumentation]
		if t == nil {
			t = &tally{}
			w.tallies[want.Instrumentation] = t
		}
		if !seen[want.Instrumentation] {
			seen[want.Instrumentation] = true
			t.pods++
		}
		i := slices.IndexFunc(got, func(g inst.Injected) bool {
			return g.Language == want.Language && g.Instrumentation == want.Instrumentation
		})
		switch {
		case i < 0:
			t.missing++
		case got[i].Generation < want.Generation:
			t.outdated++
		}
	}
}

// Verdicts returns, per Instrumentation it asks for, "" when every counted pod carries it and
// the pending reason otherwise. Instrumentations with no counted pod (scaled to zero, or no
// pod created yet) are left out.
func (w *Workload) Verdicts() map[types.NamespacedName]string {
	out := map[types.NamespacedName]string{}
	for key, t := range w.tallies {
		switch {
		case t.pods == 0:
			continue
		case t.missing == 0 && t.outdated == 0:
			out[key] = ""
		case w.RollingOut:
			out[key] = ReasonRollingOut
		case w.RestartedFor != "" && w.RestartedFor == w.Record():
			out[key] = ReasonRestartDidNotInject
		case t.missing > 0:
			out[key] = ReasonNotInjected
		default:
			out[key] = ReasonOutdated
		}
	}
	return out
}

// deploymentRollingOut follows `kubectl rollout status`: the controller has not seen the latest
// spec, or not every replica is updated and available, or old replicas remain.
func deploymentRollingOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	return s.ObservedGeneration < d.Generation || s.UpdatedReplicas < want || s.Replicas > s.UpdatedReplicas ||
		s.AvailableReplicas < s.UpdatedReplicas
}

func statefulSetRollingOut(s *appsv1.StatefulSet) bool {
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	st := s.Status
	return st.ObservedGeneration < s.Generation || st.UpdatedReplicas < want || st.ReadyReplicas < want ||
		(st.UpdateRevision != "" && st.CurrentRevision != st.UpdateRevision)
}

func daemonSetRollingOut(ds *appsv1.DaemonSet) bool {
	st := ds.Status
	return st.ObservedGeneration < ds.Generation || st.UpdatedNumberScheduled < st.DesiredNumberScheduled ||
		st.NumberAvailable < st.DesiredNumberScheduled
}
