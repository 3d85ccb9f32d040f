package collector

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/api/v1alpha1"
	"github.com/otelop/otelop/api/v1beta1"
	"github.com/otelop/otelop/internal/collectorconfig"
	mcollector "github.com/otelop/otelop/internal/manifests/collector"
)

// ValidateOptions tune Validate.
type ValidateOptions struct {
	// Manifests are the builders' operator-wide options; the builders' Validate (and Build) run
	// with them.
	Manifests mcollector.Options
	// FIPSDisabledComponents are "<kind>.<type>" entries (e.g. "receiver.otlp",
	// "exporter.awsxray") that may not be used because the platform runs in FIPS mode. Empty
	// means no component is disabled.
	FIPSDisabledComponents []string
}

var (
	specPath   = field.NewPath("spec")
	configPath = specPath.Child("config")
)

// Validate returns every problem of otelcol at once plus warnings: the builders' Validate (the
// structural config checks, upstream's mode, target allocator, port, autoscaler and ingress rules,
// and a full Build), the mode change on update, the target allocator's need for scrape configs,
// and FIPS-disabled components. old is the stored object on update and nil on create. It makes
// no API calls; the RBAC check that needs the API server is in Webhook.
func Validate(otelcol, old *v1beta1.OpenTelemetryCollector, opts ValidateOptions) (field.ErrorList, []string) {
	spec := &otelcol.Spec
	if err := v1alpha1.UnparsedConfig(otelcol); err != nil {
		// A v1alpha1 request whose config does not parse: conversion kept the text in an
		// annotation. The text is not repeated (it may hold credentials).
		return field.ErrorList{{Type: field.ErrorTypeInvalid, Field: configPath.String(),
			BadValue: field.OmitValueType{}, Detail: err.Error()}}, nil
	}
	var errs field.ErrorList
	if old != nil && old.Spec.Mode != spec.Mode {
		errs = append(errs, field.Invalid(specPath.Child("mode"), spec.Mode,
			fmt.Sprintf("the mode cannot be changed after creation (it is %q); create a new collector instead", old.Spec.Mode)))
	}
	buildErrs, warnings := mcollector.Validate(*otelcol, opts.Manifests)
	errs = append(errs, buildErrs...)
	if w := volumeClaimTemplatesWarning(otelcol, old); w != "" {
		warnings = append(warnings, w)
	}
	raw := mcollector.RawConfig(spec.Config)
	if spec.TargetAllocator.Enabled {
		errs = append(errs, validateTargetAllocator(spec, raw)...)
	}
	parsed := collectorconfig.Parse(raw)
	errs = append(errs, validateFIPS(parsed, opts.FIPSDisabledComponents)...)
	if spec.Image != "" {
		distErrs, distWarnings := validateDistribution(parsed, spec.Image)
		errs = append(errs, distErrs...)
		warnings = append(warnings, distWarnings...)
	} else {
		warnings = append(warnings, defaultImageWarnings(parsed, opts.Manifests.CollectorImage)...)
	}
	return dedupe(errs), warnings
}

// dedupe drops errors equal in type, field and detail to an earlier one, and the builders'
// "could not build" error when other errors explain it already.
func dedupe(errs field.ErrorList) field.ErrorList {
	buildFailed := func(e *field.Error) bool { return e.Type == field.ErrorTypeInternal && e.Field == specPath.String() }
	others := 0
	for _, e := range errs {
		if !buildFailed(e) {
			others++
		}
	}
	seen := map[string]bool{}
	var out field.ErrorList
	for _, e := range errs {
		if others > 0 && buildFailed(e) {
			continue
		}
		k := string(e.Type) + "\x00" + e.Field + "\x00" + e.Detail
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// validateTargetAllocator checks what the builders' Validate leaves to the webhook: an enabled
// target allocator takes its scrape configs from the prometheus receiver, so one must exist and
// have scrape configs unless the target allocator discovers them from Prometheus CRs.
func validateTargetAllocator(spec *v1beta1.OpenTelemetryCollectorSpec, raw map[string]any) field.ErrorList {
	receivers, _ := raw["receivers"].(map[string]any)
	if _, ok := receivers["prometheus"]; !ok {
		return field.ErrorList{field.Required(configPath.Child("receivers", "prometheus"),
			"the target allocator needs a prometheus receiver")}
	}
	scrapeConfigs, err := collectorconfig.PrometheusScrapeConfigs(raw, configPath)
	if err != nil {
		return nil // reported by the builders' Validate
	}
	if len(scrapeConfigs) == 0 && !spec.TargetAllocator.PrometheusCR.Enabled {
		return field.ErrorList{field.Required(configPath.Child("receivers", "prometheus", "config", "scrape_configs"),
			"define at least one scrape config or enable spec.targetAllocator.prometheusCR")}
	}
	return nil
}

// validateFIPS rejects used components that are disabled in FIPS mode.
func validateFIPS(cfg *collectorconfig.Config, disabled []string) field.ErrorList {
	if len(disabled) == 0 {
		return nil
	}
	off := map[string]bool{}
	for _, d := range disabled {
		off[strings.TrimSpace(d)] = true
	}
	var errs field.ErrorList
	for _, kind := range collectorconfig.Kinds {
		var ids []string
		for _, comp := range cfg.UsedComponents(kind) {
			if off[kind.String()+"."+comp.Type] {
				ids = append(ids, comp.ID)
			}
		}
		sort.Strings(ids)
		for _, id := range ids {
			errs = append(errs, field.Forbidden(configPath.Child(kind.Section(), id),
				fmt.Sprintf("%s %q is not FIPS compliant and is disabled on this platform; remove it from the config", kind, id)))
		}
	}
	return errs
}

// volumeClaimTemplatesWarning warns that a StatefulSet's volumeClaimTemplates cannot change in
// place: the operator deletes the StatefulSet (orphaning its pods, which the new StatefulSet adopts)
// and creates it again; running pods keep their volumes until they are recreated.
func volumeClaimTemplatesWarning(otelcol, old *v1beta1.OpenTelemetryCollector) string {
	if old == nil || otelcol.Spec.Mode != v1beta1.ModeStatefulSet || old.Spec.Mode != v1beta1.ModeStatefulSet ||
		equality.Semantic.DeepEqual(old.Spec.VolumeClaimTemplates, otelcol.Spec.VolumeClaimTemplates) {
		return ""
	}
	return "spec.volumeClaimTemplates: a StatefulSet's volume claim templates cannot change in place; the operator will " +
		"delete the StatefulSet without its pods and create it again: the pods keep running and keep their current volumes " +
		"until each is recreated (delete the pods one at a time to move them to the new claims)"
}
