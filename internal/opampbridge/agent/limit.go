package agent

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"

	"github.com/otelop/otelop/internal/opampbridge/wslimit"
)

// DefaultMaxServerMessageBytes bounds one message from the OpAMP server.
const DefaultMaxServerMessageBytes = 64 << 20

var (
	serverLimit atomic.Int64
	serverTLS   atomic.Pointer[tls.Config]
	dialerOnce  sync.Once
)

// limitServerMessages makes opamp-go's WebSocket client read the server through wslimit: a
// message whose frame announces more than maxBytes closes the connection before it is read
// (opamp-go has no read limit and copies websocket.DefaultDialer at Start, so the hook is that
// dialer, set once per process). Not applied through an explicit HTTP proxy, whose CONNECT
// exchange the dialer would see.
func limitServerMessages(maxBytes int64, tlsCfg *tls.Config) {
	serverLimit.Store(maxBytes)
	serverTLS.Store(tlsCfg)
	dialerOnce.Do(func() {
		d := *websocket.DefaultDialer
		d.NetDialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wslimit.Client(c, serverLimit.Load()), nil
		}
		d.NetDialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := (&net.Dialer{}).DialContext(ctx, network, addr)
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
