package realnode

import (
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Stand-ins for the web-server auto-instrumentation: the agent image (upstream's
// autoinstrumentation-apache-httpd, which the nginx injection uses too) and an Apache HTTPD and
// an nginx application image. The injected init containers run `/bin/sh -c SCRIPT` in them (the
// clone of the web server's container in the application image, the attach script in the agent
// image), so each image holds a static busybox (BusyboxPath, from Debian's busybox-static) with
// the applets the scripts call linked in /bin, as the real images have a shell and coreutils.
// The agent files hold text, not modules: the path test checks that what the generated
// configuration loads is there, not that a web server runs.
const (
	// WebServerAgentImage stands in for autoinstrumentation-apache-httpd: upstream's build unpacks
	// the otel-webserver-module release (opentelemetry-webserver-sdk) into WebServerAgentDir:
	// sdk_lib/lib with the SDK libraries (WebServerSDKLibs), WebServerModule/Apache with the
	// Apache 2.4 and 2.2 modules, WebServerModule/Nginx/<version> with the nginx module of each
	// version the release is built for (NginxModuleVersions), conf with the log4cxx template,
	// logs, VERSION.txt and install.sh.
	WebServerAgentImage = "otelop.test/webserver-agent:1"
	// ApacheAppImage stands in for the httpd image: ServerRoot /usr/local/apache2 with
	// conf/httpd.conf. It runs pathcheck on that configuration and lists the agent and
	// configuration folders.
	ApacheAppImage = "otelop.test/apache-httpd:1"
	// NginxAppImage stands in for the nginx image: /etc/nginx/nginx.conf including
	// /etc/nginx/conf.d/*.conf in its http block, and /usr/sbin/nginx, a script that answers -v
	// with NginxVersion (the injected clone container runs `nginx -v` to pick the module). It runs
	// pathcheck on that configuration and lists the agent and configuration folders.
	NginxAppImage = "otelop.test/nginx:1"

	// WebServerAgentDir is where the agent lies in WebServerAgentImage.
	WebServerAgentDir = "/opt/opentelemetry"
	// NginxVersion is the version the stand-in nginx reports.
	NginxVersion = "1.26.0"
	// BusyboxPath is the static busybox (Debian package busybox-static) copied into the images.
	BusyboxPath = "/bin/busybox"
)

// NginxModuleVersions are the nginx versions the otel-webserver-module release upstream's image
// ships (1.0.4 and later) has a module for.
var NginxModuleVersions = []string{"1.22.0", "1.23.0", "1.23.1", "1.24.0", "1.25.3", "1.25.5", "1.26.0"}

// WebServerSDKLibs are the libraries of sdk_lib/lib in the agent image.
var WebServerSDKLibs = []string{
	"libopentelemetry_common.so", "libopentelemetry_resources.so", "libopentelemetry_trace.so",
	"libopentelemetry_otlp_recordable.so", "libopentelemetry_exporter_ostream_span.so",
	"libopentelemetry_exporter_otlp_grpc.so", "libopentelemetry_webserver_sdk.so",
}

// busyboxApplets are the commands the injected web-server scripts run (echo and printf are also
// shell builtins).
var busyboxApplets = []string{"sh", "cat", "cp", "echo", "mkdir", "mv", "printf", "sed"}

// readBusybox returns the busybox executable at path. It must be statically linked: the images
// have no C library.
func readBusybox(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the web-server stand-in images need a static busybox at %s (Debian package busybox-static, "+
			"installed by hack/realnode/install-deps.sh): %w", path, err)
	}
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return nil, errors.New(path + " is dynamically linked and the images have no C library: install busybox-static")
		}
	}
	return data, nil
}

// busyboxLinks returns /bin/<applet> links to at for each applet the scripts run.
func busyboxLinks(at string) map[string]string {
	links := map[string]string{}
	for _, a := range busyboxApplets {
		if p := "/bin/" + a; p != at {
			links[p] = at
		}
	}
	return links
}

