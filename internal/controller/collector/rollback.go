package collector

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/apply"
	"github.com/otelop/otelop/internal/naming"
)

// Automatic rollback (opt-in): when a new generation of a collector cannot run while the one
// before it was Ready, the operator builds and applies that last Ready generation again and holds
// there until the spec changes. See docs/rollback.md.
const (
	// AutoRollbackAnnotation turns automatic rollback on ("true") or off ("false") for one
	// collector, over the operator's --collector-auto-rollback.
	AutoRollbackAnnotation = "otelop.io/auto-rollback"
	// RollbackDeadlineAnnotation is how long (a Go duration, e.g. "10m") a new generation may
	// take to become available before it is rolled back, over --collector-rollback-deadline.
	RollbackDeadlineAnnotation = "otelop.io/rollback-deadline"
	// lastReadyGenerationAnnotation and lastReadyAtAnnotation on the record say which generation
	// it holds and when it was recorded.
	lastReadyGenerationAnnotation = "otelop.io/last-ready-generation"
	lastReadyAtAnnotation         = "otelop.io/last-ready-at"
	// lastReadyComponent is the record's component label.
	lastReadyComponent = "opentelemetry-collector-last-ready"
	// lastReadyKey is the record's key: the collector (name, labels, annotations, spec) as JSON,
	// gzipped.
	lastReadyKey = "collector.json.gz"
)

// DefaultRollbackDeadline is --collector-rollback-deadline's default.
const DefaultRollbackDeadline = 10 * time.Minute

// RollbackOptions are the operator-wide automatic rollback settings.
type RollbackOptions struct {
	// Enabled turns automatic rollback on for collectors not annotated otherwise.
	Enabled bool
	// Deadline is how long a new generation may take to become available (0: the default).
	Deadline time.Duration
}

// rollbackEnabled reports whether automatic rollback applies to otelcol: its annotation, else
// the operator's setting. Sidecar collectors have no workload to roll back.
func (o RollbackOptions) enabledFor(otelcol *v1beta1.OpenTelemetryCollector) bool {
	if otelcol.Spec.Mode == v1beta1.ModeSidecar {
		return false
	}
	if v, ok := otelcol.Annotations[AutoRollbackAnnotation]; ok {
		on, err := strconv.ParseBool(v)
		return err == nil && on
	}
	return o.Enabled
}

// deadlineFor is the rollout deadline of otelcol: its annotation when it parses as a positive
// duration, else the operator's.
func (o RollbackOptions) deadlineFor(otelcol *v1beta1.OpenTelemetryCollector) time.Duration {
	if d, err := time.ParseDuration(otelcol.Annotations[RollbackDeadlineAnnotation]); err == nil && d > 0 {
		return d
	}
	if o.Deadline > 0 {
		return o.Deadline
	}
	return DefaultRollbackDeadline
}

// lastReadyName is the name of a collector's last-Ready record (a ConfigMap it owns).
func lastReadyName(collector string) string { return naming.Collector(collector) + "-last-ready" }

// isLastReadyRecord reports whether o is the last-Ready record of otelcol (by name: prune never
// counts it as an old config version).
func isLastReadyRecord(o client.Object, otelcol *v1beta1.OpenTelemetryCollector) bool {
	gvk := o.GetObjectKind().GroupVersionKind()
	return gvk.Kind == "ConfigMap" && gvk.Group == "" && o.GetName() == lastReadyName(otelcol.Name)
}

// lastReady is a collector's last-Ready record, decoded.
type lastReady struct {
	// collector is the collector as it was when its generation was Ready: name, labels,
	// annotations and spec.
	collector *v1beta1.OpenTelemetryCollector
	// generation is that generation; at is when it was recorded.
	generation int64
	at         time.Time
}

// readLastReady reads otelcol's record from the cache. A record that otelcol does not own, or
// that does not decode, counts as none.
func (r *Reconciler) readLastReady(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector) (*lastReady, error) {
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: otelcol.Namespace, Name: lastReadyName(otelcol.Name)}, cm)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the last Ready record: %w", err)
	}
	if !ownedBy(cm, otelcol) {
		return nil, nil
	}
	rec, err := decodeLastReady(cm)
	if err != nil {
		return nil, nil //nolint:nilerr // a record that does not decode is replaced at the next Ready
	}
	return rec, nil
}

func decodeLastReady(cm *corev1.ConfigMap) (*lastReady, error) {
	gen, err := strconv.ParseInt(cm.Annotations[lastReadyGenerationAnnotation], 10, 64)
	if err != nil {
		return nil, err
	}
	at, err := time.Parse(time.RFC3339, cm.Annotations[lastReadyAtAnnotation])
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(cm.BinaryData[lastReadyKey]))
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(io.LimitReader(zr, 8<<20))
	if err != nil {
		return nil, err
	}
	col := &v1beta1.OpenTelemetryCollector{}
	if err := json.Unmarshal(raw, col); err != nil {
		return nil, err
	}
	return &lastReady{collector: col, generation: gen, at: at}, nil
}

// lastReadyRecord is the record of otelcol as it is now (Ready at its generation), owned by it.
func lastReadyRecord(otelcol *v1beta1.OpenTelemetryCollector, now time.Time) (*corev1.ConfigMap, error) {
	snap := &v1beta1.OpenTelemetryCollector{
		ObjectMeta: metav1.ObjectMeta{Name: otelcol.Name, Namespace: otelcol.Namespace, Labels: otelcol.Labels,
			Annotations: otelcol.Annotations, Generation: otelcol.Generation},
		Spec: otelcol.Spec,
	}
	raw, err := json.Marshal(snap)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: lastReadyName(otelcol.Name), Namespace: otelcol.Namespace,
			Labels: map[string]string{ManagedByLabel: ManagedByValue, InstanceLabel: naming.Instance(otelcol.Namespace, otelcol.Name),
				ComponentLabel: lastReadyComponent},
			Annotations: map[string]string{lastReadyGenerationAnnotation: strconv.FormatInt(otelcol.Generation, 10),
				lastReadyAtAnnotation: now.UTC().Format(time.RFC3339)},
		},
		BinaryData: map[string][]byte{lastReadyKey: buf.Bytes()},
	}
	setOwner(cm, otelcol)
	return cm, nil
}

