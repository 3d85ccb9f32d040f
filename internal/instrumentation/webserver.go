package instrumentation

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/otelop/otelop/api/v1alpha1"
)

// Apache HTTPD and nginx are instrumented through their configuration rather than environment
// variables. An init container cloned from the web server's container copies its configuration
// into a shared volume; a second one, from the instrumentation image, copies the OpenTelemetry
// module next to it, writes the module's configuration and makes the server's configuration load
// it; the web server then mounts both volumes. Names and paths are upstream's.
const (
	cloneContainer        = "otel-agent-source-container-clone"
	apacheAttachContainer = "otel-agent-attach-apache"
	nginxAttachContainer  = "otel-agent-attach-nginx"

	webAgentDir    = "/opt/opentelemetry-webserver/agent"
	webSourceDir   = "/opt/opentelemetry-webserver/source-conf"
	sidPlaceholder = "<<SID-PLACEHOLDER>>"
	webAgentConf   = "opentemetry_agent.conf" // sic: upstream's file name

	apacheDefaultConfDir = "/usr/local/apache2/conf"
	apacheConfVolume     = "otel-apache-conf-dir"
	apacheAgentVolume    = "otel-apache-agent"

	nginxDefaultConfFile = "/etc/nginx/nginx.conf"
	nginxConfVolume      = "otel-nginx-conf-dir"
	nginxAgentVolume     = "otel-nginx-agent"
)

// apacheScript runs in otel-agent-attach-apache with the configuration directory as $1.
const apacheScript = `set -e
cp -r /opt/opentelemetry/* ` + webAgentDir + `
logdir=$(echo "` + webAgentDir + `/logs" | sed 's,/,\\/,g')
sed "s/__agent_log_dir__/${logdir}/g" ` + webAgentDir + `/conf/opentelemetry_sdk_log4cxx.xml.template > ` + webAgentDir + `/conf/opentelemetry_sdk_log4cxx.xml
echo "${OTEL_APACHE_AGENT_CONF}" > ` + webSourceDir + `/` + webAgentConf + `
sed -i "s/` + sidPlaceholder + `/${APACHE_SERVICE_INSTANCE_ID}/g" ` + webSourceDir + `/` + webAgentConf + `
printf '\nInclude %s/` + webAgentConf + `\n' "$1" >> ` + webSourceDir + `/httpd.conf
`

// nginxCloneScript runs in the clone of the nginx container with the configuration directory as
// $1: it copies the configuration and records the nginx version, which selects the module build.
const nginxCloneScript = `set -e
cp -r "$1"/* ` + webSourceDir + `
v=$( { nginx -v ; } 2>&1 )
echo "${v##*/}" > ` + webSourceDir + `/version.txt
`

// nginxScript runs in otel-agent-attach-nginx with the configuration file's name as $1.
const nginxScript = `set -e
cp -r /opt/opentelemetry/* ` + webAgentDir + `
version=$(cat ` + webSourceDir + `/version.txt)
logdir=$(echo "` + webAgentDir + `/logs" | sed 's,/,\\/,g')
sed "s,__agent_log_dir__,${logdir},g" ` + webAgentDir + `/conf/opentelemetry_sdk_log4cxx.xml.template > ` + webAgentDir + `/conf/opentelemetry_sdk_log4cxx.xml
printf '%b' "${OTEL_NGINX_AGENT_CONF}" > ` + webSourceDir + `/opentelemetry_agent.conf
sed -i "s,` + sidPlaceholder + `,${OTEL_NGINX_SERVICE_INSTANCE_ID},g" ` + webSourceDir + `/opentelemetry_agent.conf
sed -i "1s,^,load_module ` + webAgentDir + `/WebServerModule/Nginx/${version}/ngx_http_opentelemetry_module.so;\n,g" ` + webSourceDir + `/"$1"
sed -i "1s,^,env OTEL_RESOURCE_ATTRIBUTES;\n,g" ` + webSourceDir + `/"$1"
mkdir -p ` + webSourceDir + `/conf.d
mv ` + webSourceDir + `/opentelemetry_agent.conf ` + webSourceDir + `/conf.d
`

func apacheConfDir(configured string) string {
	if configured == "" {
		return apacheDefaultConfDir
	}
	return strings.TrimSuffix(configured, "/")
}

// webServerService returns the service name and namespace the module reports.
func (b *builder) webServerService(inst *v1alpha1.Instrumentation, app *corev1.Container, fallbackNS string) (string, string) {
	res, _ := resourceMap(resourceInput{pod: b.pod, namespace: b.namespace, owners: b.in.Owners, inst: inst, app: app})
	ns := b.pod.Namespace
	if ns == "" {
		ns = b.namespace
	}
	if ns == "" {
		ns = fallbackNS
	}
	return serviceName(b.pod, inst.Spec.Defaults.UseLabelsForResourceAttributes, res, app.Name), ns
}

