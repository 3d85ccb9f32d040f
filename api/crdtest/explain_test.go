package crdtest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/discovery"
)

// TestSpecFieldsDocumented is what `kubectl explain opentelemetrycollector.spec` reads: the
// published OpenAPI v3 schema must describe the spec's fields.
func TestSpecFieldsDocumented(t *testing.T) {
	g := NewWithT(t)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	g.Expect(err).NotTo(HaveOccurred())
	// The API server publishes CRD schemas asynchronously.
	var b []byte
	g.Eventually(func() error {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return err
		}
		gv, ok := paths["apis/opentelemetry.io/v1beta1"]
		if !ok {
			return fmt.Errorf("no OpenAPI v3 document for opentelemetry.io/v1beta1 yet")
		}
		b, err = gv.Schema("application/json")
		return err
	}).WithTimeout(30 * time.Second).Should(Succeed())

	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `json:"description"`
					Properties  map[string]struct {
						Description string `json:"description"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	g.Expect(json.Unmarshal(b, &doc)).To(Succeed())
	col, ok := doc.Components.Schemas["io.opentelemetry.v1beta1.OpenTelemetryCollector"]
	g.Expect(ok).To(BeTrue())
	spec := col.Properties["spec"]
	g.Expect(spec.Description).NotTo(BeEmpty())
	for _, f := range []string{"mode", "config", "replicas", "targetAllocator", "managementState", "upgradeStrategy", "ingress", "autoscaler"} {
		g.Expect(spec.Properties).To(HaveKey(f))
		g.Expect(spec.Properties[f].Description).NotTo(BeEmpty(), "spec.%s has no description", f)
	}
}
