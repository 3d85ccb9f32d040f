package v1alpha1

import (
	"encoding/json"
	"fmt"

	goyaml "github.com/goccy/go-yaml"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/yaml"

	"github.com/otelop/otelop/api/v1beta1"
)

const (
	// AnnotationV1beta1Data is set on a v1alpha1 collector converted from v1beta1 when the
	// v1beta1 object has fields v1alpha1 cannot express. It holds those fields as JSON so that
	// converting back restores them.
	AnnotationV1beta1Data = "opentelemetry.io/v1beta1-conversion-data"
	// AnnotationV1alpha1Data is set on a v1beta1 collector converted from v1alpha1 when the
	// v1alpha1 object uses deprecated fields v1beta1 does not have (spec.minReplicas,
	// spec.maxReplicas, status.messages, status.replicas). It holds them as JSON.
	AnnotationV1alpha1Data = "opentelemetry.io/v1alpha1-conversion-data"
	// AnnotationUnparsedConfig is set on a v1beta1 collector converted from a v1alpha1 one whose
	// spec.config does not parse (a cluster where v1alpha1 was the storage version can hold such
	// objects). It holds the v1alpha1 text exactly; the v1beta1 spec.config is then empty
	// (receivers, exporters and pipelines present with nothing in them). Converting back restores
	// the text while spec.config is still empty; a v1beta1 client that sets a configuration
	// replaces it. The collector controller reports such a collector Stalled (InvalidSpec) and
	// admission refuses it on create and on any change of its spec.
	AnnotationUnparsedConfig = "otelop.io/unparsed-v1alpha1-config"
)

var _ conversion.Convertible = &OpenTelemetryCollector{}

// ConvertTo converts this collector into the v1beta1 hub.
func (c *OpenTelemetryCollector) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.OpenTelemetryCollector)
	if !ok {
		return fmt.Errorf("cannot convert OpenTelemetryCollector v1alpha1 to %T", dstRaw)
	}
	out, err := ToHub(c)
	if err != nil {
		return err
	}
	dst.ObjectMeta = out.ObjectMeta
	dst.Spec = out.Spec
	dst.Status = out.Status
	return nil
}

// ConvertFrom converts the v1beta1 hub into this collector.
func (c *OpenTelemetryCollector) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.OpenTelemetryCollector)
	if !ok {
		return fmt.Errorf("cannot convert %T to OpenTelemetryCollector v1alpha1", srcRaw)
	}
	out, err := FromHub(src)
	if err != nil {
		return err
	}
	c.ObjectMeta = out.ObjectMeta
	c.Spec = out.Spec
	c.Status = out.Status
	return nil
}

// ToHub converts a v1alpha1 collector into v1beta1 without changing its input. The YAML
// configuration is parsed into the structured form; a document that does not parse is kept as
// text in the AnnotationUnparsedConfig annotation and spec.config is left empty, so that one such
// stored object cannot make every v1beta1 list and watch fail (upstream #4288). Fields that
// v1beta1 has and v1alpha1 lacks are restored from the
// AnnotationV1beta1Data annotation when present, and the deprecated v1alpha1-only fields are
// kept in the AnnotationV1alpha1Data annotation.
func ToHub(in *OpenTelemetryCollector) (*v1beta1.OpenTelemetryCollector, error) {
	src := in.DeepCopy()
	cfg, parseErr := parseConfig(src.Spec.Config)
	if parseErr != nil {
		cfg = emptyConfig()
	}
	out := &v1beta1.OpenTelemetryCollector{
		TypeMeta:   src.TypeMeta,
		ObjectMeta: src.ObjectMeta,
		Spec:       specToHub(&src.Spec),
		Status:     statusToHub(&src.Status),
	}
	out.APIVersion = v1beta1.GroupVersion.String()
	out.Spec.Config = cfg
	// The annotation says what the text of this very object is: one it arrived with is stale.
	delete(out.ObjectMeta.Annotations, AnnotationUnparsedConfig)
	if parseErr != nil {
		if out.ObjectMeta.Annotations == nil {
			out.ObjectMeta.Annotations = map[string]string{}
		}
		out.ObjectMeta.Annotations[AnnotationUnparsedConfig] = src.Spec.Config
	} else if len(out.ObjectMeta.Annotations) == 0 {
		out.ObjectMeta.Annotations = nil
	}

	var hubData v1beta1Data
	if found, err := popAnnotation(&out.ObjectMeta.Annotations, AnnotationV1beta1Data, &hubData); err != nil {
		return nil, err
	} else if found {
		hubData.restore(out, src)
	}
	alphaData := alphaDataOf(src)
	if err := setAnnotation(&out.ObjectMeta.Annotations, AnnotationV1alpha1Data, alphaData, alphaData.isZero()); err != nil {
		return nil, err
	}
	return out, nil
}

