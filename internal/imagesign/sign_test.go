package imagesign

import (
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/sigstore/sigstore/pkg/signature"
)

// pushRandom serves an in-memory registry on 127.0.0.1 and pushes a random image to it.
func pushRandom(t *testing.T) name.Digest {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	img, err := random.Image(256, 1)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(host + "/otelop/thing:1.0.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	h, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return ref.Context().Digest(h.String())
}

func keyPair(t *testing.T, password []byte) (signature.SignerVerifier, signature.Verifier) {
	t.Helper()
	priv, pub, err := GenerateKeyPair(password)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "k.key"), priv, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	if password != nil {
		t.Setenv(PasswordEnv, string(password))
	}
	s, err := LoadSigner(filepath.Join(dir, "k.key"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := LoadVerifier(filepath.Join(dir, "k.pub"))
	if err != nil {
		t.Fatal(err)
	}
	return s, v
}

func TestSignVerify(t *testing.T) {
	ctx := context.Background()
	d := pushRandom(t)
	s, v := keyPair(t, nil)
	_, other := keyPair(t, nil)

	// Nothing signed yet: refused, and says so.
	if _, err := Verify(ctx, d, v); err == nil || !strings.Contains(err.Error(), "no signatures") {
		t.Fatalf("unsigned image: %v, want no signatures", err)
	}
	if err := Sign(ctx, d, s); err != nil {
		t.Fatal(err)
	}
	ps, err := Verify(ctx, d, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 1 || ps[0].Critical.Image.DockerManifestDigest != d.DigestStr() || ps[0].Critical.Identity.DockerReference != d.Context().Name() {
		t.Fatalf("payloads %+v, want one naming %s", ps, d)
	}
	// Signing again keeps the one signature.
	if err := Sign(ctx, d, s); err != nil {
		t.Fatal(err)
	}
	if ps, err := Verify(ctx, d, v); err != nil || len(ps) != 1 {
		t.Fatalf("after signing twice: %d payloads, %v; want 1", len(ps), err)
	}
	// Another key refuses.
	if _, err := Verify(ctx, d, other); err == nil || !strings.Contains(err.Error(), "no signature verifies") {
		t.Fatalf("other key: %v, want refused", err)
	}
	// A signature copied onto another digest names the wrong digest: refused.
	tag, _ := SignatureTag(d)
	sigImg, err := remote.Image(tag)
	if err != nil {
		t.Fatal(err)
	}
	img2, _ := random.Image(128, 1)
	h2, _ := img2.Digest()
	d2 := d.Context().Digest(h2.String())
	if err := remote.Write(d2, img2); err != nil {
		t.Fatal(err)
	}
	tag2, _ := SignatureTag(d2)
	if err := remote.Write(tag2, sigImg); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, d2, v); err == nil || !strings.Contains(err.Error(), "names "+d.DigestStr()) {
		t.Fatalf("copied signature: %v, want refused for naming the other digest", err)
	}
}

func TestAttestSPDX(t *testing.T) {
	ctx := context.Background()
	d := pushRandom(t)
	s, v := keyPair(t, []byte("pw"))
	_, other := keyPair(t, nil)
	doc := []byte(`{"spdxVersion": "SPDX-2.3", "name": "thing"}`)
	platform := v1.Hash{Algorithm: "sha256", Hex: strings.Repeat("ab", 32)}

	if _, err := VerifySPDX(ctx, d, v); err == nil {
		t.Fatal("no attestation yet, but verified")
	}
	for range 2 { // the second is a no-op
		if err := AttestSPDX(ctx, d, doc, s, []v1.Hash{platform}); err != nil {
			t.Fatal(err)
		}
	}
	sts, err := VerifySPDX(ctx, d, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(sts) != 1 || len(sts[0].Subject) != 2 || sts[0].Subject[1].Digest["sha256"] != platform.Hex {
		t.Fatalf("statements %+v, want one with the image and the platform digest as subjects", sts)
	}
	var got map[string]string
	if err := json.Unmarshal(sts[0].Predicate, &got); err != nil || got["name"] != "thing" {
		t.Fatalf("predicate %s: %v", sts[0].Predicate, err)
	}
	if _, err := VerifySPDX(ctx, d, other); err == nil {
		t.Fatal("another key verified the attestation")
	}
	// A second SBOM is added beside the first.
	if err := AttestSPDX(ctx, d, []byte(`{"name": "second"}`), s, nil); err != nil {
		t.Fatal(err)
	}
	if sts, err := VerifySPDX(ctx, d, v); err != nil || len(sts) != 2 {
		t.Fatalf("%d statements, %v; want 2", len(sts), err)
	}
}

func TestLoadSignerNeedsPasswordOfEncryptedKey(t *testing.T) {
	priv, _, err := GenerateKeyPair([]byte("secret"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(priv), "ENCRYPTED SIGSTORE PRIVATE KEY") {
		t.Fatalf("a key with a password is not in cosign's encrypted format:\n%s", priv)
	}
	path := filepath.Join(t.TempDir(), "cosign.key")
	if err := os.WriteFile(path, priv, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Unsetenv(PasswordEnv)
	if _, err := LoadSigner(path); err == nil || !strings.Contains(err.Error(), PasswordEnv) {
		t.Fatalf("encrypted key without %s: %v", PasswordEnv, err)
	}
	t.Setenv(PasswordEnv, "wrong")
	if _, err := LoadSigner(path); err == nil {
		t.Fatal("wrong password accepted")
	}
	t.Setenv(PasswordEnv, "secret")
	if _, err := LoadSigner(path); err != nil {
		t.Fatal(err)
	}
}
