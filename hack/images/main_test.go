package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestParsePlatforms(t *testing.T) {
	ps, err := parsePlatforms("linux/amd64, linux/arm64")
	if err != nil || len(ps) != 2 || ps[1].Architecture != "arm64" {
		t.Fatalf("parsePlatforms = %v, %v", ps, err)
	}
	for _, bad := range []string{"linux", "", "linux/amd64,"} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("parsePlatforms(%q): no error", bad)
		}
	}
}

func TestRunRejects(t *testing.T) {
	for args, want := range map[string]string{
		"":                          "build, push",
		"serve":                     "build, push",
		"build":                     "at least one binary",
		"push x":                    "--registry is required",
		"sign x":                    "needs --key",
		"verify --key k.pub":        "k.pub",
		"build --platforms=linux x": "--platforms",
	} {
		err := run(context.Background(), strings.Fields(args), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("run(%q) = %v, want an error containing %q", args, err, want)
		}
	}
}
