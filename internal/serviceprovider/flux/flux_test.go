package flux

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

func inputs() Inputs {
	return Inputs{
		Name: "cp", PlatformNamespace: "mcp--x", InstanceID: "abc", Version: "0.20.8",
		ChartURL: "oci://example/chart", Interval: time.Minute,
		CPKubeconfigSecret: "cp-secret", WorkloadKubeconfigSecret: "wl-secret",
		Values:      map[string]any{"opentelemetry-operator": map[string]any{"manager": map[string]any{"x": 1.0}}, "kubeStateMetrics": map[string]any{"enabled": true}},
		PullSecrets: []string{"regcred"},
	}
}

func TestParseValues(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		wantErr string
		want    map[string]any
	}{
		{name: "nil", raw: "", want: map[string]any{}},
		{name: "null", raw: "null", want: map[string]any{}},
		{name: "object", raw: `{"a":{"b":1}}`, want: map[string]any{"a": map[string]any{"b": 1.0}}},
		{name: "list", raw: `[1]`, wantErr: `spec.versions["1.0"].helmValues: must be an object of Helm values`},
		{name: "string", raw: `"x"`, wantErr: `must be an object`},
		{name: "broken", raw: `{`, wantErr: `spec.versions["1.0"].helmValues: not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var raw *apiextensionsv1.JSON
			if tt.raw != "" {
				raw = &apiextensionsv1.JSON{Raw: []byte(tt.raw)}
			}
			got, err := ParseValues("1.0", raw)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestImagePullSecrets(t *testing.T) {
	tests := []struct {
		name    string
		values  string
		want    []string
		wantErr string
	}{
		{name: "none", values: `{}`, want: nil},
		{name: "top level", values: `{"imagePullSecrets":[{"name":"a"},{"name":"b"}]}`, want: []string{"a", "b"}},
		{name: "global and dedup", values: `{"imagePullSecrets":[{"name":"a"}],"global":{"imagePullSecrets":["a","c"]}}`, want: []string{"a", "c"}},
		{name: "not a list", values: `{"imagePullSecrets":"a"}`, wantErr: `spec.versions["1.0"].helmValues.imagePullSecrets: must be a list`},
		{name: "no name", values: `{"imagePullSecrets":[{"nom":"a"}]}`, wantErr: `helmValues.imagePullSecrets[0]: must be {name:`},
		{name: "bad global", values: `{"global":{"imagePullSecrets":[{}]}}`, wantErr: `helmValues.global.imagePullSecrets[0]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			v, err := ParseValues("1.0", &apiextensionsv1.JSON{Raw: []byte(tt.values)})
			g.Expect(err).NotTo(HaveOccurred())
			got, err := ImagePullSecrets("1.0", v)
			if tt.wantErr != "" {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tt.want))
		})
	}
}

func TestWorkloadValuesForceComponentsAndKeepUserValues(t *testing.T) {
	g := NewWithT(t)
	user := map[string]any{"kubeStateMetrics": map[string]any{"enabled": true}, "crds": "garbage",
		"opentelemetry-operator": map[string]any{"manager": map[string]any{"image": "x"}}}
	v := WorkloadValues(user, []string{"regcred"}, testID)
	g.Expect(v["kubeStateMetrics"]).To(Equal(map[string]any{"enabled": false}))
	g.Expect(v["crds"]).To(Equal(map[string]any{"installOtel": false, "installPrometheus": false}))
	op := v["opentelemetry-operator"].(map[string]any)
	g.Expect(op["enabled"]).To(BeTrue())
	g.Expect(op["crds"]).To(Equal(map[string]any{"create": false}))
	g.Expect(op["manager"]).To(Equal(map[string]any{"image": "x", "extraArgs": []any{"--enable-webhooks=false"}}))
	g.Expect(op["imagePullSecrets"]).To(Equal([]any{map[string]any{"name": "regcred"}}))
	// The input is not modified.
	g.Expect(user["kubeStateMetrics"]).To(Equal(map[string]any{"enabled": true}))
	g.Expect(user["crds"]).To(Equal("garbage"))
	// A user's own operator imagePullSecrets win.
	v = WorkloadValues(map[string]any{"opentelemetry-operator": map[string]any{"imagePullSecrets": []any{"mine"}}}, []string{"regcred"}, testID)
	g.Expect(v["opentelemetry-operator"].(map[string]any)["imagePullSecrets"]).To(Equal([]any{"mine"}))
}

func TestCRDsValuesInstallOnlyCRDs(t *testing.T) {
	g := NewWithT(t)
	v := CRDsValues()
	g.Expect(v["crds"]).To(HaveKeyWithValue("installOtel", true))
	g.Expect(v["opentelemetry-operator"]).To(HaveKeyWithValue("enabled", false))
	for _, c := range componentsOff {
		g.Expect(v[c]).To(HaveKeyWithValue("enabled", false), c)
	}
}

