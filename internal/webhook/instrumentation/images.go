package instrumentation

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Versions of the instrumentation images the operator defaults to: those of upstream's
// versions.txt at operator v0.140.0 (the release whose collector this operator deploys by
// default). This is the only place they are written.
const (
	JavaVersion        = "1.33.6"
	NodeJSVersion      = "0.66.0"
	PythonVersion      = "0.59b0"
	DotNetVersion      = "1.2.0"
	GoVersion          = "v0.22.1"
	ApacheHttpdVersion = "1.0.4"
	// NginxVersion is ApacheHttpdVersion: upstream builds one image for both web servers.
	NginxVersion = ApacheHttpdVersion
)

// Image repositories, as upstream's. The Go agent is published by the Go instrumentation project,
// not by the operator.
const (
	operatorImages   = "ghcr.io/open-telemetry/opentelemetry-operator/"
	JavaRepo         = operatorImages + "autoinstrumentation-java"
	NodeJSRepo       = operatorImages + "autoinstrumentation-nodejs"
	PythonRepo       = operatorImages + "autoinstrumentation-python"
	DotNetRepo       = operatorImages + "autoinstrumentation-dotnet"
	GoRepo           = "ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go"
	ApacheHttpdRepo  = operatorImages + "autoinstrumentation-apache-httpd"
	NginxRepo        = ApacheHttpdRepo
	annotationPrefix = "instrumentation.opentelemetry.io/"
)

// Images are the default image per language (the --auto-instrumentation-<lang>-image flags).
type Images struct {
	Java        string
	NodeJS      string
	Python      string
	DotNet      string
	Go          string
	ApacheHttpd string
	Nginx       string
}

// DefaultImages returns upstream's default images.
func DefaultImages() Images {
	return Images{
		Java:        JavaRepo + ":" + JavaVersion,
		NodeJS:      NodeJSRepo + ":" + NodeJSVersion,
		Python:      PythonRepo + ":" + PythonVersion,
		DotNet:      DotNetRepo + ":" + DotNetVersion,
		Go:          GoRepo + ":" + GoVersion,
		ApacheHttpd: ApacheHttpdRepo + ":" + ApacheHttpdVersion,
		Nginx:       NginxRepo + ":" + NginxVersion,
	}
}

// withDefaults fills the empty fields of i from DefaultImages.
func (i Images) withDefaults() Images {
	d := DefaultImages()
	for _, l := range Languages {
		if p := l.image(&i); *p == "" {
			*p = *l.image(&d)
		}
	}
	return i
}

// Language is one auto-instrumentation language and where its settings live in the spec.
type Language struct {
	// Name is the language as upstream's flags, annotations and inject annotations spell it
	// (java, nodejs, python, dotnet, go, apache-httpd, nginx).
	Name string
	// Field is the language's field in spec (its JSON name).
	Field string
	// ResourcesField is the JSON name of the language's resources field: "resources" for Java,
	// "resourceRequirements" for the others.
	ResourcesField string
	// EnabledByDefault is upstream's default for --enable-<Name>-instrumentation.
	EnabledByDefault bool

	limits, requests corev1.ResourceList
	image            func(*Images) *string
	parts            func(*v1alpha1.InstrumentationSpec) parts
}

// DefaultImageAnnotation is the annotation on which the defaulting webhook records the default
// image it applied for the language (instrumentation.opentelemetry.io/default-auto-instrumentation-<lang>-image).
func (l Language) DefaultImageAnnotation() string {
	return annotationPrefix + "default-auto-instrumentation-" + l.Name + "-image"
}

// parts points at one language's settings in a spec.
type parts struct {
	image     *string
	resources *corev1.ResourceRequirements
	claim     *corev1.PersistentVolumeClaimTemplate
	sizeLimit *resource.Quantity
	env       []corev1.EnvVar
	attrs     []corev1.EnvVar
}

func resources(cpuLimit, memLimit string) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse(cpuLimit),
		corev1.ResourceMemory: resource.MustParse(memLimit),
	}
}

// Languages are the languages in upstream's order of spec fields, with upstream's default
// resources of the injected container (limits 500m/256Mi for all; requests 50m and 64Mi or 128Mi,
// and 1m/128Mi for the web servers).
var Languages = []Language{{
	Name: "java", Field: "java", ResourcesField: "resources", EnabledByDefault: true,
	limits: resources("500m", "256Mi"), requests: resources("50m", "64Mi"),
	image: func(i *Images) *string { return &i.Java },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		j := &s.Java
		return parts{&j.Image, &j.Resources, &j.VolumeClaimTemplate, j.VolumeSizeLimit, j.Env, nil}
	},
}, {
	Name: "nodejs", Field: "nodejs", ResourcesField: "resourceRequirements", EnabledByDefault: true,
	limits: resources("500m", "256Mi"), requests: resources("50m", "128Mi"),
	image: func(i *Images) *string { return &i.NodeJS },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		n := &s.NodeJS
		return parts{&n.Image, &n.Resources, &n.VolumeClaimTemplate, n.VolumeSizeLimit, n.Env, nil}
	},
}, {
	Name: "python", Field: "python", ResourcesField: "resourceRequirements", EnabledByDefault: true,
	limits: resources("500m", "256Mi"), requests: resources("50m", "64Mi"),
	image: func(i *Images) *string { return &i.Python },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		p := &s.Python
		return parts{&p.Image, &p.Resources, &p.VolumeClaimTemplate, p.VolumeSizeLimit, p.Env, nil}
	},
}, {
	Name: "dotnet", Field: "dotnet", ResourcesField: "resourceRequirements", EnabledByDefault: true,
	limits: resources("500m", "256Mi"), requests: resources("50m", "128Mi"),
	image: func(i *Images) *string { return &i.DotNet },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		d := &s.DotNet
		return parts{&d.Image, &d.Resources, &d.VolumeClaimTemplate, d.VolumeSizeLimit, d.Env, nil}
	},
}, {
	Name: "go", Field: "go", ResourcesField: "resourceRequirements", EnabledByDefault: false,
	limits: resources("500m", "256Mi"), requests: resources("50m", "64Mi"),
	image: func(i *Images) *string { return &i.Go },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		g := &s.Go
		return parts{&g.Image, &g.Resources, &g.VolumeClaimTemplate, g.VolumeSizeLimit, g.Env, nil}
	},
}, {
	Name: "apache-httpd", Field: "apacheHttpd", ResourcesField: "resourceRequirements", EnabledByDefault: true,
	limits: resources("500m", "256Mi"), requests: resources("1m", "128Mi"),
	image: func(i *Images) *string { return &i.ApacheHttpd },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		a := &s.ApacheHttpd
		return parts{&a.Image, &a.Resources, &a.VolumeClaimTemplate, a.VolumeSizeLimit, a.Env, a.Attrs}
	},
}, {
	Name: "nginx", Field: "nginx", ResourcesField: "resourceRequirements", EnabledByDefault: false,
	limits: resources("500m", "256Mi"), requests: resources("1m", "128Mi"),
	image: func(i *Images) *string { return &i.Nginx },
	parts: func(s *v1alpha1.InstrumentationSpec) parts {
		n := &s.Nginx
		return parts{&n.Image, &n.Resources, &n.VolumeClaimTemplate, n.VolumeSizeLimit, n.Env, n.Attrs}
	},
}}

// DefaultResources returns copies of the language's default limits and requests.
func (l Language) DefaultResources() (limits, requests corev1.ResourceList) {
	return l.limits.DeepCopy(), l.requests.DeepCopy()
}
