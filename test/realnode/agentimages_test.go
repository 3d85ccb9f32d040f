package realnode

import (
	"archive/tar"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		names, _ := layerNames(t, img, filepath.Join(dir, "layout"))
		for _, w := range append(want[img.Name], "usr/local/bin/cp") {
			if !slices.Contains(names, w) {
				t.Errorf("%s lacks %s; it holds %q", img.Name, w, names)
			}
		}
	}
}

// TestWebServerImagesAreLaidOutLikeTheRealOnes: the web-server agent image holds, under
// /opt/opentelemetry, the SDK libraries, both Apache modules, the nginx module of each version,
// the log4cxx template and VERSION.txt; the application images hold their server's configuration
// (nginx's with its nginx -v script); every image has busybox with a /bin link for each applet
// the injected scripts run.
func TestWebServerImagesAreLaidOutLikeTheRealOnes(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []string{"pathcheck", "busybox"} {
		if err := os.WriteFile(filepath.Join(dir, b), []byte("#!"+b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	agent := []string{"opt/opentelemetry/VERSION.txt", "opt/opentelemetry/conf/opentelemetry_sdk_log4cxx.xml.template",
		"opt/opentelemetry/WebServerModule/Apache/libmod_apache_otel.so", "opt/opentelemetry/WebServerModule/Apache/libmod_apache_otel22.so",
		"usr/local/bin/busybox"}
	for _, l := range WebServerSDKLibs {
		agent = append(agent, "opt/opentelemetry/sdk_lib/lib/"+l)
	}
	for _, v := range NginxModuleVersions {
		agent = append(agent, "opt/opentelemetry/WebServerModule/Nginx/"+v+"/ngx_http_opentelemetry_module.so")
	}
	want := map[string][]string{
		WebServerAgentImage: agent,
		ApacheAppImage:      {"usr/local/apache2/conf/httpd.conf", "usr/local/apache2/modules/mod_mpm_event.so", "usr/local/bin/pathcheck", "bin/busybox"},
		NginxAppImage:       {"etc/nginx/nginx.conf", "etc/nginx/conf.d/default.conf", "usr/sbin/nginx", "usr/local/bin/pathcheck", "bin/busybox"},
	}
	imgs := webServerImages(dir, filepath.Join(dir, "busybox"), []byte("#!busybox"))
	if len(imgs) != len(want) {
		t.Fatalf("%d images, want %d", len(imgs), len(want))
	}
	for _, img := range imgs {
		names, links := layerNames(t, img, filepath.Join(dir, "layout"))
		for _, w := range want[img.Name] {
			if !slices.Contains(names, w) {
				t.Errorf("%s lacks %s; it holds %q", img.Name, w, names)
			}
		}
		for _, a := range busyboxApplets {
			if links["bin/"+a] == "" {
				t.Errorf("%s has no /bin/%s link; links %q", img.Name, a, links)
			}
		}
	}
}

// TestBusyboxIsStatic: the host's busybox (from busybox-static) is taken, a dynamically linked
// program is refused (the images have no C library), a missing one names the package.
func TestBusyboxIsStatic(t *testing.T) {
	Require(t) // busybox comes with the real node's packages
	if _, err := readBusybox(BusyboxPath); err != nil {
		t.Fatal(err)
	}
	if _, err := readBusybox("/usr/bin/env"); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("a dynamic program: %v", err)
	}
	if _, err := readBusybox(filepath.Join(t.TempDir(), "busybox")); err == nil || !strings.Contains(err.Error(), "busybox-static") {
		t.Errorf("no busybox: %v", err)
	}
}

// layerNames writes img and returns the entry names of its own (second) layer, and its symbolic
// links' targets by name.
func layerNames(t *testing.T, img Image, out string) (names []string, links map[string]string) {
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
	links = map[string]string{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
		if h.Typeflag == tar.TypeSymlink {
			links[h.Name] = h.Linkname
		}
	}
	return names, links
}
