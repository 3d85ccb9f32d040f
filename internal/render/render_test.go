package render

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/otelop/otelop/internal/golden"
)

func run(args []string, stdin string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestSamplesGolden renders every collector sample of config/samples.
func TestSamplesGolden(t *testing.T) {
	samples, err := filepath.Glob("../../config/samples/*opentelemetrycollector*.yaml")
	if err != nil || len(samples) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	for _, sample := range samples {
		name := strings.TrimSuffix(filepath.Base(sample), ".yaml")
		t.Run(name, func(t *testing.T) {
			code, out, stderr := run([]string{"-f", sample}, "")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden.Check(t, name+".golden.yaml", []byte(out))
		})
	}
}

func TestStdinJSONAndSet(t *testing.T) {
	g := NewWithT(t)
	in, err := os.ReadFile("../../config/samples/opentelemetry.io_v1beta1_opentelemetrycollector_deployment.yaml")
	g.Expect(err).NotTo(HaveOccurred())
	code, out, stderr := run([]string{"-f", "-", "-o", "json", "--set", "spec.mode=statefulset", "--set", "metadata.namespace=prod"}, string(in))
	g.Expect(code).To(Equal(0), stderr)
	g.Expect(out).To(HavePrefix("["))
	g.Expect(out).To(ContainSubstring(`"kind": "StatefulSet"`))
	g.Expect(out).To(ContainSubstring(`"namespace": "prod"`))
	g.Expect(out).To(ContainSubstring(`"serviceName": "simple-collector-headless"`))
}

func TestBadInput(t *testing.T) {
	g := NewWithT(t)
	code, out, stderr := run([]string{"-f", "testdata/bad.yaml"}, "")
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(BeEmpty())
	g.Expect(stderr).To(ContainSubstring("testdata/bad.yaml: document 2 (OpenTelemetryCollector broken): spec.config.service.pipelines.traces.receivers[1]"))
	g.Expect(stderr).To(ContainSubstring("testdata/bad.yaml: document 2 (OpenTelemetryCollector broken): spec.tolerations"))
	g.Expect(stderr).To(ContainSubstring(`testdata/bad.yaml: document 3: unknown field "replicaz"`))
}

func TestFlags(t *testing.T) {
	g := NewWithT(t)
	code, _, stderr := run([]string{"--help"}, "")
	g.Expect(code).To(Equal(0))
	g.Expect(stderr).To(ContainSubstring("Usage: opentelemetry-operator render -f FILE"))
	code, _, _ = run(nil, "")
	g.Expect(code).To(Equal(2))
	code, _, _ = run([]string{"-f", "x", "-o", "xml"}, "")
	g.Expect(code).To(Equal(2))
	code, _, stderr = run([]string{"-f", "does-not-exist.yaml"}, "")
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("does-not-exist.yaml"))
}

// TestUnparsableV1alpha1Config: conversion no longer fails on a v1alpha1 config that does not
// parse (it keeps the text for the API server's sake), but render still refuses it, naming the
// field.
func TestUnparsableV1alpha1Config(t *testing.T) {
	g := NewWithT(t)
	doc := "apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: {name: old}\nspec:\n  config: |\n    receivers: [unclosed\n"
	code, out, stderr := run([]string{"-f", "-"}, doc)
	g.Expect(code).To(Equal(1))
	g.Expect(out).To(BeEmpty())
	g.Expect(stderr).To(ContainSubstring("spec.config: invalid collector configuration"))
}

// TestDiffExitCodes: with --diff, exit code 2 means "changes", so bad flags and a cluster that
// cannot be reached exit with 1 (the plan's own codes are proved in internal/plan).
func TestDiffExitCodes(t *testing.T) {
	g := NewWithT(t)
	sample := "../../config/samples/opentelemetry.io_v1beta1_opentelemetrycollector_deployment.yaml"
	code, _, stderr := run([]string{"--diff"}, "")
	g.Expect(code).To(Equal(1), stderr)
	code, _, stderr = run([]string{"--diff", "-f", sample, "-o", "yaml"}, "")
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("-o must be text or json"))
	code, _, stderr = run([]string{"--diff", "-f", sample, "--kubeconfig", "does-not-exist"}, "")
	g.Expect(code).To(Equal(1))
	g.Expect(stderr).To(ContainSubstring("loading the cluster connection"))

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	unreachable := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
	g.Expect(os.WriteFile(kubeconfig, []byte(unreachable), 0o600)).To(Succeed())
	code, out, stderr := run([]string{"--diff", "-f", sample, "--kubeconfig", kubeconfig, "--timeout", "5s"}, "")
	g.Expect(code).To(Equal(1), out)
	g.Expect(stderr).To(ContainSubstring("127.0.0.1:1"))
	g.Expect(out).To(BeEmpty())

	code, _, stderr = run([]string{"--help"}, "")
	g.Expect(code).To(Equal(0))
	g.Expect(stderr).To(ContainSubstring("--diff plans the input against a live cluster"))
}
