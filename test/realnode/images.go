package realnode

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Image is a one-binary container image: the binary at /<base name of Binary>, run as entrypoint.
type Image struct {
	// Name is the image reference, e.g. "otelop.test/pause:1" (a registry-style name that is never
	// pulled: the node has the image and pods use imagePullPolicy IfNotPresent).
	Name string
	// Binary is a statically linked executable.
	Binary string
	// Args are the default arguments (the image's Cmd).
	Args []string
	// Env holds KEY=VALUE entries.
	Env []string
	// Files are more regular files (mode 0644), by absolute path in the image; their folders must
	// be / or one of the image's standard folders.
	Files map[string]string
}

// Image names of the images the cluster always loads.
const (
	PauseImage   = "otelop.test/pause:1"
	OTLPAppImage = "otelop.test/otlpapp:1"
	// CollectorImage runs hack/tools/otelcol (OTLP receiver, debug exporter, opamp and
	// health_check extensions).
	CollectorImage = "otelop.test/otelcol:1"
	// AgentImage stands in for a language agent image (Instrumentation spec.java.image): it holds
	// /javaagent.jar (AgentJarContent) and /cp (test/realnode/cmd/cp), what the injected init
	// container runs.
	AgentImage = "otelop.test/javaagent:1"
	// AgentJarContent is the content of /javaagent.jar in AgentImage.
	AgentJarContent = "otelop real-node test javaagent\n"
)

// writeDockerArchive writes img as a docker-archive tarball (the format `docker save` writes and
// `ctr images import` reads): manifest.json, the image config and one layer holding the binary.
// Small on purpose; a shared image builder (internal/imagebuild) can replace it.
func writeDockerArchive(img Image, path string) error {
	bin, err := os.ReadFile(img.Binary)
	if err != nil {
		return err
	}
	entry := "/" + filepath.Base(img.Binary)
	var layer bytes.Buffer
	lw := tar.NewWriter(&layer)
	epoch := time.Unix(0, 0)
	for _, d := range []string{"tmp/", "etc/", "dev/", "proc/", "sys/"} {
		mode := int64(0o755)
		if d == "tmp/" {
			mode = 0o1777
		}
		if err := lw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d, Mode: mode, ModTime: epoch}); err != nil {
			return err
		}
	}
	if err := lw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: entry[1:], Mode: 0o755, Size: int64(len(bin)), ModTime: epoch}); err != nil {
		return err
	}
	if _, err := lw.Write(bin); err != nil {
		return err
	}
	names := make([]string, 0, len(img.Files))
	for name := range img.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := img.Files[name]
		if err := lw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: strings.TrimPrefix(name, "/"), Mode: 0o644, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := lw.Write([]byte(data)); err != nil {
			return err
		}
	}
	if err := lw.Close(); err != nil {
		return err
	}
	layerSum := sha256.Sum256(layer.Bytes())
	layerID := hex.EncodeToString(layerSum[:])
	env := append([]string{"PATH=/"}, img.Env...)
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux", "created": epoch.UTC().Format(time.RFC3339),
		"config": map[string]any{"Entrypoint": []string{entry}, "Cmd": img.Args, "Env": env},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + layerID}},
	})
	if err != nil {
		return err
	}
	configSum := sha256.Sum256(config)
	configName := hex.EncodeToString(configSum[:]) + ".json"
	manifest, err := json.Marshal([]map[string]any{{
		"Config": configName, "RepoTags": []string{img.Name}, "Layers": []string{layerID + "/layer.tar"},
	}})
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	for _, e := range []struct {
		name string
		data []byte
	}{{configName, config}, {layerID + "/layer.tar", layer.Bytes()}, {"manifest.json", manifest}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: e.name, Mode: 0o644, Size: int64(len(e.data)), ModTime: epoch}); err != nil {
			return err
		}
		if _, err := tw.Write(e.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// LoadImage builds img and imports it into the node's containerd (namespace k8s.io, where the
// CRI plugin looks).
func (c *Cluster) LoadImage(img Image) error {
	path := filepath.Join(c.Dir, "images", filepath.Base(img.Binary)+".tar")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := writeDockerArchive(img, path); err != nil {
		return fmt.Errorf("building image %s: %w", img.Name, err)
	}
	out, err := exec.Command("ctr", "--address", c.containerdSock, "-n", "k8s.io", "images", "import",
		path).CombinedOutput()
	if err != nil {
		return fmt.Errorf("importing image %s: %w: %s", img.Name, err, out)
	}
	return os.Remove(path)
}

// buildBinaries compiles the test programs (pause, otlpapp, cp, runc-oomfix) and the collector as
// static binaries into dir. The Go build cache makes this take seconds after the first run.
func buildBinaries(root, dir string) error {
	env := append(os.Environ(), "CGO_ENABLED=0")
	run := func(wd string, args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = wd, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %v in %s: %w\n%s", args, wd, err, out)
		}
		return nil
	}
	if err := run(root, "build", "-ldflags=-s -w", "-o", dir+"/", "./test/realnode/cmd/..."); err != nil {
		return err
	}
	return run(filepath.Join(root, "hack", "tools", "otelcol"), "build", "-ldflags=-s -w", "-o", filepath.Join(dir, "otelcol"), ".")
}

// LoadOCILayout imports the OCI layout in dir (as internal/imagebuild writes it: one image index
// tagged with a bare tag) into the node's containerd as repo:<tag>: it tars the layout into an
// OCI archive and runs `ctr images import --base-name repo`.
func (c *Cluster) LoadOCILayout(dir, repo string) error {
	archive := filepath.Join(c.Dir, "images", filepath.Base(dir)+".oci.tar")
	if err := os.MkdirAll(filepath.Dir(archive), 0o700); err != nil {
		return err
	}
	if err := tarDir(dir, archive); err != nil {
		return fmt.Errorf("archiving %s: %w", dir, err)
	}
	out, err := exec.Command("ctr", "--address", c.containerdSock, "-n", "k8s.io", "images", "import",
		"--base-name", repo, archive).CombinedOutput()
	if err != nil {
		return fmt.Errorf("importing %s as %s: %w: %s", dir, repo, err, out)
	}
	return os.Remove(archive)
}

// tarDir writes the regular files and folders under dir into the tarball path, with names
// relative to dir.
func tarDir(dir, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tw := tar.NewWriter(f)
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return f.Close()
}
