package collectorconfig

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/otelop/otelop/internal/redact"
)

// Validate checks the structure of a parsed config and returns every problem at once, each with a
// path under fldPath (e.g. spec.config.service.pipelines.traces.receivers[1]), plus warnings.
//
// Errors: sections or pipelines of the wrong shape, invalid component ids, component configs that
// are not objects, a missing service or pipelines, unknown pipeline signals, pipelines without
// receivers or exporters, references to undefined components or to components of the wrong kind,
// duplicate references, connectors not used on both sides, service.extensions naming undefined
// extensions, unknown protocols of multi-protocol receivers, endpoints whose port cannot be parsed,
// and two used components on the same port number and protocol or port name.
//
// Warnings: null values (use {} instead), port names replaced by port-<number>, and a component
// port equal to the collector's own metrics port.
func Validate(c *Config, fldPath *field.Path) (field.ErrorList, []string) {
	v := validator{c: c, root: fldPath}
	for _, p := range c.problems {
		v.errs = append(v.errs, p.toError(fldPath))
	}
	v.components()
	v.service()
	v.ports()
	return v.errs, v.warnings
}

type validator struct {
	c        *Config
	root     *field.Path
	errs     field.ErrorList
	warnings []string
}

func (v *validator) path(p relPath) *field.Path {
	return p.under(v.root)
}

func (v *validator) add(e *field.Error) {
	v.errs = append(v.errs, e)
}

func (v *validator) components() {
	var nulls []string
	for _, kind := range Kinds {
		for _, comp := range v.c.Components(kind) {
			p := relPath{kind.Section(), comp.ID}
			if why := validID(comp.ID); why != "" {
				v.add(field.Invalid(v.path(p), comp.ID, "invalid "+kind.String()+" id: "+why))
			}
			switch cfg := comp.Config.(type) {
			case nil:
				nulls = append(nulls, p.String())
			case map[string]any:
				nulls = append(nulls, nullPaths(cfg, p)...)
			default:
				v.add(field.Invalid(v.path(p), typeName(cfg), "must be an object (or null)"))
			}
		}
	}
	if len(nulls) > 0 {
		sort.Strings(nulls)
		v.warnings = append(v.warnings, fmt.Sprintf("%s has null values at %s; use empty objects (e.g. batch: {}) instead, "+
			"which tools such as kustomize and kubectl edit keep", pathString(v.root), strings.Join(nulls, ", ")))
	}
}

func pathString(p *field.Path) string {
	if p == nil {
		return "the config"
	}
	return p.String()
}

// nullPaths lists the keys below m whose value is null, recursing into objects.
func nullPaths(m map[string]any, p relPath) []string {
	var out []string
	for _, k := range sortedKeys(m) {
		switch t := m[k].(type) {
		case nil:
			out = append(out, p.child(k).String())
		case map[string]any:
			out = append(out, nullPaths(t, p.child(k))...)
		}
	}
	return out
}

func (v *validator) service() {
	if !v.c.hasService {
		if _, present := v.c.raw["service"]; !present || v.c.raw["service"] == nil {
			v.add(field.Required(v.path(relPath{"service"}), "a collector config needs a service with pipelines"))
		}
		return
	}
	if len(v.c.pipelines) == 0 {
		if _, isMap := asMap(getMap(v.c.raw, "service")["pipelines"]); isMap || getMap(v.c.raw, "service")["pipelines"] == nil {
			v.add(field.Required(v.path(relPath{"service", "pipelines"}), "at least one pipeline is required"))
		}
	}
	asReceiver, asExporter := map[string]bool{}, map[string]bool{}
	for _, pl := range v.c.Pipelines() {
		p := relPath{"service", "pipelines", pl.ID}
		if !isSignal(pl.Signal) {
			v.add(field.NotSupported(v.path(p), pl.Signal, Signals))
		} else if strings.Contains(pl.ID, "/") && (pl.Name == "" || strings.ContainsAny(pl.Name, "/ \t\n")) {
			v.add(field.Invalid(v.path(p), pl.ID, "a pipeline id is signal[/name] with a non-empty name without '/' or whitespace"))
		}
		v.refs(p.child("receivers"), pl.Receivers, "receivers", true, KindReceiver, KindConnector)
		v.refs(p.child("processors"), pl.Processors, "processors", false, KindProcessor)
		v.refs(p.child("exporters"), pl.Exporters, "exporters", true, KindExporter, KindConnector)
		for _, id := range pl.Receivers {
			asReceiver[id] = true
		}
		for _, id := range pl.Exporters {
			asExporter[id] = true
		}
	}
	for _, comp := range v.c.Components(KindConnector) {
		p := v.path(relPath{"connectors", comp.ID})
		switch {
		case asExporter[comp.ID] && !asReceiver[comp.ID]:
			v.add(field.Invalid(p, comp.ID, "the connector is an exporter in a pipeline but a receiver in none"))
		case asReceiver[comp.ID] && !asExporter[comp.ID]:
			v.add(field.Invalid(p, comp.ID, "the connector is a receiver in a pipeline but an exporter in none"))
		}
	}
	v.refs(relPath{"service", "extensions"}, v.c.extensions, "extensions", false, KindExtension)
}

