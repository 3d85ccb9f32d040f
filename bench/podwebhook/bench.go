package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/bench/internal/parallel"
	"github.com/otelop/otelop/internal/instrumentation"
	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/webhook/podmutation"
)

// webhookName is the pod webhook's name in config/webhook/manifests.yaml.
const webhookName = "mpod.kb.io"

type benchCase struct {
	name, namespace string
	annotations     map[string]string
	owned           bool
}

var cases = []benchCase{
	{name: "no annotation", namespace: "bench-plain"},
	{name: "sidecar (sidecar.opentelemetry.io/inject=true)", namespace: "bench-sidecar",
		annotations: map[string]string{podmutation.Annotation: "true"}},
	{name: "java (inject-java=true, ReplicaSet owner)", namespace: "bench-java",
		annotations: map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "true"}, owned: true},
}

type bench struct {
	cfg config
	c   client.Client
	cs  kubernetes.Interface
	rs  map[string]*appsv1.ReplicaSet
}

func newBench(_ context.Context, rc *rest.Config, cfg config) (*bench, error) {
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst = -1, 0
	c, err := client.New(rc, client.Options{Scheme: operator.NewScheme()})
	if err != nil {
		return nil, err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &bench{cfg: cfg, c: c, cs: cs, rs: map[string]*appsv1.ReplicaSet{}}, nil
}

const agent = `
mode: sidecar
config:
  receivers:
    otlp:
      protocols:
        grpc: {}
  exporters:
    debug: {}
  service:
    pipelines:
      traces:
        receivers: [otlp]
        exporters: [debug]
`

// prepare creates the namespaces, the sidecar collector (retrying until the collector webhooks
// answer), the Instrumentation and a ReplicaSet to own the Java case's pods, then warms the pod
// webhook up.
func (b *bench) prepare(ctx context.Context) error {
	for _, cs := range cases {
		if err := b.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cs.namespace}}); err != nil {
			return err
		}
	}
	otelcol := &v1beta1.OpenTelemetryCollector{ObjectMeta: metav1.ObjectMeta{Namespace: "bench-sidecar", Name: "agent"}}
	if err := yaml.UnmarshalStrict([]byte(agent), &otelcol.Spec); err != nil {
		return err
	}
	err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "the collector webhooks", func(ctx context.Context) (bool, error) {
		err := b.c.Create(ctx, otelcol.DeepCopy())
		return err == nil, err
	})
	if err != nil {
		return err
	}
	inst := &v1alpha1.Instrumentation{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench-java", Name: "otel"},
		Spec: v1alpha1.InstrumentationSpec{
			Exporter:    v1alpha1.Exporter{Endpoint: "http://collector:4318"},
			Propagators: []v1alpha1.Propagator{v1alpha1.TraceContext, v1alpha1.Baggage},
			Java:        v1alpha1.Java{Image: "example.invalid/javaagent:2"},
		},
	}
	if err := b.c.Create(ctx, inst); err != nil {
		return err
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "bench-java", Name: "shop-5d9c"},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"rs": "shop"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"rs": "shop"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
			},
		},
	}
	if err := b.c.Create(ctx, rs); err != nil {
		return err
	}
	b.rs["bench-java"] = rs
	return b.warmUp(ctx)
}

// warmUp creates one pod per case until each is mutated as expected (the operator's caches are
// synced and the API server has a connection to the webhook).
func (b *bench) warmUp(ctx context.Context) error {
	for _, cs := range cases {
		err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "warm-up of "+cs.name, func(ctx context.Context) (bool, error) {
			p := b.pod(cs, "warmup-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			if err := b.c.Create(ctx, p); err != nil {
				return false, err
			}
			switch {
			case cs.annotations[podmutation.Annotation] != "":
				return len(p.Spec.InitContainers) > 0, nil
			case len(cs.annotations) > 0:
				return p.Annotations[instrumentation.InjectedAnnotation] != "", nil
			}
			return true, nil
		})
		if err != nil {
			return err
		}
	}
	say("webhooks answer; every case is mutated as expected")
	return nil
}

func (b *bench) pod(cs benchCase, name string) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: cs.namespace, Name: name, Annotations: cs.annotations,
			Labels: map[string]string{"bench": "podwebhook"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
	}
	if rs := b.rs[cs.namespace]; cs.owned && rs != nil {
		// Not a controller reference: the ReplicaSet controller leaves the pods alone.
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID}}
	}
	return p
}

type row struct {
	name               string
	count              float64
	under5ms, p50, p99 float64
	wall               time.Duration
	mutated, unmutated int
}

