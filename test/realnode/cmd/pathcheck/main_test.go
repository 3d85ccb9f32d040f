package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestPathsOfTheInjectedVariables: the forms the injected variables take.
func TestPathsOfTheInjectedVariables(t *testing.T) {
	for value, want := range map[string][]string{
		" -javaagent:/otel-auto-instrumentation-java-app/javaagent.jar": {"/otel-auto-instrumentation-java-app/javaagent.jar"},
		"--max-old-space-size=256 --require /otel-auto-instrumentation-nodejs/autoinstrumentation.js": {
			"/otel-auto-instrumentation-nodejs/autoinstrumentation.js"},
		"/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:/app:/otel-auto-instrumentation-python": {
			"/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation", "/app", "/otel-auto-instrumentation-python"},
		"http://otel-collector:4318":                        nil,
		"k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)": nil,
	} {
		if got := paths(value); !reflect.DeepEqual(got, want) {
			t.Errorf("paths(%q) = %q, want %q", value, got, want)
		}
	}
}

// TestCheckReportsMissingPaths is the positive control: a path that is not there is reported.
func TestCheckReportsMissingPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "agent.so")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got := check([]string{
		"CORECLR_PROFILER_PATH=" + file, "DOTNET_ADDITIONAL_DEPS=" + dir, "OTEL_X=" + dir + "/linux/agent.so",
		"HOME=/nowhere",
	}, os.Stat)
	want := []string{
		"path CORECLR_PROFILER_PATH " + file + " ok file",
		"path DOTNET_ADDITIONAL_DEPS " + dir + " ok dir",
		"path OTEL_X " + dir + "/linux/agent.so missing",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("check:\n%q\nwant\n%q", got, want)
	}
	if got := tree(dir); got != "tree "+dir+" agent.so" {
		t.Errorf("tree: %q", got)
	}
}
