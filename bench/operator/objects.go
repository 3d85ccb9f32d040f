package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/test/simcluster"
)

const (
	benchLabel     = "bench.otelop.io/role"
	noiseNodeTaint = "bench.otelop.io/noise"
	// Noise pods bound to the three workload nodes leave this many pod slots per node free for
	// the collectors and the floor Deployments (the fake nodes allow 2000 pods each); more noise
	// pods go to extra fake nodes tainted NoSchedule, which nothing else is scheduled to.
	workloadNodes   = 3
	podsPerNodeCap  = 1800
	noiseNamespaces = 20
)

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string, labels map[string]string) error {
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// payload is deterministic filler of n printable bytes.
func payload(seed, n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	x := uint32(seed*2654435761 + 1)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = alphabet[x%uint32(len(alphabet))]
	}
	return string(b)
}

// noise creates unrelated ConfigMaps, Secrets and Pods (about 2 KB each as stored, before the
// pods' status), numbered from start (so a second batch adds to the first).
type noise struct {
	cs        kubernetes.Interface
	cluster   *simcluster.Cluster
	workers   int
	created   int // per kind, over every batch
	nodesMade int
}

func (n *noise) objects(i int) (*corev1.ConfigMap, *corev1.Secret, *corev1.Pod) {
	ns := fmt.Sprintf("noise-%02d", i%noiseNamespaces)
	labels := map[string]string{benchLabel: "noise", "app": fmt.Sprintf("noise-app-%d", i%50)}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-cm-%05d", i), Namespace: ns, Labels: labels},
		Data: map[string]string{"settings.txt": payload(i, 1800)}}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-secret-%05d", i), Namespace: ns, Labels: labels},
		Data: map[string][]byte{"token": []byte(payload(i+1, 1320))}} // base64 in the stored object: ~1.8 KB
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("noise-pod-%05d", i), Namespace: ns, Labels: labels,
			Annotations: map[string]string{"bench.otelop.io/payload": payload(i+2, 1380)}},
		Spec: corev1.PodSpec{
			NodeName: n.nodeFor(i),
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example/noise/app:1.0.0",
				Args:  []string{"--listen=:8080", "--log-level=info"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Env: []corev1.EnvVar{{Name: "APP_MODE", Value: "production"}, {Name: "APP_REGION", Value: "sim-1"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			}},
			Tolerations: []corev1.Toleration{{Key: noiseNodeTaint, Operator: corev1.TolerationOpExists}},
		},
	}
	return cm, sec, pod
}

func (n *noise) nodeFor(i int) string {
	if i < workloadNodes*podsPerNodeCap {
		return fmt.Sprintf("sim-node-%d", i%workloadNodes)
	}
	return fmt.Sprintf("sim-noise-%d", (i-workloadNodes*podsPerNodeCap)/2000)
}

// sizes reports the JSON size of one object of each kind as sent (the stored object adds a few
// hundred bytes of metadata; pods also get a status).
func (n *noise) sizes() string {
	cm, sec, pod := n.objects(0)
	size := func(o any) int { b, _ := json.Marshal(o); return len(b) }
	return fmt.Sprintf("ConfigMap %d B, Secret %d B, Pod %d B as sent", size(cm), size(sec), size(pod))
}

// add creates total more objects (a third of each kind) and waits for the pods to be Running.
func (n *noise) add(ctx context.Context, total int, timeout time.Duration) error {
	per := total / 3
	if per == 0 {
		return nil
	}
	for i := range noiseNamespaces {
		if err := ensureNamespace(ctx, n.cs, fmt.Sprintf("noise-%02d", i), map[string]string{benchLabel: "noise"}); err != nil {
			return err
		}
	}
	// Extra tainted nodes for pods beyond what the workload nodes leave free.
	for n.nodeIndexNeeded(n.created+per-1) >= n.nodesMade {
		name := fmt.Sprintf("sim-noise-%d", n.nodesMade)
		if err := n.cluster.AddNode(ctx, n.cs, name, map[string]string{benchLabel: "noise"}); err != nil {
			return err
		}
		patch := fmt.Sprintf(`{"spec":{"taints":[{"key":%q,"value":"true","effect":"NoSchedule"}]}}`, noiseNodeTaint)
		if _, err := n.cs.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return err
		}
		say("added fake node %s (tainted NoSchedule) for noise pods beyond %d per workload node", name, podsPerNodeCap)
		n.nodesMade++
	}
	start, base := time.Now(), n.created
	var done atomic.Int64
	stopProgress := ticker(10*time.Second, func() {
		say("  ... %d/%d noise objects created", done.Load(), 3*per)
	})
	err := parallel.Run(ctx, per, n.workers, func(ctx context.Context, k int) error {
		cm, sec, pod := n.objects(base + k)
		if _, err := n.cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if _, err := n.cs.CoreV1().Secrets(sec.Namespace).Create(ctx, sec, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		if _, err := n.cs.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
		done.Add(3)
		return nil
	})
	stopProgress()
	if err != nil {
		return fmt.Errorf("creating noise: %w", err)
	}
	n.created += per
	say("created %d ConfigMaps, %d Secrets, %d Pods in %s (%d of each kind in total)", per, per, per,
		time.Since(start).Round(100*time.Millisecond), n.created)
	last := -1
	// kwok marks the pods Running at its own pace: allow a second per 50 pods beyond timeout.
	timeout += time.Duration(per/50) * time.Second
	return poll(ctx, time.Second, timeout, "noise pods Running", func(ctx context.Context) (bool, error) {
		list, err := n.cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: benchLabel + "=noise",
			FieldSelector: "status.phase!=Running", ResourceVersion: "0"})
		if err != nil {
			return false, nil
		}
		if len(list.Items) != last && len(list.Items) > 0 {
			say("  ... %d noise pods not Running yet", len(list.Items))
			last = len(list.Items)
		}
		return len(list.Items) == 0, nil
	})
}

