// Package upstreamop runs upstream's operator v0.140.0 (bin/tools/upstream-operator, built from its
// Go module by hack/build-tools.sh as a test tool, never imported) for the tests that compare with it
// (test/takeover, test/injectdiff). It runs in a network namespace of its own, made by unshare(1),
// so that its fixed ports (webhooks 9443, metrics 8080, probes 8081) clash with nothing: the API
// server and its webhook server are joined to the test's loopback addresses through Unix sockets.
//
// A test binary that uses Start must call RunChildIfAsked first thing in its TestMain: Start runs
// the test binary itself again inside the namespace, as the child that starts the operator.
package upstreamop

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// The environment of the re-executed test binary that runs upstream's operator inside the
// network namespace (see runChild).
const (
	envChild   = "OTELOP_UPSTREAM_NETNS_CHILD" // upstream operator binary path; set: child mode
	envAPIAddr = "OTELOP_UPSTREAM_API_ADDR"    // 127.0.0.1:<API server port>, served in the namespace
	envAPISock = "OTELOP_UPSTREAM_API_SOCK"    // Unix socket the test serves, connected to the API server
	envWebhook = "OTELOP_UPSTREAM_WEBHOOK_SOCK"
	// hooksAddr is upstream's default webhook address, inside the namespace.
	hooksAddr = "127.0.0.1:9443"
)

// RunChildIfAsked makes this process the namespace's child and exits with its code when Start
// re-ran the test binary for that; otherwise it returns at once.
func RunChildIfAsked() {
	if os.Getenv(envChild) != "" {
		os.Exit(runChild())
	}
}

// runChild runs in a fresh network namespace: it brings the loopback interface up, serves the
// API server's address there (forwarded to the test's Unix socket), forwards the webhook Unix
// socket to upstream's webhook port, and runs upstream's operator with the remaining arguments
// until it exits; SIGTERM and SIGINT are passed on, and the operator dies with this process.
func runChild() int {
	if err := loopbackUp(); err != nil {
		fmt.Fprintln(os.Stderr, "netns: loopback:", err)
		return 1
	}
	api, err := net.Listen("tcp", os.Getenv(envAPIAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns:", err)
		return 1
	}
	go forward(api, "unix", os.Getenv(envAPISock))
	_ = os.Remove(os.Getenv(envWebhook))
	hooks, err := net.Listen("unix", os.Getenv(envWebhook))
	if err != nil {
		fmt.Fprintln(os.Stderr, "netns:", err)
		return 1
	}
	go forward(hooks, "tcp", hooksAddr)
	cmd := exec.Command(os.Getenv(envChild), os.Args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "netns:", err)
		return 1
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		for s := range sig {
			_ = cmd.Process.Signal(s)
		}
	}()
	if err := cmd.Wait(); err != nil {
		fmt.Fprintln(os.Stderr, "netns: upstream operator:", err)
		return 1
	}
	return 0
}

// loopbackUp sets the IFF_UP flag of "lo" (a new network namespace starts with it down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer func() { _ = unix.Close(fd) }()
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// forward accepts connections on l and pipes each to a new connection to network/addr, until l
// is closed.
func forward(l net.Listener, network, addr string) {
	for {
		in, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer in.Close()
			out, err := net.Dial(network, addr)
			if err != nil {
				return
			}
			defer out.Close()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(out, in); closeWrite(out); done <- struct{}{} }()
			go func() { _, _ = io.Copy(in, out); closeWrite(in); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
