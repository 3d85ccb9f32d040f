package imagebuild

import (
	"archive/tar"
	"bytes"
	"encoding/pem"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// NonRootUID and NonRootGID are the user and group every image runs as (distroless' "nonroot").
const (
	NonRootUID = 65532
	NonRootGID = 65532
)

// User is the image configuration's user: numeric, so that Kubernetes' runAsNonRoot can verify it.
var User = fmt.Sprintf("%d:%d", NonRootUID, NonRootGID)

// BinDir is where the binary lies in the image; the entrypoint is BinDir/<name>.
const BinDir = "/usr/local/bin"

// CABundlePath is where the CA certificates lie, the first path Go's crypto/x509 reads on Linux.
const CABundlePath = "/etc/ssl/certs/ca-certificates.crt"

// Entry is one file or directory of a layer.
type Entry struct {
	// Path is absolute ("/etc/passwd"); directories have no trailing slash.
	Path string
	// Dir marks a directory; Data must then be empty.
	Dir bool
	// Mode holds the permission bits (and sticky bit, 01000).
	Mode     int64
	UID, GID int
	Data     []byte
	// Link, when set, makes the entry a symbolic link to Link; Dir must then be false and Data
	// empty.
	Link string
}

// Tar returns the layer tarball of entries: sorted by path, every timestamp mtime (truncated to
// seconds), no user or group names, no PAX records, so that the same entries always give the same
// bytes. Every entry's parent directory must be in entries or be "/".
func Tar(entries []Entry, mtime time.Time) ([]byte, error) {
	sorted := append([]Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	dirs := map[string]bool{"/": true}
	for i, e := range sorted {
		if !path.IsAbs(e.Path) || path.Clean(e.Path) != e.Path || e.Path == "/" {
			return nil, fmt.Errorf("entry %q: the path must be absolute and clean, not /", e.Path)
		}
		if i > 0 && sorted[i-1].Path == e.Path {
			return nil, fmt.Errorf("entry %q: listed twice", e.Path)
		}
		if e.Dir {
			if len(e.Data) > 0 {
				return nil, fmt.Errorf("entry %q: a directory has no data", e.Path)
			}
			dirs[e.Path] = true
		}
		if e.Link != "" && (e.Dir || len(e.Data) > 0) {
			return nil, fmt.Errorf("entry %q: a symbolic link is neither a directory nor has data", e.Path)
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mt := mtime.UTC().Truncate(time.Second)
	for _, e := range sorted {
		if !dirs[path.Dir(e.Path)] {
			return nil, fmt.Errorf("entry %q: its directory %q is not in the layer", e.Path, path.Dir(e.Path))
		}
		h := &tar.Header{
			Name:    strings.TrimPrefix(e.Path, "/"),
			Mode:    e.Mode,
			Uid:     e.UID,
			Gid:     e.GID,
			ModTime: mt,
			Format:  tar.FormatUSTAR,
		}
		switch {
		case e.Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		case e.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.Path, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return nil, fmt.Errorf("entry %q: %w", e.Path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// BaseEntries are the files every image shares, in one layer with one digest: the users (root and
// nonroot), the resolver order, the CA bundle, a home for nonroot, a world-writable /tmp and BinDir.
// There is no shell and no package manager.
func BaseEntries(caPEM []byte) []Entry {
	dir := func(p string, mode int64) Entry { return Entry{Path: p, Dir: true, Mode: mode} }
	file := func(p, data string) Entry { return Entry{Path: p, Mode: 0o644, Data: []byte(data)} }
	home := dir("/home/nonroot", 0o700)
	home.UID, home.GID = NonRootUID, NonRootGID
	return []Entry{
		dir("/etc", 0o755),
		file("/etc/passwd", fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", NonRootUID, NonRootGID)),
		file("/etc/group", fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", NonRootGID)),
		file("/etc/nsswitch.conf", "hosts: files dns\n"),
		dir("/etc/ssl", 0o755),
		dir("/etc/ssl/certs", 0o755),
		{Path: CABundlePath, Mode: 0o644, Data: caPEM},
		dir("/home", 0o755),
		home,
		dir("/tmp", 0o1777),
		dir("/usr", 0o755),
		dir("/usr/local", 0o755),
		dir(BinDir, 0o755),
	}
}

// BinaryEntries is the layer of one binary: BinDir/name, owned by root, executable by all, with
// BinDir and its parents as in BaseEntries (so that the layer is complete on its own).
func BinaryEntries(name string, binary []byte) []Entry {
	return []Entry{
		{Path: "/usr", Dir: true, Mode: 0o755},
		{Path: "/usr/local", Dir: true, Mode: 0o755},
		{Path: BinDir, Dir: true, Mode: 0o755},
		{Path: path.Join(BinDir, name), Mode: 0o755, Data: binary},
	}
}

// CABundle returns the Mozilla NSS roots of golang.org/x/crypto/x509roots/fallback as one PEM file,
// so that the bundle is pinned by go.sum rather than taken from the build host. Roots that carry a
// distrust-after constraint are left out: a PEM file cannot express it.
func CABundle() []byte {
	var b bytes.Buffer
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		_ = pem.Encode(&b, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})
	}
	return b.Bytes()
}
