package realnode

import (
	"archive/tar"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/otelop/otelop/internal/imagebuild"
)

// TestAgentImagesAreLaidOutLikeTheRealOnes: the stand-in agent images hold, in folders created
// for them, the files the injected environment names: each .NET platform's profiler, the startup
// hook, AdditionalDeps and store; both Python builds; Node.js's autoinstrumentation.js.
func TestAgentImagesAreLaidOutLikeTheRealOnes(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "cp")
	if err := os.WriteFile(bin, []byte("#!cp"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		NodeJSAgentImage: {"autoinstrumentation/", "autoinstrumentation/autoinstrumentation.js", "autoinstrumentation/node_modules/"},
		PythonAgentImage: {
			"autoinstrumentation/opentelemetry/instrumentation/auto_instrumentation/sitecustomize.py",
			"autoinstrumentation-musl/opentelemetry/instrumentation/auto_instrumentation/sitecustomize.py",
			"autoinstrumentation/" + PythonGlibcMarker, "autoinstrumentation-musl/" + PythonMuslMarker,
		},
		DotNetAgentImage: {"autoinstrumentation/net/OpenTelemetry.AutoInstrumentation.StartupHook.dll",
			"autoinstrumentation/AdditionalDeps/", "autoinstrumentation/store/"},
	}
	for _, p := range DotNetPlatforms {
		want[DotNetAgentImage] = append(want[DotNetAgentImage], "autoinstrumentation/"+p+"/OpenTelemetry.AutoInstrumentation.Native.so")
	}
	imgs := agentImages(dir)
	if len(imgs) != len(want) {
		t.Fatalf("%d images, want %d", len(imgs), len(want))
	}
	for _, img := range imgs {
		names := layerNames(t, img, filepath.Join(dir, "layout"))
		for _, w := range append(want[img.Name], "usr/local/bin/cp") {
			if !slices.Contains(names, w) {
				t.Errorf("%s lacks %s; it holds %q", img.Name, w, names)
			}
		}
	}
}

// layerNames writes img and returns the entry names of its own (second) layer.
func layerNames(t *testing.T, img Image, out string) []string {
	t.Helper()
	if _, err := writeImage(img, out); err != nil {
		t.Fatalf("%s: %v", img.Name, err)
	}
	idx, err := imagebuild.ReadLayout(out)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	image, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := image.Layers()
	if err != nil || len(layers) != 2 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	rc, err := layers[1].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	return names
}
