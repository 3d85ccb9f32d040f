package app

import "crypto/tls"

type tlsConfig = tls.Config

// disableHTTP2 keeps the servers on HTTP/1.1 (HTTP/2 rapid-reset and stream-cancellation CVEs).
func disableHTTP2(c *tls.Config) { c.NextProtos = []string{"http/1.1"} }
