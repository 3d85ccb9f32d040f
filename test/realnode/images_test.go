package realnode

import (
	"archive/tar"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/otelop/otelop/internal/imagebuild"
)

// TestImageIsBuiltLikeTheShippedImages: a test image is an OCI layout written by
// internal/imagebuild: the binary under /usr/local/bin as entrypoint, the nonroot user, the extra
// files in the binary's layer, the default arguments as Cmd, tagged with the name's tag.
func TestImageIsBuiltLikeTheShippedImages(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "layout")
	tag, err := writeImage(Image{Name: "otelop.test:5000/hello:1", Binary: bin, Args: []string{"-v"},
		Files: map[string]string{"/agent.jar": "jar"}}, out)
	if err != nil || tag != "1" {
		t.Fatalf("tag %q, %v", tag, err)
	}
	idx, err := imagebuild.ReadLayout(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("index: %+v, %v", im, err)
	}
	img, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.Entrypoint[0] != "/usr/local/bin/hello" || cf.Config.User != imagebuild.User || len(cf.Config.Cmd) != 1 || cf.Config.Cmd[0] != "-v" {
		t.Errorf("config: %+v", cf.Config)
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files := map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = string(data)
	}
	if files["usr/local/bin/hello"] != "#!binary" || files["agent.jar"] != "jar" {
		t.Errorf("the binary's layer holds %v", files)
	}
	if repo, tag, ok := cutTag("otelop.test:5000/hello"); ok {
		t.Errorf("cutTag of a name without a tag: %q %q", repo, tag)
	}
}
