package redact

import "testing"

func TestEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"0.0.0.0:4317":                                 "0.0.0.0:4317",
		"[::1]:4317":                                   "[::1]:4317",
		"https://collector:4318/v1/traces":             "https://collector:4318/v1/traces",
		"https://user:s3cret@collector:99999/v1":       "https://REDACTED@collector:99999/v1",
		"wss://bridge:4320/v1/opamp?token=s3cret#frag": "wss://bridge:4320/v1/opamp?REDACTED",
		"user:s3cret@host:70000":                       "REDACTED@host:70000",
		"http://a:b@c@host:1/p?x=1":                    "http://REDACTED@host:1/p?REDACTED",
		"tcp://${env:USER}:${env:PASS}@host:port?k=v":  "tcp://REDACTED@host:port?REDACTED",
		"not a url at all":                             "not a url at all",
	} {
		if got := Endpoint(in); got != want {
			t.Errorf("Endpoint(%q) = %q, want %q", in, got, want)
		}
	}
}
