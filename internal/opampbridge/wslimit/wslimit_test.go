package wslimit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
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
