// Package sbom writes SPDX 2.3 JSON software bills of materials for the project's Go binaries from
// the build information the Go toolchain embeds in every binary (runtime/debug.BuildInfo, read from
// a file with debug/buildinfo): the main module, every module linked in with its version and go.sum
// hash, and the Go standard library, each with a package URL (pkg:golang/...) that vulnerability
// scanners match on. Only what the binary records is listed: a module in go.mod that is not linked
// in is absent, which is what the image actually ships.
package sbom

import (
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"
	"time"
)

// Document is an SPDX 2.3 document (the JSON fields this package writes).
type Document struct {
	SPDXVersion       string         `json:"spdxVersion"`
	DataLicense       string         `json:"dataLicense"`
	SPDXID            string         `json:"SPDXID"`
	Name              string         `json:"name"`
	DocumentNamespace string         `json:"documentNamespace"`
	CreationInfo      CreationInfo   `json:"creationInfo"`
	DocumentDescribes []string       `json:"documentDescribes"`
	Packages          []Package      `json:"packages"`
	Relationships     []Relationship `json:"relationships"`
}

// CreationInfo says when and by what the document was made.
type CreationInfo struct {
	Created  string   `json:"created"`
	Creators []string `json:"creators"`
}

// Package is one SPDX package: the binary, a Go module or the standard library.
type Package struct {
	Name             string        `json:"name"`
	SPDXID           string        `json:"SPDXID"`
	VersionInfo      string        `json:"versionInfo,omitempty"`
	Supplier         string        `json:"supplier,omitempty"`
	DownloadLocation string        `json:"downloadLocation"`
	FilesAnalyzed    bool          `json:"filesAnalyzed"`
	Checksums        []Checksum    `json:"checksums,omitempty"`
	LicenseConcluded string        `json:"licenseConcluded"`
	LicenseDeclared  string        `json:"licenseDeclared"`
	CopyrightText    string        `json:"copyrightText"`
	PrimaryPurpose   string        `json:"primaryPackagePurpose,omitempty"`
	Comment          string        `json:"comment,omitempty"`
	ExternalRefs     []ExternalRef `json:"externalRefs,omitempty"`
}

// Checksum is a package checksum; the algorithm is an SPDX name such as SHA256.
type Checksum struct {
	Algorithm string `json:"algorithm"`
	Value     string `json:"checksumValue"`
}

// ExternalRef points at a package outside the document, here its package URL.
type ExternalRef struct {
	Category string `json:"referenceCategory"`
	Type     string `json:"referenceType"`
	Locator  string `json:"referenceLocator"`
}

// Relationship relates two elements of the document.
type Relationship struct {
	Element string `json:"spdxElementId"`
	Type    string `json:"relationshipType"`
	Related string `json:"relatedSpdxElement"`
}

// NoAssertion is SPDX's "not stated" value.
const NoAssertion = "NOASSERTION"

// Options describe the binary a document is made for.
type Options struct {
	// Name is the binary (and image) name, e.g. opentelemetry-operator.
	Name string
	// Version is the release version; it stands in for the main module's version when the build
	// info has none ("(devel)").
	Version string
	// SHA256 is the binary's digest in hex; empty leaves it out.
	SHA256 string
	// Namespace is the document's unique URI; empty derives one from Name, Version and SHA256.
	Namespace string
	// Created is the creation time (the commit time, for reproducible documents).
	Created time.Time
	// Tool names the creator, e.g. "otelop-release".
	Tool string
}

