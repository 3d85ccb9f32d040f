package instrumentation

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1alpha1"
)

var specPath = field.NewPath("spec")

// samplerTypes are the sampler types the SDKs understand (upstream's list; the schema enum lacks
// parentbased_jaeger_remote, as upstream's).
var samplerTypes = []string{
	string(v1alpha1.AlwaysOn), string(v1alpha1.AlwaysOff), string(v1alpha1.TraceIDRatio),
	string(v1alpha1.ParentBasedAlwaysOn), string(v1alpha1.ParentBasedAlwaysOff),
	string(v1alpha1.ParentBasedTraceIDRatio), string(v1alpha1.JaegerRemote),
	string(v1alpha1.ParentBasedJaegerRemote), string(v1alpha1.XRaySampler),
}

// decimal is a plain decimal number, as every SDK parses OTEL_TRACES_SAMPLER_ARG (Go's ParseFloat
// alone would also take NaN, Inf, hexadecimal and underscores).
var decimal = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// pullPolicies are the image pull policies a pod accepts.
var pullPolicies = []string{string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever)}

// Validate returns every problem of inst with its field path, and warnings. It rejects what
// upstream rejects (an unknown sampler type, a sampler argument out of range or malformed, a
// volumeClaimTemplate together with volumeLimitSize) and, beyond upstream, settings that would
// make the API server refuse every pod the instrumentation is injected into (see
// docs/differences.md). It warns where upstream warns.
func Validate(inst *v1alpha1.Instrumentation) (field.ErrorList, []string) {
	spec := &inst.Spec
	errs, warnings := validateSampler(spec.Sampler, specPath.Child("sampler"))
	e, w := validateExporter(spec.Exporter, specPath.Child("exporter"))
	errs, warnings = append(errs, e...), append(warnings, w...)
	errs = append(errs, validateEnv(spec.Env, specPath.Child("env"))...)
	if p := spec.ImagePullPolicy; p != "" && !slices.Contains(pullPolicies, string(p)) {
		errs = append(errs, field.NotSupported(specPath.Child("imagePullPolicy"), p, pullPolicies))
	}
	for _, l := range Languages {
		errs = append(errs, validateLanguage(l, l.parts(spec), specPath.Child(l.Field))...)
	}
	for i, ext := range spec.Java.Extensions {
		p := specPath.Child("java", "extensions").Index(i)
		if strings.TrimSpace(ext.Image) == "" {
			errs = append(errs, field.Required(p.Child("image"), "the image holding the extension"))
		}
		if strings.TrimSpace(ext.Dir) == "" {
			errs = append(errs, field.Required(p.Child("dir"), "the directory of the extension in the image"))
		}
	}
	if v := spec.ApacheHttpd.Version; v != "" && v != "2.2" && v != "2.4" {
		warnings = append(warnings, fmt.Sprintf("spec.apacheHttpd.version: %q is not 2.2 or 2.4; the 2.4 module is used", v))
	}
	return errs, warnings
}

// validateSampler checks the type and, for the types that take one, the argument.
func validateSampler(s v1alpha1.Sampler, p *field.Path) (field.ErrorList, []string) {
	arg := p.Child("argument")
	switch s.Type {
	case "":
		if s.Argument != "" {
			return nil, []string{"spec.sampler: argument is set but type is not; the argument is ignored"}
		}
		return nil, []string{"spec.sampler.type is not set; the SDKs' default sampler (parentbased_always_on) is used"}
	case v1alpha1.TraceIDRatio, v1alpha1.ParentBasedTraceIDRatio:
		if s.Argument == "" {
			return nil, nil
		}
		if err := ratio(s.Argument); err != "" {
			return field.ErrorList{field.Invalid(arg, s.Argument, err)}, nil
		}
	case v1alpha1.JaegerRemote, v1alpha1.ParentBasedJaegerRemote:
		if s.Argument == "" {
			return nil, nil
		}
		return validateJaegerRemote(s.Argument, arg)
	case v1alpha1.AlwaysOn, v1alpha1.AlwaysOff, v1alpha1.ParentBasedAlwaysOn, v1alpha1.ParentBasedAlwaysOff:
		if s.Argument != "" {
			return nil, []string{fmt.Sprintf("spec.sampler.argument: sampler %s takes no argument; it is ignored", s.Type)}
		}
	case v1alpha1.XRaySampler:
		// The X-Ray sampler's argument is passed as it is (as upstream).
	default:
		return field.ErrorList{field.NotSupported(p.Child("type"), s.Type, samplerTypes)}, nil
	}
	return nil, nil
}

