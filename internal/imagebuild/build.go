package imagebuild

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
)

// VersionPackage is the package whose variables the build stamps with -ldflags -X.
const VersionPackage = "github.com/otelop/otelop/internal/version"

// Options configure Build.
type Options struct {
	// Dir is the root of the module (the directory holding cmd/).
	Dir string
	// Binaries are the names of the cmd/ directories to build.
	Binaries []string
	// Platforms default to Platforms.
	Platforms []v1.Platform
	// Registry is stamped into the binaries as version.ImageRegistry (the operator's default
	// images); empty leaves the binaries' default.
	Registry string
	// Meta is the template of every image's Meta; Build sets Name.
	Meta Meta
	// Out is the directory that receives one OCI layout per binary, Out/<name>.
	Out string
	// Progress receives one line per step; nil means io.Discard.
	Progress io.Writer
}

// Result is the outcome for one binary.
type Result struct {
	Name string
	// Dir is the OCI layout.
	Dir string
	// Digest is the image index's digest.
	Digest v1.Hash
	// Sizes per platform, in Options.Platforms order.
	Sizes []Sizes
}

// Sizes of one platform's image.
type Sizes struct {
	Platform v1.Platform
	// Binary is the size of the executable; Layer and Compressed the uncompressed and compressed
	// size of its layer; Base and BaseCompressed the shared base layer's.
	Binary, Layer, Compressed, Base, BaseCompressed int64
}

// Build compiles every binary for every platform and writes each binary's multi-platform index as
// an OCI layout under Out. The same source, toolchain and Options give the same digests.
func Build(ctx context.Context, o Options) ([]Result, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if len(o.Platforms) == 0 {
		o.Platforms = Platforms
	}
	baseTar, err := Tar(BaseEntries(CABundle()), o.Meta.Created)
	if err != nil {
		return nil, err
	}
	base, err := Layer(baseTar)
	if err != nil {
		return nil, err
	}
	baseSize, err := base.Size()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "imagebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var results []Result
	for _, name := range o.Binaries {
		m := o.Meta
		m.Name = name
		res := Result{Name: name, Dir: filepath.Join(o.Out, name)}
		var images []PlatformImage
		for _, p := range o.Platforms {
			start := time.Now()
			fmt.Fprintf(o.Progress, "==> %s %s/%s: compiling\n", name, p.OS, p.Architecture)
			binPath := filepath.Join(work, p.OS+"-"+p.Architecture, name)
			if err := Compile(ctx, o.Dir, name, p, LDFlags(m.Version, m.Revision, o.Registry), binPath); err != nil {
				return nil, err
			}
			compiled := time.Since(start)
			bin, err := os.ReadFile(binPath)
			if err != nil {
				return nil, err
			}
			binTar, err := Tar(BinaryEntries(name, bin), m.Created)
			if err != nil {
				return nil, err
			}
			layer, err := Layer(binTar)
			if err != nil {
				return nil, err
			}
			compressed, err := layer.Size()
			if err != nil {
				return nil, err
			}
			img, err := Image(m, p, base, layer)
			if err != nil {
				return nil, err
			}
			images = append(images, PlatformImage{Platform: p, Image: img})
			s := Sizes{Platform: p, Binary: int64(len(bin)), Layer: int64(len(binTar)), Compressed: compressed,
				Base: int64(len(baseTar)), BaseCompressed: baseSize}
			res.Sizes = append(res.Sizes, s)
			fmt.Fprintf(o.Progress, "    binary %s compiled in %s; layer %s compressed to %s in %s\n",
				MiB(s.Binary), compiled.Round(100*time.Millisecond), MiB(s.Layer), MiB(s.Compressed),
				(time.Since(start) - compiled).Round(100*time.Millisecond))
		}
		idx, err := Index(m, images)
		if err != nil {
			return nil, err
		}
		if res.Digest, err = WriteLayout(res.Dir, idx, m.Version); err != nil {
			return nil, fmt.Errorf("writing the layout of %s: %w", name, err)
		}
		fmt.Fprintf(o.Progress, "    %s -> %s\n", res.Digest, res.Dir)
		results = append(results, res)
	}
	return results, nil
}

// LDFlags are the linker flags of an image's binary: no symbol table or DWARF, and the version
// stamp.
func LDFlags(version, revision, registry string) string {
	f := []string{"-s", "-w", "-X", VersionPackage + ".Version=" + version, "-X", VersionPackage + ".Revision=" + revision}
	if registry != "" {
		f = append(f, "-X", VersionPackage+".ImageRegistry="+registry)
	}
	return strings.Join(f, " ")
}

// Compile builds ./cmd/<name> of the module in dir for p into out: static (CGO_ENABLED=0), without
// file system paths (-trimpath) or VCS stamp (-buildvcs=false), with the baseline instruction set
// (GOAMD64=v1, GOARM64=v8.0), whatever the caller's GOFLAGS say.
func Compile(ctx context.Context, dir, name string, p v1.Platform, ldflags, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", out, "./cmd/"+name)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOFLAGS=",
		"GOAMD64=v1", "GOARM64=v8.0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("compiling %s for %s/%s: %w\n%s", name, p.OS, p.Architecture, err, b)
	}
	return nil
}

// WriteLayout replaces dir with an OCI layout holding idx, tagged tag (the
// org.opencontainers.image.ref.name annotation), and returns idx's digest.
func WriteLayout(dir string, idx v1.ImageIndex, tag string) (v1.Hash, error) {
	if err := os.RemoveAll(dir); err != nil {
		return v1.Hash{}, err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// ReadLayout returns the image index that WriteLayout wrote to dir.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	root, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, err
	}
	m, err := root.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: the layout holds %d entries, want the one image index", dir, len(m.Manifests))
	}
	return root.ImageIndex(m.Manifests[0].Digest)
}

// MiB formats a size in mebibytes.
func MiB(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }
