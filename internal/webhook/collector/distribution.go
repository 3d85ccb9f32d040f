package collector

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/internal/collectorconfig"
	"github.com/otelop/otelop/internal/distributions"
)

// defaultImageWarnings turns what validateDistribution would refuse for the operator's default
// image into warnings: without spec.image the image is the operator's --collector-image, which an
// install may set to another distribution (upstream's chart sets the -k8s one), and a collector
// that was valid there must stay valid here.
func defaultImageWarnings(cfg *collectorconfig.Config, image string) []string {
	errs, _ := validateDistribution(cfg, image)
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, fmt.Sprintf("%s: without spec.image the collector runs the operator's default image: %s", e.Field, e.Detail))
	}
	return out
}

// validateDistribution refuses components that the collector's image, an official distribution
// at a version whose component list is known, does not contain but another official
// distribution does: the collector would exit at start with "unknown type" and crash-loop.
// The error names the config path and the distributions that have it. An image that is not an
// official one, or an official one at a version the table lacks, gets a warning that the check
// did not run. Components no official distribution has are left alone (custom builds register
// their own types).
func validateDistribution(cfg *collectorconfig.Config, image string) (field.ErrorList, []string) {
	if image == "" {
		return nil, nil
	}
	img, official, known := distributions.Lookup(image)
	if !official {
		return nil, []string{fmt.Sprintf("spec.image: %s is not an official collector distribution; the operator did not check that it contains the config's components", image)}
	}
	if !known {
		return nil, []string{fmt.Sprintf("spec.image: the components of %s %s are not known to this operator (known versions: %s); it did not check that the image contains the config's components",
			img.Distribution, versionOrNone(img.Version), strings.Join(distributions.Versions(), ", "))}
	}
	var errs field.ErrorList
	for _, kind := range collectorconfig.Kinds {
		comps := cfg.Components(kind)
		sort.Slice(comps, func(i, j int) bool { return comps[i].ID < comps[j].ID })
		for _, c := range comps {
			if img.Has(kind.String(), c.Type) {
				continue
			}
			others := distributions.Providing(img.Version, kind.String(), c.Type)
			if len(others) == 0 {
				continue
			}
			errs = append(errs, field.Invalid(configPath.Child(kind.Section(), c.ID), c.Type, fmt.Sprintf("%s %q is not in the image %s (%s %s): available in %s; set spec.image to one of those distributions or remove the component",
				kind, c.Type, image, img.Distribution, img.Version, strings.Join(preferred(others), ", "))))
		}
	}
	return errs, nil
}

// preferred orders distributions from the smallest general one to the largest: k8s before contrib,
// and the profiling distribution last, so the first suggestion is the smallest image that has it.
func preferred(dists []string) []string {
	rank := map[string]int{"otelcol": 0, "otelcol-otlp": 1, "otelcol-k8s": 2, "otelcol-contrib": 3, "otelcol-ebpf-profiler": 4}
	out := append([]string(nil), dists...)
	sort.SliceStable(out, func(i, j int) bool { return rank[out[i]] < rank[out[j]] })
	return out
}

func versionOrNone(v string) string {
	if v == "" {
		return "(no tag)"
	}
	return v
}
