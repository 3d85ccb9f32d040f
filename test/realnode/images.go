package realnode

import (
	"archive/tar"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/otelop/otelop/internal/imagebuild"
)

// Image is a one-binary container image: the binary at /usr/local/bin/<base name of Binary>, run
// as entrypoint by the nonroot user (built like the shipped images, see writeImage).
type Image struct {
	// Name is the image reference, e.g. "otelop.test/pause:1" (a registry-style name that is never
	// pulled: the node has the image and pods use imagePullPolicy IfNotPresent).
	Name string
	// Binary is a statically linked executable.
	Binary string
	// Args are the default arguments (the image's Cmd).
	Args []string
	// Env holds KEY=VALUE entries; one for a variable the base image sets (PATH) replaces it.
	Env []string
	// Files are more regular files (mode 0644), by absolute path in the image; their folders are
	// created (mode 0755).
	Files map[string]string
	// Executables are like Files with mode 0755 (programs, shell scripts).
	Executables map[string]string
	// Links are symbolic links, by absolute path in the image, to their targets.
	Links map[string]string
}

// Image names of the images the cluster always loads.
const (
	PauseImage   = "otelop.test/pause:1"
	OTLPAppImage = "otelop.test/otlpapp:1"
	// CollectorImage runs hack/tools/otelcol (OTLP receiver, debug exporter, opamp and
	// health_check extensions).
	CollectorImage = "otelop.test/otelcol:1"
	// AgentImage stands in for a language agent image (Instrumentation spec.java.image): it holds
	// /javaagent.jar (AgentJarContent) and cp (test/realnode/cmd/cp, on the PATH), what the
	// injected init container runs.
	AgentImage = "otelop.test/javaagent:1"
	// AgentJarContent is the content of /javaagent.jar in AgentImage.
	AgentJarContent = "otelop real-node test javaagent\n"
)

// imageCreated is the creation time of every test image (fixed: the same binaries give the same
// digests).
var imageCreated = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeImage writes img as an OCI layout in dir, built the way the shipped images are
// (internal/imagebuild): the shared base layer (users root and nonroot, CA certificates, /tmp)
// and one layer with the binary at /usr/local/bin/<name>, img.Files, img.Executables and
// img.Links; the binary is the
// entrypoint and the image runs as the nonroot user. It returns the tag, the part of img.Name
// after the last ':'.
func writeImage(img Image, dir string) (tag string, err error) {
	repo, tag, ok := cutTag(img.Name)
	if !ok {
		return "", fmt.Errorf("image name %q has no tag", img.Name)
	}
	bin, err := os.ReadFile(img.Binary)
	if err != nil {
		return "", err
	}
	name := filepath.Base(img.Binary)
	entries := imagebuild.BinaryEntries(name, bin)
	for p, data := range img.Files {
		entries = append(entries, imagebuild.Entry{Path: p, Mode: 0o644, Data: []byte(data)})
	}
	for p, data := range img.Executables {
		entries = append(entries, imagebuild.Entry{Path: p, Mode: 0o755, Data: []byte(data)})
	}
	for p, target := range img.Links {
		entries = append(entries, imagebuild.Entry{Path: p, Mode: 0o777, Link: target})
	}
	entries = append(entries, parentDirs(entries)...)
	layer, err := tarLayer(entries)
	if err != nil {
		return "", err
	}
	base, err := tarLayer(imagebuild.BaseEntries(imagebuild.CABundle()))
	if err != nil {
		return "", err
	}
	p := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	m := imagebuild.Meta{Name: name, Version: tag, Source: repo, Created: imageCreated}
	image, err := imagebuild.Image(m, p, base, layer)
	if err != nil {
		return "", err
	}
	if len(img.Args) > 0 || len(img.Env) > 0 {
		cf, err := image.ConfigFile()
		if err != nil {
			return "", err
		}
		cf = cf.DeepCopy()
		cf.Config.Cmd = img.Args
		cf.Config.Env = setEnv(cf.Config.Env, img.Env)
		if image, err = mutate.ConfigFile(image, cf); err != nil {
			return "", err
		}
	}
	idx, err := imagebuild.Index(m, []imagebuild.PlatformImage{{Platform: p, Image: image}})
	if err != nil {
		return "", err
	}
	_, err = imagebuild.WriteLayout(dir, idx, tag)
	return tag, err
}

