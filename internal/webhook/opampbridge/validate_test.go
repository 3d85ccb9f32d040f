package opampbridge

import (
	"fmt"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/otelop/otelop/api/v1alpha1"
)

func valid() *v1alpha1.OpAMPBridge {
	b := &v1alpha1.OpAMPBridge{Spec: v1alpha1.OpAMPBridgeSpec{
		Endpoint:     "ws://opamp-server:4320/v1/opamp",
		Capabilities: map[v1alpha1.OpAMPBridgeCapability]bool{v1alpha1.OpAMPBridgeCapabilityAcceptsRemoteConfig: true},
	}}
	b.Name, b.Namespace = "fleet", "observability"
	return b
}

func TestDefault(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*v1alpha1.OpAMPBridge)
		check  func(Gomega, *v1alpha1.OpAMPBridge)
	}{{
		name: "empty spec",
		mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Capabilities = nil
		},
		check: func(g Gomega, b *v1alpha1.OpAMPBridge) {
			g.Expect(b.Spec.UpgradeStrategy).To(Equal(v1alpha1.UpgradeStrategyAutomatic))
			g.Expect(b.Spec.Replicas).To(Equal(ptr.To[int32](1)))
			g.Expect(b.Spec.Capabilities).To(Equal(map[v1alpha1.OpAMPBridgeCapability]bool{"ReportsStatus": true}))
		},
	}, {
		name: "ReportsStatus false is forced on, the rest kept",
		mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Capabilities["ReportsStatus"] = false
			b.Spec.Replicas = ptr.To[int32](0)
			b.Spec.UpgradeStrategy = v1alpha1.UpgradeStrategyNone
		},
		check: func(g Gomega, b *v1alpha1.OpAMPBridge) {
			g.Expect(b.Spec.Capabilities).To(HaveKeyWithValue(v1alpha1.OpAMPBridgeCapability("ReportsStatus"), true))
			g.Expect(b.Spec.Capabilities).To(HaveKeyWithValue(v1alpha1.OpAMPBridgeCapabilityAcceptsRemoteConfig, true))
			g.Expect(*b.Spec.Replicas).To(Equal(int32(0)))
			g.Expect(b.Spec.UpgradeStrategy).To(Equal(v1alpha1.UpgradeStrategyNone))
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			b := valid()
			tt.mutate(b)
			ApplyDefaults(b)
			tt.check(g, b)
			again := b.DeepCopy()
			ApplyDefaults(again)
			g.Expect(again).To(Equal(b), "defaulting is idempotent")
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*v1alpha1.OpAMPBridge)
		errs     []string // "field: type" of each expected error, in order
		warnings int
	}{
		{name: "valid", mutate: func(*v1alpha1.OpAMPBridge) {}},
		{name: "env references in the endpoint", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "wss://${OPAMP_HOST}:4320/v1/opamp" }},
		{name: "https endpoint", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "https://opamp.example.com/v1/opamp" }},
		{name: "no endpoint", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "  " }, errs: []string{"spec.endpoint: Required value"}},
		{name: "endpoint without scheme", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "opamp-server:4320" }, errs: []string{"spec.endpoint: Invalid value"}},
		{name: "endpoint with another scheme", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "grpc://opamp-server:4320" }, errs: []string{"spec.endpoint: Invalid value"}},
		{name: "endpoint without host", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "ws:///v1/opamp" }, errs: []string{"spec.endpoint: Invalid value"}},
		{name: "unparsable endpoint", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Endpoint = "ws://[::1/v1" }, errs: []string{"spec.endpoint: Invalid value"}},
		{name: "no capabilities", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Capabilities = nil }, errs: []string{"spec.capabilities: Required value"}},
		{name: "unknown capability", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Capabilities["ReportsEverything"] = true }, errs: []string{"spec.capabilities[ReportsEverything]: Unsupported value"}},
		{name: "protocol capability not in the CRD enum is accepted", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Capabilities["ReportsHeartbeat"] = true }},
		// Issue 14, item 13: these make opamp-go's Start fail, so the bridge would crash-loop.
		{name: "capabilities the bridge cannot start with", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Capabilities["AcceptsPackages"] = true
			b.Spec.Capabilities["ReportsAvailableComponents"] = true
			b.Spec.Capabilities["ReportsPackageStatuses"] = false
		}, errs: []string{"spec.capabilities[AcceptsPackages]: Invalid value", "spec.capabilities[ReportsAvailableComponents]: Invalid value"}},
		{name: "proxy server TLS and token", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.ProxyServer = &v1alpha1.OpAMPBridgeProxyServer{TLSSecretName: "tls", BearerTokenSecret: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "tok"}, Key: "token"}}
			b.Spec.Namespaces = []string{"apps"}
		}},
		{name: "bad proxy server references and clashing volumes", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.ProxyServer = &v1alpha1.OpAMPBridgeProxyServer{TLSSecretName: "Not_A_Name", BearerTokenSecret: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "tok"}, Key: "a/b"}, MaxMessageBytes: ptr.To[int64](10)}
			b.Spec.Volumes = []corev1.Volume{{Name: "opamp-bridge-proxy-tls"}}
			b.Spec.VolumeMounts = []corev1.VolumeMount{{Name: "x", MountPath: "/etc/opamp-bridge/proxy-token"}}
			b.Spec.Namespaces = []string{"Apps"}
		}, errs: []string{
			"spec.proxyServer.tlsSecretName: Invalid value", "spec.proxyServer.bearerTokenSecret.key: Invalid value",
			"spec.proxyServer.maxMessageBytes: Invalid value", "spec.volumes[0].name: Invalid value", "spec.volumeMounts[0]: Invalid value",
			"spec.namespaces[0]: Invalid value",
		}},
		{name: "insecure and insecure_skip_verify", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.TLS = &v1alpha1.OpAMPBridgeTLSConfig{Insecure: true, InsecureSkipVerify: true}
		}, errs: []string{"spec.tls.insecure_skip_verify: Invalid value"}},
		{name: "unknown componentsAllowed section", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.ComponentsAllowed = map[string][]string{"receivers": {"otlp"}, "pipelines": {"traces"}}
		}, errs: []string{"spec.componentsAllowed[pipelines]: Unsupported value"}},
		{name: "negative replicas", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Replicas = ptr.To[int32](-1) }, errs: []string{"spec.replicas: Invalid value"}},
		{name: "several replicas run with leader election", mutate: func(b *v1alpha1.OpAMPBridge) { b.Spec.Replicas = ptr.To[int32](3) }, warnings: 1},
		{name: "bad ports", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Ports = []corev1.ServicePort{
				{Name: "Not_Valid", Port: 9000},
				{Name: "ok", Port: 70000},
				{Name: "opamp-bridge", Port: 9001},
				{Name: "web", Port: 80},
				{Name: "ok", Port: 9000},
			}
		}, errs: []string{
			"spec.ports[0].name: Invalid value", "spec.ports[1].port: Invalid value", "spec.ports[2].name: Duplicate value",
			"spec.ports[3].port: Duplicate value", "spec.ports[4].name: Duplicate value", "spec.ports[4].port: Duplicate value",
		}},
		{name: "every problem at once", mutate: func(b *v1alpha1.OpAMPBridge) {
			b.Spec.Endpoint = ""
			b.Spec.Capabilities = nil
			b.Spec.TLS = &v1alpha1.OpAMPBridgeTLSConfig{Insecure: true, InsecureSkipVerify: true}
		}, errs: []string{"spec.endpoint: Required value", "spec.tls.insecure_skip_verify: Invalid value", "spec.capabilities: Required value"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			b := valid()
			tt.mutate(b)
			errs, warnings := Validate(b)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field+": "+e.Type.String())
			}
			g.Expect(got).To(Equal(tt.errs), fmt.Sprint(errs))
			g.Expect(warnings).To(HaveLen(tt.warnings))
			for _, w := range warnings {
				g.Expect(strings.Contains(w, "leases")).To(BeTrue())
			}
		})
	}
}

