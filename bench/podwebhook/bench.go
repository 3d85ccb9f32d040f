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
	"sync"
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
	name, short string
	annotations map[string]string
	owned       bool
}

var cases = []benchCase{
	{name: "no annotation", short: "plain"},
	{name: "sidecar (sidecar.opentelemetry.io/inject=true)", short: "sidecar",
		annotations: map[string]string{podmutation.Annotation: "true"}},
	{name: "java (inject-java=true, ReplicaSet owner)", short: "java",
		annotations: map[string]string{instrumentation.InjectAnnotation(instrumentation.Java): "true"}, owned: true},
}

// An arm is the webhook a pod goes through: ours (mpod.kb.io) or the floor. Each (arm, case) has
// its own namespace.
type arm int

const (
	armOurs arm = iota
	armFloor
)

func (a arm) String() string { return [...]string{"ours", "floor"}[a] }

func (a arm) webhook() string { return [...]string{webhookName, floorWebhookName}[a] }

func (cs benchCase) namespace(a arm) string {
	if a == armFloor {
		return "bench-floor-" + cs.short
	}
	return "bench-" + cs.short
}

type bench struct {
	cfg   config
	c     client.Client
	cs    kubernetes.Interface
	rs    map[string]*appsv1.ReplicaSet
	floor *floorServer
	sink  *spanSink
}

func newBench(_ context.Context, rc *rest.Config, cfg config, floor *floorServer, sink *spanSink) (*bench, error) {
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
	return &bench{cfg: cfg, c: c, cs: cs, rs: map[string]*appsv1.ReplicaSet{}, floor: floor, sink: sink}, nil
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

// prepare creates the namespaces (the floor's labelled for it), the sidecar collector (retrying
// until the collector webhooks answer), the Instrumentation and a ReplicaSet to own each Java
// namespace's pods, then warms both webhooks up.
func (b *bench) prepare(ctx context.Context) error {
	for _, cs := range cases {
		for _, a := range []arm{armOurs, armFloor} {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: cs.namespace(a)}}
			if a == armFloor {
				ns.Labels = map[string]string{armLabel: "floor"}
			}
			if err := b.c.Create(ctx, ns); err != nil {
				return err
			}
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
	for _, cs := range cases {
		if !cs.owned {
			continue
		}
		for _, a := range []arm{armOurs, armFloor} {
			rs := &appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Namespace: cs.namespace(a), Name: "shop-5d9c"},
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
			b.rs[rs.Namespace] = rs
		}
	}
	return b.warmUp(ctx)
}

// mutated tells whether our webhook changed the pod as the case asks.
func mutated(p *corev1.Pod) bool {
	return len(p.Spec.InitContainers) > 0 || p.Annotations[instrumentation.InjectedAnnotation] != ""
}

// warmUp creates pods of each case until ours comes back mutated as expected (the operator's
// caches are synced and the API server has a connection to the webhook) and the floor has
// answered for the floor's pod, which must come back as it was sent.
func (b *bench) warmUp(ctx context.Context) error {
	for _, cs := range cases {
		err := poll(ctx, 500*time.Millisecond, b.cfg.timeout, "warm-up of "+cs.name, func(ctx context.Context) (bool, error) {
			p := b.pod(cs, armOurs, "warmup-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			if err := b.c.Create(ctx, p); err != nil {
				return false, err
			}
			return len(cs.annotations) == 0 || mutated(p), nil
		})
		if err != nil {
			return err
		}
		ns := cs.namespace(armFloor)
		err = poll(ctx, 500*time.Millisecond, b.cfg.timeout, "warm-up of the floor for "+cs.name, func(ctx context.Context) (bool, error) {
			before := b.floor.answered(ns)
			p := b.pod(cs, armFloor, "warmup-"+strconv.FormatInt(time.Now().UnixNano(), 36))
			if err := b.c.Create(ctx, p); err != nil {
				return false, err
			}
			if mutated(p) {
				return false, fmt.Errorf("a pod in %s was mutated: the operator's webhook still selects the floor's namespaces", ns)
			}
			return b.floor.answered(ns) > before, nil
		})
		if err != nil {
			return err
		}
	}
	say("webhooks answer; every case is mutated as expected, the floor's pods are not")
	return nil
}

func (b *bench) pod(cs benchCase, a arm, name string) *corev1.Pod {
	ns := cs.namespace(a)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: cs.annotations,
			Labels: map[string]string{"bench": "podwebhook"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "example.invalid/app:1"}}},
	}
	if rs := b.rs[ns]; cs.owned && rs != nil {
		// Not a controller reference: the ReplicaSet controller leaves the pods alone.
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID}}
	}
	return p
}