// setEnv returns env with each KEY=VALUE of set replacing the entry for KEY or appended.
func setEnv(env, set []string) []string {
	out := append([]string(nil), env...)
	for _, kv := range set {
		key, _, _ := strings.Cut(kv, "=")
		i := slices.IndexFunc(out, func(e string) bool { return strings.HasPrefix(e, key+"=") })
		if i >= 0 {
			out[i] = kv
		} else {
			out = append(out, kv)
		}
	}
	return out
}

// parentDirs returns the folders (mode 0755) that hold entries and are not entries themselves.
func parentDirs(entries []imagebuild.Entry) []imagebuild.Entry {
	have := map[string]bool{"/": true}
	for _, e := range entries {
		have[e.Path] = true
	}
	var out []imagebuild.Entry
	for _, e := range entries {
		for d := path.Dir(e.Path); !have[d]; d = path.Dir(d) {
			have[d] = true
			out = append(out, imagebuild.Entry{Path: d, Dir: true, Mode: 0o755})
		}
	}
	return out
}

func tarLayer(entries []imagebuild.Entry) (v1.Layer, error) {
	data, err := imagebuild.Tar(entries, imageCreated)
	if err != nil {
		return nil, err
	}
	return imagebuild.Layer(data)
}

// cutTag splits "repo:tag" (the repository may hold a registry port: the tag follows the last ':'
// after the last '/').
func cutTag(ref string) (repo, tag string, ok bool) {
	i := strings.LastIndex(ref, ":")
	if i < 0 || strings.Contains(ref[i+1:], "/") {
		return ref, "", false
	}
	return ref[:i], ref[i+1:], true
}

// LoadImage builds img (writeImage) and imports it into the node's containerd (namespace k8s.io,
// where the CRI plugin looks).
func (c *Cluster) LoadImage(img Image) error {
	if err := c.writeImages([]Image{img}); err != nil {
		return err
	}
	return c.importImage(img)
}

// imageDir is where writeImages puts img's OCI layout (one folder per image name: several images
// run the same binary).
func (c *Cluster) imageDir(img Image) string {
	return filepath.Join(c.Dir, "images", strings.NewReplacer("/", "_", ":", "_").Replace(img.Name))
}

