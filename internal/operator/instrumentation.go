package operator

import (
	"github.com/spf13/pflag"

	"github.com/otelop/otelop/internal/instrumentation"
)

// InstrumentationFlags are upstream's auto-instrumentation switches.
type InstrumentationFlags struct {
	Java, NodeJS, Python, DotNet, ApacheHttpd, Go, Nginx bool
	Multi                                                bool
	// GoAnyNamespace injects the Go agent into pods of every namespace (upstream's behaviour),
	// not only of namespaces labelled instrumentation.GoAgentNamespaceLabel=true.
	GoAnyNamespace bool
}

// DefaultInstrumentationFlags are upstream's defaults: Go and nginx off, the rest on.
func DefaultInstrumentationFlags() InstrumentationFlags {
	return InstrumentationFlags{Java: true, NodeJS: true, Python: true, DotNet: true, ApacheHttpd: true, Multi: true}
}

// BindFlags registers --enable-<language>-instrumentation and --enable-multi-instrumentation.
func (f *InstrumentationFlags) BindFlags(fs *pflag.FlagSet) {
	for _, l := range []struct {
		flag  *bool
		lang  instrumentation.Language
		extra string
	}{
		{&f.Java, instrumentation.Java, ""},
		{&f.NodeJS, instrumentation.NodeJS, ""},
		{&f.Python, instrumentation.Python, ""},
		{&f.DotNet, instrumentation.DotNet, ""},
		{&f.ApacheHttpd, instrumentation.ApacheHttpd, ""},
		{&f.Go, instrumentation.Go, " The Go agent runs as a privileged sidecar with shareProcessNamespace."},
		{&f.Nginx, instrumentation.Nginx, ""},
	} {
		fs.BoolVar(l.flag, "enable-"+string(l.lang)+"-instrumentation", *l.flag,
			"Inject "+string(l.lang)+" auto-instrumentation into pods annotated with "+instrumentation.InjectAnnotation(l.lang)+
				". When off, such pods are admitted without it, with a warning and a Warning Event."+l.extra)
	}
	fs.BoolVar(&f.GoAnyNamespace, "go-instrumentation-any-namespace", f.GoAnyNamespace,
		"Inject the Go agent (a privileged root container) into pods of every namespace, as upstream does. When off, only pods of namespaces labelled "+
			instrumentation.GoAgentNamespaceLabel+"=true get it; others are admitted without it, with a warning and a Warning Event.")
	fs.BoolVar(&f.Multi, "enable-multi-instrumentation", f.Multi,
		"Allow several languages in one pod, each in the containers its instrumentation.opentelemetry.io/<language>-container-names annotation names.")
}

// Options returns the switches as the injection's options.
func (f InstrumentationFlags) Options() instrumentation.Options {
	return instrumentation.Options{
		Disabled: map[instrumentation.Language]bool{
			instrumentation.Java:        !f.Java,
			instrumentation.NodeJS:      !f.NodeJS,
			instrumentation.Python:      !f.Python,
			instrumentation.DotNet:      !f.DotNet,
			instrumentation.ApacheHttpd: !f.ApacheHttpd,
			instrumentation.Go:          !f.Go,
			instrumentation.Nginx:       !f.Nginx,
		},
		MultiInstrumentation: f.Multi,
		GoInAnyNamespace:     f.GoAnyNamespace,
	}
}

// Enabled returns the switches keyed by language name, as the Instrumentation webhook's default
// image upgrade reads them (it skips disabled languages, as upstream).
func (f InstrumentationFlags) Enabled() map[string]bool {
	out := map[string]bool{}
	for lang, off := range f.Options().Disabled {
		out[string(lang)] = !off
	}
	return out
}
