package compat

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	upv1alpha1 "github.com/open-telemetry/opentelemetry-operator/apis/v1alpha1"
	upv1beta1 "github.com/open-telemetry/opentelemetry-operator/apis/v1beta1"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
)

// newPair returns empty upstream and own objects for an apiVersion/kind.
func newPair(apiVersion, kind string) (up, ours any, ok bool) {
	switch apiVersion + "/" + kind {
	case "opentelemetry.io/v1beta1/OpenTelemetryCollector":
		return &upv1beta1.OpenTelemetryCollector{}, &v1beta1.OpenTelemetryCollector{}, true
	case "opentelemetry.io/v1alpha1/OpenTelemetryCollector":
		return &upv1alpha1.OpenTelemetryCollector{}, &v1alpha1.OpenTelemetryCollector{}, true
	case "opentelemetry.io/v1alpha1/Instrumentation":
		return &upv1alpha1.Instrumentation{}, &v1alpha1.Instrumentation{}, true
	case "opentelemetry.io/v1alpha1/OpAMPBridge":
		return &upv1alpha1.OpAMPBridge{}, &v1alpha1.OpAMPBridge{}, true
	case "opentelemetry.io/v1alpha1/TargetAllocator":
		return &upv1alpha1.TargetAllocator{}, &v1alpha1.TargetAllocator{}, true
	case "opentelemetry.io/v1alpha1/ClusterObservability":
		return &upv1alpha1.ClusterObservability{}, &v1alpha1.ClusterObservability{}, true
	}
	return nil, nil, false
}

func manifests(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"testdata", filepath.Join("..", "..", "config", "samples")} {
		m, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("expected at least 10 manifests, found %d", len(files))
	}
	return files
}

// TestManifestsRoundTripAlike decodes each manifest into upstream's type and ours, encodes both
// again and requires the same JSON. Our decode is strict, so a manifest field our types do not
// know fails the test even when upstream drops it too.
func TestManifestsRoundTripAlike(t *testing.T) {
	kinds := map[string]bool{}
	for _, f := range manifests(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			}
			if err := yaml.Unmarshal(b, &meta); err != nil {
				t.Fatal(err)
			}
			up, ours, ok := newPair(meta.APIVersion, meta.Kind)
			if !ok {
				t.Fatalf("no type pair for %s %s", meta.APIVersion, meta.Kind)
			}
			kinds[meta.APIVersion+"/"+meta.Kind] = true
			if err := yaml.Unmarshal(b, up); err != nil {
				t.Fatalf("upstream decode: %v", err)
			}
			if err := yaml.UnmarshalStrict(b, ours); err != nil {
				t.Fatalf("our strict decode: %v", err)
			}
			upJSON, err := json.Marshal(up)
			if err != nil {
				t.Fatal(err)
			}
			ourJSON, err := json.Marshal(ours)
			if err != nil {
				t.Fatal(err)
			}
			var upV, ourV any
			_ = json.Unmarshal(upJSON, &upV)
			_ = json.Unmarshal(ourJSON, &ourV)
			if !reflect.DeepEqual(upV, ourV) {
				t.Errorf("encodings differ\nupstream: %s\nours:     %s", upJSON, ourJSON)
			}
			// The collector ConfigMap name hashes json.Marshal(spec.config): it must be
			// byte-identical to upstream's.
			if u, ok := up.(*upv1beta1.OpenTelemetryCollector); ok {
				o := ours.(*v1beta1.OpenTelemetryCollector)
				uc, err := json.Marshal(&u.Spec.Config)
				if err != nil {
					t.Fatal(err)
				}
				oc, err := json.Marshal(&o.Spec.Config)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(uc, oc) {
					t.Errorf("config encodings differ\nupstream: %s\nours:     %s", uc, oc)
				}
			}
		})
	}
	for _, k := range []string{"v1beta1/OpenTelemetryCollector", "v1alpha1/OpenTelemetryCollector", "v1alpha1/Instrumentation", "v1alpha1/OpAMPBridge", "v1alpha1/TargetAllocator", "v1alpha1/ClusterObservability"} {
		if !kinds["opentelemetry.io/"+k] {
			t.Errorf("no manifest of %s", k)
		}
	}
}
