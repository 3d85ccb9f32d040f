// Command images builds the project's OCI images without Docker (see internal/imagebuild) and
// pushes them. The Makefile's `images` and `push` targets run it:
//
//	go run ./hack/images build --version=0.3.0 --revision=<sha> --created=<unix seconds> \
//	    --out=bin/images opentelemetry-operator operator-opamp-bridge
//	go run ./hack/images push --registry=ghcr.io/otelop --version=0.3.0 --out=bin/images NAME...
//	go run ./hack/images sign --key=cosign.key --registry=ghcr.io/otelop --version=0.3.0 \
//	    --sboms=bin/release/sbom --chart=oci://ghcr.io/otelop/charts/opentelemetry-operator:0.3.0 NAME...
//	go run ./hack/images verify --key=cosign.pub ... (the same flags)
//	go run ./hack/images keygen --out=.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/otelop/otelop/internal/imagebuild"
)

const usage = `usage: images build|push|sign|verify|keygen [flags] BINARY...

  build  compile each cmd/BINARY for every platform and write an OCI layout to OUT/BINARY
  push   push OUT/BINARY to REGISTRY/BINARY:VERSION
  sign, verify, keygen: see images sign -h

Flags:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && (args[0] == "sign" || args[0] == "verify" || args[0] == "keygen") {
		return runSigning(ctx, args[0], args[1:], stdout, stderr)
	}
	if len(args) == 0 || (args[0] != "build" && args[0] != "push") {
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("the first argument must be build, push, sign, verify or keygen")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	version := fs.String("version", "0.0.0-dev", "Version stamped into the binaries; the images' tag.")
	revision := fs.String("revision", "", "Source commit stamped into the binaries and labels.")
	registry := fs.String("registry", "", "Registry and prefix: stamped into the binaries as their default image registry (build), pushed to (push).")
	created := fs.Int64("created", 0, "Creation time of the images in Unix seconds: the commit time, for reproducible digests (default $SOURCE_DATE_EPOCH, else 0).")
	source := fs.String("source", "https://github.com/otelop/otelop", "Source repository URL (label).")
	licenses := fs.String("licenses", "Apache-2.0", "SPDX license expression (label).")
	platforms := fs.String("platforms", "linux/amd64,linux/arm64", "Comma-separated OS/ARCH list.")
	out := fs.String("out", "bin/images", "Directory of the OCI layouts.")
	dir := fs.String("dir", ".", "Module root (holding cmd/).")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("name at least one binary of cmd/")
	}
	start := time.Now()
	if args[0] == "push" {
		if *registry == "" {
			return fmt.Errorf("--registry is required: the registry and prefix to push to, e.g. ghcr.io/otelop")
		}
		for _, name := range fs.Args() {
			d, err := imagebuild.Push(ctx, filepath.Join(*out, name), strings.TrimSuffix(*registry, "/")+"/"+name, *version, stdout)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "    pushed %s\n", d)
		}
		fmt.Fprintf(stdout, "==> pushed %d images in %s\n", fs.NArg(), time.Since(start).Round(time.Second))
		return nil
	}
	if *created == 0 {
		if e := os.Getenv("SOURCE_DATE_EPOCH"); e != "" {
			v, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return fmt.Errorf("SOURCE_DATE_EPOCH=%q: want Unix seconds", e)
			}
			*created = v
		}
	}
	ps, err := parsePlatforms(*platforms)
	if err != nil {
		return err
	}
	res, err := imagebuild.Build(ctx, imagebuild.Options{
		Dir: *dir, Binaries: fs.Args(), Platforms: ps, Registry: *registry, Out: *out, Progress: stdout,
		Meta: imagebuild.Meta{Version: *version, Revision: *revision, Source: *source, Licenses: *licenses,
			Created: time.Unix(*created, 0).UTC()},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "==> %d images (%s) in %s\n", len(res), *platforms, time.Since(start).Round(time.Second))
	fmt.Fprintf(stdout, "    %-32s %-12s %10s %12s %12s\n", "image", "platform", "binary", "layer", "compressed")
	for _, r := range res {
		for _, s := range r.Sizes {
			fmt.Fprintf(stdout, "    %-32s %-12s %10s %12s %12s\n", r.Name, s.Platform.OS+"/"+s.Platform.Architecture,
				imagebuild.MiB(s.Binary), imagebuild.MiB(s.Layer), imagebuild.MiB(s.Compressed))
		}
	}
	if len(res) > 0 && len(res[0].Sizes) > 0 {
		s := res[0].Sizes[0]
		fmt.Fprintf(stdout, "    plus the shared base layer (users, CA certificates): %s, %s compressed\n",
			imagebuild.MiB(s.Base), imagebuild.MiB(s.BaseCompressed))
	}
	return nil
}

func parsePlatforms(s string) ([]v1.Platform, error) {
	var ps []v1.Platform
	for _, f := range strings.Split(s, ",") {
		p, err := v1.ParsePlatform(strings.TrimSpace(f))
		if err != nil || p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("--platforms: %q is not OS/ARCH", f)
		}
		ps = append(ps, *p)
	}
	return ps, nil
}
