package imagebuild

import (
	"archive/tar"
	"io"
	"path/filepath"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	. "github.com/onsi/gomega"
)

func testMeta() Meta {
	return Meta{Name: "operator-opamp-bridge", Version: "1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567",
		Source: "https://github.com/otelop/otelop", Licenses: "Apache-2.0", Created: epoch}
}

// testIndex builds an index from fake binaries, as Build does from compiled ones.
func testIndex(t *testing.T, m Meta) v1.ImageIndex {
	t.Helper()
	g := NewWithT(t)
	baseTar, err := Tar(BaseEntries(CABundle()), m.Created)
	g.Expect(err).NotTo(HaveOccurred())
	base, err := Layer(baseTar)
	g.Expect(err).NotTo(HaveOccurred())
	var images []PlatformImage
	for _, p := range Platforms {
		binTar, err := Tar(BinaryEntries(m.Name, []byte("binary for "+p.Architecture)), m.Created)
		g.Expect(err).NotTo(HaveOccurred())
		bin, err := Layer(binTar)
		g.Expect(err).NotTo(HaveOccurred())
		img, err := Image(m, p, base, bin)
		g.Expect(err).NotTo(HaveOccurred())
		images = append(images, PlatformImage{Platform: p, Image: img})
	}
	idx, err := Index(m, images)
	g.Expect(err).NotTo(HaveOccurred())
	return idx
}

func TestImageConfig(t *testing.T) {
	g := NewWithT(t)
	m := testMeta()
	idx := testIndex(t, m)
	im, err := idx.IndexManifest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(im.MediaType).To(Equal(types.OCIImageIndex))
	g.Expect(im.Annotations).To(Equal(m.Labels()))
	g.Expect(im.Manifests).To(HaveLen(2))
	for i, d := range im.Manifests {
		g.Expect(d.MediaType).To(Equal(types.OCIManifestSchema1))
		g.Expect(*d.Platform).To(Equal(Platforms[i]))
		img, err := idx.Image(d.Digest)
		g.Expect(err).NotTo(HaveOccurred())
		mf, err := img.Manifest()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(mf.Config.MediaType).To(Equal(types.OCIConfigJSON))
		g.Expect(mf.Layers).To(HaveLen(2))
		for _, l := range mf.Layers {
			g.Expect(l.MediaType).To(Equal(types.OCILayer))
		}
		cf, err := img.ConfigFile()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(cf.OS).To(Equal("linux"))
		g.Expect(cf.Architecture).To(Equal(Platforms[i].Architecture))
		g.Expect(cf.Created.Time).To(BeTemporally("==", epoch))
		g.Expect(cf.Config.User).To(Equal("65532:65532"))
		g.Expect(cf.Config.Entrypoint).To(Equal([]string{"/usr/local/bin/operator-opamp-bridge"}))
		g.Expect(cf.Config.Cmd).To(BeEmpty())
		g.Expect(cf.Config.Labels).To(Equal(map[string]string{
			"org.opencontainers.image.version":  "1.2.3",
			"org.opencontainers.image.revision": "0123456789abcdef0123456789abcdef01234567",
			"org.opencontainers.image.source":   "https://github.com/otelop/otelop",
			"org.opencontainers.image.title":    "operator-opamp-bridge",
			"org.opencontainers.image.licenses": "Apache-2.0",
			"org.opencontainers.image.created":  "2026-07-01T12:00:00Z",
		}))
		g.Expect(cf.History).To(HaveLen(2))
		for _, h := range cf.History {
			g.Expect(h.Created.Time).To(BeTemporally("==", epoch))
		}
		g.Expect(cf.RootFS.DiffIDs).To(HaveLen(2))
		// The binary layer holds the binary at the entrypoint.
		layers, err := img.Layers()
		g.Expect(err).NotTo(HaveOccurred())
		rc, err := layers[1].Uncompressed()
		g.Expect(err).NotTo(HaveOccurred())
		tr := tar.NewReader(rc)
		var found bool
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			g.Expect(err).NotTo(HaveOccurred())
			if "/"+h.Name == cf.Config.Entrypoint[0] {
				b, _ := io.ReadAll(tr)
				g.Expect(string(b)).To(Equal("binary for " + cf.Architecture))
				found = true
			}
		}
		g.Expect(rc.Close()).To(Succeed())
		g.Expect(found).To(BeTrue())
	}
	// Both platforms share the base layer.
	a, _ := idx.Image(im.Manifests[0].Digest)
	b, _ := idx.Image(im.Manifests[1].Digest)
	la, _ := a.Layers()
	lb, _ := b.Layers()
	da, _ := la[0].Digest()
	db, _ := lb[0].Digest()
	g.Expect(da).To(Equal(db))
}

func TestIndexIsDeterministic(t *testing.T) {
	g := NewWithT(t)
	m := testMeta()
	d1, err := testIndex(t, m).Digest()
	g.Expect(err).NotTo(HaveOccurred())
	d2, err := testIndex(t, m).Digest()
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(d1).To(Equal(d2))

	// What the labels say changes the digest; so does the commit time.
	m.Version = "1.2.4"
	d3, _ := testIndex(t, m).Digest()
	g.Expect(d3).NotTo(Equal(d1))
	m = testMeta()
	m.Created = epoch.Add(time.Second)
	d4, _ := testIndex(t, m).Digest()
	g.Expect(d4).NotTo(Equal(d1))

	// A layout written twice holds the same bytes under the same digest.
	dir := t.TempDir()
	w1, err := WriteLayout(filepath.Join(dir, "a"), testIndex(t, testMeta()), "1.2.3")
	g.Expect(err).NotTo(HaveOccurred())
	w2, err := WriteLayout(filepath.Join(dir, "a"), testIndex(t, testMeta()), "1.2.3")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(w1).To(Equal(d1))
	g.Expect(w2).To(Equal(d1))
	back, err := ReadLayout(filepath.Join(dir, "a"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(back.Digest()).To(Equal(d1))
}

func TestLDFlags(t *testing.T) {
	g := NewWithT(t)
	g.Expect(LDFlags("1.2.3", "abc", "")).To(Equal("-s -w -X github.com/otelop/otelop/internal/version.Version=1.2.3 -X github.com/otelop/otelop/internal/version.Revision=abc"))
	g.Expect(LDFlags("1.2.3", "abc", "localhost:5000/o")).To(HaveSuffix(" -X github.com/otelop/otelop/internal/version.ImageRegistry=localhost:5000/o"))
}
