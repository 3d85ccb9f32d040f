package collectorconfig

import (
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// endpointStyle says where a component keeps its listen address.
type endpointStyle int

const (
	// styleNone: the component listens on nothing the operator should expose.
	styleNone endpointStyle = iota //nolint:unused // the zero value, named for readability
	// styleSingle: endpoint (or listen_address) at the top of the component's config.
	styleSingle
	// styleMulti: protocols.<protocol>.endpoint, one port per protocol.
	styleMulti
	// styleHTTP: http.endpoint (jaeger_query).
	styleHTTP
)

// portDef is a port a component listens on by default.
type portDef struct {
	// protocol is the key under protocols for multi-protocol receivers; empty otherwise.
	protocol string
	// port is the default port; 0 when the component has none and the port must come from the config.
	port int32
	// l4 is the Service port protocol; empty leaves it to Kubernetes' default (TCP), as upstream does.
	l4 corev1.Protocol
	// appProtocol is the Service port appProtocol; empty for none.
	appProtocol string
	// targetPort sets targetPort to the port number, as upstream does for these components.
	targetPort bool
}

// spec is what the operator knows about one component type.
type spec struct {
	style endpointStyle
	ports []portDef
	// defaultEndpoint makes ApplyDefaults fill in 0.0.0.0:<port> endpoints.
	defaultEndpoint bool
	// healthCheck marks the health_check extension: probes and a default path.
	healthCheck bool
	rbac        func(cfg map[string]any) []rbacv1.PolicyRule
	env         func(cfg map[string]any) []corev1.EnvVar
}

const (
	appGRPC = "grpc"
	appHTTP = "http"
)

func single(port int32, l4 corev1.Protocol, app string, target bool) spec {
	return spec{style: styleSingle, ports: []portDef{{port: port, l4: l4, appProtocol: app, targetPort: target}},
		defaultEndpoint: port != 0}
}

func multi(defs ...portDef) spec {
	return spec{style: styleMulti, ports: defs, defaultEndpoint: true}
}

// receiverSpecs are the receivers with known ports or needs (upstream internal/components/receivers).
var receiverSpecs = map[string]spec{
	"otlp": multi(
		portDef{protocol: "grpc", port: 4317, appProtocol: appGRPC, targetPort: true},
		portDef{protocol: "http", port: 4318, appProtocol: appHTTP, targetPort: true}),
	"skywalking": multi(
		portDef{protocol: "grpc", port: 11800, appProtocol: appGRPC, targetPort: true},
		portDef{protocol: "http", port: 12800, appProtocol: appHTTP, targetPort: true}),
	"jaeger": multi(
		portDef{protocol: "grpc", port: 14250, l4: corev1.ProtocolTCP, appProtocol: appGRPC, targetPort: true},
		portDef{protocol: "thrift_http", port: 14268, l4: corev1.ProtocolTCP, appProtocol: appHTTP, targetPort: true},
		portDef{protocol: "thrift_compact", port: 6831, l4: corev1.ProtocolUDP, targetPort: true},
		portDef{protocol: "thrift_binary", port: 6832, l4: corev1.ProtocolUDP, targetPort: true}),
	"loki": multi(
		portDef{protocol: "grpc", port: 9095, appProtocol: appGRPC, targetPort: true},
		portDef{protocol: "http", port: 3100, appProtocol: appHTTP, targetPort: true}),
	"awsxray":       single(2000, corev1.ProtocolUDP, "", true),
	"carbon":        single(2003, "", "", true),
	"collectd":      single(8081, "", "", true),
	"fluentforward": single(8006, "", "", true),
	"influxdb":      single(8086, "", "", true),
	"opencensus":    single(55678, "", "", true),
	"sapm":          single(7276, "", "", true),
	"signalfx":      single(9943, "", "", true),
	"splunk_hec":    single(8088, "", "", true),
	"statsd":        single(8125, corev1.ProtocolUDP, "", true),
	"tcplog":        single(0, corev1.ProtocolTCP, "", false),
	"udplog":        single(0, corev1.ProtocolUDP, "", false),
	"wavefront":     single(2003, "", "", true),
	"zipkin":        single(9411, corev1.ProtocolTCP, appHTTP, true),
	"kubeletstats":  {rbac: kubeletStatsRules, env: kubeletStatsEnv},
	"k8s_events":    {rbac: k8sEventsRules},
	"k8s_cluster":   {rbac: k8sClusterRules},
	"k8sobjects":    {rbac: k8sObjectsRules},
}

// scrapers are receivers that pull data and listen on nothing, even when they have an endpoint.
var scrapers = []string{
	"prometheus", "sshcheck", "cloudfoundry", "vcenter", "oracledb", "snmp", "googlecloudpubsub", "chrony",
	"jmx", "podman_stats", "pulsar", "docker_stats", "aerospike", "zookeeper", "prometheus_simple", "saphana",
	"riak", "redis", "rabbitmq", "purefb", "postgresql", "nsxt", "nginx", "mysql", "memcached", "httpcheck",
	"haproxy", "flinkmetrics", "couchdb", "filelog",
}

// unknownReceiver is how a receiver the operator does not know is treated: its port comes from
// endpoint or listen_address when one is given.
var unknownReceiver = single(0, "", "", false)

var processorSpecs = map[string]spec{
	"k8sattributes":     {rbac: k8sAttributesRules},
	"resourcedetection": {rbac: resourceDetectionRules},
}

var exporterSpecs = map[string]spec{
	"prometheus": {style: styleSingle, ports: []portDef{{port: 8888}}},
}

var extensionSpecs = map[string]spec{
	"health_check": {style: styleSingle, ports: []portDef{{port: 13133}}, defaultEndpoint: true, healthCheck: true},
	"jaeger_query": {style: styleHTTP, ports: []portDef{{port: 16686, targetPort: true}}, defaultEndpoint: true},
	"k8s_observer": {rbac: k8sObserverRules},
	// client-go's Lease lock, which the extension uses, only gets, creates and updates its Lease
	// (releasing it is an update too): no list, watch, patch or delete. Upstream grants all seven
	// verbs, which the operator would then have to hold on every Lease of the cluster.
	"k8s_leader_elector": {rbac: func(map[string]any) []rbacv1.PolicyRule {
		return []rbacv1.PolicyRule{{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"},
			Verbs: []string{"get", "create", "update"}}}
	}},
}

// aliases maps alternative spellings of component types to the ones above.
var aliases = map[string]string{
	"k8s_attributes":     "k8sattributes",
	"resource_detection": "resourcedetection",
	"kubelet_stats":      "kubeletstats",
	"k8s_objects":        "k8sobjects",
	"k8sobserver":        "k8s_observer",
	"k8sleaderelector":   "k8s_leader_elector",
}

func init() {
	for _, s := range scrapers {
		receiverSpecs[s] = spec{}
	}
}

// specFor returns what the operator knows about a component of the given kind and type.
func specFor(kind Kind, typ string) spec {
	if a, ok := aliases[typ]; ok {
		typ = a
	}
	var s spec
	var ok bool
	switch kind {
	case KindReceiver:
		if s, ok = receiverSpecs[typ]; !ok {
			s = unknownReceiver
		}
	case KindProcessor:
		s = processorSpecs[typ]
	case KindExporter:
		s = exporterSpecs[typ]
	case KindExtension:
		s = extensionSpecs[typ]
	}
	return s
}
