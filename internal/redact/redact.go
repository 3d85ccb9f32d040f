// Package redact removes secrets from values that the operator repeats in error messages, status
// conditions, Events and logs.
package redact

import "strings"

// Placeholder replaces what is removed.
const Placeholder = "REDACTED"

// Endpoint returns endpoint with the user information (user:password@) and the query and fragment
// of a URL replaced by Placeholder. It works on text that does not parse as a URL too (the values
// that fail validation are the ones echoed in errors), and leaves host:port forms without a scheme
// unchanged unless they carry an '@'.
func Endpoint(endpoint string) string {
	s := endpoint
	prefix := ""
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, s = s[:i+3], s[i+3:]
	}
	authorityEnd := strings.IndexAny(s, "/?#")
	if authorityEnd < 0 {
		authorityEnd = len(s)
	}
	authority, rest := s[:authorityEnd], s[authorityEnd:]
	if at := strings.LastIndex(authority, "@"); at >= 0 {
		authority = Placeholder + authority[at:]
	}
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		rest = rest[:q+1] + Placeholder
	}
	return prefix + authority + rest
}
