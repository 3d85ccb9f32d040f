// Command target-allocator distributes Prometheus scrape targets among OpenTelemetry
// collectors. It reads upstream's configuration file (targetallocator.yaml, as the operator
// writes it) and flags, and serves upstream's HTTP API, so the collector's prometheus receiver
// uses it unchanged.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/otelop/otelop/internal/targetallocator/app"
	"github.com/otelop/otelop/internal/targetallocator/config"
	"github.com/otelop/otelop/internal/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "target-allocator")
		return
	}
	fs := pflag.NewFlagSet("target-allocator", pflag.ContinueOnError)
	fs.Bool("version", false, version.FlagUsage)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "Usage: target-allocator [flags]\n\nAssigns Prometheus scrape targets to OpenTelemetry collectors and serves them over HTTP.\n\nFlags:\n%s", fs.FlagUsages())
	}
	flags := config.NewFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == pflag.ErrHelp {
			return
		}
		os.Exit(2)
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: flags.Level()}))
	cfg, err := config.LoadFile(flags.ConfigFile, log)
	if err != nil {
		log.Error("reading the configuration", "error", err)
		os.Exit(1)
	}
	for _, w := range cfg.Warnings {
		log.Warn("configuration", "warning", w, "file", flags.ConfigFile)
	}
	flags.Apply(&cfg)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := app.Run(ctx, cfg, log); err != nil {
		log.Error("target allocator stopped", "error", err)
		os.Exit(1)
	}
}
