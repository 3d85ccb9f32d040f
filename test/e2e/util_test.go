package e2e

import "strings"

// isWebhookUnavailable reports an error from calling a webhook whose certificate is not trusted yet.
func isWebhookUnavailable(err error) bool {
	s := err.Error()
	return strings.Contains(s, "failed calling webhook") || strings.Contains(s, "x509")
}
