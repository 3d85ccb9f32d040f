package simcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/otelop/otelop/test/proc"
)

// RestartAPIServer crashes the kube-apiserver (SIGKILL: no graceful shutdown, open requests and
// watches are cut), leaves it down for down, then starts it again with the same flags and port
// (clients keep working with the same kubeconfig) and returns once /readyz answers. etcd keeps
// the data; the audit log, if any, is appended to. Each restart logs to
// logs/kube-apiserver-<n>.log. For fault-injection tests (test/chaos).
func (c *Cluster) RestartAPIServer(ctx context.Context, down time.Duration) error {
	i := c.index("kube-apiserver")
	if i < 0 {
		return fmt.Errorf("simcluster: no kube-apiserver is running")
	}
	c.procs[i].Kill()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	c.restarts++
	log := filepath.Join(c.Dir, "logs", "kube-apiserver-"+strconv.Itoa(c.restarts)+".log")
	p, err := proc.Start("kube-apiserver", c.bin("kube-apiserver"), c.apiserverArgs, log)
	if err != nil {
		return err
	}
	c.procs[i] = p
	return c.waitAPIServer(ctx, p)
}

// index is the position of the process named name in c.procs, or -1.
func (c *Cluster) index(name string) int {
	for i, p := range c.procs {
		if p.Name == name {
			return i
		}
	}
	return -1
}
