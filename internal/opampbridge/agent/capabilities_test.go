package agent

import (
	"testing"

	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/otelop/otelop/internal/opampbridge/config"
)

// TestUnstartableCapabilitiesAreTheOnesOpAMPGoRefuses keeps config.UnstartableCapabilities (which
// the webhook and the configuration loader refuse) in step with the opamp-go version in go.mod:
// each listed capability makes the client refuse it, and every other protocol capability is
// accepted the way the bridge sets them up (description and health first).
func TestUnstartableCapabilitiesAreTheOnesOpAMPGoRefuses(t *testing.T) {
	a := newTestAgent(t, &parsingCollectors{})
	for full, v := range protobufs.AgentCapabilities_value {
		name := full[len("AgentCapabilities_"):]
		if v == 0 {
			continue
		}
		c := client.NewWebSocket(nil)
		if err := c.SetAgentDescription(a.Description()); err != nil {
			t.Fatal(err)
		}
		if err := c.SetHealth(&protobufs.ComponentHealth{Healthy: true}); err != nil {
			t.Fatal(err)
		}
		caps := protobufs.AgentCapabilities(v)
		err := c.SetCapabilities(&caps)
		_, listed := config.UnstartableCapabilities[name]
		if listed && err == nil {
			t.Errorf("%s is listed as unstartable but opamp-go accepts it", name)
		}
		if !listed && err != nil {
			t.Errorf("%s is refused by opamp-go (%v) but not listed in config.UnstartableCapabilities", name, err)
		}
	}
}
