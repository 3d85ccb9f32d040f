package distributions

import (
	"path"
	"strings"
)

// kindSuffixes are the module name endings that name a component's kind; the component's type
// is usually the module's last path element without it.
var kindSuffixes = map[string]string{
	"receiver": "receiver", "processor": "processor", "exporter": "exporter",
	"extension": "extension", "connector": "connector",
}

// typeNames are the modules whose registered type is not their last path element minus the kind
// suffix (metadata.yaml's type). A module missing here that should be listed only turns the
// check off for that component (its type is then unknown to every distribution), never refuses
// a valid config.
var typeNames = map[string]string{
	"k8sclusterreceiver":                          "k8s_cluster",
	"k8seventsreceiver":                           "k8s_events",
	"simpleprometheusreceiver":                    "prometheus_simple",
	"receivercreator":                             "receiver_creator",
	"dockerstatsreceiver":                         "docker_stats",
	"activedirectorydsreceiver":                   "active_directory_ds",
	"splunkhecreceiver":                           "splunk_hec",
	"awscontainerinsightreceiver":                 "awscontainerinsightreceiver",
	"memorylimiterprocessor":                      "memory_limiter",
	"probabilisticsamplerprocessor":               "probabilistic_sampler",
	"tailsamplingprocessor":                       "tail_sampling",
	"metricsgenerationprocessor":                  "experimental_metricsgeneration",
	"spanprocessor":                               "span",
	"splunkhecexporter":                           "splunk_hec",
	"alibabacloudlogserviceexporter":              "alibabacloud_logservice",
	"tencentcloudlogserviceexporter":              "tencentcloud_logservice",
	"healthcheckextension":                        "health_check",
	"filestorage":                                 "file_storage",
	"dbstorage":                                   "db_storage",
	"redisstorageextension":                       "redis_storage",
	"hostobserver":                                "host_observer",
	"k8sobserver":                                 "k8s_observer",
	"dockerobserver":                              "docker_observer",
	"ecsobserver":                                 "ecs_observer",
	"kafkatopicsobserver":                         "kafkatopics_observer",
	"headerssetterextension":                      "headers_setter",
	"httpforwarderextension":                      "http_forwarder",
	"oauth2clientauthextension":                   "oauth2client",
	"oidcauthextension":                           "oidc",
	"k8sleaderelector":                            "k8s_leader_elector",
	"asapauthextension":                           "asapclient",
	"textencodingextension":                       "text_encoding",
	"jsonlogencodingextension":                    "json_log_encoding",
	"otlpencodingextension":                       "otlp_encoding",
	"zipkinencodingextension":                     "zipkin_encoding",
	"jaegerencodingextension":                     "jaeger_encoding",
	"awslogsencodingextension":                    "awslogs_encoding",
	"azureencodingextension":                      "azure_encoding",
	"skywalkingencodingextension":                 "skywalking_encoding",
	"googlecloudlogentryencodingextension":        "googlecloudlogentry_encoding",
	"awscloudwatchmetricstreamsencodingextension": "awscloudwatchmetricstreams_encoding",
}

// TypeOf returns the component type a builder module registers, from its path (without version):
// .../receiver/k8sclusterreceiver gives k8s_cluster, .../exporter/otlpexporter gives otlp.
func TypeOf(module, kind string) string {
	base := path.Base(module)
	if t, ok := typeNames[base]; ok {
		return t
	}
	if s := kindSuffixes[kind]; s != "" && strings.HasSuffix(base, s) && base != s {
		return strings.TrimSuffix(base, s)
	}
	return base
}
