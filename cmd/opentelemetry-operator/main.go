// Command opentelemetry-operator runs the OpenTelemetry Operator manager: the controllers and
// webhooks for the opentelemetry.io resources.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/otelop/otelop/internal/operator"
	"github.com/otelop/otelop/internal/render"
	"github.com/otelop/otelop/internal/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "opentelemetry-operator")
		return
	}
	if len(os.Args) > 1 && os.Args[1] == "render" {
		os.Exit(render.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	opts := operator.DefaultOptions()
	fs := pflag.NewFlagSet("opentelemetry-operator", pflag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(os.Stderr, "opentelemetry-operator manages OpenTelemetry collectors, instrumentation,\n"+
			"OpAMP bridges and target allocators on Kubernetes.\n\nUsage:\n  opentelemetry-operator [flags]          run the manager\n"+
			"  opentelemetry-operator render -h        print the objects a CR would produce, with no cluster\n"+
			"  opentelemetry-operator render --diff    plan a CR against a live cluster: what would change, which pods roll\n\nFlags:\n")
		fs.PrintDefaults()
	}
	opts.BindFlags(fs)
	fs.Bool("version", false, version.FlagUsage)
	zapOpts := zap.Options{}
	goFlags := flag.NewFlagSet("zap", flag.ExitOnError)
	zapOpts.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := operator.Run(ctrl.SetupSignalHandler(), opts); err != nil {
		ctrl.Log.Error(err, "manager exited with an error")
		os.Exit(1)
	}
}
