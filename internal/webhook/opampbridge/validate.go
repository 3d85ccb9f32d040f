package opampbridge

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"github.com/open-telemetry/opamp-go/protobufs"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1alpha1"
	mbridge "github.com/otelop/otelop/internal/manifests/opampbridge"
	"github.com/otelop/otelop/internal/redact"
)

var specPath = field.NewPath("spec")

// endpointSchemes are the URL schemes the bridge can connect with: WebSocket or HTTP, plain or TLS.
var endpointSchemes = []string{"ws", "wss", "http", "https"}

// componentKinds are the sections of a collector configuration componentsAllowed may restrict (the
// bridge refuses any other key).
var componentKinds = []string{"connectors", "exporters", "extensions", "processors", "receivers"}

// Validate returns every problem of bridge with its field path, and warnings. It accepts what the
// bridge daemon accepts: an endpoint it can dial, capability names of the OpAMP protocol, known
// componentsAllowed sections, and Service ports that do not clash with the generated one. More
// than one replica is allowed: the bridge then runs with leader election.
func Validate(bridge *v1alpha1.OpAMPBridge) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	spec := bridge.Spec
	errs = append(errs, validateEndpoint(spec.Endpoint, specPath.Child("endpoint"))...)
	if spec.TLS != nil && spec.TLS.Insecure && spec.TLS.InsecureSkipVerify {
		errs = append(errs, field.Invalid(specPath.Child("tls", "insecure_skip_verify"), true,
			"insecure turns TLS off and insecure_skip_verify keeps it without verification; set only one"))
	}
	errs = append(errs, validateCapabilities(spec.Capabilities, specPath.Child("capabilities"))...)
	for _, kind := range sortedKeys(spec.ComponentsAllowed) {
		if !contains(componentKinds, kind) {
			errs = append(errs, field.NotSupported(specPath.Child("componentsAllowed").Key(kind), kind, componentKinds))
		}
	}
	if r := spec.Replicas; r != nil {
		switch {
		case *r < 0:
			errs = append(errs, field.Invalid(specPath.Child("replicas"), *r, "must not be negative"))
		case *r > 1:
			warnings = append(warnings, fmt.Sprintf("spec.replicas: %d replicas run with leader election: only the holder of Lease %s/%s talks to the OpAMP server; "+
				"ServiceAccount %s needs get, create and update on coordination.k8s.io leases in namespace %s",
				*r, bridge.Namespace, mbridge.Name(bridge.Name), mbridge.ServiceAccountName(*bridge), bridge.Namespace))
		}
	}
	errs = append(errs, validatePorts(spec, specPath.Child("ports"))...)
	errs = append(errs, validateProxyServer(spec, specPath.Child("proxyServer"))...)
	for i, ns := range spec.Namespaces {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			errs = append(errs, field.Invalid(specPath.Child("namespaces").Index(i), ns, strings.Join(msgs, "; ")))
		}
	}
	return errs, warnings
}

// validateProxyServer checks the Secret references of spec.proxyServer, and that spec.volumes
// and spec.volumeMounts do not take the names and paths the operator mounts them at.
func validateProxyServer(spec v1alpha1.OpAMPBridgeSpec, p *field.Path) field.ErrorList {
	ps := spec.ProxyServer
	if ps == nil {
		return nil
	}
	var errs field.ErrorList
	var reserved []string
	if ps.TLSSecretName != "" {
		reserved = append(reserved, mbridge.ProxyTLSVolume)
		if msgs := validation.IsDNS1123Subdomain(ps.TLSSecretName); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("tlsSecretName"), ps.TLSSecretName, strings.Join(msgs, "; ")))
		}
	}
	if ref := ps.BearerTokenSecret; ref != nil {
		reserved = append(reserved, mbridge.ProxyTokenVolume)
		if msgs := validation.IsDNS1123Subdomain(ref.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("bearerTokenSecret", "name"), ref.Name, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsConfigMapKey(ref.Key); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("bearerTokenSecret", "key"), ref.Key, strings.Join(msgs, "; ")))
		}
	}
	if ps.MaxMessageBytes != nil && *ps.MaxMessageBytes < 1024 {
		errs = append(errs, field.Invalid(p.Child("maxMessageBytes"), *ps.MaxMessageBytes, "must be at least 1024"))
	}
	for i, v := range spec.Volumes {
		if contains(reserved, v.Name) {
			errs = append(errs, field.Invalid(specPath.Child("volumes").Index(i).Child("name"), v.Name, "is the volume spec.proxyServer mounts; pick another name"))
		}
	}
	for i, m := range spec.VolumeMounts {
		if contains(reserved, m.Name) || strings.HasPrefix(m.MountPath+"/", "/etc/opamp-bridge/") {
			errs = append(errs, field.Invalid(specPath.Child("volumeMounts").Index(i), m.Name+" at "+m.MountPath,
				"/etc/opamp-bridge and the spec.proxyServer volumes are the operator's"))
		}
	}
	return errs
}