// webServerImages are WebServerAgentImage, ApacheAppImage and NginxAppImage, with pathcheck from
// binDir and busybox (read from busyboxPath): the agent image's entrypoint (as upstream's runs
// cat), a program of the application images.
func webServerImages(binDir, busyboxPath string, busybox []byte) []Image {
	text := func(what string) string { return "otelop real-node stand-in: " + what + "\n" }
	agent := map[string]string{
		WebServerAgentDir + "/VERSION.txt":                                    "WebServer Module 1.0.4 (otelop real-node stand-in)\n",
		WebServerAgentDir + "/conf/opentelemetry_sdk_log4cxx.xml.template":    "<log4j:configuration><param name=\"File\" value=\"__agent_log_dir__/agent.log\"/></log4j:configuration>\n",
		WebServerAgentDir + "/WebServerModule/Apache/libmod_apache_otel.so":   text("Apache 2.4 module"),
		WebServerAgentDir + "/WebServerModule/Apache/libmod_apache_otel22.so": text("Apache 2.2 module"),
	}
	for _, lib := range WebServerSDKLibs {
		agent[WebServerAgentDir+"/sdk_lib/lib/"+lib] = text(lib)
	}
	for _, v := range NginxModuleVersions {
		agent[WebServerAgentDir+"/WebServerModule/Nginx/"+v+"/ngx_http_opentelemetry_module.so"] = text("nginx " + v + " module")
	}
	agentExec := map[string]string{WebServerAgentDir + "/install.sh": "#!/bin/sh\necho 'otelop real-node stand-in: install.sh'\n"}

	apache := map[string]string{
		"/usr/local/apache2/conf/httpd.conf": `ServerRoot "/usr/local/apache2"
Listen 80
LoadModule mpm_event_module modules/mod_mpm_event.so
LoadModule unixd_module modules/mod_unixd.so
LoadModule mime_module modules/mod_mime.so
User daemon
Group daemon
DocumentRoot "/usr/local/apache2/htdocs"
TypesConfig conf/mime.types
ErrorLog /proc/self/fd/2
`,
		"/usr/local/apache2/conf/mime.types":          "text/html html htm\n",
		"/usr/local/apache2/htdocs/index.html":        "<html><body><h1>It works!</h1></body></html>\n",
		"/usr/local/apache2/modules/mod_mpm_event.so": text("mod_mpm_event"),
		"/usr/local/apache2/modules/mod_unixd.so":     text("mod_unixd"),
		"/usr/local/apache2/modules/mod_mime.so":      text("mod_mime"),
	}
	nginx := map[string]string{
		"/etc/nginx/nginx.conf": `user nginx;
worker_processes auto;
error_log /var/log/nginx/error.log notice;
pid /var/run/nginx.pid;
events {
    worker_connections 1024;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    sendfile on;
    include /etc/nginx/conf.d/*.conf;
}
`,
		"/etc/nginx/mime.types":            "types {\n    text/html html htm;\n}\n",
		"/etc/nginx/conf.d/default.conf":   "server {\n    listen 80;\n    location / {\n        root /usr/share/nginx/html;\n    }\n}\n",
		"/usr/share/nginx/html/index.html": "<html><body><h1>Welcome to nginx!</h1></body></html>\n",
	}
	// nginx -v prints its version on standard error.
	nginxExec := map[string]string{
		BusyboxPath:       string(busybox),
		"/usr/sbin/nginx": "#!/bin/sh\n# otelop real-node stand-in for nginx: only -v.\necho 'nginx version: nginx/" + NginxVersion + "' >&2\n",
	}
	pathcheck := filepath.Join(binDir, "pathcheck")
	agentDir := "/opt/opentelemetry-webserver/agent" // where the injection mounts the agent volume
	return []Image{
		{Name: WebServerAgentImage, Binary: busyboxPath, Files: agent, Executables: agentExec,
			Links: busyboxLinks("/usr/local/bin/" + filepath.Base(busyboxPath)),
			Args:  []string{"cat", WebServerAgentDir + "/VERSION.txt"}},
		{Name: ApacheAppImage, Binary: pathcheck, Files: apache, Links: busyboxLinks(BusyboxPath),
			Executables: map[string]string{BusyboxPath: string(busybox)},
			Args:        []string{"-conf", "/usr/local/apache2/conf/httpd.conf", "-tree", agentDir, "-tree", "/usr/local/apache2/conf"}},
		{Name: NginxAppImage, Binary: pathcheck, Files: nginx, Links: busyboxLinks(BusyboxPath), Executables: nginxExec,
			Env:  []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
			Args: []string{"-conf", "/etc/nginx/nginx.conf", "-tree", agentDir, "-tree", "/etc/nginx"}},
	}
}
