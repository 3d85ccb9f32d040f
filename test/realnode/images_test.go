package realnode

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestDockerArchiveHoldsManifestConfigAndOneLayer(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "hello")
	if err := os.WriteFile(bin, []byte("#!binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "img.tar")
	if err := writeDockerArchive(Image{Name: "otelop.test/hello:1", Binary: bin, Args: []string{"-v"},
		Files: map[string]string{"/agent.jar": "jar"}}, path); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		files[h.Name] = data
	}
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) != 1 || manifest[0].RepoTags[0] != "otelop.test/hello:1" || len(manifest[0].Layers) != 1 {
		t.Fatalf("manifest: %s", files["manifest.json"])
	}
	var config struct {
		Config struct{ Entrypoint, Cmd []string }
		Rootfs struct {
			DiffIDs []string `json:"diff_ids"`
		}
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil {
		t.Fatal(err)
	}
	if config.Config.Entrypoint[0] != "/hello" || config.Config.Cmd[0] != "-v" || len(config.Rootfs.DiffIDs) != 1 {
		t.Errorf("config: %s", files[manifest[0].Config])
	}
	layer := tar.NewReader(bytes.NewReader(files[manifest[0].Layers[0]]))
	found, jar := false, ""
	for {
		h, err := layer.Next()
		if err != nil {
			break
		}
		if h.Name == "hello" && h.Mode == 0o755 {
			found = true
		}
		if h.Name == "agent.jar" {
			data, _ := io.ReadAll(layer)
			jar = string(data)
		}
	}
	if !found {
		t.Error("the layer does not hold the executable /hello")
	}
	if jar != "jar" {
		t.Errorf("the layer holds /agent.jar = %q, want the file given in Files", jar)
	}
}
