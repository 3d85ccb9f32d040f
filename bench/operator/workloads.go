package main

import (
	"context"
	"fmt"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelop/otelop/internal/naming"
)

// The collector modes of the scale scenario, in the order collector i gets them (i % 4).
var scaleModes = []string{"deployment", "daemonset", "statefulset", "sidecar"}

func scaleMode(i int) string { return scaleModes[i%len(scaleModes)] }

// The operator's standard label on what it makes, and the selector for it.
const (
	managedByLabel   = "app.kubernetes.io/managed-by"
	managedByValue   = "opentelemetry-operator"
	operatorSelector = managedByLabel + "=" + managedByValue
)

// workloadState is one collector workload as this harness sees it.
type workloadState struct {
	Kind      string // Deployment, DaemonSet or StatefulSet
	Available bool   // rollout complete: current generation observed, every pod updated and available
	ConfigMap string // the ConfigMap the pod template mounts as otc-internal ("" when none)
}

// listWorkloads returns every Deployment, DaemonSet and StatefulSet matching selector, by
// "namespace/name" (read from the API server's watch cache).
func listWorkloads(ctx context.Context, cs kubernetes.Interface, selector string) (map[string]workloadState, error) {
	opts := metav1.ListOptions{LabelSelector: selector, ResourceVersion: "0"}
	out := map[string]workloadState{}
	deps, err := cs.AppsV1().Deployments("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range deps.Items {
		d := &deps.Items[i]
		out[d.Namespace+"/"+d.Name] = workloadState{Kind: "Deployment", Available: deploymentAvailable(d) && deploymentRolledOut(d),
			ConfigMap: configMapOf(&d.Spec.Template.Spec)}
	}
	dss, err := cs.AppsV1().DaemonSets("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range dss.Items {
		d := &dss.Items[i]
		out[d.Namespace+"/"+d.Name] = workloadState{Kind: "DaemonSet", Available: daemonSetAvailable(d),
			ConfigMap: configMapOf(&d.Spec.Template.Spec)}
	}
	sts, err := cs.AppsV1().StatefulSets("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for i := range sts.Items {
		s := &sts.Items[i]
		out[s.Namespace+"/"+s.Name] = workloadState{Kind: "StatefulSet", Available: statefulSetAvailable(s),
			ConfigMap: configMapOf(&s.Spec.Template.Spec)}
	}
	return out, nil
}

// deploymentRolledOut is true when no pod of an older template is left (after a config change).
func deploymentRolledOut(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	return d.Status.Replicas == want
}

// daemonSetAvailable is what `kubectl rollout status` waits for, plus at least one pod scheduled.
func daemonSetAvailable(d *appsv1.DaemonSet) bool {
	s := d.Status
	return s.ObservedGeneration >= d.Generation && s.DesiredNumberScheduled > 0 &&
		s.UpdatedNumberScheduled == s.DesiredNumberScheduled && s.NumberAvailable == s.DesiredNumberScheduled &&
		s.CurrentNumberScheduled == s.DesiredNumberScheduled
}

// statefulSetAvailable is what `kubectl rollout status` waits for (RollingUpdate), with every
// replica available.
func statefulSetAvailable(s *appsv1.StatefulSet) bool {
	want := int32(1)
	if s.Spec.Replicas != nil {
		want = *s.Spec.Replicas
	}
	st := s.Status
	if st.ObservedGeneration < s.Generation || st.UpdatedReplicas < want || st.AvailableReplicas < want || st.Replicas != want {
		return false
	}
	return st.UpdateRevision == "" || st.CurrentRevision == st.UpdateRevision
}

// configMapOf is the ConfigMap mounted as the collector's configuration volume.
func configMapOf(spec *corev1.PodSpec) string {
	for _, v := range spec.Volumes {
		if v.Name == naming.ConfigMapVolume && v.ConfigMap != nil {
			return v.ConfigMap.Name
		}
	}
	return ""
}

