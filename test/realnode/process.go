package realnode

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/otelop/otelop/test/proc"
)

// start runs a node component, its log in Dir/node-logs, stopped by Stop in reverse order.
func (c *Cluster) start(name, bin string, args ...string) (*proc.Process, error) {
	logDir := filepath.Join(c.Dir, "node-logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, err
	}
	p, err := proc.Start(name, bin, args, filepath.Join(logDir, name+".log"))
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// NodeLogTails returns the last n lines of the kubelet's and containerd's logs.
func (c *Cluster) NodeLogTails(n int) string {
	var s string
	for _, p := range c.procs {
		s += fmt.Sprintf("--- %s (%s) ---\n%s\n", p.Name, p.LogPath, p.Tail(n))
	}
	return s
}

// unmountUnder unmounts whatever is still mounted below dir (container rootfs, pod volumes, netns
// files), deepest first, so that the folder can be removed.
func unmountUnder(dir string) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && (fields[4] == dir || strings.HasPrefix(fields[4], dir+"/")) {
			mounts = append(mounts, fields[4])
		}
	}
	for i := len(mounts) - 1; i >= 0; i-- {
		_ = syscall.Unmount(mounts[i], syscall.MNT_DETACH)
	}
}