// measure creates the case's pods and reads the webhook's histogram before and after.
func (b *bench) measure(ctx context.Context, cs benchCase) (row, error) {
	before, err := b.histogram(ctx)
	if err != nil {
		return row{}, err
	}
	start := time.Now()
	var mutated, unmutated int
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	err = parallel.Run(ctx, b.cfg.pods, b.cfg.concurrency, func(ctx context.Context, i int) error {
		p := b.pod(cs, fmt.Sprintf("p-%04d", i))
		if err := b.c.Create(ctx, p); err != nil {
			return err
		}
		<-mu
		if len(p.Spec.InitContainers) > 0 || p.Annotations[instrumentation.InjectedAnnotation] != "" {
			mutated++
		} else {
			unmutated++
		}
		mu <- struct{}{}
		return nil
	})
	if err != nil {
		return row{}, err
	}
	wall := time.Since(start)
	after, err := b.histogram(ctx)
	if err != nil {
		return row{}, err
	}
	d := after.minus(before)
	r := row{name: cs.name, count: d.count, under5ms: d.cumulative(0.005), p50: d.quantile(0.5), p99: d.quantile(0.99),
		wall: wall, mutated: mutated, unmutated: unmutated}
	say("%s: %d pods in %s; %.0f admissions, %.0f under 5 ms, p50 %.1f ms, p99 %.1f ms",
		cs.name, b.cfg.pods, wall.Round(10*time.Millisecond), r.count, r.under5ms, r.p50*1000, r.p99*1000)
	return r, nil
}

// histogram is the webhook's admission-duration histogram (CREATE, admit), summed over labels.
type histogram struct {
	buckets map[float64]float64 // upper bound -> cumulative count
	count   float64
}

func (b *bench) histogram(ctx context.Context) (histogram, error) {
	raw, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return histogram{}, fmt.Errorf("reading the API server's /metrics: %w", err)
	}
	h := histogram{buckets: map[float64]float64{}}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	const metric = "apiserver_admission_webhook_admission_duration_seconds"
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, metric) || !strings.Contains(line, `name="`+webhookName+`"`) ||
			!strings.Contains(line, `operation="CREATE"`) {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(line, metric+"_bucket{"):
			le := labelValue(line, "le")
			bound := math.Inf(1)
			if le != "+Inf" {
				if bound, err = strconv.ParseFloat(le, 64); err != nil {
					continue
				}
			}
			h.buckets[bound] += v
		case strings.HasPrefix(line, metric+"_count{"):
			h.count += v
		}
	}
	return h, sc.Err()
}

func labelValue(line, name string) string {
	i := strings.Index(line, name+`="`)
	if i < 0 {
		return ""
	}
	rest := line[i+len(name)+2:]
	return rest[:strings.IndexByte(rest, '"')]
}

func (h histogram) minus(o histogram) histogram {
	out := histogram{buckets: map[float64]float64{}, count: h.count - o.count}
	for k, v := range h.buckets {
		out.buckets[k] = v - o.buckets[k]
	}
	return out
}

func (h histogram) bounds() []float64 {
	var out []float64
	for k := range h.buckets {
		out = append(out, k)
	}
	sort.Float64s(out)
	return out
}

// cumulative is the count of admissions that took at most bound seconds.
func (h histogram) cumulative(bound float64) float64 { return h.buckets[bound] }

// quantile interpolates linearly within the bucket, as Prometheus' histogram_quantile does; a
// quantile in the first bucket is therefore an estimate between 0 and 5 ms.
func (h histogram) quantile(q float64) float64 {
	rank := q * h.count
	prevBound, prevCount := 0.0, 0.0
	for _, bound := range h.bounds() {
		c := h.buckets[bound]
		if c >= rank {
			if math.IsInf(bound, 1) {
				return prevBound
			}
			if c == prevCount {
				return bound
			}
			return prevBound + (bound-prevBound)*(rank-prevCount)/(c-prevCount)
		}
		prevBound, prevCount = bound, c
	}
	return math.NaN()
}

func printTable(rows []row, cfg config) {
	fmt.Printf("\nPod webhook admission latency (%s, CREATE), %d pods per case, %d concurrent creations\n\n", webhookName, cfg.pods, cfg.concurrency)
	fmt.Println("| case | admissions | under 5 ms | p50 | p99 | mutated | wall time |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, r := range rows {
		fmt.Printf("| %s | %.0f | %.0f (%.1f%%) | %.1f ms | %.1f ms | %d/%d | %s |\n", r.name, r.count, r.under5ms,
			100*r.under5ms/math.Max(r.count, 1), r.p50*1000, r.p99*1000, r.mutated, r.mutated+r.unmutated, r.wall.Round(10*time.Millisecond))
	}
	fmt.Println("\np50/p99 are interpolated within the API server's histogram buckets (0.005, 0.025, 0.1, ... s), as histogram_quantile does.")
}