// floorSet is what the floor creates for each workload the operator made: its ServiceAccount and
// ConfigMap (the objects its pods need) and the workload itself, copied without owner references,
// status or server-set metadata, to be created on a fresh cluster where no operator runs.
// With all (--floor-all), each workload's Services, PodDisruptionBudget and NetworkPolicy too,
// and the ServiceAccount, ConfigMap and Services of each collector without a workload (sidecar
// mode): every object the operator made for the collectors.
type floorSet struct {
	namespaces []string
	items      []floorItem
	all        bool
}

type floorItem struct {
	key string // namespace/name of the workload; empty for a collector without one
	// ns and inst are the collector's namespace and instance label (<namespace>.<name>).
	ns, inst string
	sa       *corev1.ServiceAccount
	cm       *corev1.ConfigMap
	dep      *appsv1.Deployment
	ds       *appsv1.DaemonSet
	sts      *appsv1.StatefulSet
	// With floorSet.all: the collector's other objects, created after the workload (the
	// operator's order).
	svcs []*corev1.Service
	pdbs []*policyv1.PodDisruptionBudget
	nps  []*networkingv1.NetworkPolicy
	// extraCMs are the ConfigMaps of a collector without a workload (cm is the workload's).
	extraCMs []*corev1.ConfigMap
}

func cleanMeta(m metav1.ObjectMeta) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: m.Name, Namespace: m.Namespace, Labels: m.Labels, Annotations: m.Annotations}
}

