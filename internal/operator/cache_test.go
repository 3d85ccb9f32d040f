package operator

import (
	"testing"

	. "github.com/onsi/gomega"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/instrumentation"
)

func TestCacheOptionsScopeEverythingToOurLabel(t *testing.T) {
	g := NewWithT(t)
	opts := CacheOptions(nil)
	g.Expect(opts.DefaultLabelSelector.Matches(labels.Set{"app.kubernetes.io/managed-by": "opentelemetry-operator"})).To(BeTrue())
	g.Expect(opts.DefaultLabelSelector.Matches(labels.Set{"app": "users-own"})).To(BeFalse(), "user objects are not cached")
	g.Expect(opts.DefaultTransform).NotTo(BeNil(), "managedFields are reduced to our own entry")
	g.Expect(opts.DefaultNamespaces).To(BeEmpty(), "all namespaces by default")
	namespaces := false
	for obj, by := range opts.ByObject {
		if _, ok := obj.(*v1beta1.OpenTelemetryCollector); ok {
			g.Expect(by.Label.Empty()).To(BeTrue(), "every collector is watched, labelled or not")
		}
		if m, ok := obj.(*metav1.PartialObjectMetadata); ok && m.Kind == "Namespace" {
			namespaces = true
			g.Expect(by.Label.Empty()).To(BeTrue(), "every namespace's metadata is cached, for the pod webhook")
		}
		_, isSecret := obj.(*corev1.Secret)
		g.Expect(isSecret).To(BeFalse(), "Secrets are never cached")
	}
	g.Expect(namespaces).To(BeTrue())
}

func TestInstrumentationFlags(t *testing.T) {
	g := NewWithT(t)
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	opts := o.Instrumentation.Options()
	g.Expect(opts.MultiInstrumentation).To(BeTrue())
	for _, l := range []instrumentation.Language{instrumentation.Java, instrumentation.NodeJS, instrumentation.Python, instrumentation.DotNet, instrumentation.ApacheHttpd, instrumentation.SDK} {
		g.Expect(opts.Enabled(l)).To(BeTrue(), string(l))
	}
	g.Expect(opts.Enabled(instrumentation.Go)).To(BeFalse())
	g.Expect(opts.Enabled(instrumentation.Nginx)).To(BeFalse())
	g.Expect(fs.Parse([]string{"--enable-go-instrumentation", "--enable-java-instrumentation=false", "--enable-multi-instrumentation=false"})).To(Succeed())
	opts = o.Instrumentation.Options()
	g.Expect(opts.Enabled(instrumentation.Go)).To(BeTrue())
	g.Expect(opts.Enabled(instrumentation.Java)).To(BeFalse())
	g.Expect(opts.MultiInstrumentation).To(BeFalse())
	g.Expect(opts.GoInAnyNamespace).To(BeFalse(), "the Go agent needs the namespace's opt-in by default")
	g.Expect(fs.Parse([]string{"--go-instrumentation-any-namespace"})).To(Succeed())
	g.Expect(o.Instrumentation.Options().GoInAnyNamespace).To(BeTrue())
	g.Expect(fs.Lookup("enable-apache-httpd-instrumentation")).NotTo(BeNil())
	g.Expect(fs.Lookup("enable-nginx-instrumentation").DefValue).To(Equal("false"))
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
