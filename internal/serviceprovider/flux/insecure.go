package flux

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// CheckInsecureRegistry decides whether chartInsecure may be used with chartURL. Flux's insecure
// setting does not only allow plain HTTP: it also accepts an HTTPS registry without verifying its
// certificate, so anyone on the network path to a registry elsewhere could serve a chart that
// helm-controller then installs with cluster-admin rights on the shared workload cluster. It is
// therefore accepted only for a registry whose traffic stays on the host or inside the platform
// cluster: a loopback address, localhost, or an in-cluster Service name (<service>.<namespace>.svc
// or .svc.cluster.local). An HTTPS registry with a private CA takes chartCABundleRef instead.
func CheckInsecureRegistry(chartURL string) error {
	u, err := url.Parse(chartURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("chartURL %q has no registry host", chartURL)
	}
	host := strings.ToLower(u.Hostname())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if host == "localhost" || strings.HasSuffix(host, ".svc") || strings.HasSuffix(host, ".svc.cluster.local") {
		return nil
	}
	return fmt.Errorf("not allowed for registry %q: chartInsecure also turns off certificate verification for HTTPS, so it is accepted only for a registry on a loopback address, localhost or an in-cluster Service name (*.svc, *.svc.cluster.local); for an HTTPS registry signed by a private CA set chartCABundleRef instead", host)
}
