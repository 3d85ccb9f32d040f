package imagebuild

import (
	"archive/tar"
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"io"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

var epoch = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

type tarEntry struct {
	hdr  tar.Header
	data []byte
}

func readTar(t *testing.T, b []byte) []tarEntry {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(b))
	var out []tarEntry
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tarEntry{*h, data})
	}
}

func TestTarIsSortedAndTimeless(t *testing.T) {
	g := NewWithT(t)
	// The order entries come in does not matter.
	entries := append(BaseEntries([]byte("pem")), BinaryEntries("x", []byte("binary"))[3])
	rev := make([]Entry, len(entries))
	for i, e := range entries {
		rev[len(entries)-1-i] = e
	}
	a, err := Tar(entries, epoch.Add(500*time.Millisecond))
	g.Expect(err).NotTo(HaveOccurred())
	b, err := Tar(rev, epoch)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(a).To(Equal(b))

	var names []string
	for _, e := range readTar(t, a) {
		names = append(names, e.hdr.Name)
		g.Expect(e.hdr.ModTime).To(BeTemporally("==", epoch), e.hdr.Name)
		g.Expect(e.hdr.Uname).To(BeEmpty())
		g.Expect(e.hdr.Gname).To(BeEmpty())
		g.Expect(e.hdr.PAXRecords).To(BeEmpty())
		g.Expect(e.hdr.Format).To(Equal(tar.FormatUSTAR), e.hdr.Name)
	}
	g.Expect(names).To(Equal([]string{
		"etc/", "etc/group", "etc/nsswitch.conf", "etc/passwd", "etc/ssl/", "etc/ssl/certs/",
		"etc/ssl/certs/ca-certificates.crt", "home/", "home/nonroot/", "tmp/", "usr/", "usr/local/",
		"usr/local/bin/", "usr/local/bin/x",
	}))
}

func TestTarRejects(t *testing.T) {
	for name, entries := range map[string][]Entry{
		"relative path":  {{Path: "etc", Dir: true}},
		"unclean path":   {{Path: "/etc/", Dir: true}},
		"root":           {{Path: "/", Dir: true}},
		"duplicate":      {{Path: "/a", Dir: true}, {Path: "/a", Dir: true}},
		"missing parent": {{Path: "/a/b", Data: []byte("x")}},
		"dir with data":  {{Path: "/a", Dir: true, Data: []byte("x")}},
		"link with data": {{Path: "/a", Link: "/b", Data: []byte("x")}},
		"link as dir":    {{Path: "/a", Link: "/b", Dir: true}},
	} {
		if _, err := Tar(entries, epoch); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestTarSymlink: an entry with Link is a symbolic link to it, with its mode and no data.
func TestTarSymlink(t *testing.T) {
	g := NewWithT(t)
	b, err := Tar([]Entry{{Path: "/bin", Dir: true, Mode: 0o755}, {Path: "/bin/sh", Mode: 0o777, Link: "/bin/busybox"},
		{Path: "/bin/busybox", Mode: 0o755, Data: []byte("ELF")}}, epoch)
	g.Expect(err).NotTo(HaveOccurred())
	es := readTar(t, b)
	g.Expect(es).To(HaveLen(3))
	sh := es[2]
	g.Expect(sh.hdr.Name).To(Equal("bin/sh"))
	g.Expect(sh.hdr.Typeflag).To(Equal(byte(tar.TypeSymlink)))
	g.Expect(sh.hdr.Linkname).To(Equal("/bin/busybox"))
	g.Expect(sh.hdr.Size).To(BeZero())
	g.Expect(sh.data).To(BeEmpty())
}

func TestBaseLayerContents(t *testing.T) {
	g := NewWithT(t)
	b, err := Tar(BaseEntries(CABundle()), epoch)
	g.Expect(err).NotTo(HaveOccurred())
	got := map[string]tarEntry{}
	for _, e := range readTar(t, b) {
		got[e.hdr.Name] = e
	}
	g.Expect(got).NotTo(HaveKey("bin/sh"), "no shell")
	g.Expect(got).NotTo(HaveKey("bin/"))
	g.Expect(got["tmp/"].hdr.Mode).To(Equal(int64(0o1777)))
	g.Expect(got["home/nonroot/"].hdr.Uid).To(Equal(NonRootUID))
	g.Expect(got["home/nonroot/"].hdr.Gid).To(Equal(NonRootGID))
	g.Expect(string(got["etc/passwd"].data)).To(ContainSubstring("nonroot:x:65532:65532:"))
	g.Expect(string(got["etc/group"].data)).To(ContainSubstring("nonroot:x:65532:"))
	ca := got[strings.TrimPrefix(CABundlePath, "/")]
	g.Expect(ca.hdr.Mode).To(Equal(int64(0o644)))
	g.Expect(ca.data).To(Equal(CABundle()))
}

func TestBinaryLayer(t *testing.T) {
	g := NewWithT(t)
	b, err := Tar(BinaryEntries("opentelemetry-operator", []byte("ELF...")), epoch)
	g.Expect(err).NotTo(HaveOccurred())
	es := readTar(t, b)
	g.Expect(es).To(HaveLen(4))
	bin := es[3]
	g.Expect(bin.hdr.Name).To(Equal("usr/local/bin/opentelemetry-operator"))
	g.Expect(bin.hdr.Mode).To(Equal(int64(0o755)))
	g.Expect(bin.hdr.Uid).To(Equal(0), "root owns the binary: the nonroot user cannot replace it")
	g.Expect(bin.data).To(Equal([]byte("ELF...")))
}

func TestCABundleParses(t *testing.T) {
	g := NewWithT(t)
	rest := CABundle()
	n := 0
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		g.Expect(blk.Type).To(Equal("CERTIFICATE"))
		c, err := x509.ParseCertificate(blk.Bytes)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(c.IsCA).To(BeTrue(), c.Subject.String())
		n++
	}
	g.Expect(rest).To(BeEmpty())
	g.Expect(n).To(BeNumerically(">", 100), "the Mozilla root store has over a hundred roots")
	pool := x509.NewCertPool()
	g.Expect(pool.AppendCertsFromPEM(CABundle())).To(BeTrue())
}
