// Package proc runs the local child processes of tests, benchmarks and dev tools (control-plane
// components, node components, the operator and the bridge as separate binaries): output to a log
// file, no orphans when the harness dies, a graceful stop, and failures that carry the log's tail.
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Process is one running child process.
type Process struct {
	// Name names the process in errors (e.g. "kube-apiserver").
	Name string
	// LogPath is the file that receives the process's stdout and stderr.
	LogPath string
	// Cmd is the started command.
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start runs bin with args, its output going to logPath, with env added to this process's
// environment. The child runs in its own process group and gets SIGKILL if the harness dies
// (Pdeathsig), so an interrupted run leaves nothing behind.
func Start(name, bin string, args []string, logPath string, env ...string) (*Process, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s: binary %s not found (make cluster-tools / make build build them)", name, bin)
	}
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("%s: starting %s: %w", name, bin, err)
	}
	p := &Process{Name: name, LogPath: logPath, Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's ID.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the process's exit error, once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM to the process, waits up to grace, then SIGKILLs whatever is left of its
// process group (children it started and did not stop, or the process itself).
func (p *Process) Stop(grace time.Duration) {
	if !p.Exited() {
		_ = p.Cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
		}
	}
	p.Kill()
}

// Kill SIGKILLs the process group at once (a crash, as far as the process can tell) and waits.
func (p *Process) Kill() {
	_ = syscall.Kill(-p.Cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Tail returns the last n lines of the process's log.
func (p *Process) Tail(n int) string { return Tail(p.LogPath, n) }

// Failure wraps err with the process's state and log tail, so a process that does not come up
// says why.
func (p *Process) Failure(err error) error {
	state := "still running"
	if p.Exited() {
		state = fmt.Sprintf("exited: %v", p.err)
	}
	return fmt.Errorf("%s (%s): %w\n--- last lines of %s ---\n%s", p.Name, state, err, p.LogPath, p.Tail(30))
}

// WaitHTTP waits until url answers 200 (see WaitFor).
func (p *Process) WaitHTTP(ctx context.Context, url string, interval, timeout time.Duration) error {
	return WaitFor(ctx, p, url+" to answer 200", interval, timeout, func(ctx context.Context) bool { return HTTPOK(ctx, url) })
}

// WaitFor calls cond every interval until it returns true, the process p exits (p may be nil), ctx
// ends or timeout passes. Errors name what was awaited and carry p's state and log tail.
func WaitFor(ctx context.Context, p *Process, what string, interval, timeout time.Duration, cond func(context.Context) bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	for {
		if p != nil && p.Exited() {
			err = errors.New("exited before " + what)
			break
		}
		if cond(ctx) {
			return nil
		}
		select {
		case <-ctx.Done():
			err = fmt.Errorf("waiting for %s: %w", what, ctx.Err())
		case <-time.After(interval):
			continue
		}
		break
	}
	if p == nil {
		return err
	}
	return p.Failure(err)
}

// Tail returns the last n lines of the file at path.
func Tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// HTTPOK reports whether a GET of url answers 200 within 2 seconds.
func HTTPOK(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// FreePort asks the kernel for a free TCP port on loopback.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// FreeAddr is FreePort as "127.0.0.1:<port>".
func FreeAddr() (string, error) {
	port, err := FreePort()
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", port), nil
}

// GoBuild builds the main package pkg (e.g. "./cmd/opentelemetry-operator") of the module at dir
// into out, with the go command on PATH; errors carry the compiler's output.
func GoBuild(ctx context.Context, dir, pkg, out string) error {
	// -trimpath: the build does not depend on the checkout's folder, so another clone reuses
	// Go's build cache.
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	build.Dir = dir
	if output, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, output)
	}
	return nil
}
