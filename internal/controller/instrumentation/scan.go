package instrumentation

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	inst "github.com/otelop/otelop/internal/instrumentation"
)

// DefaultPageSize is how many objects one list request returns.
const DefaultPageSize = 500

// Scanner reads workloads, ReplicaSets and pods straight from the API server, page by page, and
// keeps only the compact Workload views: memory grows with the number of workloads that ask for
// instrumentation, not with the number of pods or the size of pod templates. Pods and
// ReplicaSets are read as metadata only; workloads are decoded item by item into what the scan
// reads of them.
type Scanner struct {
	// Reader must not be the manager's cache (user workloads are not cached): the manager's
	// APIReader.
	Reader client.Reader
	// Apps is the apps/v1 API (NewAppsREST), for the workloads.
	Apps rest.Interface
	// PageSize is the Limit of each list request (default DefaultPageSize).
	PageSize int64
	// Enabled filters the languages the pod webhook injects (nil: all).
	Enabled func(inst.Language) bool
}

// Stats counts what a scan read.
type Stats struct {
	Namespaces, Workloads, ReplicaSets, Pods, Requests int
}

// list reads every page of list in ns, calling each after each page.
func (s Scanner) list(ctx context.Context, list client.ObjectList, ns string, stats *Stats, each func()) error {
	limit := s.PageSize
	if limit <= 0 {
		limit = DefaultPageSize
	}
	cont := ""
	for {
		opts := []client.ListOption{client.Limit(limit), client.Continue(cont)}
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		// Decoding may append to the previous page's items: start from an empty list.
		if err := apimeta.SetList(list, nil); err != nil {
			return err
		}
		if err := s.Reader.List(ctx, list, opts...); err != nil {
			return err
		}
		stats.Requests++
		each()
		cont = list.GetContinue()
		if cont == "" {
			return nil
		}
	}
}

func metadataList(kind string) *metav1.PartialObjectMetadataList {
	l := &metav1.PartialObjectMetadataList{}
	gv := appsv1.SchemeGroupVersion
	if kind == "PodList" || kind == "NamespaceList" {
		gv = corev1.SchemeGroupVersion
	}
	l.SetGroupVersionKind(gv.WithKind(kind))
	return l
}

// Namespaces returns the annotations of the namespaces to scan: those that hold an
// Instrumentation, and those whose own annotations ask for instrumentation. only, when not empty,
// restricts them (--watch-namespace).
func (s Scanner) Namespaces(ctx context.Context, ix Index, only []string, stats *Stats) (map[string]map[string]string, error) {
	return s.namespacesWhere(ctx, only, stats, func(name string, ann map[string]string) bool {
		_, ok := ix[name]
		return ok || len(inst.Requests(nil, ann)) > 0
	})
}

