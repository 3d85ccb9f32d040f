package promcr

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	monv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	monv1alpha1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1alpha1"
	promconfig "github.com/prometheus/prometheus/config"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/targetallocator/watchloop"
)

// Watcher discovers the selected resources in the cluster and reports their scrape
// configurations whenever they change. Only resources matching the kind's label selector are
// listed (the selector is sent to the API server), and each is kept in its typed form without
// managed fields, annotations or status; namespaces are watched as metadata only, and only
// when a namespace selector needs their labels.
type Watcher struct {
	// Dynamic lists the resources; Client reads namespaces, secrets and config maps.
	Dynamic dynamic.Interface
	Client  kubernetes.Interface
	// CR is the prometheus_cr section; OwnNamespace is where a null namespace selector looks
	// (the collectors' namespace, as the Prometheus Operator's rule for its own Prometheus).
	CR           config.PrometheusCR
	OwnNamespace string
	// OnChange receives every job's scrape configuration after a change, secrets resolved.
	OnChange func([]*promconfig.ScrapeConfig)
	// MinInterval bounds how often OnChange is called (zero: 5s); Resync is how often the
	// referenced secrets and config maps are read again (zero: 1m).
	MinInterval, Resync time.Duration
	// Log, optional.
	Log *slog.Logger
}

// GVRs of the four kinds.
var (
	ServiceMonitors = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "servicemonitors"}
	PodMonitors     = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "podmonitors"}
	Probes          = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1", Resource: "probes"}
	ScrapeConfigs   = schema.GroupVersionResource{Group: "monitoring.coreos.com", Version: "v1alpha1", Resource: "scrapeconfigs"}
)

type kind struct {
	gvr         schema.GroupVersionResource
	name        string
	sel, nsSel  *metav1.LabelSelector
	inf         cache.SharedIndexInformer
	nsSelector  labels.Selector // nil: OwnNamespace only
	newTyped    func() metav1.Object
	objSelector labels.Selector
}

// Run watches until ctx ends. A kind whose CRD is not installed is looked for again every 15s
// and watched once it is; Run returns an error for an invalid selector or when a kind cannot be
// listed (permissions).
func (w *Watcher) Run(ctx context.Context) error {
	log := w.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kinds := w.kinds()
	changes := watchloop.New()
	active, missing, needNamespaces, err := w.startKinds(ctx, kinds, changes, log)
	if err != nil {
		return err
	}
	synced := make([]cache.InformerSynced, 0, len(active)+1)
	for _, k := range active {
		synced = append(synced, k.inf.HasSynced)
	}
	var nsInf cache.SharedIndexInformer
	if needNamespaces {
		nsInf = newNamespaceInformer(w.Client)
		if err := changes.Start(ctx, nsInf); err != nil {
			return err
		}
		synced = append(synced, nsInf.HasSynced)
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return nil
	}
	log.Info("prometheus_cr discovery started", "kinds", len(active), "namespaceLabels", needNamespaces)

	loader := &Loader{}
	first := true
	report := func() {
		scs, changed := w.build(ctx, active, nsInf, loader, log)
		if changed || first {
			first = false
			w.OnChange(scs)
		}
	}
	resync := watchloop.Every{Interval: cmp.Or(w.Resync, time.Minute), Check: watchloop.Always}
	crdCheck := watchloop.Every{Interval: crdCheckInterval, Check: func() bool {
		var started []*kind
		started, missing = w.startMissing(ctx, missing, changes, log)
		active = append(active, started...)
		return len(started) > 0
	}}
	changes.Loop(ctx, cmp.Or(w.MinInterval, 5*time.Second), report, resync, crdCheck)
	return nil
}

func (w *Watcher) kinds() []*kind {
	return []*kind{
		{gvr: ServiceMonitors, name: "ServiceMonitor", sel: w.CR.ServiceMonitorSelector, nsSel: w.CR.ServiceMonitorNamespaceSelector, newTyped: func() metav1.Object { return &monv1.ServiceMonitor{} }},
		{gvr: PodMonitors, name: "PodMonitor", sel: w.CR.PodMonitorSelector, nsSel: w.CR.PodMonitorNamespaceSelector, newTyped: func() metav1.Object { return &monv1.PodMonitor{} }},
		{gvr: Probes, name: "Probe", sel: w.CR.ProbeSelector, nsSel: w.CR.ProbeNamespaceSelector, newTyped: func() metav1.Object { return &monv1.Probe{} }},
		{gvr: ScrapeConfigs, name: "ScrapeConfig", sel: w.CR.ScrapeConfigSelector, nsSel: w.CR.ScrapeConfigNamespaceSelector, newTyped: func() metav1.Object { return &monv1alpha1.ScrapeConfig{} }},
	}
}

// startMissing starts the kinds of missing whose CRD is installed now and waits for their
// caches; still are the others.
func (w *Watcher) startMissing(ctx context.Context, missing []*kind, changes *watchloop.Changes, log *slog.Logger) (started, still []*kind) {
	for _, k := range missing {
		ok, err := w.start(ctx, k, changes)
		if err != nil || !ok || !cache.WaitForCacheSync(ctx.Done(), k.inf.HasSynced) {
			still = append(still, k)
			continue
		}
		log.Info("prometheus_cr: the resource is served now; watching it", "resource", k.gvr.GroupResource().String())
		started = append(started, k)
	}
	return started, still
}

