// Package version holds what a build stamps into every binary of the project: its version, the
// source revision and the registry its images are published to. The Makefile sets them with
//
//	-ldflags "-X github.com/otelop/otelop/internal/version.Version=... \
//	          -X github.com/otelop/otelop/internal/version.Revision=... \
//	          -X github.com/otelop/otelop/internal/version.ImageRegistry=..."
//
// A plain `go build` leaves the defaults below.
package version

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// Version is the project version (`git describe --tags --always --dirty` without a leading "v";
// "0.0.0-dev" when unstamped). It is also the tag of the project's images.
var Version = "0.0.0-dev"

// Revision is the full source commit the binary was built from; empty when unstamped, in which case
// the Go toolchain's VCS stamp is used when there is one.
var Revision = ""

// ImageRegistry is the registry and path prefix of the project's images, without a trailing slash.
var ImageRegistry = "ghcr.io/otelop"

// Image returns the reference of the project's image of the named binary at this Version, e.g.
// "ghcr.io/otelop/operator-opamp-bridge:0.3.0".
func Image(name string) string {
	return strings.TrimSuffix(ImageRegistry, "/") + "/" + name + ":" + Version
}

// Commit returns Revision, or the VCS revision the Go toolchain recorded, or "unknown".
func Commit() string {
	if Revision != "" {
		return Revision
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// String is the one line that `<binary> --version` prints, e.g.
// "opentelemetry-operator 0.3.0 (revision 1a2b..., go1.26.5, linux/amd64)".
func String(name string) string {
	return fmt.Sprintf("%s %s (revision %s, %s, %s/%s)", name, Version, Commit(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// FlagUsage is the help text of every binary's --version flag.
const FlagUsage = "Print the version, source revision, Go version and platform, then exit."

// Requested reports whether args (the command line without the program name) ask for the version:
// "--version" or "-version" before any "--". Binaries check it before parsing the rest, so that
// --version works without the configuration files, environment or cluster the binary otherwise
// needs.
func Requested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--version", "-version", "--version=true", "-version=true":
			return true
		}
	}
	return false
}

// Print writes String(name) and a newline to w.
func Print(w io.Writer, name string) {
	fmt.Fprintln(w, String(name))
}
