// Command operator-opamp-bridge connects OpenTelemetryCollector resources to an OpAMP server: it
// reports the collectors labelled for it, applies the server's configuration to them and proxies
// the collectors' own opamp extension. Flags and the configuration file are upstream's.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/otelop/otelop/internal/opampbridge/bridge"
	"github.com/otelop/otelop/internal/opampbridge/config"
	"github.com/otelop/otelop/internal/version"
)

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "operator-opamp-bridge")
		return
	}
	fs := config.NewFlagSet()
	fs.Bool("version", false, version.FlagUsage)
	zapOpts := zap.Options{}
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	zapOpts.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
	cfg, err := config.Load(fs, os.Args[1:], os.Getenv)
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts))
	ctrl.SetLogger(log)
	rc, err := clientcmd.BuildConfigFromFlags("", cfg.KubeConfigFilePath)
	if err != nil {
		log.Error(err, "building the Kubernetes client configuration")
		os.Exit(1)
	}
	rc.UserAgent = "operator-opamp-bridge"
	// The client rate is bridge.ClientConfig's (200 requests/s, burst 400), applied by Run:
	// client-go's default of 5/s made a 500-file remote config take 5 minutes, and no limit let a
	// server pushing configurations in a loop flood the API server.
	if err := bridge.Run(ctrl.SetupSignalHandler(), cfg, rc, bridge.Options{Logger: log, Version: version.Version}); err != nil {
		log.Error(err, "bridge exited with an error")
		os.Exit(1)
	}
}
