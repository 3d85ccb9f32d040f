package targetallocator

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
	"github.com/otelop/otelop/internal/naming"
)

// Mutual TLS between the collectors and the target allocator, with upstream's names, ports and
// paths: the allocator serves its API a second time on https (8443, Service port 443) and serves
// scrape secrets in clear only there, to clients with a certificate its CA issued.
const (
	// HTTPSPortName and HTTPSPort are the target allocator's TLS listener.
	HTTPSPortName = "https"
	HTTPSPort     = 8443
	// HTTPSServicePortName and HTTPSServicePort are the Service port collectors use for mTLS.
	HTTPSServicePortName = "targetallocation-https"
	HTTPSServicePort     = 443
	// TLSMountPath is where the server certificate Secret is mounted in the allocator and the client
	// certificate Secret in the collector (ca.crt, tls.crt, tls.key).
	TLSMountPath = "/tls"
	// SecretCAKey, SecretCertKey and SecretKeyKey are the keys of the certificate Secrets
	// (cert-manager's, so that a Secret cert-manager writes under the same name works too).
	SecretCAKey   = "ca.crt"
	SecretCertKey = "tls.crt"
	SecretKeyKey  = "tls.key"
)

// MTLSEnabled reports whether the collectors talk to the target allocator over mutual TLS: see
// manifestutils.TargetAllocatorMTLS, the rule the collector builder applies too.
func MTLSEnabled(mtls *v1beta1.TargetAllocatorMTLS, prometheusCR bool, gate bool) bool {
	return manifestutils.TargetAllocatorMTLS(mtls, prometheusCR, gate)
}

// mtls reports whether s's target allocator uses mutual TLS.
func (s *state) mtls() bool {
	return MTLSEnabled(s.ta.Spec.Mtls, s.ta.Spec.PrometheusCR.Enabled, s.opts.MTLS)
}

// CASecretName returns "<name>-ca-cert": the CA the operator keeps for the target allocator called
// name (the Secret name upstream's cert-manager CA Certificate writes).
func CASecretName(name string) string { return naming.DNSName(naming.Truncate("%s-ca-cert", 63, name)) }

// ServerSecretName returns "<name>-ta-server-cert": the allocator's serving certificate.
func ServerSecretName(name string) string {
	return naming.DNSName(naming.Truncate("%s-ta-server-cert", 63, name))
}

// ClientSecretName returns "<name>-ta-client-cert": the certificate the collectors of the
// allocator called name present (the collector's volume of the same name mounts it).
func ClientSecretName(name string) string { return naming.TAClientCertificate(name) }

// ServerDNSNames are the names the serving certificate is valid for: the Service, short and
// qualified.
func ServerDNSNames(ta v1alpha1.TargetAllocator) []string {
	svc := Name(ta.Name)
	return []string{svc, fmt.Sprintf("%s.%s.svc", svc, ta.Namespace), fmt.Sprintf("%s.%s.svc.cluster.local", svc, ta.Namespace)}
}

// CertSecrets are the data of the three Secrets the operator issues for a target allocator's
// mutual TLS; see CertificateSecrets. A nil map means the Secret is not the operator's (cert-manager
// or the user writes it) and is left alone.
type CertSecrets struct {
	CA, Server, Client map[string][]byte
}

// CertificateSecrets returns the Secrets of ta's mutual TLS with the given data: "<name>-ca-cert"
// (the CA's certificate and key), "<name>-ta-server-cert" and "<name>-ta-client-cert" (a
// certificate, its key and the CA bundle in ca.crt), typed kubernetes.io/tls, labelled like every
// generated object. Nothing when mutual TLS is off.
func CertificateSecrets(ta v1alpha1.TargetAllocator, data CertSecrets, opts Options) ([]*corev1.Secret, error) {
	s, err := newState(ta, opts)
	if err != nil || !s.mtls() {
		return nil, err
	}
	var out []*corev1.Secret
	for _, sec := range []struct {
		name string
		data map[string][]byte
	}{{CASecretName(ta.Name), data.CA}, {ServerSecretName(ta.Name), data.Server}, {ClientSecretName(ta.Name), data.Client}} {
		if sec.data == nil {
			continue
		}
		out = append(out, &corev1.Secret{
			TypeMeta:   typeMeta(corev1.SchemeGroupVersion, "Secret"),
			ObjectMeta: s.meta(sec.name),
			Type:       corev1.SecretTypeTLS,
			Data:       sec.data,
		})
	}
	return out, nil
}

// httpsSection is the file's https section with mutual TLS.
func httpsSection() map[string]any {
	return map[string]any{
		"enabled":            true,
		"listen_addr":        fmt.Sprintf(":%d", HTTPSPort),
		"ca_file_path":       TLSMountPath + "/" + SecretCAKey,
		"tls_cert_file_path": TLSMountPath + "/" + SecretCertKey,
		"tls_key_file_path":  TLSMountPath + "/" + SecretKeyKey,
	}
}

// serverCertVolume mounts the serving certificate Secret.
func (s *state) serverCertVolume() corev1.Volume {
	return corev1.Volume{Name: ServerSecretName(s.ta.Name), VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: ServerSecretName(s.ta.Name)},
	}}
}

func (s *state) serverCertMount() corev1.VolumeMount {
	return corev1.VolumeMount{Name: ServerSecretName(s.ta.Name), MountPath: TLSMountPath, ReadOnly: true}
}

func httpsContainerPort() corev1.ContainerPort {
	return corev1.ContainerPort{Name: HTTPSPortName, ContainerPort: HTTPSPort, Protocol: corev1.ProtocolTCP}
}

func httpsServicePort() corev1.ServicePort {
	return corev1.ServicePort{Name: HTTPSServicePortName, Port: HTTPSServicePort, TargetPort: intstr.FromString(HTTPSPortName)}
}
