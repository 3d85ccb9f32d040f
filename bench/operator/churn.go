package main

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/bench/internal/procstat"
	"github.com/otelop/otelop/internal/naming"
	"github.com/otelop/otelop/test/simcluster"
)

// churnResult holds the churn step: the configuration of many collectors changed at once, until
// each one's workload has rolled out pods that mount the new ConfigMap.
type churnResult struct {
	Collectors int            `json:"collectors"`
	ByKind     map[string]int `json:"by_kind"`
	LoadAt     string         `json:"loadavg_at_change"`
	Seconds    float64        `json:"rolled_seconds"`
	// TemplatesSeconds is when every workload's pod template referred to the new ConfigMap (the
	// operator's part); Seconds adds the rollouts (the controllers' and kwok's part).
	TemplatesSeconds float64    `json:"templates_seconds"`
	Writes           writeCount `json:"writes"`
	// FloorSeconds is the same change made directly by a client on the floor's cluster: a new
	// ConfigMap per workload and the pod template switched to it, until every rollout is complete.
	FloorSeconds float64 `json:"floor_seconds,omitempty"`
	LoadAtFloor  string  `json:"loadavg_at_floor,omitempty"`
	// KindSeconds is, by workload kind, when every churned workload of that kind had first rolled
	// out (the operator's run).
	KindSeconds map[string]float64 `json:"kind_seconds,omitempty"`
	// StrayPodDeletes and FloorStrayPodDeletes count the pods kwok removed that no controller had
	// deleted, in each run's window (see strayPodDeletes): where they are many, the StatefulSets'
	// rollouts, and so the churn's time, measure the simulator.
	StrayPodDeletes      int `json:"stray_pod_deletes"`
	FloorStrayPodDeletes int `json:"floor_stray_pod_deletes"`

	keys []string // the churned workloads, namespace/name
}

// churnMarker is the batch processor's timeout the churn sets; the new ConfigMap must contain it.
const churnMarker = "1m7s"

// churn (scale step) changes the configuration of the first --churn-collectors collectors that
// have a workload, all at once, and waits until every one of their workloads' pod templates mounts
// a new ConfigMap that holds the change and the rollout is complete.
func (b *bench) churn(ctx context.Context, r *scaleResult, c *churnResult) (err error) {
	var keys []string
	var idx []int
	for i := 0; i < r.Collectors && len(idx) < b.cfg.churnCollectors; i++ {
		if scaleMode(i) != "sidecar" {
			idx = append(idx, i)
		}
	}
	c.Collectors, c.ByKind, c.KindSeconds = len(idx), map[string]int{}, map[string]float64{}
	defer func() { c.keys = keys }()
	before, err := listWorkloads(ctx, b.cs, operatorSelector)
	if err != nil {
		return err
	}
	keys = make([]string, len(idx))
	for j, i := range idx {
		keys[j] = collectorNS(i, b.cfg.colNS) + "/" + collectorName(i) + "-collector"
		w, ok := before[keys[j]]
		if !ok || w.ConfigMap == "" {
			return fmt.Errorf("churn: workload %s (or its ConfigMap volume) not found", keys[j])
		}
		c.ByKind[w.Kind]++
	}
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	patch := []byte(`{"spec":{"config":{"processors":{"batch":{"timeout":"` + churnMarker + `"}}}}}`)
	say("churn: changing the configuration of %d collectors at once (%s)", len(idx), c.kinds())
	c.LoadAt = procstat.LoadAvg()
	start := time.Now()
	if err := parallel.Run(ctx, len(idx), len(idx), func(ctx context.Context, j int) error {
		col := collector(collectorNS(idx[j], b.cfg.colNS), collectorName(idx[j]))
		return b.cl.Patch(ctx, col, client.RawPatch(types.MergePatchType, patch))
	}); err != nil {
		return fmt.Errorf("churn: %w", err)
	}
	if err := b.waitChurned(ctx, c, keys, before, start); err != nil {
		return err
	}
	c.Seconds = time.Since(start).Seconds()
	if err := sleep(ctx, 5*time.Second); err != nil {
		return err
	}
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	if c.Writes, err = countWrites(b.c.AuditLog, off0, off1, "opentelemetry-operator"); err != nil {
		return err
	}
	if c.StrayPodDeletes, err = strayPodDeletes(b.c.AuditLog, off0, off1); err != nil {
		return err
	}
	say("churn: %d workloads rolled to their new ConfigMap after %.1f s (%s); writes: %s; pods kwok removed that no controller deleted: %d",
		len(keys), c.Seconds, c.kindTimes(), perCollector(c.Writes, len(keys)), c.StrayPodDeletes)
	return nil
}

