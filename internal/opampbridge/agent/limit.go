package agent

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/net/http/httpproxy"

	"github.com/otelop/otelop/internal/opampbridge/wslimit"
)

// DefaultMaxServerMessageBytes bounds one message from the OpAMP server.
const DefaultMaxServerMessageBytes = 64 << 20

// maxConnectReplyBytes bounds a proxy's reply to CONNECT.
const maxConnectReplyBytes = 64 << 10

var (
	serverLimit atomic.Int64
	serverTLS   atomic.Pointer[tls.Config]
	dialerOnce  sync.Once
)

// limitServerMessages makes opamp-go's WebSocket client read the server through wslimit: a
// message whose frame announces more than maxBytes closes the connection before it is read
// (opamp-go has no read limit and copies websocket.DefaultDialer at Start, so the hook is that
// dialer, set once per process). Not applied through an explicit HTTP proxy (the file's proxy
// block, which opamp-go dials itself).
//
// A proxy from the environment (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, read at every dial) is dialled
// here, not by the WebSocket library: the CONNECT exchange and, for wss://, the TLS handshake come
// first, and only the bytes inside the tunnel and under TLS go through the frame limit. (The
// library's own proxy support would dial the proxy through this dialer, so that the limit saw the
// proxy's reply as the WebSocket head and TLS records as frames.)
func limitServerMessages(maxBytes int64, tlsCfg *tls.Config) {
	serverLimit.Store(maxBytes)
	serverTLS.Store(tlsCfg)
	dialerOnce.Do(func() {
		d := *websocket.DefaultDialer
		d.Proxy = nil // dialTunnel does it
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialTunnel(ctx, network, addr, "ws")
			if err != nil {
				return nil, err
			}
			return wslimit.Client(c, serverLimit.Load()), nil
		}
		d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := dialTunnel(ctx, network, addr, "wss")
			if err != nil {
				return nil, err
			}
			cfg := &tls.Config{MinVersion: tls.VersionTLS12}
			if t := serverTLS.Load(); t != nil {
				cfg = t.Clone()
			}
			if cfg.ServerName == "" {
				cfg.ServerName, _, _ = net.SplitHostPort(addr)
			}
			tc := tls.Client(raw, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = raw.Close()
				return nil, err
			}
			return wslimit.Client(tc, serverLimit.Load()), nil
		}
		websocket.DefaultDialer = &d
	})
}

// dialTunnel connects to addr directly, or through the proxy the environment names for a
// scheme:// URL of addr (an HTTP proxy, plain or TLS, asked with CONNECT).
func dialTunnel(ctx context.Context, network, addr, scheme string) (net.Conn, error) {
	proxyURL, err := httpproxy.FromEnvironment().ProxyFunc()(&url.URL{Scheme: httpScheme(scheme), Host: addr})
	if err != nil {
		return nil, fmt.Errorf("proxy from the environment: %w", err)
	}
	var d net.Dialer
	if proxyURL == nil {
		return d.DialContext(ctx, network, addr)
	}
	if proxyURL.Scheme != "http" && proxyURL.Scheme != "https" {
		return nil, fmt.Errorf("proxy from the environment %s: only http:// and https:// proxies are supported", proxyURL.Redacted())
	}
	proxyAddr := proxyURL.Host
	if proxyURL.Port() == "" {
		proxyAddr = net.JoinHostPort(proxyURL.Hostname(), map[string]string{"http": "80", "https": "443"}[proxyURL.Scheme])
	}
	c, err := d.DialContext(ctx, network, proxyAddr)
	if err != nil {
		return nil, fmt.Errorf("dialling the proxy %s: %w", proxyURL.Redacted(), err)
	}
	if proxyURL.Scheme == "https" {
		tc := tls.Client(c, &tls.Config{MinVersion: tls.VersionTLS12, ServerName: proxyURL.Hostname()})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, fmt.Errorf("TLS with the proxy %s: %w", proxyURL.Redacted(), err)
		}
		c = tc
	}
	if err := connect(ctx, c, addr, proxyURL); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("proxy %s: %w", proxyURL.Redacted(), err)
	}
	return c, nil
}

func httpScheme(ws string) string {
	if ws == "wss" {
		return "https"
	}
	return "http"
}

// connect asks the proxy on c for a tunnel to addr and reads its reply, at most
// maxConnectReplyBytes. The proxy must not send anything after the reply: the server speaks
// only once spoken to.
func connect(ctx context.Context, c net.Conn, addr string, proxyURL *url.URL) error {
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
		defer func() { _ = c.SetDeadline(noDeadline) }()
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u := proxyURL.User; u != nil {
		pw, _ := u.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)))
	}
	if err := req.Write(c); err != nil {
		return err
	}
	br := bufio.NewReader(io.LimitReader(c, maxConnectReplyBytes))
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fmt.Errorf("reading the reply to CONNECT: %w", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CONNECT %s: %s", addr, resp.Status)
	}
	if br.Buffered() > 0 {
		return errors.New("the proxy sent data after its reply to CONNECT")
	}
	return nil
}

// noDeadline clears a connection's deadline.
var noDeadline time.Time
