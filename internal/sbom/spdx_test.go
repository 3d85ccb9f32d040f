package sbom

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// goModVersion returns the version go.mod requires of module, or "".
func goModVersion(t *testing.T, module string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		return ""
	}
	return string(m[1])
}

// A real binary's build information (go test binaries record no dependencies): testdata/linked
// links go-cmp, one module of go.mod.
func TestFromBinaryListsLinkedModulesWithGoModVersions(t *testing.T) {
	g := NewWithT(t)
	bin := filepath.Join(t.TempDir(), "linked")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./testdata/linked")
	out, err := build.CombinedOutput()
	g.Expect(err).NotTo(HaveOccurred(), string(out))
	data, err := os.ReadFile(bin)
	g.Expect(err).NotTo(HaveOccurred())
	d, err := FromBinary(data, Options{Name: "linked", Version: "1.2.3", Created: time.Unix(0, 0)})
	g.Expect(err).NotTo(HaveOccurred())
	js, err := json.Marshal(d)
	g.Expect(err).NotTo(HaveOccurred())
	parsed, err := Parse(js)
	g.Expect(err).NotTo(HaveOccurred())

	g.Expect(parsed.Packages[0].Checksums[0].Value).To(MatchRegexp(`^[0-9a-f]{64}$`))
	main := parsed.Module("github.com/otelop/otelop")
	g.Expect(main).NotTo(BeNil())
	g.Expect(main.VersionInfo).To(MatchRegexp(`^v`), "a module version, (devel) becomes v1.2.3")
	want := goModVersion(t, "github.com/google/go-cmp")
	g.Expect(want).NotTo(BeEmpty())
	cmp := parsed.Module("github.com/google/go-cmp")
	g.Expect(cmp).NotTo(BeNil())
	g.Expect(cmp.VersionInfo).To(Equal(want))
	g.Expect(cmp.ExternalRefs[0].Locator).To(Equal("pkg:golang/github.com/google/go-cmp@" + want))
	g.Expect(cmp.Checksums).To(HaveLen(1))
	g.Expect(cmp.Comment).To(ContainSubstring("go.sum h1:"))
	g.Expect(parsed.Module("stdlib")).NotTo(BeNil())
	// Positive control: a module of go.mod that the binary does not link is absent.
	g.Expect(goModVersion(t, "k8s.io/client-go")).NotTo(BeEmpty())
	g.Expect(parsed.Module("k8s.io/client-go")).To(BeNil())
	g.Expect(parsed.Module("github.com/onsi/gomega")).To(BeNil())

	_, err = FromBinary([]byte("not a binary"), Options{Name: "x"})
	g.Expect(err).To(MatchError(ContainSubstring("x: reading the Go build information")))
}

func TestFromBuildInfoReplaceAndIDs(t *testing.T) {
	g := NewWithT(t)
	bi := &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Path: "example.com/m", Version: "(devel)"},
		Deps: []*debug.Module{
			{Path: "example.com/a", Version: "v1.0.0", Sum: "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="},
			{Path: "example.com/b", Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/b+fork", Version: "v1.0.1"}},
			{Path: "example.com/a", Version: "v1.0.0"},
		}}
	d, err := FromBuildInfo(bi, Options{Name: "m", Version: "0.1.0", Created: time.Unix(0, 0)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Validate(d)).To(Succeed())
	g.Expect(d.Module("example.com/m").VersionInfo).To(Equal("v0.1.0"))
	g.Expect(d.Module("example.com/m").ExternalRefs[0].Locator).To(Equal("pkg:golang/example.com/m@v0.1.0"))
	g.Expect(d.Module("example.com/a").Checksums[0].Value).To(Equal("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"))
	b := d.Module("example.com/b+fork")
	g.Expect(b).NotTo(BeNil())
	g.Expect(b.ExternalRefs[0].Locator).To(Equal("pkg:golang/example.com/b%2Bfork@v1.0.1"))
	g.Expect(b.Comment).To(ContainSubstring("replaced by"))
	// The duplicate module gets its own identifier.
	g.Expect(d.Packages[len(d.Packages)-1].SPDXID).To(HaveSuffix("-2"))

	_, err = FromBuildInfo(&debug.BuildInfo{}, Options{Name: "x"})
	g.Expect(err).To(MatchError(ContainSubstring("no Go module build information")))
}

func TestValidateNamesWhatIsWrong(t *testing.T) {
	g := NewWithT(t)
	bi := &debug.BuildInfo{GoVersion: "go1.26.7", Main: debug.Module{Path: "example.com/m", Version: "v1.0.0"}}
	d, err := FromBuildInfo(bi, Options{Name: "m", Version: "0.1.0", Created: time.Unix(0, 0)})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(Validate(d)).To(Succeed())
	d.SPDXVersion = "SPDX-2.2"
	d.Packages[1].SPDXID = "SPDXRef-has space"
	d.Packages[0].LicenseDeclared = ""
	d.Packages[0].PrimaryPurpose = "BINARY"
	d.Relationships[0].Type = "LINKS"
	d.Relationships = append(d.Relationships, Relationship{Element: "SPDXRef-DOCUMENT", Type: "DESCRIBES", Related: "SPDXRef-missing"})
	err = Validate(d)
	g.Expect(err).To(MatchError(ContainSubstring(`spdxVersion: "SPDX-2.2"`)))
	g.Expect(err).To(MatchError(ContainSubstring(`packages[1] (example.com/m).SPDXID`)))
	g.Expect(err).To(MatchError(ContainSubstring(`packages[0] (m).licenseDeclared: empty`)))
	g.Expect(err).To(MatchError(ContainSubstring(`SPDXRef-missing`)))
	g.Expect(err).To(MatchError(ContainSubstring(`primaryPackagePurpose: "BINARY"`)))
	g.Expect(err).To(MatchError(ContainSubstring(`relationships[0].relationshipType: "LINKS"`)))
	_, err = Parse([]byte(`{"spdxVersion":"SPDX-2.3","unknown":1}`))
	g.Expect(err).To(MatchError(ContainSubstring("unknown")))
}
