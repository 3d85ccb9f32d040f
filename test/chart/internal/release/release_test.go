package release

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/chart/loader"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/otelop/otelop/internal/sbom"
	"github.com/otelop/otelop/internal/testenv"
)

const (
	testVersion  = "9.8.7"
	testRegistry = "registry.example/mirror/otelop"
)

// readObjects decodes a multi-document YAML file.
func readObjects(t *testing.T, data []byte) []*unstructured.Unstructured {
	t.Helper()
	var objs []*unstructured.Unstructured
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if err == io.EOF {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(doc, &u.Object); err != nil {
			t.Fatal(err)
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// crdNames returns the names of the CRDs config/crd installs (its kustomization's resources).
func crdNames(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(), "config", "crd")
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile(`(?m)^- (bases/\S+\.yaml)$`).FindAllSubmatch(k, -1)
	if len(files) == 0 {
		t.Fatal("config/crd/kustomization.yaml lists no bases/*.yaml")
	}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, string(f[1])))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range readObjects(t, data) {
			names = append(names, o.GetName())
		}
	}
	return names
}

// goModVersion returns the version the main module's go.mod requires of module, or "".
func goModVersion(t *testing.T, module string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// checkManifest checks the install manifest: every CRD, the operator Deployment with the release's
// image, everything in the operator's namespace, and nothing of kustomize left.
func checkManifest(t *testing.T, data []byte) []*unstructured.Unstructured {
	g := NewWithT(t)
	objs := readObjects(t, data)
	g.Expect(objs[0].GetKind()).To(Equal("Namespace"))
	crds := map[string]bool{}
	var deployments []*unstructured.Unstructured
	for _, o := range objs {
		g.Expect(o.GetKind()).NotTo(Equal("Kustomization"))
		for _, m := range []map[string]string{o.GetAnnotations(), o.GetLabels()} {
			for k := range m {
				g.Expect(IsKustomizeKey(k)).To(BeFalse(), "%s %s has kustomize's %s", o.GetKind(), o.GetName(), k)
			}
		}
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds[o.GetName()] = true
		case "Deployment":
			deployments = append(deployments, o)
		}
		if ns := o.GetNamespace(); ns != "" {
			g.Expect(ns).To(Equal("opentelemetry-operator-system"), "%s %s", o.GetKind(), o.GetName())
		}
	}
	for _, name := range crdNames(t) {
		g.Expect(crds).To(HaveKey(name))
	}
	g.Expect(deployments).To(HaveLen(1))
	d := deployments[0]
	g.Expect(d.GetName()).To(Equal(ManagerDeployment))
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	g.Expect(containers).To(HaveLen(1))
	g.Expect(containers[0]).To(HaveKeyWithValue("image", testRegistry+"/opentelemetry-operator:"+testVersion))
	// Positive control for the image: config/manager's own tag is gone.
	g.Expect(string(data)).NotTo(ContainSubstring("ghcr.io/otelop/opentelemetry-operator:"))
	return objs
}

func TestManifestAndChartWithoutImages(t *testing.T) {
	g := NewWithT(t)
	data, err := Manifest(testenv.RepoRoot(), testRegistry+"/opentelemetry-operator:"+testVersion, testVersion)
	g.Expect(err).NotTo(HaveOccurred())
	checkManifest(t, data)
}

func TestRunRefusesWhatCannotBeReleased(t *testing.T) {
	g := NewWithT(t)
	o := Options{Repo: testenv.RepoRoot(), Out: t.TempDir(), Registry: testRegistry, Binaries: []string{OperatorImage}}
	o.Version = "e636da1-dirty"
	_, err := Run(context.Background(), o)
	g.Expect(err).To(MatchError(ContainSubstring(`version "e636da1-dirty": a release needs a SemVer version`)))
	o.Version, o.Binaries = testVersion, []string{"target-allocator"}
	_, err = Run(context.Background(), o)
	g.Expect(err).To(MatchError(ContainSubstring("the release needs opentelemetry-operator")))
	o.Binaries, o.Registry = []string{OperatorImage}, ""
	_, err = Run(context.Background(), o)
	g.Expect(err).To(MatchError(ContainSubstring("registry: empty")))
}

