// Package distributions knows which components the official OpenTelemetry Collector images
// contain (otelcol, otelcol-contrib, otelcol-k8s, otelcol-otlp, otelcol-ebpf-profiler), from
// their builder manifests at the releases in ../shared/fixtures/collector-distributions
// (zz_generated.go, written by hack/gendistributions). The collector webhook uses it to refuse a config that names
// a component the collector's image lacks, before the collector crash-loops on it.
package distributions

import (
	"slices"
	"sort"
	"strings"
)

// repositories maps an official image repository to its distribution.
var repositories = map[string]string{}

func init() {
	for dist, names := range map[string][]string{
		"otelcol":               {"opentelemetry-collector"},
		"otelcol-contrib":       {"opentelemetry-collector-contrib"},
		"otelcol-k8s":           {"opentelemetry-collector-k8s"},
		"otelcol-otlp":          {"opentelemetry-collector-otlp"},
		"otelcol-ebpf-profiler": {"opentelemetry-collector-ebpf-profiler"},
	} {
		for _, n := range names {
			for _, prefix := range []string{"otel/", "docker.io/otel/", "index.docker.io/otel/", "ghcr.io/open-telemetry/opentelemetry-collector-releases/"} {
				repositories[prefix+n] = dist
			}
		}
	}
}

// Image is an official distribution's image at a version whose component list is known.
type Image struct {
	// Distribution is the distribution's name, e.g. otelcol-k8s; Version its version, e.g. 0.140.1.
	Distribution, Version string
	comps                 []string // sorted kind/type
}

// Lookup says which official distribution and version image is. official is false for any other
// image; known is false when the image is official but its version's component list is not in
// the table (a tag such as latest, a digest only, or a release the table does not have).
func Lookup(image string) (img Image, official, known bool) {
	repo, tag := splitImage(image)
	dist, ok := repositories[repo]
	if !ok {
		return Image{}, false, false
	}
	version := strings.TrimPrefix(tag, "v")
	comps, ok := generated[version][dist]
	if !ok {
		return Image{Distribution: dist, Version: version}, true, false
	}
	return Image{Distribution: dist, Version: version, comps: comps}, true, true
}

// Has says whether the image contains the component kind/type (kind: receiver, processor,
// exporter, extension, connector).
func (i Image) Has(kind, typ string) bool {
	_, found := slices.BinarySearch(i.comps, kind+"/"+typ)
	return found
}

// Providing lists the official distributions that contain kind/type at version, sorted.
func Providing(version, kind, typ string) []string {
	var out []string
	for dist, comps := range generated[version] {
		if _, found := slices.BinarySearch(comps, kind+"/"+typ); found {
			out = append(out, dist)
		}
	}
	sort.Strings(out)
	return out
}

// Versions lists the versions the table knows.
func Versions() []string {
	out := make([]string, 0, len(generated))
	for v := range generated {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// splitImage returns an image reference's repository (without a docker.io library default) and
// tag ("" when it has none, or only a digest).
func splitImage(image string) (repo, tag string) {
	image = strings.TrimSpace(image)
	if at := strings.Index(image, "@"); at >= 0 {
		image = image[:at]
	}
	slash := strings.LastIndex(image, "/")
	if colon := strings.LastIndex(image, ":"); colon > slash {
		return image[:colon], image[colon+1:]
	}
	return image, ""
}
