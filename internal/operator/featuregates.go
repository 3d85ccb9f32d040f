package operator

import (
	"fmt"
	"sort"
	"strings"

	"github.com/otelop/otelop/internal/manifests/collector"
)

// gate is one feature gate upstream defines, with its default.
type gate struct {
	stage   string
	enabled bool
	stable  bool // stable gates cannot be disabled
}

// knownGates are upstream's feature gates (pkg/featuregate) and their defaults.
var knownGates = map[string]gate{
	"operator.golang.flags":                       {stage: "stable", enabled: true, stable: true},
	"operator.targetallocator.fallbackstrategy":   {stage: "alpha"},
	"operator.targetallocator.mtls":               {stage: "alpha"},
	"operator.networkpolicy":                      {stage: "beta", enabled: true},
	"operand.networkpolicy":                       {stage: "beta", enabled: true},
	"operator.clusterobservability":               {stage: "alpha"},
	"operator.collector.usedefaulttelemetryshape": {stage: "stable", enabled: true, stable: true},
}

// featureGates is the resolved on/off state of every known gate.
type featureGates map[string]bool

func knownGatesHelp() string {
	names := make([]string, 0, len(knownGates))
	for n, g := range knownGates {
		names = append(names, fmt.Sprintf("%s (%s, default %t)", n, g.stage, g.enabled))
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// parseFeatureGates reads "+a,-b,c". Unknown gates and disabling a stable gate are errors that name
// the gate and list the known ones.
func parseFeatureGates(s string) (featureGates, error) {
	out := featureGates{}
	for n, g := range knownGates {
		out[n] = g.enabled
	}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		on := true
		switch item[0] {
		case '+':
			item = item[1:]
		case '-':
			on, item = false, item[1:]
		}
		g, ok := knownGates[item]
		if !ok {
			return nil, fmt.Errorf("--feature-gates: unknown gate %q; known gates: %s", item, knownGatesHelp())
		}
		if g.stable && !on {
			return nil, fmt.Errorf("--feature-gates: %q is stable and cannot be disabled", item)
		}
		out[item] = on
	}
	return out, nil
}

// apply sets the builder switches that gates control.
func (f featureGates) apply(o *collector.Options) {
	o.SetGolangFlags = f["operator.golang.flags"]
	o.TargetAllocatorMTLS = f["operator.targetallocator.mtls"]
	o.OperandNetworkPolicy = f["operand.networkpolicy"]
	o.LegacyTelemetryShape = !f["operator.collector.usedefaulttelemetryshape"]
}
