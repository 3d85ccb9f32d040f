package opampbridge

import (
	"crypto/sha256"
	"encoding/hex"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
)

// ConfigFile renders the bridge's remoteconfiguration.yaml from the spec, with upstream's keys and
// layout (keys sorted, two-space indentation): endpoint, tls, headers, capabilities,
// componentsAllowed and description, each only when set; plus, when set, this project's
// proxyServer (from spec.proxyServer) and namespaces. The bridge's name and heartbeat interval
// are passed as flags instead, so that the file stays what upstream generates.
func ConfigFile(bridge v1alpha1.OpAMPBridge) ([]byte, error) {
	spec := bridge.Spec
	cfg := map[string]any{}
	if spec.Endpoint != "" {
		cfg["endpoint"] = spec.Endpoint
	}
	if spec.TLS != nil {
		cfg["tls"] = spec.TLS
	}
	if len(spec.Headers) > 0 {
		cfg["headers"] = spec.Headers
	}
	if spec.Capabilities != nil {
		cfg["capabilities"] = spec.Capabilities
	}
	if spec.ComponentsAllowed != nil {
		cfg["componentsAllowed"] = spec.ComponentsAllowed
	}
	if ps := proxyServer(spec.ProxyServer); ps != nil {
		cfg["proxyServer"] = ps
	}
	if len(spec.Namespaces) > 0 {
		cfg["namespaces"] = spec.Namespaces
	}
	if spec.Description != nil {
		attrs := spec.Description.NonIdentifyingAttributes
		if attrs == nil {
			attrs = map[string]string{}
		}
		cfg["description"] = map[string]any{"non_identifying_attributes": attrs}
	}
	return yaml.Marshal(cfg)
}

// proxyServer is the file's proxyServer block (this project's bridge only): the mounted Secrets'
// paths and the message size limit; nil when spec.proxyServer sets nothing.
func proxyServer(ps *v1alpha1.OpAMPBridgeProxyServer) map[string]any {
	if ps == nil {
		return nil
	}
	out := map[string]any{}
	if ps.TLSSecretName != "" {
		out["cert_file"] = ProxyTLSMountPath + "/tls.crt"
		out["key_file"] = ProxyTLSMountPath + "/tls.key"
	}
	if ps.BearerTokenSecret != nil {
		out["bearerTokenFile"] = ProxyTokenMountPath + "/token"
	}
	if ps.MaxMessageBytes != nil {
		out["maxMessageBytes"] = *ps.MaxMessageBytes
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// configMap holds remoteconfiguration.yaml.
func (s *state) configMap() (*corev1.ConfigMap, error) {
	data, err := ConfigFile(s.bridge)
	if err != nil {
		return nil, err
	}
	return &corev1.ConfigMap{
		TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "ConfigMap"),
		ObjectMeta: s.meta(),
		Data:       map[string]string{ConfigMapKey: string(data)},
	}, nil
}

// configHash is the sha256 of the configuration file, as upstream computes it.
func configHash(cm *corev1.ConfigMap) string {
	sum := sha256.Sum256([]byte(cm.Data[ConfigMapKey]))
	return hex.EncodeToString(sum[:])
}
