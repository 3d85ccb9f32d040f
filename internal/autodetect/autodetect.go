// Package autodetect tracks which optional APIs the cluster serves (Prometheus Operator, Gateway
// API, OpenShift routes, cert-manager) while the operator runs. It watches CustomResourceDefinitions
// (metadata only), so an API installed or removed after start-up is noticed without a restart, and
// tells subscribers when anything changed.
package autodetect

import (
	"context"
	"strings"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
)

// Capabilities are the optional APIs the cluster serves right now.
type Capabilities struct {
	// Prometheus: monitoring.coreos.com ServiceMonitor and PodMonitor.
	Prometheus bool
	// GatewayAPI: gateway.networking.k8s.io HTTPRoute.
	GatewayAPI bool
	// Routes: route.openshift.io Route.
	Routes bool
	// CertManager: cert-manager.io Certificate and Issuer.
	CertManager bool
}

// crdsFor lists, per capability, the CRDs that must all exist.
var crdsFor = map[string][]string{
	"prometheus":  {"servicemonitors.monitoring.coreos.com", "podmonitors.monitoring.coreos.com"},
	"gateway":     {"httproutes.gateway.networking.k8s.io"},
	"routes":      {"routes.route.openshift.io"},
	"certmanager": {"certificates.cert-manager.io", "issuers.cert-manager.io"},
}

// fromNames computes capabilities from the set of CRD names present.
func fromNames(names map[string]bool) Capabilities {
	has := func(c string) bool {
		for _, n := range crdsFor[c] {
			if !names[n] {
				return false
			}
		}
		return true
	}
	return Capabilities{Prometheus: has("prometheus"), GatewayAPI: has("gateway"), Routes: has("routes"), CertManager: has("certmanager")}
}

// Detector holds the current capabilities. Use New, register it with the manager (mgr.Add), and
// read Current from reconcilers.
type Detector struct {
	cache cache.Cache

	mu          sync.RWMutex
	names       map[string]bool
	current     Capabilities
	subscribers []func(Capabilities)
}

// New returns a Detector reading CRD metadata from c. The cache must hold CRD metadata without a
// label filter (see CacheObject).
func New(c cache.Cache) *Detector {
	return &Detector{cache: c, names: map[string]bool{}}
}

// CacheObject is the object the manager's cache must watch unfiltered for the detector.
func CacheObject() client.Object {
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return m
}

// Current returns the capabilities as last observed.
func (d *Detector) Current() Capabilities {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.current
}

// Subscribe registers f to be called (from the informer goroutine) whenever the capabilities
// change. Register before the manager starts.
func (d *Detector) Subscribe(f func(Capabilities)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subscribers = append(d.subscribers, f)
}

// Start implements manager.Runnable: it hooks the CRD informer and returns when ctx ends.
func (d *Detector) Start(ctx context.Context) error {
	inf, err := d.cache.GetInformer(ctx, CacheObject())
	if err != nil {
		return err
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { d.set(name(obj), true) },
		UpdateFunc: func(_, obj any) { d.set(name(obj), true) },
		DeleteFunc: func(obj any) { d.set(name(obj), false) },
	})
	if err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

// NeedLeaderElection is false: every replica needs to know the capabilities (webhooks too).
func (d *Detector) NeedLeaderElection() bool { return false }

func name(obj any) string {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if o, ok := obj.(client.Object); ok {
		return o.GetName()
	}
	return ""
}

func (d *Detector) set(crd string, present bool) {
	if crd == "" || !relevant(crd) {
		return
	}
	d.mu.Lock()
	if present {
		d.names[crd] = true
	} else {
		delete(d.names, crd)
	}
	next := fromNames(d.names)
	changed := next != d.current
	d.current = next
	subs := append([]func(Capabilities){}, d.subscribers...)
	d.mu.Unlock()
	if changed {
		logf.Log.WithName("autodetect").Info("cluster capabilities changed", "capabilities", next)
		for _, f := range subs {
			f(next)
		}
	}
}

func relevant(crd string) bool {
	for _, names := range crdsFor {
		for _, n := range names {
			if n == crd {
				return true
			}
		}
	}
	return strings.HasSuffix(crd, ".monitoring.coreos.com")
}