// sample is what one (arm, case) measured.
type sample struct {
	admissions []call          // the API server's webhook-call spans
	creates    []time.Duration // the client's pod creates, end to end
	mutated    int
}

// measure creates --pods pods per case and arm, interleaved (pod i of every case and arm before
// pod i+1 of any, the arm going first alternating), so that load from elsewhere on the machine
// falls on both webhooks alike. It returns the samples and the API server's histograms of both
// webhooks over the run.
func (b *bench) measure(ctx context.Context) (map[arm]map[string]*sample, map[arm]histogram, error) {
	arms := []arm{armOurs, armFloor}
	before := map[arm]histogram{}
	for _, a := range arms {
		h, err := b.histogram(ctx, a.webhook())
		if err != nil {
			return nil, nil, err
		}
		before[a] = h
	}
	out := map[arm]map[string]*sample{}
	for _, a := range arms {
		out[a] = map[string]*sample{}
		for _, cs := range cases {
			out[a][cs.short] = &sample{}
		}
	}
	start := time.Now()
	var mu sync.Mutex
	per := 2 * len(cases)
	err := parallel.Run(ctx, b.cfg.pods*per, b.cfg.concurrency, func(ctx context.Context, k int) error {
		i, j := k/per, k%per
		cs, a := cases[j/2], arm((j%2)^(i%2))
		p := b.pod(cs, a, fmt.Sprintf("p-%04d", i))
		t := time.Now()
		if err := b.c.Create(ctx, p); err != nil {
			return err
		}
		d := time.Since(t)
		mu.Lock()
		s := out[a][cs.short]
		s.creates = append(s.creates, d)
		if mutated(p) {
			s.mutated++
		}
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	say("%d pods created in %s", b.cfg.pods*per, time.Since(start).Round(10*time.Millisecond))
	hist := map[arm]histogram{}
	for _, a := range arms {
		h, err := b.histogram(ctx, a.webhook())
		if err != nil {
			return nil, nil, err
		}
		hist[a] = h.minus(before[a])
	}
	if err := b.collectSpans(ctx, out, start); err != nil {
		return nil, nil, err
	}
	return out, hist, nil
}

// collectSpans waits until the API server has exported a webhook-call span for every pod created
// (its batch exporter sends every few seconds), checks each pod went through its own arm's
// webhook only, and files the durations.
func (b *bench) collectSpans(ctx context.Context, out map[arm]map[string]*sample, since time.Time) error {
	var got map[callKey][]call
	var unresolved int
	complete := func(context.Context) (bool, error) {
		got, unresolved = b.sink.durations(since)
		for a := range out {
			for _, cs := range cases {
				if len(got[callKey{a.webhook(), cs.namespace(a)}]) < b.cfg.pods {
					return false, nil
				}
			}
		}
		return unresolved == 0, nil
	}
	if err := poll(ctx, time.Second, time.Minute, "the API server's webhook spans", complete); err != nil {
		return fmt.Errorf("%w (%d calls without a namespace; by webhook and namespace: %v)", err, unresolved, counts(got))
	}
	for a := range out {
		other := armFloor
		if a == armFloor {
			other = armOurs
		}
		for _, cs := range cases {
			ns := cs.namespace(a)
			if n := len(got[callKey{other.webhook(), ns}]); n > 0 {
				return fmt.Errorf("%d pods in %s went through %s too", n, ns, other.webhook())
			}
			if n := len(got[callKey{a.webhook(), ns}]); n != b.cfg.pods {
				return fmt.Errorf("%d calls of %s for %s, want %d", n, a.webhook(), ns, b.cfg.pods)
			}
			out[a][cs.short].admissions = got[callKey{a.webhook(), ns}]
		}
	}
	return nil
}

func counts(m map[callKey][]call) map[callKey]int {
	out := map[callKey]int{}
	for k, v := range m {
		out[k] = len(v)
	}
	return out
}

// histogram is a webhook's admission-duration histogram (CREATE, admit), summed over labels.
type histogram struct {
	buckets map[float64]float64 // upper bound -> cumulative count
	count   float64
}

func (b *bench) histogram(ctx context.Context, name string) (histogram, error) {
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
		if !strings.HasPrefix(line, metric) || !strings.Contains(line, `name="`+name+`"`) ||
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
