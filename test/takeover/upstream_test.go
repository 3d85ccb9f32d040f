package takeover

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/test/simcluster"

	"github.com/otelop/otelop/test/upstreamop"
)

// startUpstream runs bin (upstream's operator) as user kubeconfig. Its webhooks (served in its
// namespace with the certificate in dir) are reachable from the API server at
// 127.0.0.1:webhookPort. logPath receives its output.
func startUpstream(bin, kubeconfig, apiHost, dir string, webhookPort int, logPath string) (*upstreamop.Operator, error) {
	return upstreamop.Start(upstreamop.Options{
		Bin: bin, Kubeconfig: kubeconfig, APIHost: apiHost, Dir: dir, WebhookPort: webhookPort, LogPath: logPath,
		// upstream decides whether it may create collector ClusterRoles by a SubjectAccessReview of
		// its ServiceAccount (named by these two, as its Deployment sets them); see upstreamIdentity.
		Env: []string{"SERVICE_ACCOUNT_NAME=" + upstreamSA, "NAMESPACE=default"},
	})
}

// upstreamSA is the ServiceAccount upstream's RBAC check asks about (upstream runs with a client
// certificate here, but checks the ServiceAccount its Deployment would run as).
const upstreamSA = "opentelemetry-operator-controller-manager"

// upstreamIdentity creates upstreamSA in default, bound to cluster-admin, so that upstream's
// RBAC check passes as in an install whose ServiceAccount holds the shipped rules.
func upstreamIdentity(ctx context.Context, c client.Client) error {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: upstreamSA, Namespace: "default"}}
	if err := c.Create(ctx, sa); err != nil {
		return err
	}
	return c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "takeover-upstream-operator"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: upstreamSA, Namespace: "default"}},
	})
}

// writeServingCert writes a CA and a serving certificate for 127.0.0.1 into
// dir/k8s-webhook-server/serving-certs (tls.crt, tls.key), where upstream's webhook server looks
// with TMPDIR=dir, and returns the CA in PEM.
func writeServingCert(dir string) ([]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "takeover-webhook-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certDir := filepath.Join(dir, "k8s-webhook-server", "serving-certs")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(certDir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), nil
}

// injectCA sets caBundle on every webhook of the operator's webhook configurations and on the
// collector CRD's conversion webhook, as cert-manager's CA injector does in upstream's install.
func injectCA(ctx context.Context, c client.Client, ca []byte) error {
	mw := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: simcluster.WebhookNamePrefix + "mutating-webhook-configuration"}, mw); err != nil {
		return err
	}
	for i := range mw.Webhooks {
		mw.Webhooks[i].ClientConfig.CABundle = ca
	}
	if err := c.Update(ctx, mw); err != nil {
		return err
	}
	vw := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: simcluster.WebhookNamePrefix + "validating-webhook-configuration"}, vw); err != nil {
		return err
	}
	for i := range vw.Webhooks {
		vw.Webhooks[i].ClientConfig.CABundle = ca
	}
	if err := c.Update(ctx, vw); err != nil {
		return err
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: collectorCRD}, crd); err != nil {
		return err
	}
	if crd.Spec.Conversion == nil || crd.Spec.Conversion.Webhook == nil || crd.Spec.Conversion.Webhook.ClientConfig == nil {
		return fmt.Errorf("CRD %s has no conversion webhook", collectorCRD)
	}
	crd.Spec.Conversion.Webhook.ClientConfig.CABundle = ca
	return c.Update(ctx, crd)
}