// asOf returns otelcol with the name, labels, annotations and spec of rec: what Build makes the
// last Ready generation's objects from (owners, UID and status stay otelcol's).
func (rec *lastReady) asOf(otelcol *v1beta1.OpenTelemetryCollector) *v1beta1.OpenTelemetryCollector {
	out := otelcol.DeepCopy()
	out.Labels, out.Annotations = rec.collector.Labels, rec.collector.Annotations
	out.Spec = *rec.collector.Spec.DeepCopy()
	return out
}

// heldAt reports whether otelcol is held at its last Ready generation: its status says the
// current generation was rolled back.
func heldAt(otelcol *v1beta1.OpenTelemetryCollector) bool {
	c := meta.FindStatusCondition(otelcol.Status.Conditions, v1beta1.ConditionRolledBack)
	return c != nil && c.Status == metav1.ConditionTrue && c.ObservedGeneration == otelcol.Generation
}

// rollbackCause says why the current generation must be rolled back, or "" when it must not (or
// not yet: wait, when positive, is when the deadline passes). It applies only when rec holds an
// earlier generation, the current one is not Ready, and either a container of one of its new
// pods (created after rec was recorded) crash-loops or cannot start, or the collector has not
// been Ready for longer than the deadline.
func rollbackCause(otelcol *v1beta1.OpenTelemetryCollector, rec *lastReady, st v1beta1.OpenTelemetryCollectorStatus,
	crash *podCrash, deadline time.Duration, now time.Time) (cause string, wait time.Duration) {
	if rec == nil || rec.generation >= otelcol.Generation || meta.IsStatusConditionTrue(st.Conditions, v1beta1.ConditionReady) {
		return "", 0
	}
	if crash != nil && !crash.created.Before(rec.at) && (crash.reason != v1beta1.ReasonCrashLoopBackOff || crash.looping) {
		return crash.Message(), 0
	}
	since := rec.at
	if c := meta.FindStatusCondition(otelcol.Status.Conditions, v1beta1.ConditionReady); c != nil &&
		c.Status != metav1.ConditionTrue && c.LastTransitionTime.After(since) {
		since = c.LastTransitionTime.Time
	}
	if left := deadline - now.Sub(since); left > 0 {
		return "", left
	}
	msg := "not available"
	if c := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady); c != nil {
		msg = c.Message
	}
	return fmt.Sprintf("not Ready within %s: %s", deadline, msg), 0
}

// rolledBackStatus marks st (computed for the last Ready generation's objects) as held: Ready=False
// with reason RolledBack and RolledBack=True at the current generation, both saying what failed.
// held is the stored RolledBack message when the collector was already held.
func rolledBackStatus(otelcol *v1beta1.OpenTelemetryCollector, st v1beta1.OpenTelemetryCollectorStatus, msg string) v1beta1.OpenTelemetryCollectorStatus {
	gen := otelcol.Generation
	now := ""
	if c := meta.FindStatusCondition(st.Conditions, v1beta1.ConditionReady); c != nil && c.Status != metav1.ConditionTrue {
		now = "; the restored generation is not Ready either: " + c.Message
	}
	setCondition(&st, gen, v1beta1.ConditionRolledBack, metav1.ConditionTrue, v1beta1.ReasonRolledBack, msg)
	setCondition(&st, gen, v1beta1.ConditionReady, metav1.ConditionFalse, v1beta1.ReasonRolledBack, truncate(msg+now, 2000))
	meta.RemoveStatusCondition(&st.Conditions, v1beta1.ConditionReconciling)
	return st
}

// rollbackMessage names the failing generation, the restored one and the cause.
func rollbackMessage(otelcol *v1beta1.OpenTelemetryCollector, rec *lastReady, cause string) string {
	return truncate(fmt.Sprintf("generation %d rolled back to generation %d (the last Ready one): %s; held there until the spec changes",
		otelcol.Generation, rec.generation, cause), 1500)
}

// recordLastReady writes otelcol's record: its current generation is Ready. existing are the
// objects the collector owns (the record among them once written).
func (r *Reconciler) recordLastReady(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, existing apply.Objects) error {
	cm, err := lastReadyRecord(otelcol, time.Now())
	if err != nil {
		return err
	}
	live := existing[apply.KeyOf(cm)]
	ch, err := r.Applier.Apply(ctx, cm, live)
	if err != nil {
		return fmt.Errorf("recording the last Ready generation: %w", err)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("recorded the last Ready generation", "generation", otelcol.Generation, "action", ch.Action)
	return nil
}

// dropLastReady deletes otelcol's record when automatic rollback is off for it: a record left
// from an earlier opt-in must never bring back a generation that old.
func (r *Reconciler) dropLastReady(ctx context.Context, otelcol *v1beta1.OpenTelemetryCollector, existing apply.Objects) error {
	for _, o := range existing {
		if isLastReadyRecord(o, otelcol) {
			if _, err := r.Applier.Delete(ctx, o); err != nil {
				return fmt.Errorf("deleting the last Ready record: %w", err)
			}
		}
	}
	return nil
}
