package collectorconfig

import (
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Component is one entry of a component section, e.g. receivers["otlp/in"].
type Component struct {
	// ID is the full id, "type[/name]".
	ID string
	// Kind is the section the component is defined in.
	Kind Kind
	// Type is the part of the id before '/'.
	Type string
	// Name is the part of the id after '/', empty when there is none.
	Name string
	// Config is the component's configuration as decoded: usually an object, nil when null.
	// It is shared with the parsed input and must not be modified.
	Config any
}

// configMap returns the component's configuration as an object; nil when it is null or not an object.
func (c Component) configMap() map[string]any {
	m, _ := c.Config.(map[string]any)
	return m
}

// Pipeline is one entry of service.pipelines.
type Pipeline struct {
	// ID is the full id, "signal[/name]".
	ID string
	// Signal is the part of the id before '/': traces, metrics, logs or profiles.
	Signal string
	// Name is the part of the id after '/', empty when there is none.
	Name string
	// Receivers, Processors and Exporters are the component ids the pipeline lists, in order.
	// An entry that is not a non-empty string in the input is kept as "" so indexes line up with the
	// input; Validate reports it.
	Receivers, Processors, Exporters []string
}

// Config is the parsed model of a collector configuration. Build it with Parse.
type Config struct {
	raw        map[string]any
	components [numKinds]map[string]Component
	pipelines  map[string]Pipeline
	extensions []string
	telemetry  any
	hasService bool
	used       [numKinds]map[string]bool
	problems   []problem
}

// topLevelKeys are the keys a collector config may have.
var topLevelKeys = []string{"receivers", "exporters", "processors", "connectors", "extensions", "service"}

// Parse builds the model of a decoded collector configuration. It never fails and never modifies
// raw: structural defects (a section that is not an object, a pipeline list that is not a list of
// strings, ...) are kept and reported by Validate, and the rest of the config is still modelled.
func Parse(raw map[string]any) *Config {
	c := &Config{raw: raw, pipelines: map[string]Pipeline{}}
	for i := range c.components {
		c.components[i] = map[string]Component{}
		c.used[i] = map[string]bool{}
	}
	for _, k := range sortedKeys(raw) {
		if !contains(topLevelKeys, k) {
			c.problems = append(c.problems, problem{path: relPath{k}, typ: field.ErrorTypeNotSupported,
				value: k, detail: "supported keys: receivers, exporters, processors, connectors, extensions, service"})
		}
	}
	for _, kind := range Kinds {
		c.parseSection(kind)
	}
	c.parseService()
	c.markUsed()
	return c
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (c *Config) parseSection(kind Kind) {
	v, present := c.raw[kind.Section()]
	if !present || v == nil {
		return
	}
	m, ok := asMap(v)
	if !ok {
		c.problems = append(c.problems, problem{path: relPath{kind.Section()}, typ: field.ErrorTypeInvalid,
			value: typeName(v), detail: "must be an object of " + kind.String() + " ids to their configuration"})
		return
	}
	for id, cfg := range m {
		typ, name := SplitID(id)
		c.components[kind][id] = Component{ID: id, Kind: kind, Type: typ, Name: name, Config: cfg}
	}
}

func (c *Config) parseService() {
	v, present := c.raw["service"]
	if !present || v == nil {
		return
	}
	svc, ok := asMap(v)
	if !ok {
		c.problems = append(c.problems, problem{path: relPath{"service"}, typ: field.ErrorTypeInvalid,
			value: typeName(v), detail: "must be an object"})
		return
	}
	c.hasService = true
	c.telemetry = svc["telemetry"]
	c.extensions = c.stringList(svc, "extensions", relPath{"service", "extensions"})
	pv, present := svc["pipelines"]
	if !present || pv == nil {
		return
	}
	pm, ok := asMap(pv)
	if !ok {
		c.problems = append(c.problems, problem{path: relPath{"service", "pipelines"}, typ: field.ErrorTypeInvalid,
			value: typeName(pv), detail: "must be an object of pipeline ids to pipelines"})
		return
	}
	for id, p := range pm {
		signal, name := SplitID(id)
		pl := Pipeline{ID: id, Signal: signal, Name: name}
		path := relPath{"service", "pipelines", id}
		if p != nil {
			body, ok := asMap(p)
			if !ok {
				c.problems = append(c.problems, problem{path: path, typ: field.ErrorTypeInvalid,
					value: typeName(p), detail: "must be an object with receivers, processors and exporters"})
			} else {
				pl.Receivers = c.stringList(body, "receivers", path.child("receivers"))
				pl.Processors = c.stringList(body, "processors", path.child("processors"))
				pl.Exporters = c.stringList(body, "exporters", path.child("exporters"))
			}
		}
		c.pipelines[id] = pl
	}
}

// stringList reads m[key] as a list of component ids, recording a problem for anything else.
func (c *Config) stringList(m map[string]any, key string, path relPath) []string {
	v, present := m[key]
	if !present || v == nil {
		return nil
	}
	l, ok := asList(v)
	if !ok {
		c.problems = append(c.problems, problem{path: path, typ: field.ErrorTypeInvalid,
			value: typeName(v), detail: "must be a list of component ids"})
		return nil
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok || s == "" {
			c.problems = append(c.problems, problem{path: path.child(i), typ: field.ErrorTypeInvalid,
				value: e, detail: "must be a non-empty component id string"})
			continue
		}
		out[i] = s
	}
	return out
}

func (c *Config) markUsed() {
	for _, p := range c.pipelines {
		for _, id := range p.Receivers {
			c.markIfDefined(id, KindReceiver, KindConnector)
		}
		for _, id := range p.Processors {
			c.markIfDefined(id, KindProcessor)
		}
		for _, id := range p.Exporters {
			c.markIfDefined(id, KindExporter, KindConnector)
		}
	}
	for _, id := range c.extensions {
		c.markIfDefined(id, KindExtension)
	}
}

func (c *Config) markIfDefined(id string, kinds ...Kind) {
	for _, k := range kinds {
		if _, ok := c.components[k][id]; ok {
			c.used[k][id] = true
		}
	}
}

// Raw returns the decoded input the model was parsed from. It must not be modified.
func (c *Config) Raw() map[string]any {
	return c.raw
}

// Component returns the component of the given kind and id, and whether it is defined.
func (c *Config) Component(kind Kind, id string) (Component, bool) {
	comp, ok := c.components[kind][id]
	return comp, ok
}

// Components returns every defined component of the given kind, sorted by id.
func (c *Config) Components(kind Kind) []Component {
	m := c.components[kind]
	out := make([]Component, 0, len(m))
	for _, id := range sortedKeys(m) {
		out = append(out, m[id])
	}
	return out
}

// IsUsed reports whether the component of the given kind and id is defined and used: listed by a
// pipeline (receivers, processors, exporters and connectors) or by service.extensions (extensions).
func (c *Config) IsUsed(kind Kind, id string) bool {
	return c.used[kind][id]
}

// UsedComponents returns the defined and used components of the given kind, sorted by id.
func (c *Config) UsedComponents(kind Kind) []Component {
	m := c.components[kind]
	out := make([]Component, 0, len(c.used[kind]))
	for _, id := range sortedKeys(c.used[kind]) {
		out = append(out, m[id])
	}
	return out
}

// Pipelines returns service.pipelines sorted by id.
func (c *Config) Pipelines() []Pipeline {
	out := make([]Pipeline, 0, len(c.pipelines))
	for _, id := range sortedKeys(c.pipelines) {
		out = append(out, c.pipelines[id])
	}
	return out
}

// Pipeline returns the pipeline with the given id, and whether it exists.
func (c *Config) Pipeline(id string) (Pipeline, bool) {
	p, ok := c.pipelines[id]
	return p, ok
}

// ServiceExtensions returns service.extensions in the order given.
func (c *Config) ServiceExtensions() []string {
	return append([]string(nil), c.extensions...)
}

// Telemetry returns service.telemetry when it is an object, nil otherwise. It must not be modified.
func (c *Config) Telemetry() map[string]any {
	m, _ := c.telemetry.(map[string]any)
	return m
}

// sortPorts orders ports by name, then number, then protocol, so output is deterministic.
func sortPortOrigins(ps []portOrigin) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].port, ps[j].port
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.Protocol < b.Protocol
	})
}