// captureFloor reads the operator's workloads with their ServiceAccounts and ConfigMaps, and with
// all their Services, PodDisruptionBudgets and NetworkPolicies.
func captureFloor(ctx context.Context, cs kubernetes.Interface, all bool) (*floorSet, error) {
	opts := metav1.ListOptions{LabelSelector: operatorSelector}
	fs := &floorSet{all: all}
	nsSet := map[string]bool{}
	cms, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	cmBy := map[string]*corev1.ConfigMap{}
	for i := range cms.Items {
		cmBy[cms.Items[i].Namespace+"/"+cms.Items[i].Name] = &cms.Items[i]
	}
	sas, err := cs.CoreV1().ServiceAccounts("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	saBy := map[string]*corev1.ServiceAccount{}
	for i := range sas.Items {
		saBy[sas.Items[i].Namespace+"/"+sas.Items[i].Name] = &sas.Items[i]
	}
	add := func(meta metav1.ObjectMeta, spec *corev1.PodSpec, it floorItem) error {
		ns, name := meta.Namespace, meta.Name
		it.key, it.ns, it.inst = ns+"/"+name, ns, meta.Labels[instanceLabel]
		nsSet[ns] = true
		if sa := saBy[ns+"/"+spec.ServiceAccountName]; sa != nil {
			it.sa = &corev1.ServiceAccount{ObjectMeta: cleanMeta(sa.ObjectMeta)}
		}
		cm := cmBy[ns+"/"+configMapOf(spec)]
		if cm == nil {
			return fmt.Errorf("floor: the ConfigMap of %s/%s is missing", ns, name)
		}
		it.cm = &corev1.ConfigMap{ObjectMeta: cleanMeta(cm.ObjectMeta), Data: cm.Data}
		fs.items = append(fs.items, it)
		return nil
	}
	deps, err := cs.AppsV1().Deployments("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for _, d := range deps.Items {
		c := &appsv1.Deployment{ObjectMeta: cleanMeta(d.ObjectMeta), Spec: d.Spec}
		if err := add(d.ObjectMeta, &d.Spec.Template.Spec, floorItem{dep: c}); err != nil {
			return nil, err
		}
	}
	dss, err := cs.AppsV1().DaemonSets("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for _, d := range dss.Items {
		c := &appsv1.DaemonSet{ObjectMeta: cleanMeta(d.ObjectMeta), Spec: d.Spec}
		if err := add(d.ObjectMeta, &d.Spec.Template.Spec, floorItem{ds: c}); err != nil {
			return nil, err
		}
	}
	sts, err := cs.AppsV1().StatefulSets("").List(ctx, opts)
	if err != nil {
		return nil, err
	}
	for _, s := range sts.Items {
		c := &appsv1.StatefulSet{ObjectMeta: cleanMeta(s.ObjectMeta), Spec: s.Spec}
		if err := add(s.ObjectMeta, &s.Spec.Template.Spec, floorItem{sts: c}); err != nil {
			return nil, err
		}
	}
	if all {
		fs.captureWorkloadless(cmBy, sas.Items, nsSet)
		if err := fs.captureOthers(ctx, cs, opts); err != nil {
			return nil, err
		}
	}
	for ns := range nsSet {
		fs.namespaces = append(fs.namespaces, ns)
	}
	sort.Strings(fs.namespaces)
	return fs, nil
}

// captureWorkloadless adds an item for each collector the operator made a ConfigMap for but no
// workload (sidecar mode): its ConfigMaps and ServiceAccount, found by the instance label (its
// Services follow in captureOthers).
func (fs *floorSet) captureWorkloadless(cmBy map[string]*corev1.ConfigMap, sas []corev1.ServiceAccount, nsSet map[string]bool) {
	have := map[string]bool{}
	for _, it := range fs.items {
		have[it.ns+"/"+it.inst] = true
	}
	extra := map[string]*floorItem{}
	var order []string
	item := func(m metav1.ObjectMeta) *floorItem {
		inst := m.Labels[instanceLabel]
		k := m.Namespace + "/" + inst
		if inst == "" || m.Labels[managedByLabel] != managedByValue || have[k] {
			return nil
		}
		if extra[k] == nil {
			extra[k] = &floorItem{ns: m.Namespace, inst: inst}
			order = append(order, k)
		}
		return extra[k]
	}
	for _, cm := range cmBy {
		if it := item(cm.ObjectMeta); it != nil {
			it.extraCMs = append(it.extraCMs, &corev1.ConfigMap{ObjectMeta: cleanMeta(cm.ObjectMeta), Data: cm.Data})
		}
	}
	for i := range sas {
		if it := item(sas[i].ObjectMeta); it != nil {
			it.sa = &corev1.ServiceAccount{ObjectMeta: cleanMeta(sas[i].ObjectMeta)}
		}
	}
	sort.Strings(order)
	for _, k := range order {
		nsSet[extra[k].ns] = true
		fs.items = append(fs.items, *extra[k])
	}
}

// instanceLabel is the standard label that names a collector's instance (<namespace>.<name>) on
// every object the operator makes for it.
const instanceLabel = "app.kubernetes.io/instance"

// captureOthers adds each workload's Services, PodDisruptionBudgets and NetworkPolicies, found by
// the instance label of the workload; objects of collectors without a workload (sidecar mode) are
// left out, like their ConfigMaps.
func (fs *floorSet) captureOthers(ctx context.Context, cs kubernetes.Interface, opts metav1.ListOptions) error {
	byInstance := map[string]*floorItem{}
	for i := range fs.items {
		it := &fs.items[i]
		byInstance[it.ns+"/"+it.inst] = it
	}
	of := func(m metav1.ObjectMeta) *floorItem { return byInstance[m.Namespace+"/"+m.Labels[instanceLabel]] }
	svcs, err := cs.CoreV1().Services("").List(ctx, opts)
	if err != nil {
		return err
	}
	for _, s := range svcs.Items {
		if it := of(s.ObjectMeta); it != nil {
			spec := *s.Spec.DeepCopy()
			if spec.ClusterIP != corev1.ClusterIPNone { // allocated by the API server
				spec.ClusterIP, spec.ClusterIPs = "", nil
			}
			it.svcs = append(it.svcs, &corev1.Service{ObjectMeta: cleanMeta(s.ObjectMeta), Spec: spec})
		}
	}
	pdbs, err := cs.PolicyV1().PodDisruptionBudgets("").List(ctx, opts)
	if err != nil {
		return err
	}
	for _, p := range pdbs.Items {
		if it := of(p.ObjectMeta); it != nil {
			it.pdbs = append(it.pdbs, &policyv1.PodDisruptionBudget{ObjectMeta: cleanMeta(p.ObjectMeta), Spec: p.Spec})
		}
	}
	nps, err := cs.NetworkingV1().NetworkPolicies("").List(ctx, opts)
	if err != nil {
		return err
	}
	for _, n := range nps.Items {
		if it := of(n.ObjectMeta); it != nil {
			it.nps = append(it.nps, &networkingv1.NetworkPolicy{ObjectMeta: cleanMeta(n.ObjectMeta), Spec: n.Spec})
		}
	}
	return nil
}

// hasWorkload reports whether the item is a collector with a workload (not sidecar mode).
func (it *floorItem) hasWorkload() bool { return it.key != "" }

// create makes one item's objects in order: ServiceAccount, ConfigMap, workload, then (when
// captured) its Services, PodDisruptionBudgets and NetworkPolicies.
func (it *floorItem) create(ctx context.Context, cs kubernetes.Interface) error {
	co := metav1.CreateOptions{}
	if it.sa != nil {
		if _, err := cs.CoreV1().ServiceAccounts(it.sa.Namespace).Create(ctx, it.sa, co); err != nil {
			return err
		}
	}
	for _, cm := range append([]*corev1.ConfigMap{it.cm}, it.extraCMs...) {
		if cm == nil {
			continue
		}
		if _, err := cs.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, co); err != nil {
			return err
		}
	}
	var err error
	switch {
	case it.dep != nil:
		_, err = cs.AppsV1().Deployments(it.dep.Namespace).Create(ctx, it.dep, co)
	case it.ds != nil:
		_, err = cs.AppsV1().DaemonSets(it.ds.Namespace).Create(ctx, it.ds, co)
	case it.sts != nil:
		_, err = cs.AppsV1().StatefulSets(it.sts.Namespace).Create(ctx, it.sts, co)
	}
	if err != nil {
		return err
	}
	return it.createOthers(ctx, cs, co)
}

