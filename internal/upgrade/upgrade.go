package upgrade

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/version"

	"github.com/otelop/otelop/api/v1beta1"
)

// Change is one thing a migration routine did to the copy Apply returned, or, when Field is empty,
// one thing it asks the user to check (a notice, which rewrites nothing).
type Change struct {
	// Version is the collector version whose routine produced the change, such as "0.122.0".
	Version string
	// Field is the spec field that was rewritten in the copy, such as
	// "spec.config.service.telemetry.metrics"; empty for a notice.
	Field string
	// Message says what was done and why, in words fit for an Event.
	Message string
}

// Rewrite reports whether the change rewrote a field (as opposed to being a notice).
func (c Change) Rewrite() bool { return c.Field != "" }

// String renders the change as "<version> <field>: <message>", leaving out an empty field.
func (c Change) String() string {
	if c.Field == "" {
		return c.Version + ": " + c.Message
	}
	return c.Version + " " + c.Field + ": " + c.Message
}

// Rewrites reports whether any of the changes rewrote the spec, that is whether the stored spec still
// has a shape the running collector version needs migrated.
func Rewrites(changes []Change) bool {
	for _, c := range changes {
		if c.Rewrite() {
			return true
		}
	}
	return false
}

// Summary joins the changes into one line for an Event, in the order they were made.
func Summary(changes []Change) string {
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// routine is one migration step. It runs when the collector crosses its version, that is when
// from < version <= to. It changes spec in place (Apply hands it a private copy) and returns what it
// did.
type routine struct {
	version *version.Version
	// supersededAt, when set, is the version of a later routine that undoes this one. When the target
	// is at or past it, this routine is skipped: running both would leave the spec as the later one
	// alone does, but report a change and its reversal.
	supersededAt *version.Version
	apply        func(spec *v1beta1.OpenTelemetryCollectorSpec) []Change
}

// routines are the migrations this operator implements, in the order they run. See docs/upgrade.md.
var routines = []routine{
	{version: v("0.104.0"), supersededAt: v("0.105.0"), apply: disableEnvVarExpansionGate},
	{version: v("0.104.0"), supersededAt: v("0.110.0"), apply: disableLocalhostDefaultGate},
	{version: v("0.105.0"), apply: removeEnvVarExpansionGate},
	{version: v("0.110.0"), apply: removeLocalhostDefaultGate},
	{version: v("0.111.0"), apply: explicitMetricsAddress},
	{version: v("0.122.0"), apply: metricsAddressToReader},
}

// dropped are the versions of upstream's routines this operator deliberately does not implement and
// whose change the user may have to make by hand (docs/upgrade.md says why for each). A collector
// last managed before one of them gets a notice. Upstream's 0.2.10 (a no-op) and 0.56.0 (the
// autoscaler, which the controller rebuilds from the spec anyway) need nothing from the user.
var dropped = []*version.Version{
	v("0.9.0"), v("0.15.0"), v("0.19.0"), v("0.24.0"), v("0.31.0"), v("0.36.0"), v("0.38.0"),
	v("0.39.0"), v("0.41.0"), v("0.43.0"), v("0.57.2"), v("0.61.0"),
}

func v(s string) *version.Version { return version.MustParseSemantic(s) }

// Apply returns a copy of otelcol migrated from collector version from (the version recorded in
// status.version) to collector version to (the one this operator runs), and the changes it made, in
// order. otelcol itself is never modified.
//
// Nothing is migrated, and no error returned, when spec.upgradeStrategy is "none", when from is
// empty (a collector this operator has not managed yet is written for the current version), or when
// from is not older than to. An empty to means "the newest known version". An error is returned
// only for a from or to that is not a version; the returned copy is then unmigrated.
//
// The same inputs always give the same output, and applying the result again with the same versions
// rewrites nothing, so Apply can run on every reconcile.
func Apply(otelcol v1beta1.OpenTelemetryCollector, from, to string) (v1beta1.OpenTelemetryCollector, []Change, error) {
	out := *otelcol.DeepCopy()
	if otelcol.Spec.UpgradeStrategy == v1beta1.UpgradeStrategyNone || from == "" {
		return out, nil, nil
	}
	fromV, err := version.Parse(from)
	if err != nil {
		return out, nil, fmt.Errorf("status.version %q is not a collector version, so the spec cannot be migrated: %w", from, err)
	}
	var toV *version.Version
	if to != "" {
		if toV, err = version.Parse(to); err != nil {
			return out, nil, fmt.Errorf("the operator's collector version %q is not a version: %w", to, err)
		}
		if !fromV.LessThan(toV) {
			return out, nil, nil
		}
	}
	crosses := func(at *version.Version) bool {
		return at != nil && fromV.LessThan(at) && (toV == nil || !toV.LessThan(at))
	}

	var changes []Change
	if skipped := droppedBetween(crosses); len(skipped) > 0 {
		changes = append(changes, Change{
			Version: skipped[len(skipped)-1],
			Message: fmt.Sprintf("status.version %s predates the migrations this operator implements; upstream's "+
				"routines for %s are not applied, so check the spec against the collector's changelog", from,
				strings.Join(skipped, ", ")),
		})
	}
	for _, r := range routines {
		if !crosses(r.version) || crosses(r.supersededAt) {
			continue
		}
		changes = append(changes, r.apply(&out.Spec)...)
	}
	return out, changes, nil
}

// droppedBetween lists the dropped routines' versions that the upgrade crosses.
func droppedBetween(crosses func(*version.Version) bool) []string {
	var out []string
	for _, d := range dropped {
		if crosses(d) {
			out = append(out, d.String())
		}
	}
	return out
}

// RecordedVersion returns the version the caller should write to status.version after building the
// collector from Apply(otelcol, otelcol.Status.Version, to).
//
// It is to, except that the current status.version is kept
//   - while the migration still rewrites the spec (Rewrites(changes)): the stored spec is not
//     rewritten, so the next reconcile must migrate it again from the same version, or the built
//     objects would fall back to the unmigrated spec;
//   - when spec.upgradeStrategy is "none", as upstream does, so that switching back to "automatic"
//     later migrates from the version the spec was written for;
//   - when it is newer than to: like upstream, the recorded version never goes backwards.
//
// An unparsable status.version is replaced by to: there is no way to migrate from it, and keeping it
// would fail every reconcile the same way.
func RecordedVersion(otelcol v1beta1.OpenTelemetryCollector, to string, changes []Change) string {
	from := otelcol.Status.Version
	if from == "" || to == "" {
		if from == "" {
			return to
		}
		return from
	}
	if otelcol.Spec.UpgradeStrategy == v1beta1.UpgradeStrategyNone || Rewrites(changes) {
		return from
	}
	fromV, err1 := version.Parse(from)
	toV, err2 := version.Parse(to)
	if err1 == nil && err2 == nil && toV.LessThan(fromV) {
		return from
	}
	return to
}
