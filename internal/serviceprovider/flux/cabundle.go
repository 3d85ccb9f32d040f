package flux

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// CheckCABundle says whether data is a PEM bundle Flux can trust: at least one CERTIFICATE block,
// and every CERTIFICATE block a parseable X.509 certificate. Other blocks (a stray key, comments
// between blocks) are ignored, as Go's certificate pool ignores them.
func CheckCABundle(data []byte) error {
	n := 0
	for rest := data; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		n++
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return fmt.Errorf("certificate %d is not valid X.509: %v", n, err)
		}
	}
	if n == 0 {
		return errors.New("no PEM certificate (-----BEGIN CERTIFICATE-----) found")
	}
	return nil
}