// sidecarApps (scale step) creates one small Deployment per sidecar collector, up to
// --sidecar-apps, whose pods ask for that collector's sidecar, and checks that every pod got it.
func (b *bench) sidecarApps(ctx context.Context, r *scaleResult) error {
	var deps []*appsv1.Deployment
	for i := 0; i < r.Collectors && len(deps) < b.cfg.sidecarApps; i++ {
		if scaleMode(i) == "sidecar" {
			deps = append(deps, sidecarApp(collectorNS(i, b.cfg.colNS), collectorName(i)))
		}
	}
	r.SidecarApps = len(deps)
	say("creating %d Deployments whose pods ask for a sidecar collector", len(deps))
	start := time.Now()
	if err := parallel.Run(ctx, len(deps), b.cfg.workers, func(ctx context.Context, i int) error {
		_, err := b.cs.AppsV1().Deployments(deps[i].Namespace).Create(ctx, deps[i], metav1.CreateOptions{})
		return err
	}); err != nil {
		return err
	}
	err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the sidecar apps Available", func(ctx context.Context) (bool, error) {
		for _, d := range deps {
			got, err := b.cs.AppsV1().Deployments(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
			if err != nil || !deploymentAvailable(got) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	r.SidecarAppsSeconds = time.Since(start).Seconds()
	pods, err := b.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: benchLabel + "=sidecar-app"})
	if err != nil {
		return err
	}
	for _, p := range pods.Items {
		if hasContainer(&p, naming.Container) {
			r.SidecarInjected++
		}
	}
	say("sidecar apps Available after %.1f s; %d/%d pods carry %s", r.SidecarAppsSeconds, r.SidecarInjected, len(pods.Items), naming.Container)
	if r.SidecarInjected != len(deps) || len(pods.Items) != len(deps) {
		return fmt.Errorf("sidecar apps: %d of %d pods carry the sidecar, want %d", r.SidecarInjected, len(pods.Items), len(deps))
	}
	return nil
}

func hasContainer(p *corev1.Pod, name string) bool {
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// sidecarApp is a one-replica Deployment whose pods ask for collector's sidecar.
func sidecarApp(ns, collector string) *appsv1.Deployment {
	labels := map[string]string{benchLabel: "sidecar-app", "app": "app-" + collector}
	one := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "app-" + collector, Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels,
					Annotations: map[string]string{"sidecar.opentelemetry.io/inject": collector}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1.0.0"}}},
			},
		},
	}
}

// kinds is "3 Deployment, 3 DaemonSet, 2 StatefulSet".
func (c *churnResult) kinds() string {
	var parts []string
	for _, k := range []string{"Deployment", "DaemonSet", "StatefulSet"} {
		if c.ByKind[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.ByKind[k], k))
		}
	}
	return strings.Join(parts, ", ")
}

// kindTimes gives "Deployment 12.0 s, DaemonSet 20.1 s, StatefulSet 15.3 s".
func (c *churnResult) kindTimes() string {
	var parts []string
	for _, k := range []string{"Deployment", "DaemonSet", "StatefulSet"} {
		if v, ok := c.KindSeconds[k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f s", k, v))
		}
	}
	return strings.Join(parts, ", ")
}

