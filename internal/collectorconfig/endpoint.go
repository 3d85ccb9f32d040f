package collectorconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// endpointPort extracts the port of a listen address or endpoint. It accepts host:port, :port,
// [ipv6]:port and scheme://host:port[/path] forms; the host may be an ${env:...} reference.
// found is false when there is no usable port: no port at all, port 0 (pick any), or a port given
// by an ${...} reference, which only the collector can resolve. err is set when a port is present
// but is not a number between 0 and 65535.
func endpointPort(endpoint string) (port int32, found bool, err error) {
	s := strings.TrimSpace(endpoint)
	if i := strings.Index(s, "://"); i >= 0 && !strings.Contains(s[:i], "${") {
		s = s[i+3:]
	}
	colon := -1
	depth, bracket := 0, false
	end := len(s)
scan:
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "${"):
			depth++
			i++
		case s[i] == '}' && depth > 0:
			depth--
		case depth > 0:
		case s[i] == '[':
			bracket = true
		case s[i] == ']':
			bracket = false
		case bracket:
		case s[i] == ':':
			colon = i
		case s[i] == '/' || s[i] == '?' || s[i] == '#':
			end = i
			break scan
		}
	}
	if colon < 0 {
		return 0, false, nil
	}
	p := s[colon+1 : end]
	if p == "" || strings.Contains(p, "${") {
		return 0, false, nil
	}
	n, perr := strconv.ParseUint(p, 10, 32)
	if perr != nil || n > 65535 {
		return 0, false, fmt.Errorf("port %q must be a number between 1 and 65535 or an ${env:...} reference", p)
	}
	if n == 0 {
		return 0, false, nil
	}
	return int32(n), true, nil //nolint:gosec // n is at most 65535.
}
