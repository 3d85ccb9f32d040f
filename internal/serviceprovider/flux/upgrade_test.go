package flux

import (
	"testing"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestChartVersionMatches(t *testing.T) {
	g := NewWithT(t)
	g.Expect(ChartVersionMatches("0.20.8+0123456789ab", "0.20.8")).To(BeTrue())
	g.Expect(ChartVersionMatches("0.20.8", "0.20.8")).To(BeTrue())
	g.Expect(ChartVersionMatches("0.20.8+0123456789ab", "v0.20.8")).To(BeTrue())
	g.Expect(ChartVersionMatches("0.20.1+0123456789ab", "0.20.8")).To(BeFalse())
	g.Expect(ChartVersionMatches("0.20.80", "0.20.8")).To(BeFalse())
	g.Expect(ChartVersionMatches("", "")).To(BeFalse())
}

// evalReadyExpr evaluates a dependsOn readyExpr as helm-controller v1.4.0 does (fluxcd/pkg
// runtime/cel: self and dep as google.protobuf.Struct variables, the same environment options,
// the HelmReleases as unstructured maps).
// An evaluation error (helm-controller treats it as "not ready" and retries) is returned.
func evalReadyExpr(g Gomega, expr string, self, dep *helmv2.HelmRelease) (bool, error) {
	env, err := cel.NewEnv(cel.HomogeneousAggregateLiterals(), cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true), cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(),
		ext.Strings(), ext.Sets(), ext.Encoders(),
		cel.Variable("self", cel.ObjectType("google.protobuf.Struct")), cel.Variable("dep", cel.ObjectType("google.protobuf.Struct")))
	g.Expect(err).NotTo(HaveOccurred())
	ast, iss := env.Compile(expr)
	g.Expect(iss.Err()).NotTo(HaveOccurred())
	g.Expect(ast.OutputType()).To(Equal(cel.BoolType))
	prg, err := env.Program(ast)
	g.Expect(err).NotTo(HaveOccurred())
	selfMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(self)
	g.Expect(err).NotTo(HaveOccurred())
	depMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(dep)
	g.Expect(err).NotTo(HaveOccurred())
	out, _, err := prg.Eval(map[string]any{"self": selfMap, "dep": depMap})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	g.Expect(ok).To(BeTrue())
	return b, nil
}

// The workload release waits for the CRDs release of its own chart version: the CRDs release
// Ready with the old chart (the moment after spec.version changed) does not let it upgrade.
func TestCRDsReleaseReadyExpr(t *testing.T) {
	g := NewWithT(t)
	in := inputs()
	in.Version = "0.20.9"
	wl := WorkloadRelease(in)
	g.Expect(wl.Spec.DependsOn).To(HaveLen(1))
	expr := wl.Spec.DependsOn[0].ReadyExpr
	g.Expect(expr).To(Equal(CRDsReleaseReadyExpr("0.20.9")))

	crds := func(gen, observed int64, ready metav1.ConditionStatus, history ...*helmv2.Snapshot) *helmv2.HelmRelease {
		hr := CRDsRelease(in)
		hr.Generation = gen
		hr.Status.ObservedGeneration = observed
		hr.Status.Conditions = []metav1.Condition{{Type: "Ready", Status: ready, Reason: "x", ObservedGeneration: observed}}
		hr.Status.History = history
		return hr
	}
	snap := func(rev int, version, status string) *helmv2.Snapshot {
		return &helmv2.Snapshot{Version: rev, ChartVersion: version, Status: status, ChartName: "c", Name: "r", Namespace: "n"}
	}
	newDeployed := snap(2, "0.20.9+0123456789ab", "deployed")
	oldDeployed := snap(1, "0.20.8+ba9876543210", "deployed")
	oldSuperseded := snap(1, "0.20.8+ba9876543210", "superseded")

	g.Expect(evalReadyExpr(g, expr, wl, crds(1, 1, "True", newDeployed, oldSuperseded))).To(BeTrue(), "CRDs release runs the new chart")
	g.Expect(evalReadyExpr(g, expr, wl, crds(1, 1, "True", oldDeployed))).To(BeFalse(), "CRDs release Ready with the old chart")
	g.Expect(evalReadyExpr(g, expr, wl, crds(1, 1, "Unknown", newDeployed))).To(BeFalse(), "CRDs release not Ready")
	g.Expect(evalReadyExpr(g, expr, wl, crds(2, 1, "True", newDeployed))).To(BeFalse(), "CRDs release generation not observed")
	g.Expect(evalReadyExpr(g, expr, wl, crds(1, 1, "True", snap(2, "0.20.9+0123456789ab", "pending-upgrade")))).To(BeFalse(), "not deployed")
	g.Expect(evalReadyExpr(g, expr, wl, crds(1, 1, "True"))).To(BeFalse(), "no history")
	g.Expect(evalReadyExpr(g, expr, wl, &helmv2.HelmRelease{})).To(BeFalse(), "no status at all")
	// The same for a chart version tagged with a leading v (recorded without it).
	g.Expect(evalReadyExpr(g, CRDsReleaseReadyExpr("v0.20.9"), wl, crds(1, 1, "True", newDeployed))).To(BeTrue(), "v-prefixed tag")
}
