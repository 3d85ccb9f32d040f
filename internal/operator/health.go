package operator

import (
	"fmt"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// healthChecks returns the liveness and readiness checks of the manager's probe endpoint.
// Liveness (/healthz) is a ping: a slow API server must not get the pod restarted. Readiness
// (/readyz) also needs the webhook server to accept TLS connections with its certificate, so a
// new replica gets traffic from the webhook Service (whose failurePolicy is Fail for collectors)
// only once it can answer; in self mode the certificate is written before the server starts.
func healthChecks(mgr ctrl.Manager, o Options) (live, ready map[string]healthz.Checker) {
	live = map[string]healthz.Checker{"ping": healthz.Ping}
	ready = map[string]healthz.Checker{"ping": healthz.Ping}
	if o.EnableWebhooks {
		ready["webhook-server"] = mgr.GetWebhookServer().StartedChecker()
	}
	return live, ready
}

// addHealthChecks registers healthChecks on mgr.
func addHealthChecks(mgr ctrl.Manager, o Options) error {
	live, ready := healthChecks(mgr, o)
	for name, c := range live {
		if err := mgr.AddHealthzCheck(name, c); err != nil {
			return fmt.Errorf("adding liveness check %s: %w", name, err)
		}
	}
	for name, c := range ready {
		if err := mgr.AddReadyzCheck(name, c); err != nil {
			return fmt.Errorf("adding readiness check %s: %w", name, err)
		}
	}
	return nil
}