// writeImages writes the OCI layouts of imgs in parallel (compressing the layers is most of the
// work).
func (c *Cluster) writeImages(imgs []Image) error {
	errs := make(chan error, len(imgs))
	for _, img := range imgs {
		go func() {
			if _, err := writeImage(img, c.imageDir(img)); err != nil {
				errs <- fmt.Errorf("building image %s: %w", img.Name, err)
				return
			}
			errs <- nil
		}()
	}
	var first error
	for range imgs {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// importImage imports the layout writeImages wrote for img and removes it.
func (c *Cluster) importImage(img Image) error {
	repo, _, _ := cutTag(img.Name)
	if err := c.LoadOCILayout(c.imageDir(img), repo); err != nil {
		return err
	}
	return os.RemoveAll(c.imageDir(img))
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
	if err := run(root, "build", "-trimpath", "-ldflags=-s -w", "-o", dir+"/", "./test/realnode/cmd/..."); err != nil {
		return err
	}
	return run(filepath.Join(root, "hack", "tools", "otelcol"), "build", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "otelcol"), ".")
}

// Stand-in agent images for the languages whose agent an init container copies, laid out like
// the real images (the folders and files the injected environment names, and some of what lies
// beside them), each with cp on the PATH. The files hold text, not agents: the path tests check
// that what the environment names is there, not that an agent runs.
const (
	// NodeJSAgentImage stands in for autoinstrumentation-nodejs: /autoinstrumentation with
	// autoinstrumentation.js and node_modules.
	NodeJSAgentImage = "otelop.test/nodejs-agent:1"
	// PythonAgentImage stands in for autoinstrumentation-python: the glibc build in
	// /autoinstrumentation and the musl build in /autoinstrumentation-musl, each with the
	// opentelemetry/instrumentation/auto_instrumentation package (sitecustomize.py) and a
	// compiled module whose name says the C library (PythonGlibcMarker, PythonMuslMarker).
	PythonAgentImage = "otelop.test/python-agent:1"
	// DotNetAgentImage stands in for autoinstrumentation-dotnet: /autoinstrumentation with the
	// native profiler of each platform (linux-x64/, linux-musl-x64/, linux-arm64/,
	// linux-musl-arm64/), the startup hook in net/, AdditionalDeps/ and store/.
	DotNetAgentImage = "otelop.test/dotnet-agent:1"
)

// The compiled modules that tell the two Python builds apart, relative to the build's folder.
const (
	PythonGlibcMarker = "wrapt/_wrappers.cpython-312-x86_64-linux-gnu.so"
	PythonMuslMarker  = "wrapt/_wrappers.cpython-312-x86_64-linux-musl.so"
)

// DotNetPlatforms are the platform folders of the .NET agent image, each holding the native
// profiler OpenTelemetry.AutoInstrumentation.Native.so.
var DotNetPlatforms = []string{"linux-x64", "linux-musl-x64", "linux-arm64", "linux-musl-arm64"}

// agentImages are the stand-in images of NodeJSAgentImage, PythonAgentImage and DotNetAgentImage,
// with cp from binDir.
func agentImages(binDir string) []Image {
	cp := filepath.Join(binDir, "cp")
	text := func(what string) string { return "otelop real-node stand-in: " + what + "\n" }
	nodejs := map[string]string{
		"/autoinstrumentation/autoinstrumentation.js":                                              text("autoinstrumentation.js"),
		"/autoinstrumentation/package.json":                                                        `{"name":"@opentelemetry/k8s-autoinstrumentation"}` + "\n",
		"/autoinstrumentation/node_modules/@opentelemetry/auto-instrumentations-node/package.json": `{"name":"@opentelemetry/auto-instrumentations-node"}` + "\n",
	}
	python := map[string]string{}
	for root, marker := range map[string]string{"/autoinstrumentation": PythonGlibcMarker, "/autoinstrumentation-musl": PythonMuslMarker} {
		python[root+"/opentelemetry/instrumentation/auto_instrumentation/__init__.py"] = text("auto_instrumentation")
		python[root+"/opentelemetry/instrumentation/auto_instrumentation/sitecustomize.py"] = text("sitecustomize.py")
		python[root+"/opentelemetry/distro/__init__.py"] = text("distro")
		python[root+"/"+marker] = text(marker)
	}
	dotnet := map[string]string{
		"/autoinstrumentation/instrument.sh":                                                                                                text("instrument.sh"),
		"/autoinstrumentation/net/OpenTelemetry.AutoInstrumentation.StartupHook.dll":                                                        text("startup hook"),
		"/autoinstrumentation/net/OpenTelemetry.AutoInstrumentation.dll":                                                                    text("managed agent"),
		"/autoinstrumentation/AdditionalDeps/shared/Microsoft.NETCore.App/8.0.0/OpenTelemetry.AutoInstrumentation.AdditionalDeps.deps.json": "{}\n",
		"/autoinstrumentation/store/x64/net8.0/opentelemetry/1.12.0/lib/net8.0/OpenTelemetry.dll":                                           text("store"),
	}
	for _, p := range DotNetPlatforms {
		dotnet["/autoinstrumentation/"+p+"/OpenTelemetry.AutoInstrumentation.Native.so"] = text(p + " profiler")
	}
	return []Image{
		{Name: NodeJSAgentImage, Binary: cp, Files: nodejs},
		{Name: PythonAgentImage, Binary: cp, Files: python},
		{Name: DotNetAgentImage, Binary: cp, Files: dotnet},
	}
}

// PathCheckImage runs test/realnode/cmd/pathcheck: it prints whether every path the
// auto-instrumentation environment names exists, and the files of each agent volume, then exits.
const PathCheckImage = "otelop.test/pathcheck:1"

// agentLoads holds, per cluster, the one LoadAgentImages run.
var agentLoads sync.Map // *Cluster -> *agentLoad

type agentLoad struct {
	once sync.Once
	err  error
}

// LoadAgentImages builds and loads the stand-in agent images (NodeJSAgentImage,
// PythonAgentImage, DotNetAgentImage, WebServerAgentImage), PathCheckImage and the web-server
// application images (ApacheAppImage, NginxAppImage), once per cluster. It fails when the static
// busybox those need is missing.
func (c *Cluster) LoadAgentImages() error {
	v, _ := agentLoads.LoadOrStore(c, &agentLoad{})
	l := v.(*agentLoad)
	l.once.Do(func() {
		busybox, err := readBusybox(BusyboxPath)
		if err != nil {
			l.err = err
			return
		}
		imgs := append(agentImages(c.binDir), Image{Name: PathCheckImage, Binary: filepath.Join(c.binDir, "pathcheck")})
		imgs = append(imgs, webServerImages(c.binDir, BusyboxPath, busybox)...)
		if l.err = c.writeImages(imgs); l.err != nil {
			return
		}
		for _, img := range imgs {
			if l.err = c.importImage(img); l.err != nil {
				return
			}
		}
	})
	return l.err
}
