package testenv

import (
	"net"
	"strconv"
	"testing"
)

// FreePort asks the kernel for a free TCP port on loopback; t fails when there is none.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeAddr is FreePort as "127.0.0.1:<port>".
func FreeAddr(t testing.TB) string {
	t.Helper()
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(FreePort(t)))
}