// FromHub converts a v1beta1 collector into v1alpha1 without changing its input. The structured
// configuration becomes a YAML document, or, while it is empty and AnnotationUnparsedConfig is
// set, that annotation's text (the annotation is dropped either way). Fields v1alpha1 cannot
// express are kept in the
// AnnotationV1beta1Data annotation, and deprecated fields recorded in AnnotationV1alpha1Data are
// restored when the hub has not changed them since.
func FromHub(in *v1beta1.OpenTelemetryCollector) (*OpenTelemetryCollector, error) {
	src := in.DeepCopy()
	cfg, err := configYAML(&src.Spec.Config)
	if err != nil {
		return nil, err
	}
	out := &OpenTelemetryCollector{
		TypeMeta:   src.TypeMeta,
		ObjectMeta: src.ObjectMeta,
		Spec:       specFromHub(&src.Spec),
		Status:     statusFromHub(&src.Status),
	}
	out.APIVersion = GroupVersion.String()
	out.Spec.Config = cfg
	if raw, ok := out.ObjectMeta.Annotations[AnnotationUnparsedConfig]; ok {
		if isEmptyConfig(&src.Spec.Config) {
			out.Spec.Config = raw
		}
		delete(out.ObjectMeta.Annotations, AnnotationUnparsedConfig)
		if len(out.ObjectMeta.Annotations) == 0 {
			out.ObjectMeta.Annotations = nil
		}
	}

	var alphaData v1alpha1Data
	if found, err := popAnnotation(&out.ObjectMeta.Annotations, AnnotationV1alpha1Data, &alphaData); err != nil {
		return nil, err
	} else if found {
		alphaData.restore(out, src)
	}
	hubData := hubDataOf(src)
	if err := setAnnotation(&out.ObjectMeta.Annotations, AnnotationV1beta1Data, hubData, hubData.isZero()); err != nil {
		return nil, err
	}
	return out, nil
}

// parseConfig parses the v1alpha1 YAML configuration. An empty document is an empty Config.
func parseConfig(s string) (v1beta1.Config, error) {
	var cfg v1beta1.Config
	if s == "" {
		return cfg, nil
	}
	if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
		return cfg, fmt.Errorf("spec.config: invalid collector configuration: %w", err)
	}
	return cfg, nil
}

// configYAML renders the structured configuration as upstream's conversion does (and as the
// collector's ConfigMap holds it): the v1beta1 field order (receivers, exporters, processors,
// connectors, extensions, service), component maps with sorted keys, list items indented under
// their key, whole-number floats as integers (goccy/go-yaml, the encoder upstream uses). The zero
// Config renders as the empty string, the inverse of parseConfig.
func configYAML(cfg *v1beta1.Config) (string, error) {
	if isZeroConfig(cfg) {
		return "", nil
	}
	b, err := goyaml.MarshalWithOptions(cfg, goyaml.IndentSequence(true), goyaml.AutoInt())
	if err != nil {
		return "", fmt.Errorf("spec.config: cannot render as YAML: %w", err)
	}
	return string(b), nil
}

// emptyConfig is the v1beta1 configuration of a collector whose v1alpha1 text does not parse:
// the sections the v1beta1 schema requires (receivers, exporters, service.pipelines), with
// nothing in them, so that the object stays writable (its status) through v1beta1.
func emptyConfig() v1beta1.Config {
	return v1beta1.Config{
		Receivers: v1beta1.AnyConfig{Object: map[string]any{}},
		Exporters: v1beta1.AnyConfig{Object: map[string]any{}},
		Service:   v1beta1.Service{Pipelines: map[string]*v1beta1.Pipeline{}},
	}
}

// isEmptyConfig reports whether cfg has no component, extension, telemetry or pipeline (the zero
// Config and emptyConfig are both empty).
func isEmptyConfig(cfg *v1beta1.Config) bool {
	return len(cfg.Receivers.Object) == 0 && len(cfg.Exporters.Object) == 0 &&
		(cfg.Processors == nil || len(cfg.Processors.Object) == 0) &&
		(cfg.Connectors == nil || len(cfg.Connectors.Object) == 0) &&
		(cfg.Extensions == nil || len(cfg.Extensions.Object) == 0) &&
		len(cfg.Service.Extensions) == 0 &&
		(cfg.Service.Telemetry == nil || len(cfg.Service.Telemetry.Object) == 0) &&
		len(cfg.Service.Pipelines) == 0
}

// UnparsedConfig returns the v1alpha1 text of a v1beta1 collector whose configuration did not
// parse when it was converted (AnnotationUnparsedConfig), and the parse error, as an error naming
// spec.config and the annotation. It returns nil when the annotation is absent or spec.config is
// no longer empty (a v1beta1 client has set a configuration, which wins).
func UnparsedConfig(c *v1beta1.OpenTelemetryCollector) error {
	raw, ok := c.Annotations[AnnotationUnparsedConfig]
	if !ok || !isEmptyConfig(&c.Spec.Config) {
		return nil
	}
	_, err := parseConfig(raw)
	if err == nil {
		err = fmt.Errorf("spec.config: the configuration is empty")
	}
	return fmt.Errorf("%w (the collector is stored as v1alpha1 and its configuration text is kept in the annotation %s; correct it through the v1alpha1 API, or set spec.config through v1beta1)",
		err, AnnotationUnparsedConfig)
}

func isZeroConfig(cfg *v1beta1.Config) bool {
	return cfg.Receivers.Object == nil && cfg.Exporters.Object == nil && cfg.Processors == nil &&
		cfg.Connectors == nil && cfg.Extensions == nil && cfg.Service.Extensions == nil &&
		cfg.Service.Telemetry == nil && cfg.Service.Pipelines == nil
}

// popAnnotation decodes and removes a conversion annotation. It reports whether the annotation
// was present; a malformed value is an error naming the annotation.
func popAnnotation(annotations *map[string]string, key string, into any) (bool, error) {
	v, ok := (*annotations)[key]
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(v), into); err != nil {
		return false, fmt.Errorf("metadata.annotations[%s]: invalid conversion data: %w", key, err)
	}
	delete(*annotations, key)
	if len(*annotations) == 0 {
		*annotations = nil
	}
	return true, nil
}

// setAnnotation stores data as JSON under key, unless empty is true.
func setAnnotation(annotations *map[string]string, key string, data any, empty bool) error {
	if empty {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("metadata.annotations[%s]: cannot encode conversion data: %w", key, err)
	}
	if *annotations == nil {
		*annotations = map[string]string{}
	}
	(*annotations)[key] = string(b)
	return nil
}