// ValidateName checks, at creation, that the bridge's name can be its --name: the value of the
// opentelemetry.io/opamp-managed label (dots are fine, at most 63 characters).
func ValidateName(bridge *v1alpha1.OpAMPBridge) field.ErrorList {
	msgs := v1alpha1.ValidateOpAMPBridgeName(bridge.Name)
	if len(msgs) == 0 || bridge.Name == "" {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), bridge.Name,
		"the bridge runs with --name=<name>, the value of the opentelemetry.io/opamp-managed label: "+strings.Join(msgs, "; "))}
}

// validateEndpoint requires a ws, wss, http or https URL with a host. ${VAR} references are
// expanded by the bridge from its environment, so they are accepted anywhere.
func validateEndpoint(endpoint string, p *field.Path) field.ErrorList {
	if strings.TrimSpace(endpoint) == "" {
		return field.ErrorList{field.Required(p, "the OpAMP server endpoint is not specified")}
	}
	expanded := os.Expand(endpoint, func(string) string { return "env" })
	// Errors repeat the endpoint without user information or query (they may hold credentials).
	shown := redact.Endpoint(endpoint)
	u, err := url.Parse(expanded)
	if err != nil {
		why := err
		var uerr *url.Error
		if errors.As(err, &uerr) {
			why = uerr.Err // url.Error quotes the whole URL
		}
		return field.ErrorList{field.Invalid(p, shown, fmt.Sprintf("not a valid URL: %v", why))}
	}
	if !contains(endpointSchemes, u.Scheme) {
		return field.ErrorList{field.Invalid(p, shown, "the scheme must be ws, wss, http or https")}
	}
	if u.Host == "" {
		return field.ErrorList{field.Invalid(p, shown, "the URL has no host")}
	}
	return nil
}

// validateCapabilities requires at least one capability and only the protocol's capability names.
func validateCapabilities(caps map[v1alpha1.OpAMPBridgeCapability]bool, p *field.Path) field.ErrorList {
	if len(caps) == 0 {
		return field.ErrorList{field.Required(p, "the capabilities supported by the OpAMP bridge are not specified")}
	}
	var errs field.ErrorList
	for _, name := range sortedKeys(caps) {
		if _, ok := protobufs.AgentCapabilities_value["AgentCapabilities_"+string(name)]; !ok || name == "Unspecified" {
			errs = append(errs, field.NotSupported(p.Key(string(name)), string(name), capabilityNames()))
		} else if why, bad := v1alpha1.OpAMPBridgeUnstartableCapabilities[string(name)]; bad && caps[name] {
			errs = append(errs, field.Invalid(p.Key(string(name)), true, "cannot be turned on: "+why))
		}
	}
	return errs
}

// validatePorts checks each spec.ports entry's name and number, and that none clashes with
// another or with the generated "opamp-bridge" port 80.
func validatePorts(spec v1alpha1.OpAMPBridgeSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names := map[string]bool{mbridge.ServicePortName: true}
	numbers := map[int32]bool{mbridge.ServicePort: true}
	for i, port := range spec.Ports {
		pp := p.Index(i)
		if msgs := validation.IsValidPortName(port.Name); len(msgs) > 0 {
			errs = append(errs, field.Invalid(pp.Child("name"), port.Name, strings.Join(msgs, "; ")))
		} else if names[port.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
		}
		if msgs := validation.IsValidPortNum(int(port.Port)); len(msgs) > 0 {
			errs = append(errs, field.Invalid(pp.Child("port"), port.Port, strings.Join(msgs, "; ")))
		} else if numbers[port.Port] {
			errs = append(errs, field.Duplicate(pp.Child("port"), port.Port))
		}
		names[port.Name] = true
		numbers[port.Port] = true
	}
	return errs
}

func capabilityNames() []string {
	var out []string
	for name, v := range protobufs.AgentCapabilities_value {
		if v != 0 {
			out = append(out, strings.TrimPrefix(name, "AgentCapabilities_"))
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[K ~string, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
