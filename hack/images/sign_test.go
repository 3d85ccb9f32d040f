package main

import (
	"bytes"
	"context"
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
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/otelop/otelop/internal/imagesign"
)

// TestSignVerifyCommands runs keygen, sign and verify as make push and a user would, against an
// in-memory registry on 127.0.0.1 holding a two-platform index.
func TestSignVerifyCommands(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	os.Unsetenv(imagesign.PasswordEnv)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/otelop"
	var adds []mutate.IndexAddendum
	for _, arch := range []string{"amd64", "arm64"} {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: arch}}})
	}
	idx := mutate.AppendManifests(empty.Index, adds...)
	ref, _ := name.ParseReference(reg + "/thing:1.0.0")
	if err := remote.WriteIndex(ref, idx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sboms := filepath.Join(dir, "sbom")
	_ = os.Mkdir(sboms, 0o755)
	for _, arch := range []string{"amd64", "arm64"} {
		_ = os.WriteFile(filepath.Join(sboms, "thing-linux-"+arch+".spdx.json"), []byte(`{"name":"thing-`+arch+`"}`), 0o644)
	}
	ctx := context.Background()
	var out bytes.Buffer
	must := func(args string) {
		t.Helper()
		out.Reset()
		if err := run(ctx, strings.Fields(args), &out, &out); err != nil {
			t.Fatalf("images %s: %v\n%s", args, err, out.String())
		}
	}
	must("keygen --out " + dir)
	if err := run(ctx, []string{"keygen", "--out", dir}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Fatalf("second keygen: %v, want refused", err)
	}
	flags := " --registry " + reg + " --version 1.0.0 --sboms " + sboms + " thing"
	// Verifying before signing fails.
	if err := run(ctx, strings.Fields("verify --key "+filepath.Join(dir, "cosign.pub")+flags), io.Discard, io.Discard); err == nil {
		t.Fatal("verify passed before sign")
	}
	must("sign --key " + filepath.Join(dir, "cosign.key") + flags)
	if !strings.Contains(out.String(), "(2 SBOMs)") {
		t.Errorf("sign printed %q, want 2 SBOMs attested", out.String())
	}
	must("verify --key " + filepath.Join(dir, "cosign.pub") + flags)
	if !strings.Contains(out.String(), "verified 1 artifacts") {
		t.Errorf("verify printed %q", out.String())
	}
	// Another key refuses.
	other := t.TempDir()
	must("keygen --out " + other)
	if err := run(ctx, strings.Fields("verify --key "+filepath.Join(other, "cosign.pub")+flags), io.Discard, io.Discard); err == nil {
		t.Fatal("another key verified")
	}
}
