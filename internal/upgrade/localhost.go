package upgrade

import (
	"reflect"
	"sort"

	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

// removeLocalhostDefaultGate is upstream's 0.110.0 step: the localhost gate became stable, so the
// "-component.UseLocalHostAsDefaultHost" the 0.104.0 step added would stop the collector from
// starting, and it is removed.
//
// Upstream stops there, so a component whose endpoint was never written out moves from 0.0.0.0 to
// localhost and can no longer be reached through its Service. This step also writes out the
// endpoints the operator's own defaulting knows (0.0.0.0:<default port> for the used receivers and
// extensions), which is what the defaulting webhook stores on the next write of the spec, and adds a
// notice for the components it does not know.
func removeLocalhostDefaultGate(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	var changes []Change
	if removeDisabledGate(spec, localhostGate) {
		changes = append(changes, Change{Version: "0.110.0", Field: gatesField, Message: "removed -" + localhostGate +
			": the gate is stable from collector 0.110.0 and cannot be disabled any more"})
	}
	changes = append(changes, explicitEndpoints(spec)...)
	return append(changes, Change{Version: "0.110.0", Message: "from collector 0.110.0 a component without an " +
		"explicit endpoint listens on localhost only; give components the operator does not know an explicit " +
		"0.0.0.0 endpoint if other pods must reach them"})
}

// explicitEndpoints fills in the default endpoints of the used receivers and extensions, as
// collectorconfig.ApplyDefaults does, and reports one change per component it touched.
func explicitEndpoints(spec *v1beta1.OpenTelemetryCollectorSpec) []Change {
	before := mcollector.RawConfig(spec.Config)
	after := collectorconfig.ApplyDefaults(before, collectorconfig.DefaultOptions{})
	var changes []Change
	sections := []struct {
		name    string
		section *v1beta1.AnyConfig
	}{
		{"receivers", &spec.Config.Receivers},
		{"extensions", spec.Config.Extensions},
	}
	for _, s := range sections {
		if s.section == nil || s.section.Object == nil {
			continue
		}
		old, _ := before[s.name].(map[string]any)
		updated, _ := after[s.name].(map[string]any)
		ids := make([]string, 0, len(updated))
		for id := range updated {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			if reflect.DeepEqual(old[id], updated[id]) {
				continue
			}
			s.section.Object[id] = updated[id]
			changes = append(changes, Change{Version: "0.110.0", Field: "spec.config." + s.name + "." + id,
				Message: "wrote out the default endpoint (0.0.0.0 and the component's port) so that it stays " +
					"reachable from other pods now that the default host is localhost"})
		}
	}
	return changes
}
