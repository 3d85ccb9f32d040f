// Package wslimit bounds WebSocket messages without help from the WebSocket library: a Parser
// follows the frames of a byte stream and fails as soon as a frame header announces a message
// over the limit, before its payload is read; Conn wraps a connection with it.
package wslimit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"time"
)

// ErrTooLarge is returned for a message over the limit.
var ErrTooLarge = errors.New("WebSocket message exceeds the size limit")

// Parser follows the frames of a WebSocket client stream (RFC 6455 section 5.2) and fails
// as soon as a header announces a data message longer than max (fragments add up; control frames
// do not count).
type Parser struct {
	// Max is the largest data message allowed, in bytes.
	Max     int64
	hdr     [14]byte
	have    int    // header bytes collected
	need    int    // header length once known (0 until the second byte)
	payload uint64 // payload bytes left in the current frame
	msg     uint64 // bytes of the current data message so far
}

// Feed parses the next bytes of the stream.
func (f *Parser) Feed(b []byte) error {
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
			if plen > uint64(f.Max) || f.msg+plen > uint64(f.Max) {
				return fmt.Errorf("%w (%d bytes)", ErrTooLarge, f.Max)
			}
			f.msg += plen
		}
		f.payload = plen
		f.have, f.need = 0, 0
	}
	return nil
}

// Conn checks every byte read from a WebSocket connection and closes it on a message over the
// limit. A client connection first skips the server's HTTP response head(s).
type Conn struct {
	net.Conn
	early  []byte
	head   bool // still in the HTTP response head
	tail   []byte
	frames Parser
}

// Server wraps a connection taken over from an HTTP server after the upgrade (early holds bytes
// already buffered from it).
func Server(c net.Conn, early []byte, maxBytes int64) *Conn {
	return &Conn{Conn: c, early: early, frames: Parser{Max: maxBytes}}
}

// Client wraps a freshly dialled client connection, before the upgrade request is sent.
func Client(c net.Conn, maxBytes int64) *Conn {
	return &Conn{Conn: c, head: true, frames: Parser{Max: maxBytes}}
}

var headEnd = []byte("\r\n\r\n")

// Read implements net.Conn.
func (c *Conn) Read(p []byte) (int, error) {
	var n int
	var err error
	if len(c.early) > 0 {
		n = copy(p, c.early)
		c.early = c.early[n:]
	} else {
		n, err = c.Conn.Read(p)
	}
	b := p[:n]
	if c.head {
		// Find the end of the head across reads: keep the last 3 bytes of the previous read.
		buf := append(c.tail, b...)
		i := bytes.Index(buf, headEnd)
		if i < 0 {
			c.tail = append([]byte(nil), buf[max(0, len(buf)-3):]...)
			return n, err
		}
		c.head, c.tail = false, nil
		b = buf[i+len(headEnd):]
	}
	if ferr := c.frames.Feed(b); ferr != nil {
		_ = c.Conn.SetDeadline(time.Now())
		_ = c.Conn.Close()
		return 0, ferr
	}
	return n, err
}
