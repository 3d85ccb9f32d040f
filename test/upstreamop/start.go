package upstreamop

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options say how to run upstream's operator.
type Options struct {
	// Bin is upstream's operator binary.
	Bin string
	// Kubeconfig is the user it runs as; APIHost the API server's URL (on 127.0.0.1).
	Kubeconfig, APIHost string
	// Dir holds the sockets; controller-runtime reads the webhook certificate from
	// Dir/k8s-webhook-server/serving-certs (TMPDIR).
	Dir string
	// WebhookPort is where the API server reaches its webhooks: WebhookHost:WebhookPort.
	WebhookPort int
	// WebhookHost is the loopback address of that listener (a pod IP standing in for upstream's
	// pod); empty: 127.0.0.1.
	WebhookHost string
	// LogPath receives its output.
	LogPath string
	// Args are added to its flags (logging is set); Env to its environment.
	Args, Env []string
}

// Operator is upstream's operator running in its own network namespace.
type Operator struct {
	cmd      *exec.Cmd
	apiSock  net.Listener
	webhooks net.Listener
	log      string
	done     chan error
	stopOnce sync.Once
	stopErr  error
}

// Start runs upstream's operator as o says.
func Start(o Options) (*Operator, error) {
	u, err := url.Parse(o.APIHost)
	if err != nil {
		return nil, err
	}
	apiSockPath := filepath.Join(o.Dir, "api.sock")
	hookSockPath := filepath.Join(o.Dir, "webhook.sock")
	_ = os.Remove(apiSockPath)
	apiSock, err := net.Listen("unix", apiSockPath)
	if err != nil {
		return nil, err
	}
	go forward(apiSock, "tcp", u.Host)
	host := o.WebhookHost
	if host == "" {
		host = "127.0.0.1"
	}
	webhooks, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(o.WebhookPort)))
	if err != nil {
		apiSock.Close()
		return nil, err
	}
	go forward(webhooks, "unix", hookSockPath)
	closeAll := func() { apiSock.Close(); webhooks.Close() }
	logf, err := os.Create(o.LogPath)
	if err != nil {
		closeAll()
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		closeAll()
		return nil, err
	}
	args := []string{"--net", "--"}
	if os.Geteuid() != 0 {
		args = append([]string{"--map-root-user"}, args...)
	}
	args = append(args, self, "--zap-log-level=info", "--zap-time-encoding=rfc3339")
	args = append(args, o.Args...)
	cmd := exec.Command("unshare", args...)
	cmd.Env = append(os.Environ(),
		envChild+"="+o.Bin, envAPIAddr+"="+u.Host, envAPISock+"="+apiSockPath, envWebhook+"="+hookSockPath,
		"KUBECONFIG="+o.Kubeconfig,
		// controller-runtime reads the webhook certificate from $TMPDIR/k8s-webhook-server/serving-certs.
		"TMPDIR="+o.Dir)
	cmd.Env = append(cmd.Env, o.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		closeAll()
		logf.Close()
		return nil, err
	}
	up := &Operator{cmd: cmd, apiSock: apiSock, webhooks: webhooks, log: o.LogPath, done: make(chan error, 1)}
	go func() { up.done <- cmd.Wait(); logf.Close() }()
	return up, nil
}

// Stop ends upstream's operator (SIGTERM, SIGKILL after 20s) and closes the forwarders. Calls
// after the first return the first one's result.
func (u *Operator) Stop() error {
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

// Tail returns the last n lines of upstream's log.
func (u *Operator) Tail(n int) string {
	b, _ := os.ReadFile(u.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
