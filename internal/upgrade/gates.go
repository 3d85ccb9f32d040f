package upgrade

import (
	"strings"

	"github.com/otelop/otelop/api/v1beta1"
)

const (
	// featureGatesArg is the spec.args key rendered as the collector's --feature-gates flag.
	featureGatesArg = "feature-gates"
	// envVarExpansionGate switched the collector to ${env:VAR}-only expansion (beta in 0.104.0).
	// Collectors from 0.105.0 handle the prometheus receiver's "$" correctly with it on; it later
	// became stable and was removed, and a collector given a stable or unknown gate does not start.
	envVarExpansionGate = "confmap.unifyEnvVarExpansion"
	// localhostGate made components without an explicit host listen on localhost instead of
	// 0.0.0.0 (beta in 0.104.0, stable in 0.110.0, after which it can no longer be disabled).
	localhostGate = "component.UseLocalHostAsDefaultHost"
)

// hasPrometheusReceiver reports whether a receiver ID mentions prometheus, the test upstream uses
// to decide which collectors needed the expansion gate off.
func hasPrometheusReceiver(spec *v1beta1.OpenTelemetryCollectorSpec) bool {
	for id := range spec.Config.Receivers.Object {
		if strings.Contains(id, "prometheus") {
			return true
		}
	}
	return false
}

// disableGate adds "-<gate>" to the feature-gates argument unless the argument already mentions
// the gate in any form (then the user's choice stands). It reports whether it changed anything.
func disableGate(spec *v1beta1.OpenTelemetryCollectorSpec, gate string) bool {
	current := spec.Args[featureGatesArg]
	if strings.Contains(current, gate) {
		return false
	}
	if spec.Args == nil {
		spec.Args = map[string]string{}
	}
	if strings.TrimSpace(current) == "" {
		spec.Args[featureGatesArg] = "-" + gate
	} else {
		spec.Args[featureGatesArg] = current + ",-" + gate
	}
	return true
}

// removeDisabledGate drops every "-<gate>" entry (surrounding spaces ignored) from the
// feature-gates argument, and the argument itself when nothing else is left in it. Other entries
// keep their order and spelling. It reports whether it changed anything.
func removeDisabledGate(spec *v1beta1.OpenTelemetryCollectorSpec, gate string) bool {
	current, ok := spec.Args[featureGatesArg]
	if !ok || !strings.Contains(current, gate) {
		return false
	}
	entries := strings.Split(current, ",")
	kept := entries[:0:0]
	for _, e := range entries {
		if strings.TrimSpace(e) != "-"+gate {
			kept = append(kept, e)
		}
	}
	if len(kept) == len(entries) {
		return false
	}
	if len(kept) == 0 {
		delete(spec.Args, featureGatesArg)
	} else {
		spec.Args[featureGatesArg] = strings.Join(kept, ",")
	}
	return true
}

const gatesField = "spec.args." + featureGatesArg

// disableEnvVarExpansionGate is upstream's 0.104.0 step for collectors with a prometheus receiver:
// 0.104.0 turned the expansion gate on by default, which broke "$" in Prometheus relabel configs,
// so the gate is turned off until 0.105.0 (which removes it again).
func disableEnvVarExpansionGate(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	if !hasPrometheusReceiver(spec) || !disableGate(spec, envVarExpansionGate) {
		return nil
	}
	return []Change{{Version: "0.104.0", Field: gatesField, Message: "added -" + envVarExpansionGate +
		": collector 0.104.0 mis-expands \"$\" in the prometheus receiver's configuration with that gate on"}}
}

// removeEnvVarExpansionGate is upstream's 0.105.0 step: it takes back what the 0.104.0 step added.
func removeEnvVarExpansionGate(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	if !hasPrometheusReceiver(spec) || !removeDisabledGate(spec, envVarExpansionGate) {
		return nil
	}
	return []Change{{Version: "0.105.0", Field: gatesField, Message: "removed -" + envVarExpansionGate +
		": collectors from 0.105.0 no longer need it, and later ones refuse to start with the gate set"}}
}

// disableLocalhostGate is upstream's 0.104.0 step that kept components listening on 0.0.0.0 when
// 0.104.0 moved their default to localhost behind a beta gate; 0.110.0 removes it again.
func disableLocalhostDefaultGate(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	if !disableGate(spec, localhostGate) {
		return nil
	}
	return []Change{{Version: "0.104.0", Field: gatesField, Message: "added -" + localhostGate +
		" so that components without an explicit endpoint keep listening on 0.0.0.0"}}
}
