package operator

import (
	"github.com/spf13/pflag"

	collectorctrl "github.com/otelop/otelop/internal/controller/collector"
)

// bindRollbackFlags registers the collectors' automatic rollback switches.
func bindRollbackFlags(fs *pflag.FlagSet, o *collectorctrl.RollbackOptions) {
	fs.BoolVar(&o.Enabled, "collector-auto-rollback", o.Enabled,
		"Roll a Deployment, DaemonSet or StatefulSet collector back to its last Ready generation when a new generation's pods crash-loop, cannot start, "+
			"or are not available within --collector-rollback-deadline, and hold it there (Ready=False, reason RolledBack) until its spec changes. "+
			"A collector annotated "+collectorctrl.AutoRollbackAnnotation+"=true or =false overrides this. Off by default, as upstream (docs/rollback.md).")
	fs.DurationVar(&o.Deadline, "collector-rollback-deadline", o.Deadline,
		"With automatic rollback: how long a new collector generation may take to become available before it is rolled back "+
			"(a collector's "+collectorctrl.RollbackDeadlineAnnotation+" annotation overrides it).")
}