// Endpoint errors reach kubectl, audit logs and Events: they must not repeat credentials.
func TestEndpointErrorsDoNotRepeatCredentials(t *testing.T) {
	g := NewWithT(t)
	for _, endpoint := range []string{
		"grpc://user:s3cret@opamp-server:4320/v1?token=t0ken",
		"ws://user:s3cret@[::1/v1?token=t0ken",
		"ws://user:s3cret@/v1?token=t0ken",
	} {
		b := valid()
		b.Spec.Endpoint = endpoint
		errs, _ := Validate(b)
		g.Expect(errs).NotTo(BeEmpty(), endpoint)
		msg := errs.ToAggregate().Error()
		g.Expect(msg).NotTo(ContainSubstring("s3cret"), msg)
		g.Expect(msg).NotTo(ContainSubstring("t0ken"), msg)
		g.Expect(msg).To(ContainSubstring("REDACTED"), msg)
	}
}

// The name is the bridge's --name and the opamp-managed label value: dots are fine, more than 63
// characters is refused at creation (issue 14, item 13).
func TestValidateName(t *testing.T) {
	g := NewWithT(t)
	b := valid()
	b.Name = "fleet.eu"
	g.Expect(ValidateName(b)).To(BeEmpty())
	b.Name = strings.Repeat("a", 64)
	errs := ValidateName(b)
	g.Expect(errs).To(HaveLen(1))
	g.Expect(errs[0].Field).To(Equal("metadata.name"))
}