// ratio returns why s is not a sampling ratio, or "".
func ratio(s string) string {
	if !decimal.MatchString(s) {
		return "must be a decimal number between 0 and 1"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1 {
		return "must be between 0 and 1"
	}
	return ""
}

// validateJaegerRemote checks the comma-separated key=value list of the Jaeger remote samplers:
// endpoint (not empty), pollingIntervalMs (a positive integer) and initialSamplingRate (0..1).
// Unknown keys only warn: the SDKs ignore them.
func validateJaegerRemote(argument string, p *field.Path) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	for _, part := range strings.Split(argument, ",") {
		kv := strings.Split(part, "=")
		if len(kv) != 2 {
			errs = append(errs, field.Invalid(p, argument, fmt.Sprintf("%q is not key=value; the argument is a comma-separated list of endpoint=<url>, pollingIntervalMs=<ms>, initialSamplingRate=<0..1>", part)))
			continue
		}
		key, value := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		switch key {
		case "endpoint":
			if value == "" {
				errs = append(errs, field.Invalid(p, argument, "endpoint must not be empty"))
			}
		case "pollingIntervalMs":
			if n, err := strconv.Atoi(value); err != nil || n <= 0 {
				errs = append(errs, field.Invalid(p, argument, fmt.Sprintf("pollingIntervalMs %q must be a positive integer (milliseconds)", value)))
			}
		case "initialSamplingRate":
			if why := ratio(value); why != "" {
				errs = append(errs, field.Invalid(p, argument, "initialSamplingRate "+why))
			}
		default:
			warnings = append(warnings, fmt.Sprintf("spec.sampler.argument: unknown key %q is ignored (known: endpoint, pollingIntervalMs, initialSamplingRate)", key))
		}
	}
	return errs, warnings
}

// validateExporter warns where upstream warns (TLS without https, https without TLS, a client
// certificate without its key or the reverse) and rejects TLS files that can never be found:
// a relative file name is a key of the Secret (or, for the CA, of the ConfigMap), so it needs
// that object, and object names and keys must be valid.
func validateExporter(e v1alpha1.Exporter, p *field.Path) (field.ErrorList, []string) {
	var errs field.ErrorList
	var warnings []string
	https := strings.HasPrefix(e.Endpoint, "https://")
	if e.TLS == nil {
		if https {
			warnings = append(warnings, "spec.exporter.endpoint uses https:// but spec.exporter.tls is not set")
		}
		return nil, warnings
	}
	tls, tp := e.TLS, p.Child("tls")
	if !https {
		warnings = append(warnings, "spec.exporter.tls is set but spec.exporter.endpoint does not start with https://")
	}
	if (tls.Cert == "") != (tls.Key == "") {
		warnings = append(warnings, "spec.exporter.tls: cert_file and key_file should be set together")
	}
	for _, n := range []struct{ name, field string }{{tls.SecretName, "secretName"}, {tls.ConfigMapName, "configMapName"}} {
		if n.name == "" {
			continue
		}
		for _, msg := range validation.IsDNS1123Subdomain(n.name) {
			errs = append(errs, field.Invalid(tp.Child(n.field), n.name, msg))
		}
	}
	files := []struct {
		value, field, source string
		ok                   bool
	}{
		{tls.CA, "ca_file", "secretName or configMapName", tls.SecretName != "" || tls.ConfigMapName != ""},
		{tls.Cert, "cert_file", "secretName", tls.SecretName != ""},
		{tls.Key, "key_file", "secretName", tls.SecretName != ""},
	}
	for _, f := range files {
		if f.value == "" || filepath.IsAbs(f.value) {
			continue
		}
		fp := tp.Child(f.field)
		if !f.ok {
			errs = append(errs, field.Invalid(fp, f.value, fmt.Sprintf("a relative name is a key of the object named by %s, which is not set; set it, or give an absolute path in the container", f.source)))
			continue
		}
		for _, msg := range validation.IsConfigMapKey(f.value) {
			errs = append(errs, field.Invalid(fp, f.value, "not a valid key: "+msg))
		}
	}
	return errs, warnings
}

// validateLanguage checks one language's settings.
func validateLanguage(l Language, lp parts, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	limit := p.Child("volumeLimitSize")
	if lp.sizeLimit != nil {
		if !equality.Semantic.DeepEqual(*lp.claim, corev1.PersistentVolumeClaimTemplate{}) {
			errs = append(errs, field.Forbidden(limit, "volumeClaimTemplate and volumeLimitSize cannot both be set: the volume is either an ephemeral claim or an emptyDir with a size limit"))
		}
		if lp.sizeLimit.Sign() < 0 {
			errs = append(errs, field.Invalid(limit, lp.sizeLimit.String(), "must not be negative"))
		}
	}
	errs = append(errs, validateResources(*lp.resources, p.Child(l.ResourcesField))...)
	errs = append(errs, validateEnv(lp.env, p.Child("env"))...)
	for i, a := range lp.attrs {
		if strings.TrimSpace(a.Name) == "" {
			errs = append(errs, field.Required(p.Child("attrs").Index(i).Child("name"), "the name of the module setting"))
		}
	}
	return errs
}

// validateResources requires every request to be at most its limit, as the API server does for
// the injected container.
func validateResources(r corev1.ResourceRequirements, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedNames(r.Requests) {
		req := r.Requests[name]
		if lim, ok := r.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(p.Child("requests").Key(string(name)), req.String(),
				fmt.Sprintf("must be less than or equal to the %s limit %s", name, lim.String())))
		}
	}
	return errs
}

// validateEnv checks what the API server checks on the injected variables: a name without '='
// and not both value and valueFrom.
func validateEnv(env []corev1.EnvVar, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, e := range env {
		ep := p.Index(i)
		switch {
		case e.Name == "":
			errs = append(errs, field.Required(ep.Child("name"), "the variable's name"))
		case strings.Contains(e.Name, "="):
			errs = append(errs, field.Invalid(ep.Child("name"), e.Name, "must not contain '='"))
		}
		if e.Value != "" && e.ValueFrom != nil {
			errs = append(errs, field.Invalid(ep.Child("valueFrom"), "", "may not be set when value is set"))
		}
	}
	return errs
}

func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	return slices.Sorted(maps.Keys(l))
}
