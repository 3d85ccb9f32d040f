package agent

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	"github.com/google/uuid"
	. "github.com/onsi/gomega"
	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/opampbridge/opamptest"
)

// serverCert makes a self-signed certificate for host, and writes it as a CA file into dir.
func serverCert(t *testing.T, dir, host string) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: host}, DNSNames: []string{host},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, caFile
}

// connectProxy is an HTTP CONNECT proxy on loopback that sends every tunnel to one address,
// whatever host the client asked for (so a test server on 127.0.0.1 can have a name the
// bridge never resolves, and that no_proxy's loopback rule does not exempt).
type connectProxy struct {
	ln       net.Listener
	to       string
	connects atomic.Int32
	mu       sync.Mutex
	targets  []string
}

func startConnectProxy(t *testing.T, to string) *connectProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &connectProxy{ln: ln, to: to}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *connectProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	p.connects.Add(1)
	p.mu.Lock()
	p.targets = append(p.targets, req.Host)
	p.mu.Unlock()
	up, err := net.Dial("tcp", p.to)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	go func() { _, _ = io.Copy(up, br); _ = up.Close() }()
	_, _ = io.Copy(c, up)
}

// TestServerLimitBehindEnvironmentProxy is the attack of issue 31, finding 3, turned around:
// with HTTPS_PROXY in the environment (and no proxy in the bridge's file) the bridge reaches a
// TLS OpAMP server through a CONNECT proxy and stays connected while the server sends many
// messages (before the fix the limiting dialer took the proxy's reply for the WebSocket head
// and TLS records for frames, and the connection died after a few messages); and the server's
// message limit still holds behind the proxy: a message over it drops the connection.
func TestServerLimitBehindEnvironmentProxy(t *testing.T) {
	g := NewWithT(t)
	ctx := context.Background()
	const host = "opamp.test"
	cert, caFile := serverCert(t, t.TempDir(), host)
	srv, err := opamptest.Start(opamptest.Options{TLS: &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{cert}}})
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() { _ = srv.Stop(context.Background()) })
	addr := strings.TrimSuffix(strings.TrimPrefix(srv.URL, "wss://"), "/v1/opamp")
	_, port, _ := net.SplitHostPort(addr)
	px := startConnectProxy(t, addr)
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		t.Setenv(k, "http://"+px.ln.Addr().String())
	}
	for _, k := range []string{"NO_PROXY", "no_proxy"} {
		t.Setenv(k, "")
	}

	a, err := New(Options{
		Config: &config.Config{Endpoint: fmt.Sprintf("wss://%s:%s/v1/opamp", host, port), TLS: config.TLS{CAFile: caFile},
			Mode: config.ModeOperator, Capabilities: map[string]bool{"AcceptsRemoteConfig": true, "ReportsRemoteConfig": true}},
		UID: uuid.Must(uuid.NewV7()), Collectors: &parsingCollectors{},
		Logger: testr.New(t), MaxServerMessageBytes: 64 << 10,
	})
	g.Expect(err).NotTo(HaveOccurred())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	g.Expect(srv.Wait(30*time.Second, "the agent to connect through the proxy", func(m map[string]*opamptest.AgentState) bool {
		return len(m) == 1
	})).To(Succeed())
	uid := srv.Agents()[0]
	g.Expect(px.targets).To(ConsistOf(host+":"+port), "the tunnel was asked for the server's name")

	push := func(size int) []byte {
		body := good + "# " + strings.Repeat("x", size) + "\n"
		var hash []byte
		g.Eventually(func() error {
			h, err := srv.PushConfig(ctx, uid, map[string]*protobufs.AgentConfigFile{"ns/a": {Body: []byte(body)}})
			hash = h
			return err
		}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
		return hash
	}
	answered := func(hash []byte) func(map[string]*opamptest.AgentState) bool {
		return func(m map[string]*opamptest.AgentState) bool {
			return string(m[uid].RemoteConfigStatus.GetLastRemoteConfigHash()) == string(hash)
		}
	}
	for i := range 30 {
		hash := push(8<<10 + i)
		g.Expect(srv.Wait(10*time.Second, fmt.Sprintf("the status of message %d", i+1), answered(hash))).To(Succeed())
	}
	g.Expect(px.connects.Load()).To(Equal(int32(1)), "30 messages over one tunnel, no reconnect")

	// The limit applies to the frames inside the tunnel.
	big := push(128 << 10)
	g.Expect(srv.Wait(3*time.Second, "a status for the oversized message", answered(big))).NotTo(Succeed())
	g.Eventually(px.connects.Load, 30*time.Second, 100*time.Millisecond).Should(BeNumerically(">=", 2), "the bridge dropped the connection and came back")
	small := push(100)
	g.Expect(srv.Wait(30*time.Second, "the status of a small message after the reconnect", answered(small))).To(Succeed())
}
