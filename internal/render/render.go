// Package render implements `opentelemetry-operator render`: it prints every object the operator
// would create for the OpenTelemetryCollector resources in a file, with no cluster, for GitOps
// and review.
package render

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/internal/manifests/collector"
	"github.com/otelop/otelop/internal/manifests/manifestutils"
)

const usage = `Usage: opentelemetry-operator render -f FILE [-o yaml|json] [--set path=value]... [flags]

Prints every object the operator would create for the OpenTelemetryCollector resources in FILE
(a multi-document YAML stream; "-" reads standard input), with no cluster. v1alpha1 resources are
converted to v1beta1 first, as the conversion webhook does; every resource is then defaulted
(mode, replicas, config endpoints, telemetry) as the defaulting webhook does, validated, and built.
Other kinds in the stream are skipped.

--set path=value sets a field in every resource before anything else, e.g.
  --set spec.mode=statefulset --set metadata.namespace=prod --set spec.replicas=3
(the value is read as YAML: numbers and booleans are typed; path segments are map keys).

Bad input prints "FILE: document N (Kind name): field.path: problem" and exits with code 1.

Flags:
`

// Main runs the render command with args (after "render") and returns the process exit code:
// 0 on success, 1 on bad input, 2 on bad flags.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("render", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := collector.DefaultOptions()
	var (
		file, output, namespace string
		sets                    []string
	)
	fs.StringVarP(&file, "filename", "f", "", `file with the resources ("-" for standard input)`)
	fs.StringVarP(&output, "output", "o", "yaml", "output format: yaml or json")
	fs.StringArrayVar(&sets, "set", nil, "path=value to set in every resource (repeatable)")
	fs.StringVarP(&namespace, "namespace", "n", "default", "namespace of resources that have none")
	fs.StringVar(&opts.CollectorImage, "collector-image", opts.CollectorImage, "default collector image")
	fs.StringVar(&opts.TargetAllocatorImage, "target-allocator-image", opts.TargetAllocatorImage, "default target allocator image")
	fs.StringArrayVar(&opts.LabelsFilter, "labels-filter", opts.LabelsFilter, "label keys (regular expressions) not copied to generated objects")
	fs.StringArrayVar(&opts.AnnotationsFilter, "annotations-filter", opts.AnnotationsFilter, "annotation keys (regular expressions) not copied to generated objects")
	fs.BoolVar(&opts.PrometheusCRDs, "prometheus-crds", false, "the cluster serves ServiceMonitor and PodMonitor")
	fs.BoolVar(&opts.GatewayAPI, "gateway-api", false, "the cluster serves the Gateway API HTTPRoute")
	fs.BoolVar(&opts.OpenShiftRoutes, "openshift-routes", false, "the cluster serves OpenShift Routes")
	fs.BoolVar(&opts.CreateRBAC, "create-rbac", false, "the operator may create ClusterRoles for collectors")
	fs.BoolVar(&opts.CertManager, "cert-manager", false, "the cluster serves cert-manager")
	fs.BoolVar(&opts.TargetAllocatorMTLS, "target-allocator-mtls", false, "feature gate operator.targetallocator.mtls")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if file == "" {
		fmt.Fprintln(stderr, "render: -f is required (use -f - for standard input)")
		fs.Usage()
		return 2
	}
	if output != "yaml" && output != "json" {
		fmt.Fprintf(stderr, "render: -o must be yaml or json, not %q\n", output)
		return 2
	}
	var (
		data []byte
		err  error
	)
	if file == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "render: %v\n", err)
		return 1
	}
	objs, problems, warnings := Render(file, data, sets, namespace, opts)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "warning: %s\n", w)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		return 1
	}
	out, err := manifestutils.Encode(objs, output)
	if err != nil {
		fmt.Fprintf(stderr, "render: %v\n", err)
		return 1
	}
	if _, err := stdout.Write(out); err != nil {
		return 1
	}
	return 0
}

// Render decodes the collectors in data (named file in messages), applies sets, defaults,
// validates and builds them. It returns the objects of every valid collector in document order,
// one line per problem ("file: document N (Kind name): problem") and the warnings.
func Render(file string, data []byte, sets []string, namespace string, opts collector.Options) ([]client.Object, []string, []string) {
	docs, err := decode(data, sets, namespace)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", file, err)}, nil
	}
	var (
		objs               []client.Object
		problems, warnings []string
	)
	for _, d := range docs {
		where := fmt.Sprintf("%s: document %d", file, d.index)
		if d.err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, d.err))
			continue
		}
		if d.col == nil {
			continue
		}
		col := *d.col
		where += fmt.Sprintf(" (OpenTelemetryCollector %s)", col.Name)
		if err := collector.ApplyDefaults(&col, opts); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		errs, warns := collector.Validate(col, opts)
		for _, w := range warns {
			warnings = append(warnings, where+": "+w)
		}
		if len(errs) > 0 {
			for _, e := range errs {
				problems = append(problems, fmt.Sprintf("%s: %s", where, strings.TrimSpace(e.Error())))
			}
			continue
		}
		built, err := collector.Build(col, opts)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		objs = append(objs, built...)
	}
	return objs, problems, warnings
}
