package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/otelop/otelop/internal/opampbridge/wslimit"
)

// limitRequest bounds what one request can make the OpAMP server library hold in memory: a plain
// HTTP body (after gzip decompression, which the library would otherwise do without a limit) and,
// for a WebSocket, each message, checked against the length its frames declare before their
// payload is read. opamp-go offers no hook for either.
func limitRequest(w http.ResponseWriter, r *http.Request, maxBytes int64) (http.ResponseWriter, bool) {
	if r.Method == http.MethodPost {
		if r.ContentLength > maxBytes {
			http.Error(w, "message too large", http.StatusRequestEntityTooLarge)
			return w, false
		}
		body := io.Reader(http.MaxBytesReader(w, r.Body, maxBytes))
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(body)
			if err != nil {
				http.Error(w, "bad gzip body", http.StatusBadRequest)
				return w, false
			}
			data, err := io.ReadAll(io.LimitReader(zr, maxBytes+1))
			if err != nil {
				http.Error(w, "bad gzip body", http.StatusBadRequest)
				return w, false
			}
			if int64(len(data)) > maxBytes {
				http.Error(w, "message too large once decompressed", http.StatusRequestEntityTooLarge)
				return w, false
			}
			r.Header.Del("Content-Encoding")
			r.ContentLength = int64(len(data))
			r.Body = io.NopCloser(bytes.NewReader(data))
			return w, true
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBytes)
		return w, true
	}
	return &limitHijack{ResponseWriter: w, max: maxBytes}, true
}

// limitHijack hands the WebSocket library a connection that reads through a frame parser.
type limitHijack struct {
	http.ResponseWriter
	max int64
}

// Hijack implements http.Hijacker.
func (w *limitHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	var early []byte
	if n := rw.Reader.Buffered(); n > 0 {
		b, _ := rw.Reader.Peek(n)
		early = append([]byte(nil), b...)
	}
	lc := wslimit.Server(conn, early, w.max)
	return lc, bufio.NewReadWriter(bufio.NewReader(lc), rw.Writer), nil
}

// bucket is a token bucket: rate tokens a second up to burst.
type bucket struct {
	tokens float64
	last   time.Time
}

func (b *bucket) allow(now time.Time, rate, burst float64) bool {
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}
