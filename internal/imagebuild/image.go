package imagebuild

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Platforms are the platforms every image is built for, in index order.
var Platforms = []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}

// Meta describes the build of one binary's image; it becomes the OCI labels and annotations.
type Meta struct {
	// Name is the binary, the image's title and the last path element of its repository.
	Name string
	// Version, Revision: the stamp of the binary (internal/version).
	Version, Revision string
	// Source is the URL of the source repository.
	Source string
	// Licenses is an SPDX expression.
	Licenses string
	// Created is the time of the commit built, not the time of the build, so that builds of the
	// same commit are identical. It is the config's created time, every layer entry's mtime and the
	// org.opencontainers.image.created label.
	Created time.Time
}

// OCI label (and annotation) keys.
const (
	LabelVersion  = "org.opencontainers.image.version"
	LabelRevision = "org.opencontainers.image.revision"
	LabelSource   = "org.opencontainers.image.source"
	LabelTitle    = "org.opencontainers.image.title"
	LabelLicenses = "org.opencontainers.image.licenses"
	LabelCreated  = "org.opencontainers.image.created"
)

// Labels returns the OCI labels of m's image.
func (m Meta) Labels() map[string]string {
	return map[string]string{
		LabelVersion:  m.Version,
		LabelRevision: m.Revision,
		LabelSource:   m.Source,
		LabelTitle:    m.Name,
		LabelLicenses: m.Licenses,
		LabelCreated:  m.Created.UTC().Format(time.RFC3339),
	}
}

// Entrypoint is the image's entrypoint: the binary, with no shell in between.
func (m Meta) Entrypoint() []string { return []string{path.Join(BinDir, m.Name)} }

// Layer turns a layer tarball into a gzip-compressed OCI layer, compressing once. The gzip stream
// has no name or time in its header, so the same tarball always has the same digest (with the same
// Go release's compress/gzip).
func Layer(tar []byte) (v1.Layer, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(tar); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	gz := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(gz)), nil },
		tarball.WithMediaType(types.OCILayer))
}

// Image assembles the OCI image of m for platform p from two layers: base (BaseEntries, shared by
// every image) and bin (BinaryEntries). It runs as User, with the binary as entrypoint.
func Image(m Meta, p v1.Platform, base, bin v1.Layer) (v1.Image, error) {
	created := v1.Time{Time: m.Created.UTC().Truncate(time.Second)}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err := mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{Created: created,
			CreatedBy: "otelop imagebuild: users, CA certificates, /tmp", Comment: "base"}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: v1.History{Created: created,
			CreatedBy: "otelop imagebuild: " + path.Join(BinDir, m.Name), Comment: m.Name + " " + m.Version}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = created
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Architecture, p.Variant
	cf.Config = v1.Config{
		User:       User,
		Entrypoint: m.Entrypoint(),
		Env:        []string{"PATH=" + BinDir + ":/usr/bin:/bin"},
		WorkingDir: "/",
		Labels:     m.Labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// PlatformImage is one image of an index.
type PlatformImage struct {
	Platform v1.Platform
	Image    v1.Image
}

// Index returns the OCI image index of m's images, one per platform in the given order, annotated
// with m's labels.
func Index(m Meta, images []PlatformImage) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, pi := range images {
		p := pi.Platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{
			Add:        pi.Image,
			Descriptor: v1.Descriptor{MediaType: types.OCIManifestSchema1, Platform: &p},
		})
	}
	a, ok := mutate.Annotations(idx, m.Labels()).(v1.ImageIndex)
	if !ok {
		return nil, fmt.Errorf("annotating the index of %s", m.Name)
	}
	return a, nil
}