// namespacesWhere returns the annotations of the namespaces (of only, when not empty) that scan
// reports worth scanning from their names and annotations.
func (s Scanner) namespacesWhere(ctx context.Context, only []string, stats *Stats, scan func(name string, ann map[string]string) bool) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	if len(only) > 0 {
		// --watch-namespace: read just those (an operator limited to them may not list
		// namespaces; without get either, a namespace's own annotations are not seen).
		for _, name := range only {
			ns := &metav1.PartialObjectMetadata{}
			ns.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Namespace"))
			err := s.Reader.Get(ctx, client.ObjectKey{Name: name}, ns)
			stats.Requests++
			switch {
			case apierrors.IsNotFound(err):
				continue
			case apierrors.IsForbidden(err):
				ns.Annotations = nil
			case err != nil:
				return nil, fmt.Errorf("reading namespace %s: %w", name, err)
			}
			if scan(name, ns.Annotations) {
				out[name] = ns.Annotations
			}
		}
		stats.Namespaces += len(out)
		return out, nil
	}
	l := metadataList("NamespaceList")
	err := s.list(ctx, l, "", stats, func() {
		for _, ns := range l.Items {
			if scan(ns.Name, ns.Annotations) {
				out[ns.Name] = ns.Annotations
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("listing namespaces: %w", err)
	}
	stats.Namespaces += len(out)
	return out, nil
}

// Namespace returns the workloads of ns that ask for instrumentation served by ix, with their
// pods counted.
func (s Scanner) Namespace(ctx context.Context, ns string, nsAnn map[string]string, ix Index, stats *Stats) ([]*Workload, error) {
	return s.namespaceWith(ctx, ns, func(kind string, meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec) *Workload {
		return instrumentationWorkload(kind, meta, tmpl, nsAnn, ix, s.Enabled)
	}, stats)
}

// view returns the catch-up view of a workload (Instrumentations or sidecars), or nil when the
// workload is not followed.
type view func(kind string, meta *metav1.ObjectMeta, tmpl *corev1.PodTemplateSpec) *Workload

// namespaceWith returns the workloads of ns that v follows, with their pods counted.
func (s Scanner) namespaceWith(ctx context.Context, ns string, v view, stats *Stats) ([]*Workload, error) {
	out, err := s.workloads(ctx, ns, v, stats)
	if err != nil || len(out) == 0 {
		return nil, err
	}
	byUID := map[types.UID]*Workload{}
	hasDeployments := false
	for _, w := range out {
		byUID[w.UID] = w
		hasDeployments = hasDeployments || w.Kind == KindDeployment
	}
	var rss map[types.UID]rsInfo
	if hasDeployments {
		if rss, err = s.replicaSets(ctx, ns, byUID, stats); err != nil {
			return nil, err
		}
	}
	if err := s.observePods(ctx, ns, byUID, rss, stats); err != nil {
		return nil, err
	}
	return out, nil
}

// workloads lists the Deployments, StatefulSets and DaemonSets of ns and returns those v follows.
// They are streamed into the scan's views (stream.go): a page of workloads costs memory for one
// workload, not for the page's pod templates.
func (s Scanner) workloads(ctx context.Context, ns string, v view, stats *Stats) ([]*Workload, error) {
	var out []*Workload
	add := func(w *Workload) {
		stats.Workloads++
		if w != nil {
			out = append(out, w)
		}
	}
	if err := streamList(ctx, s, "deployments", ns, stats, func(d *slimDeployment) {
		obj := d.object()
		add(withDeployment(v(KindDeployment, &obj.ObjectMeta, &obj.Spec.Template), obj))
	}); err != nil {
		return nil, fmt.Errorf("listing deployments in %s: %w", ns, err)
	}
	if err := streamList(ctx, s, "statefulsets", ns, stats, func(sts *slimStatefulSet) {
		obj := sts.object()
		add(withStatefulSet(v(KindStatefulSet, &obj.ObjectMeta, &obj.Spec.Template), obj))
	}); err != nil {
		return nil, fmt.Errorf("listing statefulsets in %s: %w", ns, err)
	}
	if err := streamList(ctx, s, "daemonsets", ns, stats, func(ds *slimDaemonSet) {
		obj := ds.object()
		add(withDaemonSet(v(KindDaemonSet, &obj.ObjectMeta, &obj.Spec.Template), obj))
	}); err != nil {
		return nil, fmt.Errorf("listing daemonsets in %s: %w", ns, err)
	}
	return out, nil
}

// rsInfo is a ReplicaSet of a followed Deployment: the Deployment and the revision it stands for.
type rsInfo struct {
	w        *Workload
	revision string
}

// replicaSets maps the UIDs of ns's ReplicaSets that belong to a followed Deployment (in byUID)
// to that Deployment and the revision.
func (s Scanner) replicaSets(ctx context.Context, ns string, byUID map[types.UID]*Workload, stats *Stats) (map[types.UID]rsInfo, error) {
	rss := map[types.UID]rsInfo{}
	l := metadataList("ReplicaSetList")
	if err := s.list(ctx, l, ns, stats, func() {
		stats.ReplicaSets += len(l.Items)
		for _, rs := range l.Items {
			ref := metav1.GetControllerOf(&rs)
			if ref == nil || ref.Kind != KindDeployment {
				continue
			}
			if w := byUID[ref.UID]; w != nil && w.Kind == KindDeployment {
				rss[rs.UID] = rsInfo{w: w, revision: rs.Annotations[DeploymentRevisionAnnotation]}
			}
		}
	}); err != nil {
		return nil, fmt.Errorf("listing replicasets in %s: %w", ns, err)
	}
	return rss, nil
}

// observePods counts every live pod of ns on the followed workload that controls it (through
// its ReplicaSet for Deployments).
func (s Scanner) observePods(ctx context.Context, ns string, byUID map[types.UID]*Workload, rss map[types.UID]rsInfo, stats *Stats) error {
	pods := metadataList("PodList")
	if err := s.list(ctx, pods, ns, stats, func() {
		stats.Pods += len(pods.Items)
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			ref := metav1.GetControllerOf(p)
			if ref == nil {
				continue
			}
			switch ref.Kind {
			case "ReplicaSet":
				if info, ok := rss[ref.UID]; ok {
					info.w.Observe(p.Annotations, info.revision)
				}
			case KindStatefulSet, KindDaemonSet:
				if w := byUID[ref.UID]; w != nil && w.Kind == ref.Kind {
					w.Observe(p.Annotations, p.Labels[appsv1.ControllerRevisionHashLabelKey])
				}
			}
		}
	}); err != nil {
		return fmt.Errorf("listing pods in %s: %w", ns, err)
	}
	return nil
}