// moduleConf renders "<key> <value><end>" lines sorted by key, attrs overriding the defaults.
func moduleConf(defaults map[string]string, attrs []corev1.EnvVar, end string) string {
	for _, a := range attrs {
		defaults[a.Name] = a.Value
	}
	keys := make([]string, 0, len(defaults))
	for k := range defaults {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s%s\n", k, defaults[k], end)
	}
	return b.String()
}

func endpointOrLocal(endpoint string) string {
	if endpoint == "" {
		return "http://localhost:4317/"
	}
	return endpoint
}

// apacheConf is the module configuration Apache includes.
func (b *builder) apacheConf(inst *v1alpha1.Instrumentation, app *corev1.Container) string {
	spec := inst.Spec.ApacheHttpd
	name, ns := b.webServerService(inst, app, "apache-httpd")
	suffix := ""
	if spec.Version == "2.2" {
		suffix = "22"
	}
	var out strings.Builder
	out.WriteString("\n#Load the Otel Webserver SDK\n")
	for _, lib := range []string{"common", "resources", "trace", "otlp_recordable", "exporter_ostream_span", "exporter_otlp_grpc"} {
		fmt.Fprintf(&out, "LoadFile %s/sdk_lib/lib/libopentelemetry_%s.so\n", webAgentDir, lib)
	}
	fmt.Fprintf(&out, "#Load the Otel ApacheModule SDK\nLoadFile %s/sdk_lib/lib/libopentelemetry_webserver_sdk.so\n", webAgentDir)
	fmt.Fprintf(&out, "#Load the Apache Module (2.4: libmod_apache_otel.so, 2.2: libmod_apache_otel22.so)\n")
	fmt.Fprintf(&out, "LoadModule otel_apache_module %s/WebServerModule/Apache/libmod_apache_otel%s.so\n#Attributes\n", webAgentDir, suffix)
	out.WriteString(moduleConf(map[string]string{
		"ApacheModuleEnabled":              "ON",
		"ApacheModuleOtelSpanExporter":     "otlp",
		"ApacheModuleOtelExporterEndpoint": endpointOrLocal(inst.Spec.Exporter.Endpoint),
		"ApacheModuleServiceName":          name,
		"ApacheModuleServiceNamespace":     ns,
		"ApacheModuleServiceInstanceId":    sidPlaceholder,
		"ApacheModuleResolveBackends":      " ON",
		"ApacheModuleTraceAsError":         " ON",
	}, spec.Attrs, ""))
	return out.String()
}

// cloneOf returns the init container that copies the web server's configuration: the app
// container itself (image, env, mounts, security context) running script, without probes or
// lifecycle hooks, with the instrumentation's resources.
func cloneOf(app *corev1.Container, script string, args []string, res corev1.ResourceRequirements, confVolume string) corev1.Container {
	c := app.DeepCopy()
	c.Name = cloneContainer
	c.Command = []string{"/bin/sh", "-c"}
	c.Args = append([]string{script, "--"}, args...)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: confVolume, MountPath: webSourceDir})
	c.Resources = res
	c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	c.RestartPolicy = nil
	return *c
}

// remountConfig drops the container's mount that would hide the instrumented configuration and
// mounts the agent and the configuration volumes.
func remountConfig(app *corev1.Container, confDir, agentVolume, confVolume string) {
	for i, m := range app.VolumeMounts {
		if strings.Contains(m.MountPath, confDir) {
			app.VolumeMounts = append(app.VolumeMounts[:i], app.VolumeMounts[i+1:]...)
			break
		}
	}
	app.VolumeMounts = append(app.VolumeMounts,
		corev1.VolumeMount{Name: agentVolume, MountPath: webAgentDir},
		corev1.VolumeMount{Name: confVolume, MountPath: confDir})
}

func emptyDir(name string, size *resource.Quantity) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: size}}}
}

