package pipeline

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/discovery/targetgroup"

	"github.com/otelop/otelop/internal/targetallocator/allocation"
	"github.com/otelop/otelop/internal/targetallocator/filter"
)

// The same data shape as upstream's BenchmarkProcessTargets (cmd/otel-allocator,
// benchmark_test.go): 1k to 800k targets, 5 targets per group, 20 groups per job, the same
// labels (a Kubernetes EndpointSlice target with its pod and service metadata), every strategy,
// no collectors; each iteration processes the whole discovery result again.
var targetCounts = []int{1000, 10000, 100000, 800000}

var strategies = []string{allocation.ConsistentHashing, allocation.LeastWeighted, allocation.PerNode}

func BenchmarkProcessTargets(b *testing.B) {
	for _, n := range targetCounts {
		tsets := benchmarkData(n, 5, 20)
		for _, s := range strategies {
			b.Run(fmt.Sprintf("%s/%d", s, n), func(b *testing.B) {
				alloc, err := allocation.New(s, "", nil)
				if err != nil {
					b.Fatal(err)
				}
				p := New(alloc, filter.New("relabel-config", nil))
				p.Process(tsets)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p.Process(tsets)
				}
			})
		}
	}
}

// BenchmarkProcessTargetsWithRelabelConfig keeps every target of even jobs and drops those of
// odd jobs, as upstream's benchmark of the same name.
func BenchmarkProcessTargetsWithRelabelConfig(b *testing.B) {
	for _, n := range targetCounts {
		tsets := benchmarkData(n, 5, 20)
		cfgs := keepEvenJobs(tsets)
		for _, s := range strategies {
			b.Run(fmt.Sprintf("%s/%d", s, n), func(b *testing.B) {
				alloc, err := allocation.New(s, "", nil)
				if err != nil {
					b.Fatal(err)
				}
				p := New(alloc, filter.New("relabel-config", cfgs))
				p.Process(tsets)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					p.Process(tsets)
				}
			})
		}
	}
}

func benchmarkData(numTargets, perGroup, groupsPerJob int) map[string][]*targetgroup.Group {
	groupLabels := model.LabelSet{
		"__meta_kubernetes_pod_controller_name":                                                 "example",
		"__meta_kubernetes_pod_ip":                                                              "10.244.0.251",
		"__meta_kubernetes_pod_uid":                                                             "676ebee7-14f8-481e-a937-d2affaec4105",
		"__meta_kubernetes_endpointslice_port_protocol":                                         "TCP",
		"__meta_kubernetes_endpointslice_endpoint_conditions_ready":                             "true",
		"__meta_kubernetes_service_annotation_kubectl_kubernetes_io_last_applied_configuration": `{"apiVersion":"v1","kind":"Service","metadata":{"annotations":{},"labels":{"app":"example"},"name":"example-svc","namespace":"example"},"spec":{"clusterIP":"None","ports":[{"name":"http-example","port":9006,"targetPort":9006}],"selector":{"app":"example"},"type":"ClusterIP"}}` + "\n",
		"__meta_kubernetes_endpointslice_labelpresent_app":                                      "true",
		"__meta_kubernetes_endpointslice_name":                                                  "example-svc-qgwxf",
		"__address__":                                                                           "10.244.0.251:9006",
		"__meta_kubernetes_endpointslice_endpoint_conditions_terminating":                       "false",
		"__meta_kubernetes_pod_labelpresent_pod_template_hash":                                  "true",
		"__meta_kubernetes_endpointslice_label_kubernetes_io_service_name":                      "example-svc",
		"__meta_kubernetes_endpointslice_labelpresent_service_kubernetes_io_headless":           "true",
		"__meta_kubernetes_pod_label_pod_template_hash":                                         "6b549885f8",
		"__meta_kubernetes_endpointslice_address_target_name":                                   "example-6b549885f8-7tbcw",
		"__meta_kubernetes_pod_labelpresent_app":                                                "true",
		"somelabel":                                                                             "somevalue",
	}
	example := model.LabelSet{
		"__meta_kubernetes_endpointslice_port":                                                               "9006",
		"__meta_kubernetes_service_label_app":                                                                "example",
		"__meta_kubernetes_endpointslice_port_name":                                                          "http-example",
		"__meta_kubernetes_pod_ready":                                                                        "true",
		"__meta_kubernetes_endpointslice_address_type":                                                       "IPv4",
		"__meta_kubernetes_endpointslice_label_endpointslice_kubernetes_io_managed_by":                       "endpointslice-controller.k8s.io",
		"__meta_kubernetes_endpointslice_labelpresent_endpointslice_kubernetes_io_managed_by":                "true",
		"__meta_kubernetes_endpointslice_label_app":                                                          "example",
		"__meta_kubernetes_endpointslice_endpoint_conditions_serving":                                        "true",
		"__meta_kubernetes_pod_phase":                                                                        "Running",
		"__meta_kubernetes_pod_controller_kind":                                                              "ReplicaSet",
		"__meta_kubernetes_service_annotationpresent_kubectl_kubernetes_io_last_applied_configuration":       "true",
		"__meta_kubernetes_service_labelpresent_app":                                                         "true",
		"__meta_kubernetes_endpointslice_labelpresent_kubernetes_io_service_name":                            "true",
		"__meta_kubernetes_endpointslice_annotation_endpoints_kubernetes_io_last_change_trigger_time":        "2023-09-27T16:01:29Z",
		"__meta_kubernetes_pod_name":                                                                         "example-6b549885f8-7tbcw",
		"__meta_kubernetes_service_name":                                                                     "example-svc",
		"__meta_kubernetes_namespace":                                                                        "example",
		"__meta_kubernetes_endpointslice_annotationpresent_endpoints_kubernetes_io_last_change_trigger_time": "true",
		"__meta_kubernetes_pod_node_name":                                                                    "kind-control-plane",
		"__meta_kubernetes_endpointslice_address_target_kind":                                                "Pod",
		"__meta_kubernetes_pod_host_ip":                                                                      "172.18.0.2",
		"__meta_kubernetes_endpointslice_label_service_kubernetes_io_headless":                               "",
		"__meta_kubernetes_pod_label_app":                                                                    "example",
	}
	targets := make([]model.LabelSet, numTargets)
	for i := range targets {
		t := example.Clone()
		t["target_id"] = model.LabelValue(strconv.Itoa(i))
		targets[i] = t
	}
	numGroups := numTargets / perGroup
	groups := make([]*targetgroup.Group, numGroups)
	for i := range groups {
		groups[i] = &targetgroup.Group{Labels: groupLabels, Targets: targets[i*perGroup : (i+1)*perGroup]}
	}
	tsets := map[string][]*targetgroup.Group{}
	for i := 0; i < numGroups/groupsPerJob; i++ {
		tsets[fmt.Sprintf("test-%d", i)] = groups[i*groupsPerJob : (i+1)*groupsPerJob]
	}
	return tsets
}

// BenchmarkProcessTargetsCold is the first update of a fresh pipeline: every target is new, so
// its labels are built, hashed, filtered and allocated. Upstream's benchmark does this work on
// every iteration; ours does it only here.
func BenchmarkProcessTargetsCold(b *testing.B) {
	for _, n := range targetCounts {
		tsets := benchmarkData(n, 5, 20)
		b.Run(fmt.Sprintf("%s/%d", allocation.ConsistentHashing, n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				alloc, _ := allocation.New(allocation.ConsistentHashing, "", nil)
				New(alloc, filter.New("relabel-config", nil)).Process(tsets)
			}
		})
	}
}
