package flux

import (
	"strings"
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/serviceprovider/instance"
)

// testID is an instance ID as instance.ID makes them.
var testID = instance.ID("tenant", "cp")

// No admission webhooks from the workload release, whatever the user's values say: upstream's
// chart switch off, no cert-manager, no certificate Secret to mount, and the operator's own flag.
func TestWorkloadValuesWebhooksOff(t *testing.T) {
	aw := func(v map[string]any, path ...string) any {
		return get(v, append([]string{"opentelemetry-operator", "admissionWebhooks"}, path...)...)
	}
	for name, user := range map[string]map[string]any{
		"no user values": nil,
		"user turns webhooks and cert-manager on": {"opentelemetry-operator": map[string]any{"admissionWebhooks": map[string]any{
			"create": true, "certManager": map[string]any{"enabled": true}, "secretName": "mine",
		}, "manager": map[string]any{"extraArgs": []any{"--enable-webhooks=true", "--enable-webhooks"}}}},
	} {
		t.Run(name, func(t *testing.T) {
			g := NewWithT(t)
			v := WorkloadValues(user, nil, testID)
			g.Expect(aw(v, "create")).To(BeFalse())
			g.Expect(aw(v, "certManager", "enabled")).To(BeFalse())
			g.Expect(aw(v, "secretName")).To(Equal(""))
			args := get(v, "opentelemetry-operator", "manager", "extraArgs").([]any)
			g.Expect(args).To(ContainElement("--enable-webhooks=false"))
			g.Expect(args).NotTo(ContainElement(HavePrefix("--enable-webhooks=t")))
			g.Expect(args).NotTo(ContainElement("--enable-webhooks"))
		})
	}
}

// Names in the shared workload cluster come from the instance ID, in full; a user's
// fullnameOverride is refused with the field named.
func TestWorkloadNamesFromTheInstance(t *testing.T) {
	g := NewWithT(t)
	v := WorkloadValues(map[string]any{"nameOverride": "x"}, nil, testID)
	g.Expect(v["fullnameOverride"]).To(Equal("otel-operator-" + testID))
	g.Expect(get(v, "opentelemetry-operator", "fullnameOverride")).To(Equal("otel-operator-" + testID))
	g.Expect(len("otel-operator-"+testID)).To(BeNumerically("<=", 53), "a Helm release name")
	hr := WorkloadRelease(Inputs{Name: strings.Repeat("c", 60), InstanceID: testID})
	g.Expect(hr.Spec.ReleaseName).To(Equal("otel-operator-" + testID))
	for _, r := range []*helmv2.HelmRelease{hr, CRDsRelease(Inputs{Name: "cp", InstanceID: testID})} {
		g.Expect(r.Spec.Install.DisableTakeOwnership).To(BeTrue(), r.Name)
		g.Expect(r.Spec.Upgrade.DisableTakeOwnership).To(BeTrue(), r.Name)
	}
	other := WorkloadValues(nil, nil, instance.ID("other-project", "cp"))
	g.Expect(other["fullnameOverride"]).NotTo(Equal(v["fullnameOverride"]), "same CP name, another project")

	g.Expect(CheckValues("1.0.0", map[string]any{"nameOverride": "x"})).To(Succeed())
	g.Expect(CheckValues("1.0.0", map[string]any{"fullnameOverride": "shared"})).To(MatchError(ContainSubstring(`spec.versions["1.0.0"].helmValues.fullnameOverride: must not be set`)))
	g.Expect(CheckValues("1.0.0", map[string]any{"opentelemetry-operator": map[string]any{"fullnameOverride": "shared"}})).To(MatchError(ContainSubstring(`spec.versions["1.0.0"].helmValues.opentelemetry-operator.fullnameOverride: must not be set`)))
}

