package collectorconfig

import (
	"bytes"
	"encoding/json"
)

// EncodeJSON encodes a config the way upstream's typed v1beta1 Config marshals, so that hashes of
// it (the collector ConfigMap name) come out the same: top-level keys in the order receivers,
// exporters, processors, connectors, extensions, service (receivers and exporters written as null
// when absent; the other three left out when absent or null); service as extensions (left out when
// empty), telemetry (left out when absent or null), pipelines; each pipeline as exporters,
// processors (left out when empty), receivers. Unknown keys at these levels are dropped, as the
// typed API drops them. Values below are encoded by encoding/json, with object keys sorted.
func EncodeJSON(raw map[string]any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	e := &encoder{b: &b}
	e.field("receivers", raw["receivers"], false)
	e.field("exporters", raw["exporters"], false)
	e.field("processors", raw["processors"], true)
	e.field("connectors", raw["connectors"], true)
	e.field("extensions", raw["extensions"], true)
	e.key("service")
	e.service(raw["service"])
	b.WriteByte('}')
	return b.Bytes(), e.err
}

type encoder struct {
	b     *bytes.Buffer
	err   error
	comma bool
}

func (e *encoder) key(k string) {
	if e.comma {
		e.b.WriteByte(',')
	}
	e.comma = true
	e.value(k)
	e.b.WriteByte(':')
}

// field writes "k":v; omitNull leaves it out when v is null or absent.
func (e *encoder) field(k string, v any, omitNull bool) {
	if omitNull && v == nil {
		return
	}
	e.key(k)
	e.value(v)
}

func (e *encoder) value(v any) {
	if e.err != nil {
		return
	}
	out, err := json.Marshal(v)
	if err != nil {
		e.err = err
		return
	}
	e.b.Write(out)
}

func (e *encoder) service(v any) {
	svc, _ := v.(map[string]any)
	inner := &encoder{b: e.b}
	e.b.WriteByte('{')
	if l, ok := asList(svc["extensions"]); ok && len(l) > 0 {
		inner.field("extensions", l, false)
	}
	inner.field("telemetry", svc["telemetry"], true)
	inner.key("pipelines")
	pipelines, isMap := svc["pipelines"].(map[string]any)
	if !isMap {
		inner.value(nil)
	} else {
		e.b.WriteByte('{')
		pe := &encoder{b: e.b}
		for _, id := range sortedKeys(pipelines) {
			pe.key(id)
			pe.pipeline(pipelines[id])
		}
		e.err = firstErr(e.err, pe.err)
		e.b.WriteByte('}')
	}
	e.err = firstErr(e.err, inner.err)
	e.b.WriteByte('}')
}

func (e *encoder) pipeline(v any) {
	p, ok := v.(map[string]any)
	if !ok {
		e.value(nil)
		return
	}
	e.b.WriteByte('{')
	inner := &encoder{b: e.b}
	inner.field("exporters", listOrNil(p["exporters"]), false)
	if l, ok := asList(p["processors"]); ok && len(l) > 0 {
		inner.field("processors", l, false)
	}
	inner.field("receivers", listOrNil(p["receivers"]), false)
	e.err = firstErr(e.err, inner.err)
	e.b.WriteByte('}')
}

func listOrNil(v any) any {
	if l, ok := asList(v); ok {
		return l
	}
	return nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
