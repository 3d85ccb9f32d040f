package sbom

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

var validID = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)

// Parse decodes an SPDX 2.3 JSON document strictly (no unknown fields) and validates it.
func Parse(data []byte) (*Document, error) {
	var d Document
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return nil, fmt.Errorf("SPDX JSON: %w", err)
	}
	return &d, Validate(&d)
}

// Validate checks what SPDX 2.3 requires of a document and of its packages and relationships:
// the fixed document fields, a creation time and creator, identifiers of the allowed form and
// unique, the mandatory package fields, and relationships and documentDescribes that point at
// elements of the document.
func Validate(d *Document) error {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	if d.SPDXVersion != "SPDX-2.3" {
		bad("spdxVersion: %q, want SPDX-2.3", d.SPDXVersion)
	}
	if d.DataLicense != "CC0-1.0" {
		bad("dataLicense: %q, want CC0-1.0", d.DataLicense)
	}
	if d.SPDXID != "SPDXRef-DOCUMENT" {
		bad("SPDXID: %q, want SPDXRef-DOCUMENT", d.SPDXID)
	}
	if d.Name == "" {
		bad("name: empty")
	}
	if !strings.Contains(d.DocumentNamespace, "://") || strings.Contains(d.DocumentNamespace, "#") {
		bad("documentNamespace: %q, want an absolute URI without #", d.DocumentNamespace)
	}
	if _, err := time.Parse(time.RFC3339, d.CreationInfo.Created); err != nil || !strings.HasSuffix(d.CreationInfo.Created, "Z") {
		bad("creationInfo.created: %q, want YYYY-MM-DDThh:mm:ssZ", d.CreationInfo.Created)
	}
	if len(d.CreationInfo.Creators) == 0 {
		bad("creationInfo.creators: empty")
	}
	for i, c := range d.CreationInfo.Creators {
		if !strings.HasPrefix(c, "Tool: ") && !strings.HasPrefix(c, "Organization: ") && !strings.HasPrefix(c, "Person: ") {
			bad("creationInfo.creators[%d]: %q, want Tool:, Organization: or Person:", i, c)
		}
	}
	ids := map[string]bool{"SPDXRef-DOCUMENT": true}
	for i, p := range d.Packages {
		at := fmt.Sprintf("packages[%d] (%s)", i, p.Name)
		if !validID.MatchString(p.SPDXID) {
			bad("%s.SPDXID: %q, want SPDXRef-[A-Za-z0-9.-]+", at, p.SPDXID)
		}
		if ids[p.SPDXID] {
			bad("%s.SPDXID: %q is not unique", at, p.SPDXID)
		}
		ids[p.SPDXID] = true
		if p.Name == "" {
			bad("%s.name: empty", at)
		}
		for f, v := range map[string]string{"downloadLocation": p.DownloadLocation, "licenseConcluded": p.LicenseConcluded,
			"licenseDeclared": p.LicenseDeclared, "copyrightText": p.CopyrightText} {
			if v == "" {
				bad("%s.%s: empty (NOASSERTION when unknown)", at, f)
			}
		}
		for j, c := range p.Checksums {
			if c.Algorithm == "SHA256" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(c.Value) {
				bad("%s.checksums[%d]: %q is not a lower-case hex SHA-256", at, j, c.Value)
			}
		}
		for j, r := range p.ExternalRefs {
			if r.Type == "purl" && (r.Category != "PACKAGE-MANAGER" || !strings.HasPrefix(r.Locator, "pkg:")) {
				bad("%s.externalRefs[%d]: a purl is PACKAGE-MANAGER and starts with pkg:, got %s %q", at, j, r.Category, r.Locator)
			}
		}
	}
	if len(d.DocumentDescribes) == 0 {
		bad("documentDescribes: empty")
	}
	for _, id := range d.DocumentDescribes {
		if !ids[id] {
			bad("documentDescribes: %q is no element of the document", id)
		}
	}
	for i, r := range d.Relationships {
		if !ids[r.Element] || !ids[r.Related] || r.Type == "" {
			bad("relationships[%d]: %s %s %s: both ends must be elements of the document", i, r.Element, r.Type, r.Related)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid SPDX 2.3 document %q:\n  %s", d.Name, strings.Join(errs, "\n  "))
	}
	return nil
}

// Module returns the package of the Go module at path, or nil.
func (d *Document) Module(path string) *Package {
	for i := range d.Packages {
		p := &d.Packages[i]
		for _, r := range p.ExternalRefs {
			if r.Type == "purl" && strings.HasPrefix(r.Locator, "pkg:golang/"+purlEscape(path)+"@") {
				return p
			}
		}
	}
	return nil
}