// createOthers makes the item's Services, PodDisruptionBudgets and NetworkPolicies.
func (it *floorItem) createOthers(ctx context.Context, cs kubernetes.Interface, co metav1.CreateOptions) error {
	for _, s := range it.svcs {
		if _, err := cs.CoreV1().Services(s.Namespace).Create(ctx, s, co); err != nil {
			return err
		}
	}
	for _, p := range it.pdbs {
		if _, err := cs.PolicyV1().PodDisruptionBudgets(p.Namespace).Create(ctx, p, co); err != nil {
			return err
		}
	}
	for _, n := range it.nps {
		if _, err := cs.NetworkingV1().NetworkPolicies(n.Namespace).Create(ctx, n, co); err != nil {
			return err
		}
	}
	return nil
}

// objects is the number of objects the floor creates.
func (fs *floorSet) objects() int {
	n := 0
	for _, it := range fs.items {
		n += len(it.extraCMs) + len(it.svcs) + len(it.pdbs) + len(it.nps)
		if it.hasWorkload() {
			n += 2
		}
		if it.sa != nil {
			n++
		}
	}
	return n
}

// workloadsOnly is fs without the Services, PodDisruptionBudgets and NetworkPolicies: the
// 3-object floor of the same workloads.
func (fs *floorSet) workloadsOnly() *floorSet {
	out := &floorSet{namespaces: fs.namespaces}
	for _, it := range fs.items {
		if it.hasWorkload() {
			it.svcs, it.pdbs, it.nps = nil, nil, nil
			out.items = append(out.items, it)
		}
	}
	return out
}

// workloads is the number of items with a workload.
func (fs *floorSet) workloads() int {
	n := 0
	for _, it := range fs.items {
		if it.hasWorkload() {
			n++
		}
	}
	return n
}

// what says what the floor creates for each workload.
func (fs *floorSet) what() string {
	if fs.all {
		return "ServiceAccount, ConfigMap, workload, Services, PodDisruptionBudget and NetworkPolicy of each workload, " +
			"and ServiceAccount, ConfigMap and Services of each collector without one"
	}
	return "ServiceAccount, ConfigMap and workload"
}
