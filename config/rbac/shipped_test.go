package rbac

import (
	"strings"
	"testing"
)

func TestOperatorRulesAreTheShippedOnes(t *testing.T) {
	cluster, ns := OperatorRules()
	if len(cluster) < 10 {
		t.Fatalf("ClusterRole rules: %d, want the generated list", len(cluster))
	}
	var secretNames, leaseNames []string
	for _, r := range ns {
		for _, res := range r.Resources {
			switch res {
			case "secrets":
				secretNames = append(secretNames, r.ResourceNames...)
			case "leases":
				leaseNames = append(leaseNames, r.ResourceNames...)
			}
		}
	}
	if strings.Join(secretNames, ",") != WebhookCertSecretName || strings.Join(leaseNames, ",") != LeaderElectionLease {
		t.Fatalf("namespaced Role names %v / %v, want %s / %s", secretNames, leaseNames, WebhookCertSecretName, LeaderElectionLease)
	}
	for _, r := range cluster {
		for _, res := range r.Resources {
			if res == "secrets" {
				t.Fatalf("the ClusterRole grants Secrets cluster-wide: %+v", r)
			}
		}
	}
	// Fresh copies: changing one result does not change the next.
	cluster[0].Verbs[0] = "changed"
	if again, _ := OperatorRules(); again[0].Verbs[0] == "changed" {
		t.Fatal("OperatorRules returned shared slices")
	}
}
