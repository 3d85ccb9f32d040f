package webhook

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// ClientCA returns the webhook server's TLS option that checks client certificates against the
// CAs in the PEM file caFile: a certificate a caller presents must chain to one of them
// (tls.VerifyClientCertIfGiven), and handlers that must know their caller (the pod webhook, see
// podmutation.Options.RequireClientCert) refuse one that presented none. The connection itself
// does not require one: the API server presents the certificate of its admission configuration
// to admission webhooks but not, in every version, to CRD conversion webhooks, which this server
// also serves.
func ClientCA(caFile string) (func(*tls.Config), error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("reading the webhook client CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("the webhook client CA file %s holds no PEM certificate", caFile)
	}
	return func(c *tls.Config) {
		c.ClientCAs = pool
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}, nil
}
