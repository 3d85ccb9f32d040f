package instrumentation

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Web-server defaults, as upstream's.
const (
	DefaultApacheHttpdVersion    = "2.4"
	DefaultApacheHttpdConfigPath = "/usr/local/apache2/conf"
	DefaultNginxConfigFile       = "/etc/nginx/nginx.conf"
)

// ApplyDefaults sets what upstream's defaulting webhook sets, per language: the image (from
// images, the operator's flags) when empty, the injected container's default limits and
// requests when unset, and the default-auto-instrumentation-<lang>-image annotation recording the
// operator's default image; plus the Apache HTTPD version and config path and the Nginx config
// file. The exporter, propagators and sampler are not defaulted (the injection applies their
// defaults), as upstream.
//
// Two deliberate differences from upstream:
//   - A defaulted request never exceeds a limit the user set, and a defaulted limit is never
//     below a request the user set (upstream's defaults can produce request > limit, which the
//     API server refuses for every pod the instrumentation is injected into).
//   - When a language's image is still the default of an older operator (it equals the
//     annotation, and the annotation is not today's default), the annotation is kept, so that
//     the startup upgrade still recognises the image as a default and moves it to today's.
//     Upstream re-stamps it on every write, so an edit made before the upgrade ran pinned the
//     old image for good.
func ApplyDefaults(inst *v1alpha1.Instrumentation, images Images) {
	images = images.withDefaults()
	spec := &inst.Spec
	if inst.Annotations == nil {
		inst.Annotations = map[string]string{}
	}
	for _, l := range Languages {
		p := l.parts(spec)
		def := *l.image(&images)
		if *p.image == "" {
			*p.image = def
		}
		defaultResources(p.resources, l)
		key := l.DefaultImageAnnotation()
		if old := inst.Annotations[key]; old == "" || old == def || *p.image != old {
			inst.Annotations[key] = def
		}
	}
	if spec.ApacheHttpd.Version == "" {
		spec.ApacheHttpd.Version = DefaultApacheHttpdVersion
	}
	if spec.ApacheHttpd.ConfigPath == "" {
		spec.ApacheHttpd.ConfigPath = DefaultApacheHttpdConfigPath
	}
	if spec.Nginx.ConfigFile == "" {
		spec.Nginx.ConfigFile = DefaultNginxConfigFile
	}
}

// defaultResources fills unset limits and requests (each list as a whole, as upstream) with the
// language's defaults, keeping every request at or below its limit.
func defaultResources(r *corev1.ResourceRequirements, l Language) {
	limits, requests := l.DefaultResources()
	if r.Limits == nil {
		for name, def := range limits {
			if req, ok := r.Requests[name]; ok && req.Cmp(def) > 0 {
				limits[name] = req.DeepCopy()
			}
		}
		r.Limits = limits
	}
	if r.Requests == nil {
		for name, def := range requests {
			if lim, ok := r.Limits[name]; ok && def.Cmp(lim) > 0 {
				requests[name] = lim.DeepCopy()
			}
		}
		r.Requests = requests
	}
}
