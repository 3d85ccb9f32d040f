// Package render implements `opentelemetry-operator render`: it prints every object the operator
// would create for the OpenTelemetryCollector resources in a file, with no cluster, for GitOps
// and review.
package render

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/otelop/otelop/api/v1beta1"
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

--diff plans the input against a live cluster instead of printing the objects: a plan before
apply, for reviews and CI. It reads (never writes) the stored collectors and the objects they
own, builds each collector as the operator would (the same builders, the migrations from the
stored collector's status.version, the same ownership rules) and prints:
  + the objects that would be created,
  ~ the objects that would change, field by field (path: old -> new; Secrets' values redacted),
    compared as the operator's applier compares them: fields the API server defaults or that
    other managers set are no difference; a field the operator set before and no longer sets is
    "(removed)";
  -/+ the objects that would be recreated (an immutable field changes, e.g. a selector),
  - the objects that would be pruned: owned by that collector (its controller reference, or
    for cluster-scoped RBAC its owner annotation) and no longer generated, old config
    ConfigMaps beyond spec.configVersions; never an object the operator cannot prove it made,
and for each Deployment, DaemonSet and StatefulSet whether its pods roll and why: the pod
template fields that change, named config (the configuration hash annotation or the config
ConfigMap mounted), image, env, args, volumes, resources, ports, probes, labels, annotations...
-o json prints the same plan as JSON. The connection follows the usual rules (--kubeconfig,
$KUBECONFIG, the in-cluster configuration, ~/.kube/config; --context). The optional APIs
(Prometheus, Gateway API, Routes, cert-manager) are read from the cluster's CRDs unless set by
their flags; --create-rbac is assumed when the cluster holds any ClusterRole the operator
generated. Pass the operator's own flags (--collector-image, filters, gates) for a faithful
plan. Exit codes with --diff: 0 no changes, 2 something would change, 1 an error (bad input
or flags, no cluster, an object that belongs to someone else).
  opentelemetry-operator render --diff -f collector.yaml
  opentelemetry-operator render --diff -o json -f collector.yaml --kubeconfig ~/.kube/prod

Flags:
`

// Main runs the render command with args (after "render") and returns the process exit code:
// 0 on success, 1 on bad input, 2 on bad flags; with --diff 0 when nothing would change, 2 when
// something would, 1 on any error.
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
	var (
		diff bool
		df   diffFlags
	)
	fs.BoolVar(&diff, "diff", false, "plan against a live cluster: print what would be created, changed and pruned, and which pods roll (exit 2 when anything would change)")
	fs.StringVar(&df.kubeconfig, "kubeconfig", "", "with --diff: kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	fs.StringVar(&df.context, "context", "", "with --diff: kubeconfig context")
	fs.DurationVar(&df.timeout, "timeout", time.Minute, "with --diff: how long the cluster reads may take")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	// Bad flags exit with 2 when rendering, as before; with --diff, 2 means "changes", so they
	// exit with 1.
	badUsage := 2
	if slices.ContainsFunc(args, func(a string) bool { return a == "--diff" || strings.HasPrefix(a, "--diff=") }) {
		badUsage = exitError
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return badUsage
	}
	if file == "" {
		fmt.Fprintln(stderr, "render: -f is required (use -f - for standard input)")
		fs.Usage()
		return badUsage
	}
	if diff && !fs.Changed("output") {
		output = "text"
	}
	if want := "yaml or json"; diff && output != "text" && output != "json" || !diff && output != "yaml" && output != "json" {
		if diff {
			want = "text or json"
		}
		fmt.Fprintf(stderr, "render: -o must be %s, not %q\n", want, output)
		return badUsage
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
	if diff {
		df.pinned = map[string]bool{}
		for _, f := range []string{"prometheus-crds", "gateway-api", "openshift-routes", "cert-manager", "create-rbac"} {
			df.pinned[f] = fs.Changed(f)
		}
		return runDiff(file, data, sets, namespace, opts, df, output, stdout, stderr)
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
	cols, problems, warnings := collectors(file, data, sets, namespace, opts)
	var objs []client.Object
	for _, c := range cols {
		built, err := collector.Build(*c.col, opts)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", c.where, err))
			continue
		}
		objs = append(objs, built...)
	}
	return objs, problems, warnings
}

// validCollector is a decoded, defaulted and valid collector; where names it in messages.
type validCollector struct {
	col   *v1beta1.OpenTelemetryCollector
	where string
}

// collectors decodes the collectors in data, applies sets and defaults, and validates them. It
// returns the valid ones in document order, one line per problem and the warnings.
func collectors(file string, data []byte, sets []string, namespace string, opts collector.Options) ([]validCollector, []string, []string) {
	docs, err := decode(data, sets, namespace)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", file, err)}, nil
	}
	var (
		out                []validCollector
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
		col := d.col.DeepCopy()
		where += fmt.Sprintf(" (OpenTelemetryCollector %s)", col.Name)
		if err := collector.ApplyDefaults(col, opts); err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", where, err))
			continue
		}
		errs, warns := collector.Validate(*col, opts)
		for _, w := range warns {
			warnings = append(warnings, where+": "+w)
		}
		if len(errs) > 0 {
			for _, e := range errs {
				problems = append(problems, fmt.Sprintf("%s: %s", where, strings.TrimSpace(e.Error())))
			}
			continue
		}
		out = append(out, validCollector{col: col, where: where})
	}
	return out, problems, warnings
}