// startKinds starts an informer for each kind with a selector whose CRD is installed; missing
// are the kinds whose CRD is not (yet) installed.
func (w *Watcher) startKinds(ctx context.Context, kinds []*kind, changes *watchloop.Changes, log *slog.Logger) (active, missing []*kind, needNamespaces bool, err error) {
	for _, k := range kinds {
		if k.sel == nil { // a null selector selects none: nothing to watch
			continue
		}
		if k.objSelector, err = metav1.LabelSelectorAsSelector(k.sel); err != nil {
			return nil, nil, false, fmt.Errorf("prometheus_cr: %s selector: %w", k.name, err)
		}
		if k.nsSel != nil {
			if k.nsSelector, err = metav1.LabelSelectorAsSelector(k.nsSel); err != nil {
				return nil, nil, false, fmt.Errorf("prometheus_cr: %s namespace selector: %w", k.name, err)
			}
			needNamespaces = needNamespaces || !k.nsSelector.Empty()
		}
		started, err := w.start(ctx, k, changes)
		switch {
		case err != nil:
			return nil, nil, false, err
		case started:
			active = append(active, k)
		default:
			log.Warn("prometheus_cr: the resource is not served (its Prometheus Operator CRD is not installed); watched for as soon as it is", "resource", k.gvr.GroupResource().String())
			missing = append(missing, k)
		}
	}
	return active, missing, needNamespaces, nil
}

// crdCheckInterval is how often kinds whose CRD was missing are looked for again.
var crdCheckInterval = 15 * time.Second

// start begins watching k; false (and no error) when its CRD is not installed.
func (w *Watcher) start(ctx context.Context, k *kind, changes *watchloop.Changes) (bool, error) {
	// Listed where the informer will list: an allocator limited to its namespace may hold a Role
	// only (the RBAC the operator generates for it).
	_, err := w.Dynamic.Resource(k.gvr).Namespace(w.namespaceScope(k)).List(ctx, metav1.ListOptions{Limit: 1})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("prometheus_cr is enabled but %s cannot be listed (may the service account list them?): %w", k.gvr.GroupResource(), err)
	}
	k.inf = newInformer(w.Dynamic, k, w.namespaceScope(k))
	if err := changes.Start(ctx, k.inf); err != nil {
		return false, err
	}
	return true, nil
}

// namespaceScope is the one namespace an informer can be limited to, or "" (all).
func (w *Watcher) namespaceScope(k *kind) string {
	if k.nsSel == nil && w.OwnNamespace != "" {
		return w.OwnNamespace
	}
	if len(w.CR.AllowNamespaces) == 1 {
		return w.CR.AllowNamespaces[0]
	}
	return ""
}

// build collects the selected resources, translates them and loads them; changed tells whether
// any job differs from the previous build.
func (w *Watcher) build(ctx context.Context, active []*kind, nsInf cache.SharedIndexInformer, loader *Loader, log *slog.Logger) ([]*promconfig.ScrapeConfig, bool) {
	var res Resources
	for _, k := range active {
		for _, obj := range k.inf.GetStore().List() {
			m, ok := obj.(metav1.Object)
			if !ok || !w.namespaceSelected(k, m.GetNamespace(), nsInf) {
				continue
			}
			switch o := obj.(type) {
			case *monv1.ServiceMonitor:
				res.ServiceMonitors = append(res.ServiceMonitors, o)
			case *monv1.PodMonitor:
				res.PodMonitors = append(res.PodMonitors, o)
			case *monv1.Probe:
				res.Probes = append(res.Probes, o)
			case *monv1alpha1.ScrapeConfig:
				res.ScrapeConfigs = append(res.ScrapeConfigs, o)
			case *badObject:
				log.Error("prometheus_cr: resource left out", "kind", k.name, "namespace", o.Namespace, "name", o.Name, "error", o.err)
			}
		}
	}
	sortResources(&res)
	store := newAPIStore(ctx, w.Client, w.secretNamespaces())
	translated, errs := Translate(res, store, Options{DenyFSAccess: w.CR.DenyFSAccessThroughSMs, ScrapeClasses: w.CR.ScrapeClasses, OwnNamespace: w.OwnNamespace})
	scs, changed, loadErrs := loader.Load(translated, Global{ScrapeInterval: w.CR.ScrapeInterval, ScrapeProtocols: w.CR.ScrapeProtocols}, log)
	if changed {
		for _, err := range append(errs, loadErrs...) {
			log.Error("prometheus_cr: resource left out", "error", err)
		}
	}
	return scs, changed
}

func (w *Watcher) namespaceSelected(k *kind, ns string, nsInf cache.SharedIndexInformer) bool {
	if len(w.CR.AllowNamespaces) > 0 && !slices.Contains(w.CR.AllowNamespaces, ns) {
		return false
	}
	if slices.Contains(w.CR.DenyNamespaces, ns) {
		return false
	}
	switch {
	case k.nsSelector == nil:
		return w.OwnNamespace == "" || ns == w.OwnNamespace
	case k.nsSelector.Empty():
		return true
	case nsInf == nil:
		return false
	}
	obj, ok, _ := nsInf.GetStore().GetByKey(ns)
	if !ok {
		return false
	}
	m, ok := obj.(metav1.Object)
	return ok && k.nsSelector.Matches(labels.Set(m.GetLabels()))
}

// secretNamespaces are the namespaces whose secrets resources may reference: prometheus_cr's
// secret_namespaces, else the collectors' namespace only, as upstream's allocator reads secrets
// (nil, any namespace, only when neither is known).
func (w *Watcher) secretNamespaces() []string {
	if len(w.CR.SecretNamespaces) > 0 {
		return w.CR.SecretNamespaces
	}
	if w.OwnNamespace != "" {
		return []string{w.OwnNamespace}
	}
	return nil
}
