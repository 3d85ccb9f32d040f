package sbom

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

var validID = regexp.MustCompile(`^SPDXRef-[A-Za-z0-9.-]+$`)

// Values SPDX 2.3 allows for the enumerated fields this package writes.
var (
	purposes      = set("OTHER INSTALL ARCHIVE FIRMWARE APPLICATION FRAMEWORK LIBRARY CONTAINER SOURCE DEVICE OPERATING_SYSTEM FILE")
	refCategories = set("OTHER PERSISTENT-ID SECURITY PACKAGE-MANAGER")
	algorithms    = set("SHA1 SHA224 SHA256 SHA384 SHA512 SHA3-256 SHA3-384 SHA3-512 BLAKE2b-256 BLAKE2b-384 BLAKE2b-512 BLAKE3 MD2 MD4 MD5 MD6 ADLER32")
	relationships = set("DESCRIBES DESCRIBED_BY CONTAINS CONTAINED_BY DEPENDS_ON DEPENDENCY_OF DEPENDENCY_MANIFEST_OF " +
		"BUILD_DEPENDENCY_OF DEV_DEPENDENCY_OF OPTIONAL_DEPENDENCY_OF PROVIDED_DEPENDENCY_OF TEST_DEPENDENCY_OF " +
		"RUNTIME_DEPENDENCY_OF EXAMPLE_OF GENERATES GENERATED_FROM ANCESTOR_OF DESCENDANT_OF VARIANT_OF " +
		"DISTRIBUTION_ARTIFACT PATCH_FOR PATCH_APPLIED COPY_OF FILE_ADDED FILE_DELETED FILE_MODIFIED " +
		"EXPANDED_FROM_ARCHIVE DYNAMIC_LINK STATIC_LINK DATA_FILE_OF TEST_CASE_OF BUILD_TOOL_OF DEV_TOOL_OF " +
		"TEST_OF TEST_TOOL_OF DOCUMENTATION_OF OPTIONAL_COMPONENT_OF METAFILE_OF PACKAGE_OF AMENDS " +
		"PREREQUISITE_FOR HAS_PREREQUISITE REQUIREMENT_DESCRIPTION_FOR SPECIFICATION_FOR OTHER")
)

func set(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}

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
		if p.PrimaryPurpose != "" && !purposes[p.PrimaryPurpose] {
			bad("%s.primaryPackagePurpose: %q is not an SPDX 2.3 purpose", at, p.PrimaryPurpose)
		}
		for j, c := range p.Checksums {
			if !algorithms[c.Algorithm] {
				bad("%s.checksums[%d].algorithm: %q is not an SPDX 2.3 algorithm", at, j, c.Algorithm)
			}
			if c.Algorithm == "SHA256" && !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(c.Value) {
				bad("%s.checksums[%d]: %q is not a lower-case hex SHA-256", at, j, c.Value)
			}
		}
		for j, r := range p.ExternalRefs {
			if !refCategories[r.Category] || r.Type == "" || r.Locator == "" {
				bad("%s.externalRefs[%d]: category %q (want OTHER, PERSISTENT-ID, SECURITY or PACKAGE-MANAGER), type and locator are required", at, j, r.Category)
			}
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
		if !relationships[r.Type] {
			bad("relationships[%d].relationshipType: %q is not an SPDX 2.3 relationship type", i, r.Type)
		}
		if !ids[r.Element] || !ids[r.Related] {
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