// FromBuildInfo returns the document of a binary with build information bi.
func FromBuildInfo(bi *debug.BuildInfo, o Options) (*Document, error) {
	if bi == nil || bi.Main.Path == "" {
		return nil, fmt.Errorf("%s: the binary has no Go module build information (built with go build in module mode?)", o.Name)
	}
	ns := o.Namespace
	if ns == "" {
		ns = "https://github.com/otelop/otelop/spdx/" + o.Name + "-" + o.Version
		if o.SHA256 != "" {
			ns += "-" + o.SHA256[:min(12, len(o.SHA256))]
		}
	}
	tool := o.Tool
	if tool == "" {
		tool = "otelop-sbom"
	}
	d := &Document{
		SPDXVersion: "SPDX-2.3", DataLicense: "CC0-1.0", SPDXID: "SPDXRef-DOCUMENT",
		Name: o.Name + "-" + o.Version, DocumentNamespace: ns,
		CreationInfo: CreationInfo{Created: o.Created.UTC().Format(time.RFC3339),
			Creators: []string{"Tool: " + tool, "Organization: otelop"}},
	}
	ids := map[string]bool{}
	add := func(p Package) string {
		p.SPDXID = uniqueID(ids, p.SPDXID)
		if p.DownloadLocation == "" {
			p.DownloadLocation = NoAssertion
		}
		p.LicenseConcluded, p.LicenseDeclared, p.CopyrightText = NoAssertion, NoAssertion, NoAssertion
		d.Packages = append(d.Packages, p)
		return p.SPDXID
	}

	bin := Package{Name: o.Name, SPDXID: "SPDXRef-Binary-" + o.Name, VersionInfo: o.Version,
		PrimaryPurpose: "APPLICATION", Comment: "Go build settings: " + settings(bi)}
	if o.SHA256 != "" {
		bin.Checksums = []Checksum{{Algorithm: "SHA256", Value: o.SHA256}}
	}
	binID := add(bin)
	d.DocumentDescribes = []string{binID}

	mainVersion := bi.Main.Version
	if mainVersion == "" || mainVersion == "(devel)" {
		// A module version has a leading v (the release version has none).
		mainVersion = "v" + strings.TrimPrefix(o.Version, "v")
	}
	mainPkg := modulePackage(bi.Main.Path, mainVersion, "", "SOURCE", "the main module, built from source")
	mainPkg.DownloadLocation = NoAssertion // not fetched from a module proxy
	mainID := add(mainPkg)
	d.Relationships = append(d.Relationships,
		Relationship{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: binID},
		Relationship{Element: binID, Type: "GENERATED_FROM", Related: mainID})

	if goVersion := strings.Fields(bi.GoVersion); len(goVersion) > 0 {
		std := add(Package{Name: "stdlib", SPDXID: "SPDXRef-Package-stdlib", VersionInfo: goVersion[0],
			PrimaryPurpose: "LIBRARY", Comment: "the Go standard library and runtime",
			ExternalRefs: []ExternalRef{purl("stdlib", goVersion[0])}})
		d.Relationships = append(d.Relationships, Relationship{Element: binID, Type: "CONTAINS", Related: std})
	}
	for _, m := range bi.Deps {
		path, version, sum, note := m.Path, m.Version, m.Sum, ""
		if r := m.Replace; r != nil {
			note = "replaced by " + r.Path + " " + r.Version
			path, version, sum = r.Path, r.Version, r.Sum
		}
		id := add(modulePackage(path, version, sum, "LIBRARY", note))
		d.Relationships = append(d.Relationships, Relationship{Element: binID, Type: "CONTAINS", Related: id})
	}
	return d, nil
}

func modulePackage(path, version, sum, purpose, comment string) Package {
	p := Package{Name: path, SPDXID: "SPDXRef-Package-" + path + "-" + version, VersionInfo: version,
		PrimaryPurpose: purpose, Comment: comment}
	if version != "" && !strings.HasPrefix(path, ".") && !strings.HasPrefix(path, "/") {
		p.ExternalRefs = []ExternalRef{purl(path, version)}
		p.DownloadLocation = "https://proxy.golang.org/" + path + "/@v/" + version + ".zip"
	}
	if h, ok := strings.CutPrefix(sum, "h1:"); ok {
		if raw, err := base64.StdEncoding.DecodeString(h); err == nil && len(raw) == sha256.Size {
			// go.sum's h1 hash is a SHA-256 (of the module's file list and file hashes); the
			// comment keeps it as go.sum writes it, for `go mod verify`-style checks.
			p.Checksums = []Checksum{{Algorithm: "SHA256", Value: hex.EncodeToString(raw)}}
			p.Comment = strings.TrimPrefix(strings.Join([]string{p.Comment, "go.sum " + sum}, "; "), "; ")
		}
	}
	return p
}

// purl returns the package URL of a Go module (pkg:golang/<module path>@<version>).
func purl(path, version string) ExternalRef {
	return ExternalRef{Category: "PACKAGE-MANAGER", Type: "purl", Locator: "pkg:golang/" + purlEscape(path) + "@" + purlEscape(version)}
}

// purlEscape percent-encodes what a purl path segment may not hold, keeping the slashes.
func purlEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("/.-_~", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

var idChars = regexp.MustCompile(`[^A-Za-z0-9.-]+`)

// uniqueID turns s into a valid SPDX identifier (SPDXRef-[A-Za-z0-9.-]+) not yet in ids.
func uniqueID(ids map[string]bool, s string) string {
	s = "SPDXRef-" + strings.Trim(idChars.ReplaceAllString(strings.TrimPrefix(s, "SPDXRef-"), "-"), "-")
	id := s
	for i := 2; ids[id]; i++ {
		id = fmt.Sprintf("%s-%d", s, i)
	}
	ids[id] = true
	return id
}

// settings lists the build settings that say how the binary was made (GOOS, GOARCH, -trimpath,
// CGO_ENABLED, vcs.revision, ...), space separated.
func settings(bi *debug.BuildInfo) string {
	var s []string
	s = append(s, "go="+bi.GoVersion)
	for _, kv := range bi.Settings {
		if kv.Key == "-ldflags" {
			continue // holds the version stamp only; long and redundant
		}
		s = append(s, kv.Key+"="+kv.Value)
	}
	return strings.Join(s, " ")
}

// FromBinary returns the document of the Go binary in data (any platform's executable format).
func FromBinary(data []byte, o Options) (*Document, error) {
	bi, err := buildinfo.Read(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: reading the Go build information: %w", o.Name, err)
	}
	sum := sha256.Sum256(data)
	o.SHA256 = hex.EncodeToString(sum[:])
	return FromBuildInfo(bi, o)
}
