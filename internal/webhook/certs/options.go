// Package certs provides the webhook server's TLS certificate without cert-manager: it keeps a
// self-signed CA and a serving certificate in a Secret, writes them into the webhook server's cert
// dir, renews them before they expire and injects the CA bundle into the webhook configurations
// and CRD conversion settings it is told about by name.
package certs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Mode says who provides the webhook serving certificate.
type Mode string

const (
	// ModeSelf means the operator creates, stores, rotates and injects the certificate itself.
	ModeSelf Mode = "self"
	// ModeCertManager means cert-manager issues the certificate into a mounted Secret and its
	// cainjector injects the CA bundle; the operator does nothing.
	ModeCertManager Mode = "cert-manager"
	// ModeFiles means the certificate files are provided in the cert dir by other means; the
	// operator does nothing.
	ModeFiles Mode = "files"
)

// Defaults.
const (
	DefaultSecretName   = "opentelemetry-operator-webhook-cert"
	DefaultServiceName  = "opentelemetry-operator-webhook-service"
	DefaultValidity     = 365 * 24 * time.Hour
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultSyncInterval = 10 * time.Minute
	DefaultTrustDelay   = time.Minute
	// CertFile and KeyFile are the names controller-runtime's webhook server reads by default.
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// Options configure the certificate management.
type Options struct {
	// Mode is self, cert-manager or files; empty means files (nothing to do).
	Mode Mode
	// Namespace of the operator: holds the Secret and the webhook Service.
	Namespace string
	// SecretName of the Secret holding the CA and serving certificate.
	SecretName string
	// ServiceName of the webhook Service; the certificate is valid for <svc>.<ns>.svc and
	// <svc>.<ns>.svc.cluster.local.
	ServiceName string
	// ExtraDNSNames and ExtraIPs are added to the serving certificate.
	ExtraDNSNames []string
	ExtraIPs      []net.IP
	// CertDir is the webhook server's certificate directory; tls.crt and tls.key are written there.
	// Empty means DefaultCertDir; the webhook server must be given the same directory.
	CertDir string
	// Validity of the serving certificate and of the CA. Both are renewed when less than a third
	// of their validity is left.
	Validity, CAValidity time.Duration
	// SyncInterval is how often the Secret, the files and the injected bundles are checked.
	SyncInterval time.Duration
	// TrustDelay is how long a new CA is in the injected bundles before replicas that serve a
	// still-valid certificate switch to one it issued: the API servers see bundle changes through
	// watches, not at once.
	TrustDelay time.Duration
	// MutatingWebhookConfigurations, ValidatingWebhookConfigurations and CRDs name the objects
	// whose CA bundle is kept equal to the CA; nothing else is touched. Missing objects are skipped.
	MutatingWebhookConfigurations   []string
	ValidatingWebhookConfigurations []string
	CRDs                            []string
}

// Object names of upstream's default install (kustomize prefix "opentelemetry-operator-").
const (
	DefaultMutatingWebhookConfiguration   = "opentelemetry-operator-mutating-webhook-configuration"
	DefaultValidatingWebhookConfiguration = "opentelemetry-operator-validating-webhook-configuration"
	// CollectorCRD is the only CRD with a conversion webhook (v1alpha1 <-> v1beta1).
	CollectorCRD = "opentelemetrycollectors.opentelemetry.io"
)

// serviceAccountNamespaceFile holds the pod's namespace in a cluster.
const serviceAccountNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// DefaultOptions returns self mode for upstream's default object names; Namespace is read from
// the pod's service account when left empty.
func DefaultOptions() Options {
	return Options{
		Mode:                            ModeSelf,
		SecretName:                      DefaultSecretName,
		ServiceName:                     DefaultServiceName,
		Validity:                        DefaultValidity,
		TrustDelay:                      DefaultTrustDelay,
		MutatingWebhookConfigurations:   []string{DefaultMutatingWebhookConfiguration},
		ValidatingWebhookConfigurations: []string{DefaultValidatingWebhookConfiguration},
		CRDs:                            []string{CollectorCRD},
	}
}

// BindFlags registers the certificate flags on fs.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.StringVar((*string)(&o.Mode), "webhook-cert-mode", string(o.Mode),
		"Who provides the webhook serving certificate: \"self\" (the operator creates a CA and certificate in a Secret, rotates them and injects the CA bundle), \"cert-manager\" (cert-manager issues and injects it), or \"files\" (tls.crt and tls.key are already in the cert dir).")
	fs.StringVar(&o.Namespace, "webhook-cert-namespace", o.Namespace,
		"With --webhook-cert-mode=self: the operator's namespace, holding the Secret and the webhook Service; empty reads it from the pod's service account.")
	fs.StringVar(&o.SecretName, "webhook-cert-secret", o.SecretName,
		"With --webhook-cert-mode=self: the Secret in the operator's namespace that stores the CA and serving certificate.")
	fs.StringVar(&o.ServiceName, "webhook-service-name", o.ServiceName,
		"With --webhook-cert-mode=self: the webhook Service whose DNS names the serving certificate carries.")
	fs.StringSliceVar(&o.ExtraDNSNames, "webhook-cert-extra-dns-names", o.ExtraDNSNames,
		"With --webhook-cert-mode=self: additional DNS names for the serving certificate (comma-separated).")
	fs.IPSliceVar(&o.ExtraIPs, "webhook-cert-extra-ips", o.ExtraIPs,
		"With --webhook-cert-mode=self: IP addresses for the serving certificate (comma-separated).")
	fs.StringVar(&o.CertDir, "webhook-cert-dir", o.CertDir,
		"Directory the webhook server reads tls.crt and tls.key from.")
	fs.DurationVar(&o.Validity, "webhook-cert-validity", o.Validity,
		"With --webhook-cert-mode=self: validity of the serving certificate; it is renewed when a third of it is left.")
	fs.DurationVar(&o.TrustDelay, "webhook-cert-trust-delay", o.TrustDelay,
		"With --webhook-cert-mode=self: how long a new CA is in the injected CA bundles before replicas switch to a serving certificate it issued (API servers see bundle changes through watches).")
	fs.StringSliceVar(&o.MutatingWebhookConfigurations, "webhook-cert-inject-mutating", o.MutatingWebhookConfigurations,
		"With --webhook-cert-mode=self: MutatingWebhookConfigurations that get the CA bundle (comma-separated).")
	fs.StringSliceVar(&o.ValidatingWebhookConfigurations, "webhook-cert-inject-validating", o.ValidatingWebhookConfigurations,
		"With --webhook-cert-mode=self: ValidatingWebhookConfigurations that get the CA bundle (comma-separated).")
	fs.StringSliceVar(&o.CRDs, "webhook-cert-inject-crds", o.CRDs,
		"With --webhook-cert-mode=self: CRDs whose conversion webhook gets the CA bundle (comma-separated).")
}

