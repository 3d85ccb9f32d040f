package collectors

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/opampbridge/health"
)

// Pod labels the operator puts on collector pods.
const (
	podComponentLabel = "app.kubernetes.io/component"
	podComponentValue = "opentelemetry-collector"
	podInstanceLabel  = "app.kubernetes.io/instance"
)

// Options configure a Client.
type Options struct {
	// BridgeName is the bridge's name (opamp-managed=<name> selects its collectors).
	BridgeName string
	// BridgeNamespace is where the bridge runs; with BridgeName it identifies its creations.
	// opamp-managed=true collectors of this namespace are the bridge's too.
	BridgeNamespace string
	// ComponentsAllowed restricts the components remote configuration may use.
	ComponentsAllowed map[string][]string
	// Namespaces limits discovery and changes to these namespaces. Empty means: report on
	// collectors of every namespace, change only those of BridgeNamespace.
	Namespaces []string
	// Writable lists the spec fields besides config a server may change (WritableFields); by
	// default it may change spec.config only.
	Writable []string
	// MinRestartInterval is the least time between two restarts; 0 means
	// DefaultMinRestartInterval.
	MinRestartInterval time.Duration
	// Record keeps the set of collectors the bridge created; only those are ever deleted. Nil
	// means the bridge deletes nothing.
	Record CreationRecord
}

// CreationRecord is the bridge's own record of the collectors it created ("namespace/name" to
// UID), kept where the OpAMP server cannot write (implemented by identity.Store).
type CreationRecord interface {
	Created(ctx context.Context) (map[string]string, error)
	SetCreated(ctx context.Context, created map[string]string) error
}

// Client discovers and changes collectors. Reads come from informers filtered by the bridge's
// labels; writes go straight to the API server.
type Client struct {
	opts     Options
	writer   client.Client
	managed  cache.Cache // collectors with opamp-managed in (true, <name>), and their pods
	report   cache.Cache // collectors with opamp-reporting=true
	changes  chan struct{}
	mu       sync.Mutex
	rendered map[Key]renderedConfig

	restartMu   sync.Mutex
	lastRestart time.Time
}

type renderedConfig struct {
	resourceVersion string
	body            []byte
}

// New builds a Client; call Start before reading.
func New(cfg *rest.Config, scheme *runtime.Scheme, opts Options) (*Client, error) {
	if err := CheckWritable(opts.Writable); err != nil {
		return nil, err
	}
	w, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, err
	}
	managedSel, err := labels.NewRequirement(ManagedLabel, selection.In, []string{"true", opts.BridgeName})
	if err != nil {
		return nil, err
	}
	podSel := labels.SelectorFromSet(labels.Set{podComponentLabel: podComponentValue})
	var nsMap map[string]cache.Config
	if len(opts.Namespaces) > 0 {
		nsMap = map[string]cache.Config{}
		for _, ns := range opts.Namespaces {
			nsMap[ns] = cache.Config{}
		}
	}
	strip := func(obj any) (any, error) {
		if o, ok := obj.(client.Object); ok {
			o.SetManagedFields(nil)
		}
		if p, ok := obj.(*corev1.Pod); ok {
			// Health needs only the pod's metadata and status.
			p.Spec = corev1.PodSpec{}
		}
		return obj, nil
	}
	// Both caches watch the same namespaces and strip the same way; byObject says what each holds.
	newCache := func(byObject map[client.Object]cache.ByObject) (cache.Cache, error) {
		return cache.New(cfg, cache.Options{Scheme: scheme, DefaultNamespaces: nsMap, DefaultTransform: strip, ByObject: byObject})
	}
	managed, err := newCache(map[client.Object]cache.ByObject{
		&v1beta1.OpenTelemetryCollector{}: {Label: labels.NewSelector().Add(*managedSel)},
		&corev1.Pod{}:                     {Label: podSel},
	})
	if err != nil {
		return nil, err
	}
	report, err := newCache(map[client.Object]cache.ByObject{
		&v1beta1.OpenTelemetryCollector{}: {Label: labels.SelectorFromSet(labels.Set{ReportingLabel: "true"})},
	})
	if err != nil {
		return nil, err
	}
	return &Client{opts: opts, writer: w, managed: managed, report: report,
		changes: make(chan struct{}, 1), rendered: map[Key]renderedConfig{}}, nil
}

// Changes signals (coalesced) that collectors or their pods changed.
func (c *Client) Changes() <-chan struct{} { return c.changes }

func (c *Client) signal() {
	select {
	case c.changes <- struct{}{}:
	default:
	}
}