func TestOCIRepository(t *testing.T) {
	tests := []struct {
		name       string
		pullSecret string
		insecure   bool
		caSecret   string
	}{
		{name: "without pull secret"},
		{name: "with pull secret", pullSecret: "sp-otelop-cp"},
		{name: "plain HTTP registry", insecure: true},
		{name: "registry with a private CA", pullSecret: "sp-otelop-cp", caSecret: "sp-otelop-cp-ca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in := inputs()
			in.ChartPullSecret, in.ChartInsecure, in.ChartCASecret = tt.pullSecret, tt.insecure, tt.caSecret
			r := OCIRepository(in)
			g.Expect(r.Name).To(Equal("cp"))
			g.Expect(r.Namespace).To(Equal("mcp--x"))
			g.Expect(r.Kind).To(Equal("OCIRepository"))
			g.Expect(r.Spec.URL).To(Equal("oci://example/chart"))
			g.Expect(r.Spec.Reference.Tag).To(Equal("0.20.8"))
			g.Expect(r.Spec.LayerSelector.MediaType).To(Equal(HelmChartLayer))
			g.Expect(r.Spec.Interval.Duration).To(Equal(time.Minute))
			g.Expect(r.Labels).To(HaveKeyWithValue(instance.ManagedByLabel, instance.ManagedByValue))
			if tt.pullSecret == "" {
				g.Expect(r.Spec.SecretRef).To(BeNil())
			} else {
				g.Expect(r.Spec.SecretRef.Name).To(Equal(tt.pullSecret))
			}
			g.Expect(r.Spec.Insecure).To(Equal(tt.insecure))
			if tt.caSecret == "" {
				g.Expect(r.Spec.CertSecretRef).To(BeNil())
			} else {
				g.Expect(r.Spec.CertSecretRef.Name).To(Equal(tt.caSecret))
			}
			// What the applier sends: insecure is left out when false, so turning it off removes
			// the field the provider owned.
			raw, err := json.Marshal(r.Spec)
			g.Expect(err).NotTo(HaveOccurred())
			if tt.insecure {
				g.Expect(string(raw)).To(ContainSubstring(`"insecure":true`))
			} else {
				g.Expect(string(raw)).NotTo(ContainSubstring(`insecure`))
			}
		})
	}
}

func TestReleases(t *testing.T) {
	g := NewWithT(t)
	in := inputs()
	crds := CRDsRelease(in)
	wl := WorkloadRelease(in)

	g.Expect(crds.Name).To(Equal("cp-crds"))
	g.Expect(crds.Spec.KubeConfig.SecretRef.Name).To(Equal("cp-secret"))
	g.Expect(crds.Spec.KubeConfig.SecretRef.Key).To(Equal("kubeconfig"))
	g.Expect(crds.Spec.TargetNamespace).To(Equal(instance.CPNamespace))
	g.Expect(*crds.Spec.Uninstall.DeletionPropagation).To(Equal("orphan"))
	g.Expect(crds.Spec.DependsOn).To(BeEmpty())
	g.Expect(crds.Spec.PostRenderers).To(BeEmpty())
	g.Expect(string(crds.Spec.Install.CRDs)).To(Equal("Create"))
	g.Expect(string(crds.Spec.Upgrade.CRDs)).To(Equal("CreateReplace"))
	var cv map[string]any
	g.Expect(json.Unmarshal(crds.Spec.Values.Raw, &cv)).To(Succeed())
	g.Expect(cv["kubeStateMetrics"]).To(HaveKeyWithValue("enabled", false), "user values are not used for the CRDs release")

	g.Expect(wl.Name).To(Equal("cp-workload"))
	g.Expect(wl.Spec.KubeConfig.SecretRef.Name).To(Equal("wl-secret"))
	g.Expect(wl.Spec.TargetNamespace).To(Equal("otel-operator-abc"))
	g.Expect(wl.Spec.StorageNamespace).To(Equal("otel-operator-abc"))
	g.Expect(wl.Spec.DependsOn).To(HaveLen(1))
	g.Expect(wl.Spec.DependsOn[0].Name).To(Equal("cp-crds"))
	g.Expect(wl.Spec.Uninstall).To(BeNil())
	g.Expect(wl.Spec.PostRenderers).To(HaveLen(1))
	for _, hr := range []string{crds.Spec.ChartRef.Name, wl.Spec.ChartRef.Name} {
		g.Expect(hr).To(Equal("cp"))
	}
	g.Expect(wl.Spec.Install.CreateNamespace).To(BeTrue())
	g.Expect(wl.Spec.Install.Remediation.Retries).To(Equal(3))
}

func TestOperatorPatch(t *testing.T) {
	tests := []struct {
		name     string
		caBundle bool
	}{{"kubeconfig only", false}, {"with CA bundle", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			var d appsv1.Deployment
			g.Expect(yaml.UnmarshalStrict([]byte(OperatorPatch(tt.caBundle)), &d)).To(Succeed())
			c := d.Spec.Template.Spec.Containers[0]
			g.Expect(c.Name).To(Equal("manager"))
			g.Expect(c.Env[0].Name).To(Equal("KUBECONFIG"))
			g.Expect(c.Env[0].Value).To(Equal(CPAccessMountPath + "/kubeconfig"))
			g.Expect(c.VolumeMounts[0].SubPath).To(BeEmpty(), "a subPath mount would never see the refreshed token")
			g.Expect(d.Spec.Template.Spec.Volumes[0].Secret.SecretName).To(Equal(instance.CPAccessSecret))
			// [1] is the namespace file (TestWorkloadValuesOperatorNamespaceIsTheControlPlanes).
			g.Expect(d.Spec.Template.Spec.Volumes[1].Secret.SecretName).To(Equal(instance.CPAccessSecret))
			if tt.caBundle {
				g.Expect(c.Env).To(HaveLen(2))
				g.Expect(c.Env[1].Value).To(ContainSubstring(CABundleMountPath))
				g.Expect(d.Spec.Template.Spec.Volumes[2].ConfigMap.Name).To(Equal(instance.CABundleConfigMap))
			} else {
				g.Expect(c.Env).To(HaveLen(1))
				g.Expect(d.Spec.Template.Spec.Volumes).To(HaveLen(2))
			}
		})
	}
}