// withDefaults fills unset fields and checks the mode.
func (o Options) withDefaults() (Options, error) {
	switch o.Mode {
	case "":
		o.Mode = ModeFiles
	case ModeSelf, ModeCertManager, ModeFiles:
	default:
		return o, fmt.Errorf("unknown webhook certificate mode %q: use self, cert-manager or files", o.Mode)
	}
	if o.SecretName == "" {
		o.SecretName = DefaultSecretName
	}
	if o.ServiceName == "" {
		o.ServiceName = DefaultServiceName
	}
	if o.Validity <= 0 {
		o.Validity = DefaultValidity
	}
	if o.CAValidity <= 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CAValidity < o.Validity {
		o.CAValidity = o.Validity
	}
	if o.SyncInterval <= 0 {
		o.SyncInterval = min(DefaultSyncInterval, o.Validity/10)
	}
	if o.TrustDelay <= 0 {
		o.TrustDelay = min(DefaultTrustDelay, o.Validity/10)
	}
	if o.CertDir == "" {
		o.CertDir = DefaultCertDir()
	}
	if o.Mode == ModeSelf && o.Namespace == "" {
		if b, err := os.ReadFile(serviceAccountNamespaceFile); err == nil {
			o.Namespace = strings.TrimSpace(string(b))
		}
	}
	if o.Mode == ModeSelf && o.Namespace == "" {
		return o, fmt.Errorf("webhook certificate mode self needs the operator's namespace")
	}
	return o, nil
}

// DefaultCertDir is controller-runtime's default webhook cert dir, where upstream's Deployment
// also mounts the cert-manager Secret.
func DefaultCertDir() string {
	return filepath.Join(os.TempDir(), "k8s-webhook-server", "serving-certs")
}

// DNSNames returns the names the serving certificate is valid for.
func (o Options) DNSNames() []string {
	names := []string{
		o.ServiceName + "." + o.Namespace + ".svc",
		o.ServiceName + "." + o.Namespace + ".svc.cluster.local",
	}
	return append(names, o.ExtraDNSNames...)
}
