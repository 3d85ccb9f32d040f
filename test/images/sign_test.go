package images

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/otelop/otelop/internal/imagebuild"
	"github.com/otelop/otelop/internal/imagesign"
	"github.com/otelop/otelop/internal/sbom"
)

// signAndVerify does what `make release`, `make push SIGNING_KEY=...` and `make verify-signatures`
// do after the images are pushed: it writes an SBOM per image and platform, pushes the chart as an
// OCI artifact, signs every image by digest and the chart, attests the SBOMs, and verifies all of
// it with the public key. It then shows that another key, a tampered signature and a tampered
// attestation are refused, and that each image's attested SBOM names the modules of the binary
// in that platform's image, read back from the registry.
func signAndVerify(t *testing.T, reg string, built []imagebuild.Result) {
	ctx := context.Background()
	dir := t.TempDir()
	keys := func(sub string) (string, string) {
		priv, pub, err := imagesign.GenerateKeyPair(nil)
		if err != nil {
			t.Fatal(err)
		}
		k, p := filepath.Join(dir, sub+".key"), filepath.Join(dir, sub+".pub")
		if err := os.WriteFile(k, priv, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, pub, 0o644); err != nil {
			t.Fatal(err)
		}
		return k, p
	}
	keyFile, pubFile := keys("cosign")
	_, otherPub := keys("other")

	sboms := filepath.Join(dir, "sbom")
	var bins []string
	for _, r := range built {
		writeSBOMs(t, r, sboms)
		bins = append(bins, r.Name)
	}
	chartRef := pushChart(t, reg+"/otelop/charts/opentelemetry-operator:"+meta.Version)

	rel := imagesign.Release{Registry: reg + "/otelop", Version: meta.Version, Binaries: bins, SBOMDir: sboms,
		Chart: "oci://" + chartRef, Progress: testWriter{t}}
	s, err := imagesign.LoadSigner(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	v, err := imagesign.LoadVerifier(pubFile)
	if err != nil {
		t.Fatal(err)
	}
	// Positive control first: nothing verifies before signing.
	if _, err := imagesign.VerifyRelease(ctx, rel, v); !errors.Is(err, imagesign.ErrNotSigned) {
		t.Fatalf("verify before signing: %v, want %v", err, imagesign.ErrNotSigned)
	}
	signed, err := imagesign.SignRelease(ctx, rel, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(signed) != len(bins)+1 {
		t.Fatalf("signed %d artifacts, want %d images and the chart", len(signed), len(bins))
	}
	verified, err := imagesign.VerifyRelease(ctx, rel, v)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range verified {
		if a.Digest != signed[i].Digest {
			t.Errorf("%s: verified %s, signed %s", a.Ref, a.Digest, signed[i].Digest)
		}
		if i < len(built) {
			if a.Digest.DigestStr() != built[i].Digest.String() {
				t.Errorf("%s: signed %s, built %s", a.Ref, a.Digest.DigestStr(), built[i].Digest)
			}
			if a.SBOMs != len(imagebuild.Platforms) {
				t.Errorf("%s: %d verified SBOMs, want one per platform (%d)", a.Ref, a.SBOMs, len(imagebuild.Platforms))
			}
			checkAttestedSBOMs(t, built[i].Name, a)
		}
	}
	t.Logf("signed and verified %d images (%d SBOMs each) and the chart %s", len(bins), len(imagebuild.Platforms), chartRef)

	// Another key: refused for images and chart alike.
	other, err := imagesign.LoadVerifier(otherPub)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := imagesign.VerifyRelease(ctx, rel, other); err == nil || !strings.Contains(err.Error(), "no signature verifies") {
		t.Fatalf("verify with another key: %v, want refused", err)
	}
	chartOnly := imagesign.Release{Chart: rel.Chart}
	if _, err := imagesign.VerifyRelease(ctx, chartOnly, other); err == nil {
		t.Fatal("the chart's signature verified with another key")
	}
	if _, err := imagesign.VerifyRelease(ctx, chartOnly, v); err != nil {
		t.Fatalf("the chart alone: %v", err)
	}

	// A tampered signature payload (another digest, the signature kept) is refused.
	first := verified[0].Digest
	tamper(t, first, imagesign.SignatureTag, func(payload []byte) []byte {
		return bytes.Replace(payload, []byte(first.DigestStr()), []byte(verified[1].Digest.DigestStr()), 1)
	})
	if _, err := imagesign.Verify(ctx, first, v); err == nil || !strings.Contains(err.Error(), "no signature verifies") {
		t.Fatalf("tampered signature: %v, want refused", err)
	}
	// A tampered attestation (the SBOM's statement changed, the DSSE signature kept) is refused.
	second := verified[1].Digest
	tamper(t, second, imagesign.AttestationTag, func(env []byte) []byte {
		var e struct {
			PayloadType string            `json:"payloadType"`
			Payload     string            `json:"payload"`
			Signatures  []json.RawMessage `json:"signatures"`
		}
		if err := json.Unmarshal(env, &e); err != nil {
			t.Fatal(err)
		}
		st, _ := base64.StdEncoding.DecodeString(e.Payload)
		e.Payload = base64.StdEncoding.EncodeToString(bytes.Replace(st, []byte("SPDX-2.3"), []byte("SPDX-2.2"), 1))
		out, _ := json.Marshal(e)
		return out
	})
	if _, err := imagesign.VerifySPDX(ctx, second, v); err == nil {
		t.Fatal("tampered attestation verified")
	}
}

// tamper rewrites every layer of d's signature or attestation manifest with f, keeping the
// annotations (and so the signatures).
func tamper(t *testing.T, d name.Digest, tagOf func(name.Digest) (name.Tag, error), f func([]byte) []byte) {
	t.Helper()
	tag, err := tagOf(d)
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	out := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for _, desc := range m.Layers {
		l, err := img.LayerByDigest(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		changed := f(data)
		if bytes.Equal(changed, data) {
			t.Fatalf("%s: the tampering changed nothing", tag)
		}
		if out, err = mutate.Append(out, mutate.Addendum{Layer: static.NewLayer(changed, desc.MediaType), Annotations: desc.Annotations}); err != nil {
			t.Fatal(err)
		}
	}
	if err := remote.Write(tag, out); err != nil {
		t.Fatal(err)
	}
}

// writeSBOMs writes <dir>/<binary>-<os>-<arch>.spdx.json from the binaries in r's OCI layout, as
// `make release` does.
func writeSBOMs(t *testing.T, r imagebuild.Result, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	idx, err := imagebuild.ReadLayout(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := sbom.FromBinary(binaryOf(t, img, r.Name), sbom.Options{Name: r.Name, Version: meta.Version, Created: meta.Created})
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, r.Name+"-"+desc.Platform.OS+"-"+desc.Platform.Architecture+".spdx.json")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// binaryOf returns /usr/local/bin/<bin> of img.
func binaryOf(t *testing.T, img v1.Image, bin string) []byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	want := path.Join(imagebuild.BinDir, bin)
	for _, l := range layers {
		rc, err := l.Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		for {
			h, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if h.Typeflag == tar.TypeReg && path.Clean("/"+h.Name) == want {
				data, err := io.ReadAll(tr)
				rc.Close()
				if err != nil {
					t.Fatal(err)
				}
				return data
			}
		}
		rc.Close()
	}
	t.Fatalf("no layer holds %s", want)
	return nil
}

// checkAttestedSBOMs pulls each platform's image named by a verified statement's subject from the
// registry and checks that the statement's SBOM describes that image's binary: its name and every
// module of the binary's build information at its version.
func checkAttestedSBOMs(t *testing.T, bin string, a imagesign.Artifact) {
	t.Helper()
	for _, st := range a.Statements {
		var doc sbom.Document
		if err := json.Unmarshal(st.Predicate, &doc); err != nil {
			t.Fatalf("%s: predicate: %v", a.Ref, err)
		}
		if err := sbom.Validate(&doc); err != nil {
			t.Errorf("%s: attested SBOM: %v", a.Ref, err)
		}
		if len(st.Subject) != 2 {
			t.Fatalf("%s: subjects %v, want the index and the platform's image", a.Ref, st.Subject)
		}
		img, err := remote.Image(a.Digest.Context().Digest("sha256:" + st.Subject[1].Digest["sha256"]))
		if err != nil {
			t.Fatal(err)
		}
		bi, err := buildinfo.Read(bytes.NewReader(binaryOf(t, img, bin)))
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]string{}
		for _, p := range doc.Packages {
			have[p.Name] = p.VersionInfo
		}
		if len(doc.DocumentDescribes) != 1 || doc.Packages[0].Name != bin {
			t.Errorf("%s: the SBOM describes %v (first package %q), want the binary %s", a.Ref, doc.DocumentDescribes, doc.Packages[0].Name, bin)
		}
		if _, ok := have[bi.Main.Path]; !ok {
			t.Errorf("%s: the SBOM lacks the main module %s", a.Ref, bi.Main.Path)
		}
		for _, m := range bi.Deps {
			p, ver := m.Path, m.Version
			if m.Replace != nil {
				p, ver = m.Replace.Path, m.Replace.Version
			}
			if have[p] != ver {
				t.Errorf("%s: the SBOM has %s at %q, the binary links %s", a.Ref, p, have[p], ver)
			}
		}
		if len(bi.Deps) < 20 {
			t.Errorf("%s: the binary links %d modules: too few for a real build", a.Ref, len(bi.Deps))
		}
	}
}

// pushChart pushes the chart directory as Helm pushes a packaged chart (OCI artifact: Helm's
// config and one gzipped tar layer) and returns repo:tag.
func pushChart(t *testing.T, ref string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	root := "../../charts/opentelemetry-operator"
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if err := tw.WriteHeader(&tar.Header{Name: "opentelemetry-operator/" + filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data))}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg := static.NewLayer([]byte(`{"name":"opentelemetry-operator","version":"`+meta.Version+`","apiVersion":"v2"}`), "application/vnd.cncf.helm.config.v1+json")
	content := static.NewLayer(buf.Bytes(), "application/vnd.cncf.helm.chart.content.v1.tar+gzip")
	var descs []v1.Descriptor
	for _, l := range []v1.Layer{cfg, content} {
		if err := remote.WriteLayer(r.Context(), l); err != nil {
			t.Fatal(err)
		}
		d, _ := l.Digest()
		sz, _ := l.Size()
		mt, _ := l.MediaType()
		descs = append(descs, v1.Descriptor{MediaType: mt, Digest: d, Size: sz})
	}
	m := v1.Manifest{SchemaVersion: 2, MediaType: types.OCIManifestSchema1, Config: descs[0], Layers: descs[1:]}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Put(r, rawManifest{raw}); err != nil {
		t.Fatal(err)
	}
	return r.String()
}

// rawManifest is a manifest pushed as it is.
type rawManifest struct{ b []byte }

func (m rawManifest) RawManifest() ([]byte, error)        { return m.b, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return types.OCIManifestSchema1, nil }
