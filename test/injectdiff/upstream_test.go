package injectdiff

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
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

// upstream is upstream's operator running in its own network namespace.
type upstream struct {
	cmd      *exec.Cmd
	apiSock  net.Listener
	webhooks net.Listener
	log      string
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// startUpstream runs bin (upstream's operator) with kubeconfig, watching the namespaces in
// watch. Its webhooks, served inside its namespace with the certificate files in
// dir/k8s-webhook-server/serving-certs, are reachable from the API server at
// 127.0.0.1:webhookPort; logPath receives its output.
func startUpstream(bin, kubeconfig, apiHost, dir string, webhookPort int, watch []string, logPath string) (*upstream, error) {
	u, err := url.Parse(apiHost)
	if err != nil {
		return nil, err
	}
	apiSockPath := filepath.Join(dir, "api.sock")
	hookSockPath := filepath.Join(dir, "webhook.sock")
	_ = os.Remove(apiSockPath)
	apiSock, err := net.Listen("unix", apiSockPath)
	if err != nil {
		return nil, err
	}
	go forward(apiSock, "tcp", u.Host)
	webhooks, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", webhookPort))
	if err != nil {
		apiSock.Close()
		return nil, err
	}
	go forward(webhooks, "unix", hookSockPath)
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args := []string{"--net", "--"}
	if os.Geteuid() != 0 {
		args = append([]string{"--map-root-user"}, args...)
	}
	args = append(args, self, "--zap-log-level=info", "--zap-time-encoding=rfc3339", "--metrics-addr=127.0.0.1:8080",
		"--health-probe-addr=127.0.0.1:8081")
	args = append(args, upstreamFlags...)
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(),
		envChild+"="+bin, envAPIAddr+"="+u.Host, envAPISock+"="+apiSockPath, envWebhook+"="+hookSockPath,
		"KUBECONFIG="+kubeconfig, "WATCH_NAMESPACE="+strings.Join(watch, ","),
		// controller-runtime reads the webhook certificate from $TMPDIR/k8s-webhook-server/serving-certs.
		"TMPDIR="+dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		apiSock.Close()
		webhooks.Close()
		return nil, err
	}
	up := &upstream{cmd: cmd, apiSock: apiSock, webhooks: webhooks, log: logPath, done: make(chan error, 1)}
	go func() { up.done <- cmd.Wait(); logf.Close() }()
	return up, nil
}

// stop ends upstream's operator (SIGTERM, SIGKILL after 20s) and closes the forwarders. Calls
// after the first return the first one's result.
func (u *upstream) stop() error {
	u.stopOnce.Do(func() {
		defer u.apiSock.Close()
		defer u.webhooks.Close()
		_ = u.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case u.stopErr = <-u.done:
		case <-time.After(20 * time.Second):
			_ = u.cmd.Process.Kill()
			u.stopErr = fmt.Errorf("upstream operator did not stop within 20s; killed: %v", <-u.done)
		}
	})
	return u.stopErr
}

// tail returns the last n lines of upstream's log.
func (u *upstream) tail(n int) string {
	b, _ := os.ReadFile(u.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
