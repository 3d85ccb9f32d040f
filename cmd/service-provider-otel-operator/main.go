// Command service-provider-otel-operator is the OpenMCP service provider for the OpenTelemetry
// Operator. "init" installs its CRDs and registers the OtelOperator kind; "run" reconciles
// OtelOperators. POD_NAMESPACE must name the provider's namespace in the platform cluster.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/otelop/otelop/internal/serviceprovider/app"
	"github.com/otelop/otelop/internal/serviceprovider/cpaccess"
	"github.com/otelop/otelop/internal/version"
)

const usage = `usage: service-provider-otel-operator init|run [flags]
       service-provider-otel-operator --version

  init  install or upgrade the CRDs and register the OtelOperator kind at the ServiceProvider
  run   reconcile OtelOperators

POD_NAMESPACE must be set. Flags:
`

func main() {
	if version.Requested(os.Args[1:]) {
		version.Print(os.Stdout, "service-provider-otel-operator")
		return
	}
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

// parsed is a command with its options and logger settings.
type parsed struct {
	command string
	opts    app.Options
	zap     zap.Options
}

func parse(args []string, out io.Writer, getenv func(string) string) (*parsed, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprint(out, usage)
		return nil, errors.New("missing command: the first argument must be init or run")
	}
	p := &parsed{command: args[0]}
	if p.command != "init" && p.command != "run" {
		return nil, fmt.Errorf("unknown command %q: must be init or run", p.command)
	}
	fs := flag.NewFlagSet(p.command, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(out, usage); fs.PrintDefaults() }
	o := &p.opts
	fs.StringVar(&o.Environment, "environment", "", "Name of the environment.")
	fs.StringVar(&o.ProviderName, "provider-name", "otel-operator", "Name of the provider resource.")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "0", "Metrics endpoint bind address (:8443 for HTTPS, :8080 for HTTP, 0 to disable).")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", ":8081", "Health probe endpoint bind address.")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "Enable leader election.")
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "Serve metrics via HTTPS. Use --metrics-secure=false for HTTP.")
	fs.BoolVar(&o.EnableHTTP2, "enable-http2", false, "Enable HTTP/2 for metrics and webhook servers.")
	fs.StringVar(&o.WebhookCertPath, "webhook-cert-path", "", "Directory containing the webhook serving certificate.")
	fs.StringVar(&o.WebhookCertName, "webhook-cert-name", "tls.crt", "Webhook certificate file name.")
	fs.StringVar(&o.WebhookCertKey, "webhook-cert-key", "tls.key", "Webhook private key file name.")
	fs.StringVar(&o.MetricsCertPath, "metrics-cert-path", "", "Directory containing the metrics serving certificate.")
	fs.StringVar(&o.MetricsCertName, "metrics-cert-name", "tls.crt", "Metrics certificate file name.")
	fs.StringVar(&o.MetricsCertKey, "metrics-cert-key", "tls.key", "Metrics private key file name.")
	fs.DurationVar(&o.Rotation.TTL, "cp-token-ttl", cpaccess.DefaultTokenTTL, "Lifetime of the workload operator's control-plane token; it is renewed at half-life (minimum 10m).")
	verbosity := fs.String("verbosity", "INFO", "Log verbosity: DEBUG, INFO or ERROR (as passed by the openmcp-operator).")
	p.zap.BindFlags(fs)
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.Rotation.TTL < 10*time.Minute {
		return nil, fmt.Errorf("--cp-token-ttl: %s is below the API server's minimum of 10m", o.Rotation.TTL)
	}
	switch strings.ToUpper(*verbosity) {
	case "DEBUG":
		p.zap.Level = zapcore.DebugLevel
	case "INFO":
		p.zap.Level = zapcore.InfoLevel
	case "ERROR":
		p.zap.Level = zapcore.ErrorLevel
	default:
		return nil, fmt.Errorf("--verbosity: %q is not one of DEBUG, INFO, ERROR", *verbosity)
	}
	o.PodNamespace = getenv("POD_NAMESPACE")
	if o.PodNamespace == "" {
		return nil, errors.New("POD_NAMESPACE is not set: it must name the provider's namespace in the platform cluster")
	}
	return p, nil
}

func run(args []string, out io.Writer) error {
	p, err := parse(args, out, os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&p.zap)))
	var cfg *rest.Config
	if cfg, err = ctrl.GetConfig(); err != nil {
		return fmt.Errorf("connecting to the platform cluster: %w", err)
	}
	p.opts.Platform = cfg
	ctx := ctrl.SetupSignalHandler()
	if p.command == "init" {
		return app.Init(ctx, p.opts)
	}
	return app.Run(ctx, p.opts)
}
