// Command release writes the release artifacts into one folder (run by `make release`):
//
//	release -repo ../.. -out ../../bin/release -images ../../bin/images -version 0.2.0 \
//	    -registry ghcr.io/otelop -revision <sha> -created <unix seconds> [-build] BINARY...
//
//	release push-chart -chart bin/release/opentelemetry-operator-0.2.0.tgz -to oci://ghcr.io/otelop/charts
//
// See package internal/release for what it writes; push-chart pushes the chart as an OCI artifact
// with Helm's registry client (credentials of `helm registry login`).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/otelop/otelop/test/chart/internal/release"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "push-chart" {
		return pushChart(args[1:])
	}
	fs := flag.NewFlagSet("release", flag.ExitOnError)
	o := release.Options{Progress: os.Stdout}
	fs.StringVar(&o.Repo, "repo", ".", "repository root")
	fs.StringVar(&o.Out, "out", "bin/release", "output folder")
	fs.StringVar(&o.Images, "images", "bin/images", "folder of the images' OCI layouts")
	fs.StringVar(&o.Version, "version", "", "release version (SemVer): image tag, chart version and appVersion")
	fs.StringVar(&o.Registry, "registry", "ghcr.io/otelop", "registry and prefix of the images")
	fs.StringVar(&o.Revision, "revision", "", "source commit stamped into the binaries")
	fs.BoolVar(&o.Build, "build", false, "build the images into -images first")
	created := fs.Int64("created", 0, "creation time of the images and SBOMs in Unix seconds (the commit time)")
	platforms := fs.String("platforms", "", "comma-separated OS/ARCH list of the images built (default: imagebuild's)")
	_ = fs.Parse(args)
	o.Binaries = fs.Args()
	o.Created = time.Unix(*created, 0).UTC()
	if *platforms != "" {
		for _, s := range strings.Split(*platforms, ",") {
			p, err := v1.ParsePlatform(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("-platforms: %q: %w", s, err)
			}
			o.Platforms = append(o.Platforms, *p)
		}
	}
	start := time.Now()
	res, err := release.Run(ctx, o)
	if err != nil {
		return err
	}
	fmt.Printf("==> release %s: manifest, chart and %d SBOMs in %s (%s)\n", o.Version, len(res.SBOMs), o.Out, time.Since(start).Round(time.Second))
	return nil
}

func pushChart(args []string) error {
	fs := flag.NewFlagSet("release push-chart", flag.ExitOnError)
	chart := fs.String("chart", "", "packaged chart (.tgz) to push")
	to := fs.String("to", "", "OCI repository, oci://<registry>/<path>")
	plainHTTP := fs.Bool("plain-http", false, "talk HTTP, not HTTPS, to the registry")
	_ = fs.Parse(args)
	if *chart == "" || *to == "" {
		return fmt.Errorf("push-chart needs -chart and -to")
	}
	ref, digest, err := release.PushChart(*chart, *to, *plainHTTP)
	if err != nil {
		return err
	}
	fmt.Printf("    pushed %s@%s\n", ref, digest)
	return nil
}