// apache instruments an Apache HTTPD container.
func (b *builder) apache(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.ApacheHttpd
	app := b.mustContainer(name)
	app.Env = appendIfNotSet(app.Env, spec.Env...)
	confDir := apacheConfDir(spec.ConfigPath)
	conf := b.apacheConf(inst, app)
	if !b.hasInitContainer(cloneContainer) {
		b.addVolume(emptyDir(apacheConfVolume, sizeOrDefault(spec.VolumeSizeLimit)))
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers,
			cloneOf(app, "cp -r \"$1\"/* "+webSourceDir, []string{confDir}, spec.Resources, apacheConfVolume))
		app = b.mustContainer(name)
		remountConfig(app, confDir, apacheAgentVolume, apacheConfVolume)
	}
	if !b.hasInitContainer(apacheAttachContainer) {
		b.addVolume(agentVolume(apacheAgentVolume, spec.VolumeClaimTemplate, spec.VolumeSizeLimit))
		sc := initSecurityContext(inst, app)
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, attachContainer(webAttach{
			name: apacheAttachContainer, image: spec.Image, script: apacheScript, arg: confDir,
			confEnv: "OTEL_APACHE_AGENT_CONF", conf: conf, idEnv: "APACHE_SERVICE_INSTANCE_ID",
			agentVolume: apacheAgentVolume, confVolume: apacheConfVolume,
		}, spec.Resources, inst.Spec.ImagePullPolicy, sc))
	}
	app = b.mustContainer(name)
	commonEnv(inst, app)
	b.sdkConfig(inst, app, app)
	return nil
}

// nginx instruments an nginx container.
func (b *builder) nginx(inst *v1alpha1.Instrumentation, name string) error {
	spec := inst.Spec.Nginx
	app := b.mustContainer(name)
	app.Env = appendIfNotSet(app.Env, spec.Env...)
	confPath := spec.ConfigFile
	if confPath == "" {
		confPath = nginxDefaultConfFile
	}
	confDir, confFile := filepath.Dir(confPath), filepath.Base(confPath)
	if !b.hasInitContainer(cloneContainer) {
		b.addVolume(emptyDir(nginxConfVolume, nil))
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers,
			cloneOf(app, nginxCloneScript, []string{confDir}, spec.Resources, nginxConfVolume))
		app = b.mustContainer(name)
		remountConfig(app, confDir, nginxAgentVolume, nginxConfVolume)
	}
	if !b.hasInitContainer(nginxAttachContainer) {
		svc, ns := b.webServerService(inst, app, "nginx")
		conf := moduleConf(map[string]string{
			"NginxModuleEnabled":              "ON",
			"NginxModuleOtelSpanExporter":     "otlp",
			"NginxModuleOtelExporterEndpoint": endpointOrLocal(inst.Spec.Exporter.Endpoint),
			"NginxModuleServiceName":          svc,
			"NginxModuleServiceNamespace":     ns,
			"NginxModuleServiceInstanceId":    sidPlaceholder,
			"NginxModuleResolveBackends":      "ON",
			"NginxModuleTraceAsError":         "ON",
		}, spec.Attrs, ";")
		b.addVolume(emptyDir(nginxAgentVolume, nil))
		sc := initSecurityContext(inst, app)
		b.pod.Spec.InitContainers = append(b.pod.Spec.InitContainers, attachContainer(webAttach{
			name: nginxAttachContainer, image: spec.Image, script: nginxScript, arg: confFile,
			confEnv: "OTEL_NGINX_AGENT_CONF", conf: conf, idEnv: "OTEL_NGINX_SERVICE_INSTANCE_ID",
			agentVolume: nginxAgentVolume, confVolume: nginxConfVolume,
		}, spec.Resources, inst.Spec.ImagePullPolicy, sc))
		app = b.mustContainer(name)
		lib := webAgentDir + "/sdk_lib/lib"
		if i := envIndex(app.Env, "LD_LIBRARY_PATH"); i >= 0 {
			app.Env[i].Value += ":" + lib
		} else {
			app.Env = append(app.Env, corev1.EnvVar{Name: "LD_LIBRARY_PATH", Value: lib})
		}
	}
	app = b.mustContainer(name)
	commonEnv(inst, app)
	b.sdkConfig(inst, app, app)
	return nil
}

// webAttach names what differs between the Apache and nginx attach init containers.
type webAttach struct {
	name, image, script, arg string
	// confEnv carries the agent configuration conf; idEnv the pod name (service instance id).
	confEnv, conf, idEnv    string
	agentVolume, confVolume string
}

// attachContainer is the init container that runs the web-server agent's script against the
// cloned configuration: the agent volume at webAgentDir, the configuration at webSourceDir.
func attachContainer(w webAttach, res corev1.ResourceRequirements, pull corev1.PullPolicy, sc *corev1.SecurityContext) corev1.Container {
	return corev1.Container{
		Name:    w.name,
		Image:   w.image,
		Command: []string{"/bin/sh", "-c"},
		Args:    []string{w.script, "--", w.arg},
		Env: []corev1.EnvVar{
			{Name: w.confEnv, Value: w.conf},
			fieldRef(w.idEnv, "metadata.name"),
		},
		Resources: res,
		VolumeMounts: []corev1.VolumeMount{
			{Name: w.agentVolume, MountPath: webAgentDir},
			{Name: w.confVolume, MountPath: webSourceDir},
		},
		ImagePullPolicy: pull,
		SecurityContext: sc,
	}
}