func (n *noise) nodeIndexNeeded(i int) int {
	if i < workloadNodes*podsPerNodeCap {
		return -1
	}
	return (i - workloadNodes*podsPerNodeCap) / 2000
}

// ticker calls fn every d until the returned stop is called.
func ticker(d time.Duration, fn func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// poll is wait.PollUntilContextTimeout with the condition's name in the error.
func poll(ctx context.Context, every, timeout time.Duration, what string, cond wait.ConditionWithContextFunc) error {
	if err := wait.PollUntilContextTimeout(ctx, every, timeout, true, cond); err != nil {
		return fmt.Errorf("waiting for %s (at most %s): %w", what, timeout, err)
	}
	return nil
}

// collectorSpec is config/samples/opentelemetry.io_v1beta1_opentelemetrycollector_deployment.yaml.
func collector(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "opentelemetry.io/v1beta1",
		"kind":       "OpenTelemetryCollector",
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec": map[string]any{
			"mode": "deployment",
			"config": map[string]any{
				"receivers": map[string]any{"otlp": map[string]any{"protocols": map[string]any{
					"grpc": map[string]any{"endpoint": "0.0.0.0:4317"},
					"http": map[string]any{"endpoint": "0.0.0.0:4318"},
				}}},
				"processors": map[string]any{"batch": map[string]any{}},
				"exporters":  map[string]any{"debug": map[string]any{}},
				"service": map[string]any{"pipelines": map[string]any{"traces": map[string]any{
					"receivers": []any{"otlp"}, "processors": []any{"batch"}, "exporters": []any{"debug"},
				}}},
			},
		},
	}}
}

func collectorNS(i, namespaces int) string { return fmt.Sprintf("bench-col-%02d", i%namespaces) }
func collectorName(i int) string           { return fmt.Sprintf("c-%03d", i) }

// deploymentAvailable is what `kubectl rollout status` waits for.
func deploymentAvailable(d *appsv1.Deployment) bool {
	if d.Status.ObservedGeneration < d.Generation {
		return false
	}
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	if d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want {
		return false
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// countAvailable counts available Deployments named in want across namespaces.
func countAvailable(ctx context.Context, cs kubernetes.Interface, namespaces []string, want map[string]bool) (int, error) {
	n := 0
	for _, ns := range namespaces {
		list, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return 0, err
		}
		for i := range list.Items {
			d := &list.Items[i]
			if want[d.Namespace+"/"+d.Name] && deploymentAvailable(d) {
				n++
			}
		}
	}
	return n, nil
}

// countReady counts collectors with condition Ready=True.
func countReady(ctx context.Context, cl client.Client) (int, error) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion("opentelemetry.io/v1beta1")
	list.SetKind("OpenTelemetryCollectorList")
	if err := cl.List(ctx, list, client.MatchingLabels{}); err != nil {
		return 0, err
	}
	n := 0
	for _, it := range list.Items {
		conds, _, _ := unstructured.NestedSlice(it.Object, "status", "conditions")
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" {
				n++
			}
		}
	}
	return n, nil
}

// floorDeployment copies a Deployment the operator made, relabelled so no operator selects it.
func floorDeployment(d *appsv1.Deployment) *appsv1.Deployment {
	labels := map[string]string{benchLabel: "floor", "bench.otelop.io/floor": d.Name}
	tmpl := *d.Spec.Template.DeepCopy()
	tl := map[string]string{}
	for k, v := range tmpl.Labels {
		if !strings.HasPrefix(k, "app.kubernetes.io/") {
			tl[k] = v
		}
	}
	for k, v := range labels {
		tl[k] = v
	}
	tmpl.Labels = tl
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "floor-" + d.Name, Namespace: d.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: d.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: tmpl,
			Strategy: d.Spec.Strategy,
		},
	}
}