// Start runs the informers until ctx ends and waits for them to sync until syncCtx ends.
func (c *Client) Start(ctx, syncCtx context.Context) error {
	h := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.signal() },
		UpdateFunc: func(any, any) { c.signal() },
		DeleteFunc: func(any) { c.signal() },
	}
	for _, pair := range []struct {
		c   cache.Cache
		obj client.Object
	}{{c.managed, &v1beta1.OpenTelemetryCollector{}}, {c.managed, &corev1.Pod{}}, {c.report, &v1beta1.OpenTelemetryCollector{}}} {
		inf, err := pair.c.GetInformer(ctx, pair.obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(h); err != nil {
			return err
		}
	}
	for _, ca := range []cache.Cache{c.managed, c.report} {
		go func() { _ = ca.Start(ctx) }()
	}
	for _, ca := range []cache.Cache{c.managed, c.report} {
		if !ca.WaitForCacheSync(syncCtx) {
			return fmt.Errorf("collectors: informers did not sync: %w", syncCtx.Err())
		}
	}
	return nil
}

// List returns every collector the bridge reports on (managed or reporting), each once, sorted
// by key. Objects are shared with the cache: do not modify them.
func (c *Client) List(ctx context.Context) ([]*v1beta1.OpenTelemetryCollector, error) {
	seen := map[Key]*v1beta1.OpenTelemetryCollector{}
	for _, ca := range []cache.Cache{c.managed, c.report} {
		var l v1beta1.OpenTelemetryCollectorList
		if err := ca.List(ctx, &l, client.UnsafeDisableDeepCopy); err != nil {
			return nil, err
		}
		for i := range l.Items {
			seen[Key{l.Items[i].Namespace, l.Items[i].Name}] = &l.Items[i]
		}
	}
	out := make([]*v1beta1.OpenTelemetryCollector, 0, len(seen))
	for _, o := range seen {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		return Key{out[i].Namespace, out[i].Name}.String() < Key{out[j].Namespace, out[j].Name}.String()
	})
	return out, nil
}

// Pods returns the pods of a collector, sorted by name.
func (c *Client) Pods(ctx context.Context, col *v1beta1.OpenTelemetryCollector) ([]corev1.Pod, error) {
	sel := labels.SelectorFromSet(labels.Set{podComponentLabel: podComponentValue, podInstanceLabel: col.Namespace + "." + col.Name})
	if s := col.Status.Scale.Selector; s != "" {
		if parsed, err := labels.Parse(s); err == nil {
			sel = parsed
		}
	}
	var l corev1.PodList
	if err := c.managed.List(ctx, &l, client.InNamespace(col.Namespace), client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	sort.Slice(l.Items, func(i, j int) bool { return l.Items[i].Name < l.Items[j].Name })
	return l.Items, nil
}

// EffectiveConfig renders each collector as a YAML file keyed "namespace/name": its metadata
// (without managedFields), spec and status. Renders are reused while the resourceVersion holds.
func (c *Client) EffectiveConfig(ctx context.Context) (map[string][]byte, error) {
	cols, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string][]byte, len(cols))
	next := make(map[Key]renderedConfig, len(cols))
	for _, col := range cols {
		k := Key{col.Namespace, col.Name}
		r, ok := c.rendered[k]
		if !ok || r.resourceVersion != col.ResourceVersion {
			body, err := Render(col)
			if err != nil {
				return nil, fmt.Errorf("rendering %s: %w", k, err)
			}
			r = renderedConfig{resourceVersion: col.ResourceVersion, body: body}
		}
		next[k] = r
		out[k.String()] = r.body
	}
	c.rendered = next
	return out, nil
}

// Render returns the YAML a collector is reported as.
func Render(col *v1beta1.OpenTelemetryCollector) ([]byte, error) {
	cp := col.DeepCopy()
	cp.ManagedFields = nil
	cp.APIVersion = v1beta1.GroupVersion.String()
	cp.Kind = "OpenTelemetryCollector"
	return yaml.Marshal(cp)
}

// HealthInput lists the collectors with their pods, for the health tree.
func (c *Client) HealthInput(ctx context.Context) ([]health.Collector, error) {
	cols, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]health.Collector, 0, len(cols))
	for _, col := range cols {
		pods, err := c.Pods(ctx, col)
		if err != nil {
			return nil, err
		}
		out = append(out, health.Collector{Key: col.Namespace + "/" + col.Name, StatusReplicas: col.Status.Scale.StatusReplicas, Pods: pods})
	}
	return out, nil
}
