package injectdiff

import (
	"regexp"

	"github.com/otelop/otelop/test/sidebyside"
)

// The comparison is test/sidebyside's.
type (
	difference   = sidebyside.Difference
	observed     = sidebyside.Observed
	expectedDiff = sidebyside.Expected
)

const absent = sidebyside.Absent

var (
	diff    = sidebyside.Diff
	check   = sidebyside.Check
	without = sidebyside.Without
)

// sideNames matches the namespace names of both sides (injdiff-upstream-<x>, injdiff-otelop-<x>),
// and apiAccess the random suffix of the service account token volume.
var (
	sideNames = regexp.MustCompile(`injdiff-(upstream|otelop)-`)
	apiAccess = regexp.MustCompile(`kube-api-access-[a-z0-9]{5}`)
)

// normalizer turns an admitted object into the map the comparison walks: the namespace names of
// either side become injdiff-<side>-<x>, UIDs (of the owners, in resource attributes) <uid>, the
// token volume's random suffix goes, and so do the fields the API server sets differently for
// every object and the status (sidebyside.Normalizer).
var normalizer = sidebyside.Normalizer{Replace: []sidebyside.Replacement{
	{Re: sideNames, With: "injdiff-<side>-"},
	{Re: apiAccess, With: "kube-api-access-<random>"},
	{Re: sidebyside.UIDs, With: "<uid>"},
}}

func normalize(obj any) (map[string]any, error) { return normalizer.Normalize(obj) }
