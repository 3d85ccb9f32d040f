package operator

import (
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelop/otelop/api/v1beta1"
)

func TestCacheOptionsScopeEverythingToOurLabel(t *testing.T) {
	g := NewWithT(t)
	opts := CacheOptions(nil)
	g.Expect(opts.DefaultLabelSelector.Matches(labels.Set{"app.kubernetes.io/managed-by": "opentelemetry-operator"})).To(BeTrue())
	g.Expect(opts.DefaultLabelSelector.Matches(labels.Set{"app": "users-own"})).To(BeFalse(), "user objects are not cached")
	g.Expect(opts.DefaultTransform).NotTo(BeNil(), "managedFields are stripped")
	g.Expect(opts.DefaultNamespaces).To(BeEmpty(), "all namespaces by default")
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*v1beta1.OpenTelemetryCollector); ok {
			g.Expect(by.Label.Empty()).To(BeTrue(), "every collector is watched, labelled or not")
		}
		_, isSecret := obj.(*corev1.Secret)
		g.Expect(isSecret).To(BeFalse(), "Secrets are never cached")
	}
}

func TestCacheOptionsWatchNamespaces(t *testing.T) {
	g := NewWithT(t)
	opts := CacheOptions([]string{"team-a", " team-b ", ""})
	g.Expect(opts.DefaultNamespaces).To(HaveLen(2))
	g.Expect(opts.DefaultNamespaces).To(HaveKey("team-a"))
	g.Expect(opts.DefaultNamespaces).To(HaveKey("team-b"))
}

func TestFeatureGates(t *testing.T) {
	g := NewWithT(t)
	gates, err := parseFeatureGates("-operand.networkpolicy,+operator.targetallocator.mtls")
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(gates["operand.networkpolicy"]).To(BeFalse())
	g.Expect(gates["operator.targetallocator.mtls"]).To(BeTrue())
	g.Expect(gates["operator.golang.flags"]).To(BeTrue(), "stable gates stay on")

	_, err = parseFeatureGates("operator.nosuchgate")
	g.Expect(err).To(MatchError(ContainSubstring(`unknown gate "operator.nosuchgate"`)))
	g.Expect(err).To(MatchError(ContainSubstring("operand.networkpolicy")), "the error lists the known gates")
	_, err = parseFeatureGates("-operator.golang.flags")
	g.Expect(err).To(MatchError(ContainSubstring("stable and cannot be disabled")))
}
