package plan

import (
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/otelop/otelop/internal/apply"
)

func TestReasons(t *testing.T) {
	g := NewWithT(t)
	for path, want := range map[string]string{
		`metadata.annotations["opentelemetry-operator-config/sha256"]`: "config",
		"spec.volumes[otc-internal].configMap.name":                    "config",
		`metadata.annotations["team"]`:                                 "annotations",
		"metadata.labels.app":                                          "labels",
		"spec.volumes[certs]":                                          "volumes",
		"spec.containers[otc-container].image":                         "image",
		"spec.containers[otc-container].env[GOMEMLIMIT].value":         "env",
		"spec.containers[otc-container].args[0]":                       "args",
		"spec.containers[otc-container].volumeMounts[certs]":           "volumes",
		"spec.containers[otc-container].resources.limits.memory":       "resources",
		"spec.containers[otc-container].readinessProbe.periodSeconds":  "probes",
		"spec.containers[otc-container].ports[otlp-grpc]":              "ports",
		"spec.initContainers[init].image":                              "image",
		"spec.containers[extra]":                                       "containers",
		"spec.tolerations":                                             "tolerations",
		"spec.serviceAccountName":                                      "serviceAccountName",
	} {
		g.Expect(reasonOf(path)).To(Equal(want), path)
	}
}

func TestRollout(t *testing.T) {
	g := NewWithT(t)
	dep := appsv1.SchemeGroupVersion.WithKind("Deployment")
	sts := appsv1.SchemeGroupVersion.WithKind("StatefulSet")
	scale := []apply.FieldChange{{Path: "spec.replicas", Old: 1, New: 2}}
	g.Expect(immutableChange(dep, scale)).To(BeFalse())
	g.Expect(rolloutOf(Update, scale)).To(Equal(&Rollout{}), "scaling replaces no pod")
	image := []apply.FieldChange{{Path: "spec.template.spec.containers[c].image"}, {Path: "spec.template.spec.containers[c].env[A]"}}
	g.Expect(rolloutOf(Update, image)).To(Equal(&Rollout{Rolls: true, Reasons: []string{"image", "env"},
		Fields: []string{"spec.template.spec.containers[c].image", "spec.template.spec.containers[c].env[A]"}}))
	g.Expect(immutableChange(dep, []apply.FieldChange{{Path: "spec.selector.matchLabels.app"}})).To(BeTrue())
	g.Expect(immutableChange(sts, []apply.FieldChange{{Path: "spec.serviceName"}})).To(BeTrue())
	g.Expect(immutableChange(sts, []apply.FieldChange{{Path: "spec.updateStrategy.type"}})).To(BeFalse())
	g.Expect(rolloutOf(Recreate, nil).Reasons).To(Equal([]string{"recreated"}))
}

func TestRedactAndCounts(t *testing.T) {
	g := NewWithT(t)
	changes := []apply.FieldChange{{Path: "data.token", Old: "c2VjcmV0", New: "b3RoZXI="}, {Path: "stringData.x", New: "y", Added: true}, {Path: "metadata.labels.a", Old: "1", New: "2"}}
	redact(changes)
	g.Expect(changes[0].Old).To(Equal("(redacted)"))
	g.Expect(changes[0].New).To(Equal("(redacted)"))
	g.Expect(changes[1].New).To(Equal("(redacted)"))
	g.Expect(changes[2].New).To(Equal("2"))
	c := Collector{Objects: []Object{{Action: Create}, {Action: Unchanged}, {Action: Unchanged}}}
	g.Expect(counts(c)).To(Equal("1 to create, 2 unchanged"))
	g.Expect(counts(Collector{Objects: []Object{{Action: Unchanged}}})).To(Equal("no changes (1 objects unchanged)"))
}
