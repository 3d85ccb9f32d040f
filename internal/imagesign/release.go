package imagesign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Release names what `make push` pushed: the images <Registry>/<binary>:<Version> and the chart.
type Release struct {
	// Registry is the registry and prefix of the images (registry.example.com/otelop).
	Registry string
	// Version is the images' tag.
	Version string
	// Binaries are the images' names (cmd/ binaries).
	Binaries []string
	// SBOMDir holds the SPDX SBOMs of `make release` (bin/release/sbom), named
	// <binary>-<os>-<arch>.spdx.json. Signing attests each to its image; verifying requires a
	// verified SPDX attestation for every platform of every image. Empty: no SBOMs.
	SBOMDir string
	// Chart is the pushed chart's reference, <registry>/<path>/<name>:<version>, with or without
	// oci://. Empty: no chart.
	Chart string
	// Progress receives one line per signed or verified artifact; nil means io.Discard.
	Progress io.Writer
	// Options are passed to every registry call (e.g. remote.WithAuthFromKeychain).
	Options []remote.Option
}

// Artifact is one signed or verified image or chart.
type Artifact struct {
	// Ref is the tag it was found by.
	Ref string
	// Digest is the signed manifest (the image index of an image).
	Digest name.Digest
	// Statements are the verified SPDX statements (VerifyRelease only).
	Statements []Statement
	// SBOMs counts the SBOMs attested (SignRelease) or verified (VerifyRelease).
	SBOMs int
}

// SignRelease signs every image of r by digest and the chart with s, and attests each image's SBOMs.
func SignRelease(ctx context.Context, r Release, s signature.SignerVerifier) ([]Artifact, error) {
	return r.each(ctx, func(a *Artifact, platforms map[string]v1.Hash, bin string) error {
		if err := Sign(ctx, a.Digest, s, r.opts(ctx)...); err != nil {
			return err
		}
		if bin == "" || r.SBOMDir == "" {
			return nil
		}
		for p, h := range platforms {
			file := filepath.Join(r.SBOMDir, bin+"-"+p+".spdx.json")
			doc, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("%s (%s): %w; `make release` writes the SBOMs", a.Ref, p, err)
			}
			if err := AttestSPDX(ctx, a.Digest, doc, s, []v1.Hash{h}, r.opts(ctx)...); err != nil {
				return err
			}
			a.SBOMs++
		}
		return nil
	})
}

// VerifyRelease verifies the signature of every image of r and of the chart with v, and, with
// SBOMDir set, that every platform of every image has an SPDX attestation v verifies.
func VerifyRelease(ctx context.Context, r Release, v signature.Verifier) ([]Artifact, error) {
	return r.each(ctx, func(a *Artifact, platforms map[string]v1.Hash, bin string) error {
		if _, err := Verify(ctx, a.Digest, v, r.opts(ctx)...); err != nil {
			return err
		}
		if bin == "" || r.SBOMDir == "" {
			return nil
		}
		sts, err := VerifySPDX(ctx, a.Digest, v, r.opts(ctx)...)
		if err != nil {
			return err
		}
		a.Statements = sts
		for p, h := range platforms {
			if !hasSubject(sts, h) {
				return fmt.Errorf("%s: no verified SPDX attestation names the %s image %s", a.Ref, p, h)
			}
			a.SBOMs++
		}
		return nil
	})
}

func hasSubject(sts []Statement, h v1.Hash) bool {
	for _, st := range sts {
		for _, s := range st.Subject {
			if s.Digest[h.Algorithm] == h.Hex {
				return true
			}
		}
	}
	return false
}

func (r Release) opts(ctx context.Context) []remote.Option {
	return append([]remote.Option{remote.WithContext(ctx)}, r.Options...)
}

// each resolves every image and the chart to its digest and calls f with it; for an image index
// platforms maps <os>-<arch> to that platform's manifest, and bin is the binary (empty: the chart).
func (r Release) each(ctx context.Context, f func(a *Artifact, platforms map[string]v1.Hash, bin string) error) ([]Artifact, error) {
	progress := r.Progress
	if progress == nil {
		progress = io.Discard
	}
	if len(r.Binaries) == 0 && r.Chart == "" {
		return nil, errors.New("nothing to sign or verify: name images or a chart")
	}
	if len(r.Binaries) > 0 && (r.Registry == "" || r.Version == "") {
		return nil, errors.New("images need the registry and the version they were pushed with")
	}
	type item struct{ ref, bin string }
	var items []item
	for _, b := range r.Binaries {
		items = append(items, item{strings.TrimSuffix(r.Registry, "/") + "/" + b + ":" + r.Version, b})
	}
	if r.Chart != "" {
		items = append(items, item{strings.TrimPrefix(r.Chart, "oci://"), ""})
	}
	var out []Artifact
	for _, it := range items {
		ref, err := name.ParseReference(it.ref)
		if err != nil {
			return nil, err
		}
		desc, err := remote.Get(ref, r.opts(ctx)...)
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", ref, err)
		}
		a := Artifact{Ref: ref.String(), Digest: ref.Context().Digest(desc.Digest.String())}
		platforms := map[string]v1.Hash{}
		if desc.MediaType.IsIndex() {
			idx, err := desc.ImageIndex()
			if err != nil {
				return nil, err
			}
			im, err := idx.IndexManifest()
			if err != nil {
				return nil, err
			}
			for _, m := range im.Manifests {
				if m.Platform != nil {
					platforms[m.Platform.OS+"-"+m.Platform.Architecture] = m.Digest
				}
			}
		} else if it.bin != "" {
			return nil, fmt.Errorf("%s is a %s, not an image index", ref, desc.MediaType)
		}
		if err := f(&a, platforms, it.bin); err != nil {
			return nil, err
		}
		line := fmt.Sprintf("    %s@%s", ref.Context(), desc.Digest)
		if a.SBOMs > 0 {
			line += fmt.Sprintf(" (%d SBOMs)", a.SBOMs)
		}
		fmt.Fprintln(progress, line)
		out = append(out, a)
	}
	return out, nil
}
