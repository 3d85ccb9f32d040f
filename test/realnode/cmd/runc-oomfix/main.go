// Command runc-oomfix runs runc after clamping a negative process.oomScoreAdj in the OCI bundle's
// config.json to 0. The kubelet asks for -998 on pod sandboxes; in a test sandbox without
// CAP_SYS_RESOURCE runc cannot set a negative value and fails every sandbox with "can't get final
// child's PID from pipe: EOF". containerd's runc runtime is pointed at this program (BinaryName).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

func main() {
	if bundle := bundleDir(os.Args[1:]); bundle != "" {
		if err := clamp(filepath.Join(bundle, "config.json")); err != nil {
			fmt.Fprintln(os.Stderr, "runc-oomfix:", err)
			os.Exit(1)
		}
	}
	runc, err := exec.LookPath("runc")
	if err != nil {
		fmt.Fprintln(os.Stderr, "runc-oomfix:", err)
		os.Exit(1)
	}
	err = syscall.Exec(runc, append([]string{"runc"}, os.Args[1:]...), os.Environ())
	fmt.Fprintln(os.Stderr, "runc-oomfix: exec runc:", err)
	os.Exit(1)
}

// bundleDir returns the bundle of a "create" or "run" command: --bundle/-b, else the working folder.
func bundleDir(args []string) string {
	cmd := false
	for i, a := range args {
		switch {
		case a == "create" || a == "run":
			cmd = true
		case (a == "--bundle" || a == "-b") && i+1 < len(args):
			return args[i+1]
		case len(a) > 9 && a[:9] == "--bundle=":
			return a[9:]
		}
	}
	if cmd {
		wd, _ := os.Getwd()
		return wd
	}
	return ""
}

func clamp(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var spec map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&spec); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	proc, _ := spec["process"].(map[string]any)
	n, ok := proc["oomScoreAdj"].(json.Number)
	if !ok {
		return nil
	}
	if v, err := n.Int64(); err != nil || v >= 0 {
		return nil
	}
	proc["oomScoreAdj"] = 0
	out, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}
