package release

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	ggcrregistry "github.com/google/go-containerregistry/pkg/registry"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"

	"github.com/otelop/otelop/internal/imagesign"
	"github.com/otelop/otelop/internal/testenv"
	"github.com/otelop/otelop/test/chart/internal/chartpkg"
)

// TestPushChart pushes the packaged chart to an in-memory OCI registry on 127.0.0.1 and pulls it
// back with Helm's registry client, as `helm install oci://...` would.
func TestPushChart(t *testing.T) {
	g := NewWithT(t)
	srv := httptest.NewServer(ggcrregistry.New(ggcrregistry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	g.Expect(host).To(HavePrefix("127.0.0.1:"))

	path, err := chartpkg.Package(filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator"), t.TempDir(), testVersion)
	g.Expect(err).NotTo(HaveOccurred())
	ref, digest, err := PushChart(path, "oci://"+host+"/otelop/charts", true)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ref).To(Equal(host + "/otelop/charts/opentelemetry-operator:" + testVersion))
	g.Expect(digest).To(HavePrefix("sha256:"))

	c, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "creds.json")))
	g.Expect(err).NotTo(HaveOccurred())
	res, err := c.Pull(ref)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res.Manifest.Digest).To(Equal(digest))
	ch, err := loader.LoadArchive(strings.NewReader(string(res.Chart.Data)))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(ch.Metadata.Version).To(Equal(testVersion))
	g.Expect(ch.Metadata.AppVersion).To(Equal(testVersion))

	// The chart as Helm pushed it is signed by digest as `make push SIGNING_KEY=` signs it, and
	// verifies with the public key only (docs/signing.md).
	priv, pub, err := imagesign.GenerateKeyPair(nil)
	g.Expect(err).NotTo(HaveOccurred())
	_, otherPub, err := imagesign.GenerateKeyPair(nil)
	g.Expect(err).NotTo(HaveOccurred())
	dir := t.TempDir()
	for f, data := range map[string][]byte{"cosign.key": priv, "cosign.pub": pub, "other.pub": otherPub} {
		g.Expect(os.WriteFile(filepath.Join(dir, f), data, 0o600)).To(Succeed())
	}
	s, err := imagesign.LoadSigner(filepath.Join(dir, "cosign.key"))
	g.Expect(err).NotTo(HaveOccurred())
	v, err := imagesign.LoadVerifier(filepath.Join(dir, "cosign.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	other, err := imagesign.LoadVerifier(filepath.Join(dir, "other.pub"))
	g.Expect(err).NotTo(HaveOccurred())
	rel := imagesign.Release{Chart: "oci://" + ref}
	_, err = imagesign.VerifyRelease(context.Background(), rel, v)
	g.Expect(err).To(MatchError(imagesign.ErrNotSigned))
	signed, err := imagesign.SignRelease(context.Background(), rel, s)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(signed).To(HaveLen(1))
	g.Expect(signed[0].Digest.DigestStr()).To(Equal(digest))
	_, err = imagesign.VerifyRelease(context.Background(), rel, v)
	g.Expect(err).NotTo(HaveOccurred())
	_, err = imagesign.VerifyRelease(context.Background(), rel, other)
	g.Expect(err).To(MatchError(ContainSubstring("no signature verifies")))

	// Positive control: a tag that was not pushed is not there.
	_, err = c.Pull(host + "/otelop/charts/opentelemetry-operator:0.0.1")
	g.Expect(err).To(HaveOccurred())
	_, _, err = PushChart(path, host+"/otelop/charts", true)
	g.Expect(err).To(MatchError(ContainSubstring("want oci://")))
}
