package promcr

// The service discovery mechanisms the translation writes; each registers its *_sd_configs key
// with Prometheus' configuration parser.
import (
	_ "github.com/prometheus/prometheus/discovery/dns"        // dns_sd_configs
	_ "github.com/prometheus/prometheus/discovery/file"       // file_sd_configs
	_ "github.com/prometheus/prometheus/discovery/http"       // http_sd_configs
	_ "github.com/prometheus/prometheus/discovery/kubernetes" // kubernetes_sd_configs
)
