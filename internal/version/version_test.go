package version

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestImage(t *testing.T) {
	defer func(r, v string) { ImageRegistry, Version = r, v }(ImageRegistry, Version)
	ImageRegistry, Version = "ghcr.io/otelop", "0.3.0"
	if got := Image("operator-opamp-bridge"); got != "ghcr.io/otelop/operator-opamp-bridge:0.3.0" {
		t.Fatalf("Image = %q", got)
	}
	ImageRegistry = "localhost:5000/team/"
	if got := Image("x"); got != "localhost:5000/team/x:0.3.0" {
		t.Fatalf("Image with trailing slash = %q", got)
	}
}

func TestRequested(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--version"}, true},
		{[]string{"-version"}, true},
		{[]string{"run", "--leader-elect", "--version"}, true},
		{[]string{"--version=true"}, true},
		{[]string{"--version=false"}, false},
		{[]string{"--", "--version"}, false},
		{[]string{"--versions"}, false},
		{[]string{"version"}, false},
	} {
		if got := Requested(tt.args); got != tt.want {
			t.Errorf("Requested(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

func TestPrint(t *testing.T) {
	defer func(v, r string) { Version, Revision = v, r }(Version, Revision)
	Version, Revision = "1.2.3", "abc123"
	var b bytes.Buffer
	Print(&b, "opentelemetry-operator")
	want := "opentelemetry-operator 1.2.3 (revision abc123, " + runtime.Version() + ", " + runtime.GOOS + "/" + runtime.GOARCH + ")\n"
	if b.String() != want {
		t.Fatalf("Print = %q, want %q", b.String(), want)
	}
	Revision = ""
	if !strings.Contains(String("x"), "revision ") || strings.Contains(String("x"), "revision ,") {
		t.Fatalf("unstamped String = %q", String("x"))
	}
}
