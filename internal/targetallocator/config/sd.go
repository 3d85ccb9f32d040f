package config

// The service discovery mechanisms the allocator runs, for its own scrape_configs and for the
// ScrapeConfig resources prometheus_cr translates (package promcr). Each registers its
// *_sd_configs keys with Prometheus' configuration parser; a key not registered here is rejected
// with an error naming it.
import (
	_ "github.com/prometheus/prometheus/discovery/aws"          // ec2, lightsail (and aws, ecs, elasticache, msk, rds)
	_ "github.com/prometheus/prometheus/discovery/azure"        // azure
	_ "github.com/prometheus/prometheus/discovery/consul"       // consul
	_ "github.com/prometheus/prometheus/discovery/digitalocean" // digitalocean
	_ "github.com/prometheus/prometheus/discovery/dns"          // dns
	_ "github.com/prometheus/prometheus/discovery/eureka"       // eureka
	_ "github.com/prometheus/prometheus/discovery/file"         // file
	_ "github.com/prometheus/prometheus/discovery/gce"          // gce
	_ "github.com/prometheus/prometheus/discovery/hetzner"      // hetzner
	_ "github.com/prometheus/prometheus/discovery/http"         // http
	_ "github.com/prometheus/prometheus/discovery/ionos"        // ionos
	_ "github.com/prometheus/prometheus/discovery/kubernetes"   // kubernetes
	_ "github.com/prometheus/prometheus/discovery/linode"       // linode
	_ "github.com/prometheus/prometheus/discovery/moby"         // docker, dockerswarm
	_ "github.com/prometheus/prometheus/discovery/nomad"        // nomad
	_ "github.com/prometheus/prometheus/discovery/openstack"    // openstack
	_ "github.com/prometheus/prometheus/discovery/ovhcloud"     // ovhcloud
	_ "github.com/prometheus/prometheus/discovery/puppetdb"     // puppetdb
	_ "github.com/prometheus/prometheus/discovery/scaleway"     // scaleway
	_ "github.com/prometheus/prometheus/discovery/xds"          // kuma
)
