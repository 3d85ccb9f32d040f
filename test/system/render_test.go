package system

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	kustypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/resid"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/serviceprovider/flux"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
	"github.com/otelop/otelop/internal/testenv"
)

// TestWorkloadReleaseRendersNoWebhooks renders the workload release as helm-controller installs
// it: the chart with the HelmRelease's values (Helm SDK, `helm install --dry-run`), then its
// Kustomize post-renderers (the kustomize library v0.21.1; helm-controller v1.4.0 pins v0.20.1, whose patch handling is the same), for
// our chart and for upstream's opentelemetry-kube-stack 0.20.3. Neither installs an admission
// webhook configuration into the shared workload cluster; the operator runs with
// --enable-webhooks=false; every cluster-scoped object's name carries the instance ID. Positive
// control: each chart installed with its defaults does render webhook configurations, and the
// post-renderer alone removes them (for a chart version that has no switch).
func TestWorkloadReleaseRendersNoWebhooks(t *testing.T) {
	charts := map[string]string{
		"ours":                              filepath.Join(testenv.RepoRoot(), "charts", "opentelemetry-operator"),
		"upstream opentelemetry-kube-stack": filepath.Join(testenv.RepoRoot(), "..", "shared", "fixtures", "upstream-helm-charts", "opentelemetry-kube-stack-0.20.3"),
	}
	id := instance.ID("project-a", "prod")
	hr := flux.WorkloadRelease(flux.Inputs{Name: "prod", PlatformNamespace: "mcp--a", InstanceID: id})
	var values map[string]any
	if err := json.Unmarshal(hr.Spec.Values.Raw, &values); err != nil {
		t.Fatal(err)
	}
	for name, dir := range charts {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			if _, err := os.Stat(dir); err != nil {
				t.Fatalf("chart %s: %v (upstream's charts are expected at ../shared/fixtures/upstream-helm-charts from the repository root)", dir, err)
			}
			// Positive control: the chart's own defaults (operator on) render webhooks.
			plain := renderRelease(g, dir, "otel", "observability", map[string]any{"opentelemetry-operator": map[string]any{"enabled": true}}, nil)
			g.Expect(kinds(plain)).To(ContainElements(flux.WebhookKinds), "the chart renders webhook configurations by default")
			// The post-renderer alone removes them, for a chart (version) without a switch.
			postOnly := renderRelease(g, dir, "otel", "observability", map[string]any{"opentelemetry-operator": map[string]any{"enabled": true}}, hr.Spec.PostRenderers)
			g.Expect(kinds(postOnly)).To(ContainElement("Deployment"))
			for _, k := range flux.WebhookKinds {
				g.Expect(kinds(postOnly)).NotTo(ContainElement(k), "the post-renderer deletes every %s", k)
			}

			objs := renderRelease(g, dir, hr.Spec.ReleaseName, hr.Spec.TargetNamespace, values, hr.Spec.PostRenderers)
			g.Expect(kinds(objs)).To(ContainElement("Deployment"))
			for _, k := range flux.WebhookKinds {
				g.Expect(kinds(objs)).NotTo(ContainElement(k))
			}
			var args []string
			for _, o := range objs {
				if o.GetKind() == "Deployment" {
					containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
					for _, c := range containers {
						if c.(map[string]any)["name"] == "manager" {
							a, _, _ := unstructured.NestedStringSlice(c.(map[string]any), "args")
							args = append(args, a...)
						}
					}
				}
				if o.GetNamespace() == "" && o.GetKind() != "CustomResourceDefinition" {
					g.Expect(o.GetName()).To(ContainSubstring(id), "cluster-scoped %s carries the instance ID", o.GetKind())
				}
			}
			g.Expect(args).To(ContainElement("--enable-webhooks=false"))
			g.Expect(args[len(args)-1]).To(Equal("--enable-webhooks=false"), "the last value of a repeated flag wins")
		})
	}
}

func kinds(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if !slices.Contains(out, o.GetKind()) {
			out = append(out, o.GetKind())
		}
	}
	return out
}

// renderRelease renders the chart in dir for a release and runs the Kustomize post-renderers over
// the manifest, as helm-controller does.
func renderRelease(g Gomega, dir, release, namespace string, values map[string]any, post []helmv2.PostRenderer) []*unstructured.Unstructured {
	ch, err := loader.LoadDir(dir)
	g.Expect(err).NotTo(HaveOccurred())
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.Replace = true, true, true
	install.ReleaseName, install.Namespace = release, namespace
	install.KubeVersion = &chartutil.KubeVersion{Version: testenv.K8sVersion, Major: "1", Minor: "37"}
	rel, err := install.Run(ch, values)
	g.Expect(err).NotTo(HaveOccurred())
	manifest := rel.Manifest
	for _, p := range post {
		if p.Kustomize == nil {
			continue
		}
		fs := filesys.MakeFsInMemory()
		g.Expect(fs.WriteFile("rendered.yaml", []byte(manifest))).To(Succeed())
		k := kustypes.Kustomization{TypeMeta: kustypes.TypeMeta{APIVersion: kustypes.KustomizationVersion, Kind: kustypes.KustomizationKind}, Resources: []string{"rendered.yaml"}}
		for _, patch := range p.Kustomize.Patches {
			kp := kustypes.Patch{Patch: patch.Patch}
			if s := patch.Target; s != nil {
				kp.Target = &kustypes.Selector{ResId: selectorID(s.Group, s.Version, s.Kind, s.Name, s.Namespace), LabelSelector: s.LabelSelector, AnnotationSelector: s.AnnotationSelector}
			}
			k.Patches = append(k.Patches, kp)
		}
		data, err := yaml.Marshal(k)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(fs.WriteFile("kustomization.yaml", data)).To(Succeed())
		opts := krusty.MakeDefaultOptions()
		resources, err := krusty.MakeKustomizer(opts).Run(fs, ".")
		g.Expect(err).NotTo(HaveOccurred())
		out, err := resources.AsYaml()
		g.Expect(err).NotTo(HaveOccurred())
		manifest = string(out)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		g.Expect(err).NotTo(HaveOccurred())
		if s := strings.TrimSpace(string(data)); s == "null" || s == "{}" || s == "" {
			continue
		}
		u := &unstructured.Unstructured{}
		g.Expect(u.UnmarshalJSON(data)).To(Succeed())
		objs = append(objs, u)
	}
	return objs
}

func selectorID(group, version, kind, name, namespace string) resid.ResId {
	return resid.ResId{Gvk: resid.Gvk{Group: group, Version: version, Kind: kind}, Name: name, Namespace: namespace}
}
