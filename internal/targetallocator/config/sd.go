package config

// The service discovery mechanisms a configuration may use. Each registers its *_sd_configs key
// with Prometheus' configuration parser; a key not listed here is rejected with an error naming it.
import (
	_ "github.com/prometheus/prometheus/discovery/dns"        // dns_sd_configs
	_ "github.com/prometheus/prometheus/discovery/file"       // file_sd_configs
	_ "github.com/prometheus/prometheus/discovery/http"       // http_sd_configs
	_ "github.com/prometheus/prometheus/discovery/kubernetes" // kubernetes_sd_configs
)
