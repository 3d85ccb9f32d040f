// Package release writes the release artifacts a user can take without cloning the repository
// (`make release`): the single-file install manifest opentelemetry-operator.yaml (config/default
// with the versioned operator image), the packaged Helm chart whose version and appVersion are the
// release version, the list of images an install pulls (images.txt, for mirroring), and an SPDX 2.3 SBOM of every binary in the images, read from the images' OCI
// layouts (internal/sbom).
package release

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/otelop/otelop/internal/imagebuild"
	"github.com/otelop/otelop/test/chart/internal/chartpkg"
)

// ManifestFile is the install manifest's file name (upstream's release asset has the same name).
const ManifestFile = "opentelemetry-operator.yaml"

// OperatorImage is the image (and cmd/ binary) the manifest and the chart deploy.
const OperatorImage = "opentelemetry-operator"

// Options configure Run.
type Options struct {
	// Repo is the repository root (holding config/, charts/ and cmd/).
	Repo string
	// Out receives the artifacts (bin/release).
	Out string
	// Version is the release version, SemVer without a leading v: the image tag, chart version and
	// appVersion.
	Version string
	// Registry is the registry and prefix the images are published to (ghcr.io/otelop).
	Registry string
	// Revision is the source commit stamped into the binaries.
	Revision string
	// Created is the images' and SBOMs' creation time (the commit time).
	Created time.Time
	// Images is the folder of the images' OCI layouts (bin/images), one per binary.
	Images string
	// Build builds the images into Images first (for Platforms); otherwise they must exist.
	Build bool
	// Binaries are the images to write SBOMs for (and build); they must include OperatorImage.
	Binaries []string
	// Platforms of the images built; empty means imagebuild's default.
	Platforms []v1.Platform
	// Progress receives one line per step; nil means io.Discard.
	Progress io.Writer
}

// Result lists the files Run wrote.
type Result struct {
	Manifest string
	Chart    string
	// Images is the list of every image an install may pull (ImagesFile).
	Images string
	SBOMs  []string
}

// Run writes the artifacts into Out.
func Run(ctx context.Context, o Options) (*Result, error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	o.Version = strings.TrimPrefix(o.Version, "v")
	if _, err := semver.StrictNewVersion(o.Version); err != nil {
		return nil, fmt.Errorf("version %q: a release needs a SemVer version (e.g. make release VERSION=0.2.0), so that the image tag, chart version and appVersion agree", o.Version)
	}
	if o.Registry == "" {
		return nil, fmt.Errorf("registry: empty; want the registry and prefix the images are pushed to, e.g. ghcr.io/otelop")
	}
	if !contains(o.Binaries, OperatorImage) {
		return nil, fmt.Errorf("binaries %v: the release needs %s (the manifest and chart deploy it)", o.Binaries, OperatorImage)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, err
	}
	if o.Build {
		start := time.Now()
		_, err := imagebuild.Build(ctx, imagebuild.Options{
			Dir: o.Repo, Binaries: o.Binaries, Platforms: o.Platforms, Registry: o.Registry, Out: o.Images, Progress: o.Progress,
			Meta: imagebuild.Meta{Version: o.Version, Revision: o.Revision, Created: o.Created.UTC(),
				Source: "https://github.com/otelop/otelop", Licenses: "Apache-2.0"},
		})
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Progress, "==> %d images built into %s in %s\n", len(o.Binaries), o.Images, time.Since(start).Round(time.Second))
	}

	res := &Result{Manifest: filepath.Join(o.Out, ManifestFile)}
	image := strings.TrimSuffix(o.Registry, "/") + "/" + OperatorImage + ":" + o.Version
	manifest, err := Manifest(o.Repo, image, o.Version)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(res.Manifest, manifest, 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "    %s (%s)\n", res.Manifest, image)

	res.Images = filepath.Join(o.Out, ImagesFile)
	if err := os.WriteFile(res.Images, []byte(strings.Join(Images(o.Registry, o.Version), "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "    %s\n", res.Images)

	if res.Chart, err = chartpkg.Package(filepath.Join(o.Repo, "charts", "opentelemetry-operator"), o.Out, o.Version); err != nil {
		return nil, err
	}
	fmt.Fprintf(o.Progress, "    %s\n", res.Chart)

	for _, name := range o.Binaries {
		files, err := SBOMs(filepath.Join(o.Images, name), name, o.Version, o.Created, filepath.Join(o.Out, "sbom"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			fmt.Fprintf(o.Progress, "    %s\n", f)
		}
		res.SBOMs = append(res.SBOMs, files...)
	}
	return res, nil
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