// The operator in the workload cluster talks only to the control plane: its Lease (and our
// operator's certificate Secret) must go to the control plane's operator namespace, not to its pod
// namespace (which does not exist there). The namespace comes from the ServiceAccount namespace
// file, which OperatorPatch mounts from the access Secret's namespace key, because upstream's
// operator has no flag for it and refuses unknown flags: the forced args are only those both
// operators have. The args are parsed with our operator's own flags.
func TestWorkloadValuesOperatorNamespaceIsTheControlPlanes(t *testing.T) {
	args := func(v map[string]any) []string {
		var out []string
		for _, a := range get(v, "opentelemetry-operator", "manager", "extraArgs").([]any) {
			out = append(out, a.(string))
		}
		return out
	}
	parse := func(g Gomega, args []string) {
		o := operator.DefaultOptions()
		fs := pflag.NewFlagSet("operator", pflag.ContinueOnError)
		o.BindFlags(fs)
		g.Expect(fs.Parse(args)).To(Succeed())
	}
	t.Run("defaults: only flags upstream's operator has too", func(t *testing.T) {
		g := NewWithT(t)
		a := args(WorkloadValues(nil, nil, testID))
		g.Expect(a).To(Equal([]string{"--enable-webhooks=false"}))
		parse(g, a)
	})
	t.Run("user args kept, user namespace flag removed", func(t *testing.T) {
		g := NewWithT(t)
		user := map[string]any{"opentelemetry-operator": map[string]any{"manager": map[string]any{
			"extraArgs": []any{"--sync-period=1h", "--webhook-cert-namespace=elsewhere", "--enable-webhooks=true"}}}}
		a := args(WorkloadValues(user, nil, testID))
		g.Expect(a).To(Equal([]string{"--sync-period=1h", "--enable-webhooks=false"}))
		parse(g, a)
	})
	t.Run("top-level extraArgs carried over", func(t *testing.T) {
		g := NewWithT(t)
		v := WorkloadValues(map[string]any{"manager": map[string]any{"extraArgs": []any{"--sync-period=1h"}}}, nil, testID)
		g.Expect(args(v)).To(Equal([]string{"--sync-period=1h", "--enable-webhooks=false"}))
	})
	t.Run("the namespace file, not the workload ServiceAccount", func(t *testing.T) {
		g := NewWithT(t)
		var d appsv1.Deployment
		g.Expect(yaml.UnmarshalStrict([]byte(OperatorPatch(false)), &d)).To(Succeed())
		spec := d.Spec.Template.Spec
		g.Expect(spec.AutomountServiceAccountToken).To(HaveValue(BeFalse()), "no workload token")
		g.Expect(spec.Containers[0].VolumeMounts).To(ContainElement(And(
			HaveField("Name", "otel-operator-cp-namespace"), HaveField("MountPath", ServiceAccountDir), HaveField("ReadOnly", true))))
		g.Expect(ServiceAccountDir + "/namespace").To(Equal("/var/run/secrets/kubernetes.io/serviceaccount/namespace"))
		var vol *corev1.Volume
		for i := range spec.Volumes {
			if spec.Volumes[i].Name == "otel-operator-cp-namespace" {
				vol = &spec.Volumes[i]
			}
		}
		g.Expect(vol).NotTo(BeNil())
		g.Expect(vol.Secret.SecretName).To(Equal(instance.CPAccessSecret))
		g.Expect(vol.Secret.Items).To(Equal([]corev1.KeyToPath{{Key: NamespaceKey, Path: "namespace"}}), "the namespace alone: no token or kubeconfig in the ServiceAccount folder")
	})
}

// The names the operator of an instance is given (the forced full name), which the provider must
// grant in the control plane.
func TestInstanceOperatorNames(t *testing.T) {
	g := NewWithT(t)
	full := "otel-operator-" + testID
	g.Expect(InstanceOperatorNames(testID, nil)).To(Equal(OperatorNames{WebhookCertSecret, full + "-mutation", full + "-validation"}))
	g.Expect(InstanceOperatorNames(testID, map[string]any{"opentelemetry-operator": map[string]any{"admissionWebhooks": map[string]any{"secretName": "s"}}})).
		To(Equal(OperatorNames{"s", full + "-mutation", full + "-validation"}))
}

// helmValues.namespaceOverride names the operator's control-plane namespace as in upstream's
// provider: only the namespace the provider's access covers is accepted; the operator chart's own
// namespaceOverride, which would move every instance into one workload namespace, is refused;
// neither reaches the workload release.
func TestNamespaceOverride(t *testing.T) {
	g := NewWithT(t)
	g.Expect(CheckValues("1.0.0", map[string]any{"namespaceOverride": instance.CPNamespace})).To(Succeed())
	g.Expect(CheckValues("1.0.0", map[string]any{"namespaceOverride": "kube-system"})).To(MatchError(And(
		ContainSubstring(`spec.versions["1.0.0"].helmValues.namespaceOverride: kube-system is not allowed`), ContainSubstring(instance.CPNamespace))))
	g.Expect(CheckValues("1.0.0", map[string]any{"opentelemetry-operator": map[string]any{"namespaceOverride": "shared"}})).To(MatchError(
		ContainSubstring(`spec.versions["1.0.0"].helmValues.opentelemetry-operator.namespaceOverride: must not be set`)))
	v := WorkloadValues(map[string]any{"namespaceOverride": instance.CPNamespace}, nil, testID)
	g.Expect(v).NotTo(HaveKey("namespaceOverride"))
	g.Expect(get(v, "opentelemetry-operator", "namespaceOverride")).To(BeNil())
}
