package images

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/x509"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/inmemory"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/sirupsen/logrus"

	"github.com/otelop/otelop/internal/imagebuild"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
)

// binaries lists the cmd/ directories: every binary gets an image (the Makefile's IMAGES).
func binaries(t *testing.T) []string {
	t.Helper()
	es, err := os.ReadDir("../../cmd")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) < 3 {
		t.Fatalf("cmd/ holds %q: expected the operator, the bridge and the service provider at least", names)
	}
	return names
}

var meta = imagebuild.Meta{
	Version:  "0.0.0-imagetest",
	Revision: "0123456789abcdef0123456789abcdef01234567",
	Source:   "https://github.com/otelop/otelop",
	Licenses: "Apache-2.0",
	Created:  time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC),
}

// registry serves an in-memory distribution registry on 127.0.0.1 and returns its host:port.
func registry(t *testing.T) string {
	t.Helper()
	// The registry logs every 404 of a HEAD that precedes an upload; keep its log for failures.
	var log syncBuffer
	logrus.SetOutput(&log)
	t.Cleanup(func() {
		logrus.SetOutput(os.Stderr)
		if t.Failed() {
			t.Logf("registry log:\n%s", log.String())
		}
	})
	cfg := &configuration.Configuration{
		Storage: configuration.Storage{
			"inmemory":    configuration.Parameters{},
			"maintenance": configuration.Parameters{"uploadpurging": map[any]any{"enabled": false}},
		},
	}
	cfg.Log.AccessLog.Disabled = true
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(handlers.NewApp(ctx, cfg)) // listens on 127.0.0.1
	t.Cleanup(func() { srv.Close(); cancel() })
	return strings.TrimPrefix(srv.URL, "http://")
}

func build(t *testing.T, out, reg string) []imagebuild.Result {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := imagebuild.Build(context.Background(), imagebuild.Options{
		Dir: root, Binaries: binaries(t), Registry: reg + "/otelop", Meta: meta, Out: out, Progress: testWriter{t},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %d images for %d platforms in %s", len(res), len(imagebuild.Platforms), time.Since(start).Round(time.Second))
	return res
}

// TestImagesAsShipped builds every image, pushes it, pulls it back by digest and runs it.
func TestImagesAsShipped(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles every binary for two platforms")
	}
	t.Setenv("DOCKER_CONFIG", t.TempDir()) // no credentials of the host
	reg := registry(t)
	first := build(t, t.TempDir(), reg)

	for _, r := range first {
		t.Run(r.Name, func(t *testing.T) {
			repo := reg + "/otelop/" + r.Name
			pushed, err := imagebuild.Push(context.Background(), r.Dir, repo, meta.Version, testWriter{t})
			if err != nil {
				t.Fatal(err)
			}
			if pushed.DigestStr() != r.Digest.String() {
				t.Fatalf("pushed %s, built %s", pushed.DigestStr(), r.Digest)
			}
			// The tag resolves to the digest; the index pulled by digest is whole and valid.
			tag, err := name.ParseReference(repo + ":" + meta.Version)
			if err != nil {
				t.Fatal(err)
			}
			tagged, err := remote.Head(tag)
			if err != nil {
				t.Fatal(err)
			}
			if tagged.Digest != r.Digest {
				t.Fatalf("tag %s points at %s, want %s", meta.Version, tagged.Digest, r.Digest)
			}
			idx, err := remote.Index(pushed)
			if err != nil {
				t.Fatal(err)
			}
			if err := validate.Index(idx); err != nil {
				t.Fatalf("pulled index is not valid: %v", err)
			}
			checkIndex(t, r.Name, idx)
			root := unpack(t, idx, v1.Platform{OS: "linux", Architecture: runtime.GOARCH})
			checkRootFS(t, r.Name, root, reg)
		})
	}

	// Signed as make push SIGNING_KEY=... signs, verified as a user verifies (sign_test.go).
	t.Run("signatures", func(t *testing.T) { signAndVerify(t, reg, first) })

	// Reproducible: a second build from the same source gives the same digests.
	second := build(t, t.TempDir(), reg)
	for i, r := range second {
		if r.Digest != first[i].Digest {
			t.Errorf("%s: second build %s, first %s: the build is not reproducible", r.Name, r.Digest, first[i].Digest)
		}
	}
	for _, r := range first {
		for _, s := range r.Sizes {
			t.Logf("%-32s %s/%-6s binary %s, layer %s, compressed %s (+ base %s, %s compressed)", r.Name, s.Platform.OS,
				s.Platform.Architecture, imagebuild.MiB(s.Binary), imagebuild.MiB(s.Layer), imagebuild.MiB(s.Compressed),
				imagebuild.MiB(s.Base), imagebuild.MiB(s.BaseCompressed))
		}
	}
}

func checkIndex(t *testing.T, bin string, idx v1.ImageIndex) {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var platforms []string
	for _, d := range im.Manifests {
		platforms = append(platforms, d.Platform.String())
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if got := cf.OS + "/" + cf.Architecture; got != d.Platform.String() {
			t.Errorf("%s: config says %s, index says %s", d.Platform, got, d.Platform)
		}
		c := cf.Config
		if c.User != "65532:65532" {
			t.Errorf("%s: user %q, want 65532:65532", d.Platform, c.User)
		}
		if want := []string{"/usr/local/bin/" + bin}; !equal(c.Entrypoint, want) || len(c.Cmd) != 0 {
			t.Errorf("%s: entrypoint %q cmd %q, want %q and no cmd", d.Platform, c.Entrypoint, c.Cmd, want)
		}
		for k, v := range map[string]string{
			"org.opencontainers.image.version": meta.Version, "org.opencontainers.image.revision": meta.Revision,
			"org.opencontainers.image.source": meta.Source, "org.opencontainers.image.title": bin,
			"org.opencontainers.image.licenses": "Apache-2.0", "org.opencontainers.image.created": "2026-07-01T12:00:00Z",
		} {
			if c.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want %q", d.Platform, k, c.Labels[k], v)
			}
		}
		if !cf.Created.Time.Equal(meta.Created) {
			t.Errorf("%s: created %s, want the commit time %s", d.Platform, cf.Created.Time, meta.Created)
		}
	}
	if !equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("platforms %q, want linux/amd64 and linux/arm64", platforms)
	}
}