// TestRelease builds the operator's image (one platform, to keep it short) and writes the
// release: the manifest, the chart (version = appVersion = the release version) and the SBOM of
// the image's binary.
func TestRelease(t *testing.T) {
	g := NewWithT(t)
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, Options{
		Repo: testenv.RepoRoot(), Out: filepath.Join(tmp, "release"), Images: filepath.Join(tmp, "images"),
		Version: "v" + testVersion, Registry: testRegistry, Revision: "0123abc", Created: time.Unix(1700000000, 0),
		Build: true, Binaries: []string{OperatorImage}, Platforms: []v1.Platform{{OS: "linux", Architecture: "amd64"}},
	})
	g.Expect(err).NotTo(HaveOccurred())
	t.Logf("release with one image built in %s", time.Since(start).Round(time.Second))

	t.Run("manifest", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(filepath.Base(res.Manifest)).To(Equal("opentelemetry-operator.yaml"))
		data, err := os.ReadFile(res.Manifest)
		g.Expect(err).NotTo(HaveOccurred())
		checkManifest(t, data)
	})

	t.Run("images", func(t *testing.T) {
		g := NewWithT(t)
		data, err := os.ReadFile(res.Images)
		g.Expect(err).NotTo(HaveOccurred())
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		g.Expect(lines).To(ContainElements(testRegistry+"/opentelemetry-operator:"+testVersion,
			testRegistry+"/target-allocator:"+testVersion, testRegistry+"/operator-opamp-bridge:"+testVersion,
			"ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.140.0",
			"ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.33.6"))
		for _, l := range lines {
			g.Expect(l).To(MatchRegexp(`^[a-z0-9.-]+(/[a-z0-9._-]+)+:[A-Za-z0-9._-]+$`))
		}
	})

	t.Run("chart", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(filepath.Base(res.Chart)).To(Equal("opentelemetry-operator-" + testVersion + ".tgz"))
		ch, err := loader.Load(res.Chart)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(ch.Metadata.Version).To(Equal(testVersion))
		g.Expect(ch.Metadata.AppVersion).To(Equal(testVersion))
	})

	t.Run("sbom", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(res.SBOMs).To(HaveLen(1))
		g.Expect(filepath.Base(res.SBOMs[0])).To(Equal("opentelemetry-operator-linux-amd64.spdx.json"))
		data, err := os.ReadFile(res.SBOMs[0])
		g.Expect(err).NotTo(HaveOccurred())
		doc, err := sbom.Parse(data)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(doc.Packages[0].Name).To(Equal(OperatorImage))
		g.Expect(doc.Packages[0].VersionInfo).To(Equal(testVersion))
		g.Expect(doc.Packages[0].Comment).To(ContainSubstring("GOARCH=amd64"))
		g.Expect(doc.Module("github.com/otelop/otelop")).NotTo(BeNil())
		for _, m := range []string{"k8s.io/client-go", "sigs.k8s.io/controller-runtime"} {
			want := goModVersion(t, m)
			g.Expect(want).NotTo(BeEmpty(), m)
			p := doc.Module(m)
			g.Expect(p).NotTo(BeNil(), m)
			g.Expect(p.VersionInfo).To(Equal(want), m)
			g.Expect(p.ExternalRefs[0].Locator).To(Equal("pkg:golang/" + m + "@" + want))
			g.Expect(p.Checksums).To(HaveLen(1), m)
		}
		// Positive control: a module this test module links (the Helm SDK) that the main module's
		// go.mod does not require is not in the operator's SBOM.
		g.Expect(goModVersion(t, "helm.sh/helm/v3")).To(BeEmpty())
		g.Expect(doc.Module("helm.sh/helm/v3")).To(BeNil())
		g.Expect(strings.Count(string(data), `"pkg:golang/`)).To(Equal(len(doc.Packages) - 1))
	})
}
