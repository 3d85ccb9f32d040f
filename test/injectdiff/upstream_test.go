package injectdiff

import (
	"strings"

	"github.com/otelop/otelop/test/upstreamop"
)

// upstreamFlags turn on every language upstream v0.140.0 can inject (Go and nginx are off by
// default there, as here) and multi-instrumentation (on by default; stated so the comparison does
// not hang on a default).
var upstreamFlags = []string{
	"--enable-java-instrumentation=true", "--enable-nodejs-instrumentation=true",
	"--enable-python-instrumentation=true", "--enable-dotnet-instrumentation=true",
	"--enable-go-instrumentation=true", "--enable-apache-httpd-instrumentation=true",
	"--enable-nginx-instrumentation=true", "--enable-multi-instrumentation=true",
}

// startUpstream runs bin (upstream's operator) with kubeconfig, watching the namespaces in
// watch. Its webhooks, served inside its namespace with the certificate files in
// dir/k8s-webhook-server/serving-certs, are reachable from the API server at
// 127.0.0.1:webhookPort; logPath receives its output.
func startUpstream(bin, kubeconfig, apiHost, dir string, webhookPort int, watch []string, logPath string) (*upstreamop.Operator, error) {
	return upstreamop.Start(upstreamop.Options{
		Bin: bin, Kubeconfig: kubeconfig, APIHost: apiHost, Dir: dir, WebhookPort: webhookPort, LogPath: logPath,
		Args: append([]string{"--metrics-addr=127.0.0.1:8080", "--health-probe-addr=127.0.0.1:8081"}, upstreamFlags...),
		Env:  []string{"WATCH_NAMESPACE=" + strings.Join(watch, ",")},
	})
}
