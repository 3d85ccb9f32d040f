package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// errMessageTooLarge ends a WebSocket whose message exceeds the limit.
var errMessageTooLarge = errors.New("proxy: WebSocket message exceeds the size limit")

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
	lc := &limitConn{Conn: conn, early: early, frames: frameParser{max: w.max}}
	return lc, bufio.NewReadWriter(bufio.NewReader(lc), rw.Writer), nil
}

// limitConn checks every byte read from a WebSocket client.
type limitConn struct {
	net.Conn
	early  []byte
	frames frameParser
}

func (c *limitConn) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(c.early) > 0 {
		n = copy(p, c.early)
		c.early = c.early[n:]
	} else {
		n, err = c.Conn.Read(p)
	}
	if ferr := c.frames.feed(p[:n]); ferr != nil {
		_ = c.Conn.SetDeadline(time.Now())
		_ = c.Conn.Close()
		return 0, ferr
	}
	return n, err
}

// frameParser follows the frames of a WebSocket client stream (RFC 6455 section 5.2) and fails
// as soon as a header announces a data message longer than max (fragments add up; control frames
// do not count).
type frameParser struct {
	max     int64
	hdr     [14]byte
	have    int    // header bytes collected
	need    int    // header length once known (0 until the second byte)
	payload uint64 // payload bytes left in the current frame
	msg     uint64 // bytes of the current data message so far
}

func (f *frameParser) feed(b []byte) error {
	for len(b) > 0 {
		if f.payload > 0 {
			n := uint64(len(b))
			if n > f.payload {
				n = f.payload
			}
			f.payload -= n
			b = b[n:]
			continue
		}
		f.hdr[f.have] = b[0]
		f.have++
		b = b[1:]
		if f.have == 2 {
			f.need = 2
			switch f.hdr[1] & 0x7f {
			case 126:
				f.need += 2
			case 127:
				f.need += 8
			}
			if f.hdr[1]&0x80 != 0 {
				f.need += 4
			}
		}
		if f.have < 2 || f.have < f.need {
			continue
		}
		var plen uint64
		switch l := f.hdr[1] & 0x7f; l {
		case 126:
			plen = uint64(binary.BigEndian.Uint16(f.hdr[2:4]))
		case 127:
			plen = binary.BigEndian.Uint64(f.hdr[2:10])
		default:
			plen = uint64(l)
		}
		if opcode := f.hdr[0] & 0x0f; opcode < 8 {
			if opcode != 0 {
				f.msg = 0 // a new message; 0 continues the current one
			}
			if plen > uint64(f.max) || f.msg+plen > uint64(f.max) {
				return fmt.Errorf("%w (%d bytes)", errMessageTooLarge, f.max)
			}
			f.msg += plen
		}
		f.payload = plen
		f.have, f.need = 0, 0
	}
	return nil
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