// churnFloor (on the floor's cluster, after the floor) makes the churn's change directly: for each
// churned workload a new ConfigMap and a patch of its pod template to mount it, the workloads
// --workers at a time, until every rollout is complete.
func (b *bench) churnFloor(ctx context.Context, c *churnResult) error {
	before, err := listWorkloads(ctx, b.cs, operatorSelector)
	if err != nil {
		return err
	}
	kinds := map[string]string{"Deployment": "deployments", "DaemonSet": "daemonsets", "StatefulSet": "statefulsets"}
	say("churn floor: a new ConfigMap and a pod template patch for each of %d workloads, %d at a time", len(c.keys), b.cfg.workers)
	off0, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	c.LoadAtFloor = procstat.LoadAvg()
	start := time.Now()
	err = parallel.Run(ctx, len(c.keys), b.cfg.workers, func(ctx context.Context, i int) error {
		ns, name, _ := strings.Cut(c.keys[i], "/")
		w := before[c.keys[i]]
		old, err := b.cs.CoreV1().ConfigMaps(ns).Get(ctx, w.ConfigMap, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: w.ConfigMap + "-churn", Namespace: ns, Labels: old.Labels},
			Data: map[string]string{naming.ConfigMapKey: old.Data[naming.ConfigMapKey] + "# " + churnMarker + "\n"}}
		if _, err := b.cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		patch := fmt.Sprintf(`{"spec":{"template":{"spec":{"volumes":[{"name":%q,"configMap":{"name":%q}}]}}}}`, naming.ConfigMapVolume, cm.Name)
		return b.cs.AppsV1().RESTClient().Patch(types.StrategicMergePatchType).Namespace(ns).Resource(kinds[w.Kind]).
			Name(name).Body([]byte(patch)).Do(ctx).Error()
	})
	if err != nil {
		return fmt.Errorf("churn floor: %w", err)
	}
	last := 0
	err = poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the churn floor's rollouts", func(ctx context.Context) (bool, error) {
		now, err := listWorkloads(ctx, b.cs, operatorSelector)
		if err != nil {
			return false, nil
		}
		done := 0
		for _, k := range c.keys {
			if w := now[k]; w.ConfigMap == before[k].ConfigMap+"-churn" && w.Available {
				done++
			}
		}
		last = done
		return done == len(c.keys), nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d/%d rolled out)", err, last, len(c.keys))
	}
	c.FloorSeconds = time.Since(start).Seconds()
	off1, err := simcluster.AuditOffset(b.c.AuditLog)
	if err != nil {
		return err
	}
	if c.FloorStrayPodDeletes, err = strayPodDeletes(b.c.AuditLog, off0, off1); err != nil {
		return err
	}
	say("churn floor: %d workloads rolled out after %.1f s (operator: %.1f s, %.2fx); pods kwok removed that no controller deleted: %d",
		len(c.keys), c.FloorSeconds, c.Seconds, c.Seconds/c.FloorSeconds, c.FloorStrayPodDeletes)
	return nil
}

// waitChurned waits until every workload in keys mounts a ConfigMap other than before's that holds
// the change, and its rollout is complete; it records when every template had changed.
func (b *bench) waitChurned(ctx context.Context, c *churnResult, keys []string, before map[string]workloadState, start time.Time) error {
	good := map[string]bool{} // ConfigMaps seen to hold the change, by namespace/name
	var templates, rolled atomic.Int64
	lastSay := time.Now()
	err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the churned workloads to roll out", func(ctx context.Context) (bool, error) {
		if err := b.op.alive(); err != nil {
			return false, err
		}
		now, err := listWorkloads(ctx, b.cs, operatorSelector)
		if err != nil {
			return false, nil
		}
		t, done := 0, 0
		kindDone := map[string]int{}
		for _, k := range keys {
			w := now[k]
			if w.ConfigMap == "" || w.ConfigMap == before[k].ConfigMap {
				continue
			}
			ns := strings.SplitN(k, "/", 2)[0]
			if !good[ns+"/"+w.ConfigMap] {
				cm, err := b.cs.CoreV1().ConfigMaps(ns).Get(ctx, w.ConfigMap, metav1.GetOptions{})
				if err != nil || !strings.Contains(cm.Data[naming.ConfigMapKey], churnMarker) {
					continue
				}
				good[ns+"/"+w.ConfigMap] = true
			}
			t++
			if w.Available {
				done++
				kindDone[w.Kind]++
			}
		}
		for kind, n := range c.ByKind {
			if _, ok := c.KindSeconds[kind]; !ok && kindDone[kind] == n {
				c.KindSeconds[kind] = time.Since(start).Seconds()
			}
		}
		if t == len(keys) && c.TemplatesSeconds == 0 {
			c.TemplatesSeconds = time.Since(start).Seconds()
			say("churn: every pod template mounts its new ConfigMap after %.1f s", c.TemplatesSeconds)
		}
		templates.Store(int64(t))
		rolled.Store(int64(done))
		if time.Since(lastSay) > 10*time.Second {
			say("  ... %d/%d templates changed, %d/%d rolled out", t, len(keys), done, len(keys))
			lastSay = time.Now()
		}
		return done == len(keys), nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d/%d templates changed, %d/%d rolled out)", err, templates.Load(), len(keys), rolled.Load(), len(keys))
	}
	return nil
}
