package wslimit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// frame builds a client frame header (masked) for a payload of n bytes.
func frame(opcode byte, fin bool, n uint64) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	var h []byte
	switch {
	case n < 126:
		h = []byte{b0, 0x80 | byte(n)}
	case n < 1<<16:
		h = []byte{b0, 0x80 | 126, 0, 0}
		binary.BigEndian.PutUint16(h[2:], uint16(n))
	default:
		h = []byte{b0, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint64(h[2:], n)
	}
	return append(h, 1, 2, 3, 4)
}

func TestParser(t *testing.T) {
	tests := []struct {
		name   string
		stream [][]byte // frame header then payload length
		ok     bool
	}{
		{"small message", [][]byte{frame(2, true, 10), make([]byte, 10)}, true},
		{"16-bit length at the limit", [][]byte{frame(2, true, 1000), make([]byte, 1000)}, true},
		{"64-bit length over the limit", [][]byte{frame(2, true, 1<<40)}, false},
		{"fragments adding up past the limit", [][]byte{frame(2, false, 600), make([]byte, 600), frame(9, true, 4), make([]byte, 4), frame(0, true, 600)}, false},
		{"two messages each under the limit", [][]byte{frame(2, true, 600), make([]byte, 600), frame(2, true, 600), make([]byte, 600)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stream := bytes.Join(tt.stream, nil)
			for _, chunk := range []int{1, 3, 7, len(stream)} {
				f := Parser{Max: 1000}
				var err error
				for i := 0; i < len(stream) && err == nil; i += chunk {
					err = f.Feed(stream[i:min(i+chunk, len(stream))])
				}
				if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrTooLarge)) {
					t.Fatalf("chunk %d: err %v, want ok=%v", chunk, err, tt.ok)
				}
			}
		})
	}
}

func FuzzParser(f *testing.F) {
	f.Add(bytes.Join([][]byte{frame(2, true, 10), make([]byte, 10)}, nil))
	f.Add(frame(2, true, 1<<40))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := Parser{Max: 100}
		_ = p.Feed(b) // must never panic
	})
}

// pipeConn is a net.Conn whose reads come from r (a server that has sent everything).
type pipeConn struct {
	net.Conn
	r io.Reader
}

func (p *pipeConn) Read(b []byte) (int, error)  { return p.r.Read(b) }
func (p *pipeConn) Close() error                { return nil }
func (p *pipeConn) SetDeadline(time.Time) error { return nil }

// serverFrame builds an unmasked server frame header for a payload of n bytes.
func serverFrame(n uint64) []byte {
	h := []byte{0x82, 127, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(h[2:], n)
	return h
}

// TestClientHeadWithBareLF is the attack of issue 31, finding 4: Go's HTTP parser ends a
// response head at an empty line with bare "\n" line ends, so a head that never contains
// "\r\n\r\n" must not turn the limit off. A 3 MiB message behind such a head is refused
// against a 1 MiB limit; the same head with a small message passes (the control), and so does
// a head that never ends only up to MaxHeadBytes.
func TestClientHeadWithBareLF(t *testing.T) {
	const limit = 1 << 20
	read := func(head string, payload uint64) (int64, error) {
		stream := io.MultiReader(strings.NewReader(head), bytes.NewReader(serverFrame(payload)), io.LimitReader(zeros{}, int64(payload)))
		return io.Copy(io.Discard, Client(&pipeConn{r: stream}, limit))
	}
	for _, head := range []string{
		"HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\nConnection: Upgrade\n\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\n",
		"HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\n\r\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
	} {
		n, err := read(head, 3<<20)
		if !errors.Is(err, ErrTooLarge) {
			t.Fatalf("head %q: read %d bytes of a 3 MiB message against a 1 MiB limit (err %v)", head, n, err)
		}
		n, err = read(head, 1000)
		if err != nil || n != int64(len(head))+10+1000 {
			t.Fatalf("head %q with a small message: read %d, err %v", head, n, err)
		}
	}
	// A head that never ends is bounded too.
	endless := io.MultiReader(strings.NewReader("HTTP/1.1 101 Switching Protocols\n"), io.LimitReader(repeatReader('a'), 3<<20))
	n, err := io.Copy(io.Discard, Client(&pipeConn{r: endless}, limit))
	if err == nil || n > MaxHeadBytes {
		t.Fatalf("an endless head: read %d bytes, err %v", n, err)
	}
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

type repeatReader byte

func (r repeatReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte(r)
	}
	return len(b), nil
}
