package main

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestScaleNodes(t *testing.T) {
	cfg := config{sidecarApps: 10}
	// 1,000 collectors: 250 Deployments + 250 StatefulSets + 10 sidecar apps -> 6 + 2 nodes.
	if got := scaleNodes(cfg, 1000); got != 8 {
		t.Errorf("scaleNodes(1000) = %d, want 8", got)
	}
	if got := scaleNodes(config{}, 4); got != 3 {
		t.Errorf("scaleNodes(4) = %d, want 3", got)
	}
	cfg.scaleNodes = 5
	if got := scaleNodes(cfg, 1000); got != 5 {
		t.Errorf("--scale-nodes=5 gives %d", got)
	}
	if want := scaleWant(config{colNS: 2}, 8); len(want) != 6 || want["bench-col-01/c-003-collector"] {
		t.Errorf("scaleWant: %v (the sidecar collectors have no workload)", want)
	}
}

func TestRolloutComplete(t *testing.T) {
	one := int32(1)
	ds := &appsv1.DaemonSet{Status: appsv1.DaemonSetStatus{DesiredNumberScheduled: 3, CurrentNumberScheduled: 3,
		UpdatedNumberScheduled: 3, NumberAvailable: 3}}
	if !daemonSetAvailable(ds) {
		t.Error("a DaemonSet with every pod updated and available is complete")
	}
	ds.Status.UpdatedNumberScheduled = 2
	if daemonSetAvailable(ds) {
		t.Error("a DaemonSet with a pod of the old template is not complete")
	}
	if daemonSetAvailable(&appsv1.DaemonSet{}) {
		t.Error("a DaemonSet with no pod scheduled is not complete")
	}
	sts := &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: &one}, Status: appsv1.StatefulSetStatus{
		Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, CurrentRevision: "a", UpdateRevision: "b"}}
	if statefulSetAvailable(sts) {
		t.Error("a StatefulSet whose revisions differ is still rolling")
	}
	sts.Status.CurrentRevision = "b"
	if !statefulSetAvailable(sts) {
		t.Error("a StatefulSet on its update revision with every replica available is complete")
	}
	spec := &corev1.PodSpec{Volumes: []corev1.Volume{{Name: "other"}, {Name: "otc-internal",
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c-collector-abc"}}}}}}
	if got := configMapOf(spec); got != "c-collector-abc" {
		t.Errorf("configMapOf = %q", got)
	}
}

func TestCaptureWorkloadless(t *testing.T) {
	ours := func(ns, name, inst string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{managedByLabel: managedByValue, instanceLabel: inst}}
	}
	fs := &floorSet{all: true, items: []floorItem{{key: "a/d-collector", ns: "a", inst: "a.d", cm: &corev1.ConfigMap{}}}}
	cms := map[string]*corev1.ConfigMap{
		"a/d-collector-1": {ObjectMeta: ours("a", "d-collector-1", "a.d")},
		"b/s-collector-2": {ObjectMeta: ours("b", "s-collector-2", "b.s")},
		"b/user":          {ObjectMeta: metav1.ObjectMeta{Namespace: "b", Name: "user", Labels: map[string]string{instanceLabel: "b.s"}}},
	}
	sas := []corev1.ServiceAccount{{ObjectMeta: ours("a", "d-collector", "a.d")}, {ObjectMeta: ours("b", "s-collector", "b.s")}}
	nsSet := map[string]bool{"a": true}
	fs.captureWorkloadless(cms, sas, nsSet)
	if len(fs.items) != 2 || !nsSet["b"] {
		t.Fatalf("items %d, namespaces %v: want the sidecar-mode collector b.s added, in namespace b", len(fs.items), nsSet)
	}
	it := fs.items[1]
	if it.hasWorkload() || it.sa == nil || it.sa.Name != "s-collector" || len(it.extraCMs) != 1 || it.extraCMs[0].Name != "s-collector-2" {
		t.Fatalf("sidecar item = %+v: want its ServiceAccount and our ConfigMap only", it)
	}
	if got := fs.objects(); got != 2+2 {
		t.Errorf("objects = %d, want 4 (the workload's ConfigMap and workload, the sidecar collector's two)", got)
	}
	if fs.workloads() != 1 || len(fs.workloadsOnly().items) != 1 {
		t.Errorf("the 3-object floor keeps only collectors with a workload")
	}
}

func TestPerCollector(t *testing.T) {
	w := writeCount{Total: 30, By: map[string]int{"events create": 20, "configmaps patch": 10}}
	got := perCollector(w, 10)
	for _, want := range []string{"30 in total", "3.00 per collector", "2.00 events create", "1.00 configmaps patch"} {
		if !strings.Contains(got, want) {
			t.Errorf("perCollector = %q, missing %q", got, want)
		}
	}
	c := &churnResult{ByKind: map[string]int{"StatefulSet": 2, "Deployment": 3}}
	if got := c.kinds(); got != "3 Deployment, 2 StatefulSet" {
		t.Errorf("kinds = %q", got)
	}
}