// refs checks one list of component ids against the kinds it may name.
func (v *validator) refs(p relPath, ids []string, what string, required bool, kinds ...Kind) {
	if required && len(ids) == 0 {
		if _, bad := v.problemAt(p); !bad {
			v.add(field.Required(v.path(p), "a pipeline needs at least one of its "+what))
		}
		return
	}
	seen := map[string]bool{}
	for i, id := range ids {
		if id == "" {
			continue // reported by Parse
		}
		ip := v.path(p.child(i))
		if seen[id] {
			v.add(field.Duplicate(ip, id))
			continue
		}
		seen[id] = true
		if v.definedAs(id, kinds...) {
			continue
		}
		if other := v.definedKinds(id); len(other) > 0 {
			v.add(field.Invalid(ip, id, fmt.Sprintf("%q is defined as %s; %s must name %s", id,
				strings.Join(other, " and "), what, kindNames(kinds))))
			continue
		}
		v.add(field.NotFound(ip, id))
	}
}

func (v *validator) problemAt(p relPath) (problem, bool) {
	s := p.String()
	for _, pr := range v.c.problems {
		if pr.path.String() == s {
			return pr, true
		}
	}
	return problem{}, false
}

func (v *validator) definedAs(id string, kinds ...Kind) bool {
	for _, k := range kinds {
		if _, ok := v.c.components[k][id]; ok {
			return true
		}
	}
	return false
}

func (v *validator) definedKinds(id string) []string {
	var out []string
	for _, k := range Kinds {
		if _, ok := v.c.components[k][id]; ok {
			out = append(out, "a "+k.String())
		}
	}
	return out
}

func kindNames(kinds []Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Section()
	}
	return strings.Join(names, " or ")
}

// ports checks the listen addresses of used components and looks for clashes.
func (v *validator) ports() {
	for _, kind := range []Kind{KindReceiver, KindExporter, KindExtension} {
		for _, comp := range v.c.UsedComponents(kind) {
			v.endpointShapes(comp)
		}
	}
	all := v.c.portOrigins(KindReceiver, KindExporter, KindExtension)
	// The component defined first (by kind, then id) keeps a contested port; later ones are reported.
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.comp.Kind != b.comp.Kind {
			return a.comp.Kind < b.comp.Kind
		}
		if a.comp.ID != b.comp.ID {
			return a.comp.ID < b.comp.ID
		}
		return a.path.String() < b.path.String()
	})
	byKey := map[portKey]portOrigin{}
	byName := map[string]portOrigin{}
	for _, o := range all {
		if o.renamed != "" {
			v.warnings = append(v.warnings, o.renamed)
		}
		if o.err != nil {
			v.add(field.Invalid(v.path(o.path), getAddr(o), o.err.Error()))
			continue
		}
		k := keyOf(o.port)
		if first, ok := byKey[k]; ok {
			v.add(field.Invalid(v.path(o.path), o.port.Port, fmt.Sprintf("port %d/%s is also used by %s %q (%s)",
				k.port, k.protocol, first.comp.Kind, first.comp.ID, first.path)))
			continue
		}
		byKey[k] = o
		if first, ok := byName[o.port.Name]; ok {
			v.add(field.Invalid(v.path(o.path), o.port.Name, fmt.Sprintf("port name %q is also used by %s %q (%s)",
				o.port.Name, first.comp.Kind, first.comp.ID, first.path)))
			continue
		}
		byName[o.port.Name] = o
	}
	_, mport, err := MetricsEndpoint(v.c)
	if err != nil {
		v.add(field.Invalid(v.path(relPath{"service", "telemetry", "metrics"}), "", err.Error()))
		return
	}
	if o, ok := byKey[portKey{port: mport, protocol: "TCP"}]; ok {
		v.warnings = append(v.warnings, fmt.Sprintf("%s %q listens on port %d, which the collector's own metrics use too (service.telemetry.metrics)",
			o.comp.Kind, o.comp.ID, mport))
	}
}

// getAddr is the endpoint an error repeats, without credentials or query (redact.Endpoint): the
// message reaches status conditions, Events and logs.
func getAddr(o portOrigin) any {
	return redact.Endpoint(o.addr)
}

// endpointShapes reports endpoint fields that are not strings and unknown protocols.
func (v *validator) endpointShapes(comp Component) {
	s := specFor(comp.Kind, comp.Type)
	base := relPath{comp.Kind.Section(), comp.ID}
	cfg := comp.configMap()
	check := func(m map[string]any, p relPath) {
		for _, key := range []string{"endpoint", "listen_address"} {
			if val, ok := m[key]; ok && val != nil {
				if _, isString := val.(string); !isString {
					v.add(field.Invalid(v.path(p.child(key)), typeName(val), "must be a string such as 0.0.0.0:4317"))
				}
			}
		}
	}
	switch s.style {
	case styleSingle:
		check(cfg, base)
	case styleHTTP:
		check(getMap(cfg, "http"), base.child("http"))
	case styleMulti:
		pv := cfg["protocols"]
		protocols, ok := asMap(pv)
		if pv != nil && !ok {
			v.add(field.Invalid(v.path(base.child("protocols")), typeName(pv), "must be an object of protocol names to settings"))
			return
		}
		allowed := make([]string, len(s.ports))
		for i, d := range s.ports {
			allowed[i] = d.protocol
		}
		for _, proto := range sortedKeys(protocols) {
			p := base.child("protocols", proto)
			if _, known := findProtocol(s, proto); !known {
				v.add(field.NotSupported(v.path(p), proto, allowed))
				continue
			}
			pc := protocols[proto]
			pm, ok := asMap(pc)
			if pc != nil && !ok {
				v.add(field.Invalid(v.path(p), typeName(pc), "must be an object (or null)"))
				continue
			}
			check(pm, p)
		}
	}
}