// unpack extracts the layers of idx's image for p, in order, into a new directory.
func unpack(t *testing.T, idx v1.ImageIndex, p v1.Platform) string {
	t.Helper()
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var img v1.Image
	for _, d := range im.Manifests {
		if d.Platform.Satisfies(p) {
			if img, err = idx.Image(d.Digest); err != nil {
				t.Fatal(err)
			}
		}
	}
	if img == nil {
		t.Fatalf("no image for %s", p)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		if err := extract(root, rc); err != nil {
			t.Fatal(err)
		}
		_ = rc.Close()
	}
	return root
}

func extract(root string, r io.Reader) error {
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		target := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(target, root+string(filepath.Separator)) {
			return fmt.Errorf("entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			if err := os.Chmod(target, os.FileMode(h.Mode&0o777)|modeBits(h.Mode)); err != nil {
				return err
			}
		case tar.TypeReg:
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode&0o777))
			if err != nil {
				return err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("entry %q: unexpected type %c (only directories and regular files are shipped)", h.Name, h.Typeflag)
		}
	}
}

func modeBits(m int64) os.FileMode {
	if m&0o1000 != 0 {
		return os.ModeSticky
	}
	return 0
}

// checkRootFS runs the unpacked binary and looks at what else the image holds.
func checkRootFS(t *testing.T, bin, root, reg string) {
	t.Helper()
	exe := filepath.Join(root, "usr/local/bin", bin)
	out, err := exec.Command(exe, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", exe, err, out)
	}
	want := fmt.Sprintf("%s %s (revision %s, %s, linux/%s)\n", bin, meta.Version, meta.Revision, runtime.Version(), runtime.GOARCH)
	if string(out) != want {
		t.Errorf("--version printed %q, want %q", out, want)
	}
	// Static and stripped.
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter: it is not static", bin)
		}
	}
	if f.Section(".symtab") != nil {
		t.Errorf("%s has a symbol table: it is not stripped", bin)
	}
	// No shell, the nonroot user, a world-writable /tmp, CA certificates that parse.
	for _, sh := range []string{"bin/sh", "bin/bash", "usr/bin/sh", "bin/busybox"} {
		if _, err := os.Lstat(filepath.Join(root, sh)); err == nil {
			t.Errorf("the image has %s", sh)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil || !bytes.Contains(passwd, []byte("nonroot:x:65532:65532:")) {
		t.Errorf("/etc/passwd has no nonroot user 65532: %v %q", err, passwd)
	}
	if st, err := os.Stat(filepath.Join(root, "tmp")); err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("/tmp is not a world-writable sticky directory: %v", err)
	}
	ca, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
	if err != nil || !x509.NewCertPool().AppendCertsFromPEM(ca) {
		t.Errorf("no usable CA bundle: %v", err)
	}
	// The operator's default bridge image is this build's own bridge image in the build's registry.
	if bin == "opentelemetry-operator" {
		out, _ := exec.Command(exe, "--help").CombinedOutput()
		want := fmt.Sprintf(`"%s/otelop/%s:%s"`, reg, mbridge.ImageName, meta.Version)
		if !bytes.Contains(out, []byte("--operator-opamp-bridge-image string")) || !bytes.Contains(out, []byte(want)) {
			t.Errorf("--help does not show the default bridge image %s:\n%s", want, out)
		}
	}
}

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// syncBuffer is a bytes.Buffer safe for the registry's concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testWriter sends the builder's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
