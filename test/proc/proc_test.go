package proc

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	if len(runningMembers(t, pgid)) == 0 {
		t.Fatalf("process group %d has no running member before Stop", pgid)
	}
	long.Stop(2 * time.Second)
	if !long.Exited() {
		t.Fatal("Stop returned with the process running")
	}
	// The backgrounded sleep was in the same group; no member is left running. A killed child
	// that was reparented stays a zombie until its new parent reaps it (at once under a reaping
	// init, never under a PID 1 that does not reap), so zombies do not count, and the kill is
	// given a moment to land.
	var left []string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left = runningMembers(t, pgid); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("process group %d still has running members after Stop: %v", pgid, left)
	}

	if _, err := Start("missing", filepath.Join(dir, "nope"), nil, filepath.Join(dir, "m.log")); err == nil {
		t.Error("Start of a missing binary succeeded")
	}
}

// runningMembers lists the processes of group pgid that are not zombies, as "pid state comm".
func runningMembers(t *testing.T, pgid int) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // exited meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if g, err := strconv.Atoi(f[2]); err == nil && g == pgid {
			out = append(out, strings.TrimSpace(s[:i+1])+" "+f[0])
		}
	}
	return out
}
