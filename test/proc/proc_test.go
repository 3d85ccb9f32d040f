package proc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFreeAddrAndHTTPOK(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr = %q, %v", addr, err)
	}
	if HTTPOK(context.Background(), "http://"+addr+"/") {
		t.Error("HTTPOK on a closed port")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	if !HTTPOK(context.Background(), "http://"+addr+"/") {
		t.Error("HTTPOK false on a server answering 200")
	}
}

// A process that exits early fails WaitFor with its log tail; Stop ends a running one and its
// children (the process group), so nothing is left behind.
func TestStartWaitStop(t *testing.T) {
	dir := t.TempDir()
	early, err := Start("early", "/bin/sh", []string{"-c", "echo broken config; exit 3"}, filepath.Join(dir, "early.log"))
	if err != nil {
		t.Fatal(err)
	}
	err = WaitFor(context.Background(), early, "never", 10*time.Millisecond, 5*time.Second, func(context.Context) bool { return false })
	if err == nil || !strings.Contains(err.Error(), "broken config") || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("WaitFor on an exited process = %v; want the exit and the log tail", err)
	}

	long, err := Start("long", "/bin/sh", []string{"-c", "sleep 300 & wait"}, filepath.Join(dir, "long.log"))
	if err != nil {
		t.Fatal(err)
	}
	pgid := long.Pid()
	long.Stop(2 * time.Second)
	if !long.Exited() {
		t.Fatal("Stop returned with the process running")
	}
	// The backgrounded sleep was in the same group; no member is left.
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still has members after Stop: %v", pgid, err)
	}

	if _, err := Start("missing", filepath.Join(dir, "nope"), nil, filepath.Join(dir, "m.log")); err == nil {
		t.Error("Start of a missing binary succeeded")
	}
}
