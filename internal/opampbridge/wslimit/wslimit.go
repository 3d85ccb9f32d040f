// Package wslimit bounds WebSocket messages without help from the WebSocket library: a Parser
// follows the frames of a byte stream and fails as soon as a frame header announces a message
// over the limit, before its payload is read; Conn wraps a connection with it.
package wslimit

import (
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
// limit. A client connection first skips the server's HTTP response head, whose end it finds as Go's
// HTTP parser does (bare "\n" line ends included) and which it bounds by MaxHeadBytes.
type Conn struct {
	net.Conn
	early  []byte
	head   bool // still in the HTTP response head
	hd     headScanner
	frames Parser
}

// MaxHeadBytes bounds the HTTP response head a client connection reads before the frames.
const MaxHeadBytes = 64 << 10

// ErrHeadTooLarge is returned for a response head over MaxHeadBytes.
var ErrHeadTooLarge = errors.New("HTTP response head exceeds the size limit")

// headScanner finds the end of an HTTP response head as Go's parser does (net/textproto): a line
// ends at "\n", one "\r" before it is dropped, and the first empty line ends the head. So a head
// with bare "\n" line ends is followed exactly like one with "\r\n".
type headScanner struct {
	n         int  // bytes of the head so far
	lineBytes int  // bytes of the current line before its "\n"
	lineCR    bool // the current line so far is a single "\r"
}

// scan consumes b up to the end of the head; it returns how many bytes belong to the head and
// whether it ended.
func (h *headScanner) scan(b []byte) (int, bool, error) {
	for i, c := range b {
		h.n++
		if h.n > MaxHeadBytes {
			return i, false, fmt.Errorf("%w (%d bytes)", ErrHeadTooLarge, MaxHeadBytes)
		}
		if c == '\n' {
			if h.lineBytes == 0 || (h.lineBytes == 1 && h.lineCR) {
				return i + 1, true, nil
			}
			h.lineBytes, h.lineCR = 0, false
			continue
		}
		h.lineCR = h.lineBytes == 0 && c == '\r'
		h.lineBytes++
	}
	return len(b), false, nil
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
		used, done, herr := c.hd.scan(b)
		if herr != nil {
			return 0, c.fail(herr)
		}
		if !done {
			return n, err
		}
		c.head = false
		b = b[used:]
	}
	if ferr := c.frames.Feed(b); ferr != nil {
		return 0, c.fail(ferr)
	}
	return n, err
}

// fail closes the connection so that nothing more is read from it, and returns err.
func (c *Conn) fail(err error) error {
	_ = c.Conn.SetDeadline(time.Now())
	_ = c.Conn.Close()
	return err
}
