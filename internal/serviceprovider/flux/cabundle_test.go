package flux

import (
	"encoding/pem"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/internal/testenv"
)

func TestCheckCABundle(t *testing.T) {
	ca := testenv.NewCA(t, "test CA").PEM()
	tests := []struct {
		name    string
		data    []byte
		wantErr string
	}{
		{name: "one certificate", data: ca},
		{name: "two certificates with text around", data: append(append([]byte("# corporate roots\n"), ca...), ca...)},
		{name: "empty", data: nil, wantErr: "no PEM certificate"},
		{name: "not PEM", data: []byte("hello"), wantErr: "no PEM certificate"},
		{name: "only a key", data: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1}}), wantErr: "no PEM certificate"},
		{name: "broken certificate", data: append(append([]byte{}, ca...), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")})...), wantErr: "certificate 2 is not valid X.509"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			err := CheckCABundle(tt.data)
			if tt.wantErr == "" {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(MatchError(ContainSubstring(tt.wantErr)))
			}
		})
	}
}
