package injectdiff

import (
	"strings"
)

// casesWith returns the names of the cases whose name starts with one of prefixes.
func casesWith(prefixes ...string) []string {
	var out []string
	for _, c := range cases {
		for _, p := range prefixes {
			if strings.HasPrefix(c.name, p) {
				out = append(out, c.name)
				break
			}
		}
	}
	return out
}

// instrumentedCases are the names of the cases both webhooks instrument and the API server admits.
func instrumentedCases() []string {
	var out []string
	for _, c := range cases {
		if !c.untouched {
			out = append(out, c.name)
		}
	}
	return without(out, "java-init-container")
}

// sameButComments says whether two JSON strings hold the same lines once the lines starting with
// '#' are left out.
func sameButComments(up, ours string) bool {
	strip := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, `\n`) {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, `\n`)
	}
	return strip(up) == strip(ours)
}

// apacheCases and nginxCases are the cases with the web servers' init containers.
var (
	apacheCases = casesWith("apache-httpd")
	nginxCases  = casesWith("nginx")
)

// expected is the contract: every difference between upstream's injection (v0.140.0) and ours.
// docs/differences.md ("Compared with upstream's webhook") lists the same rows.
var expected = []expectedDiff{
	{Cases: without(instrumentedCases(), "python-namespace-annotation"), Path: "metadata.annotations[otelop.io/instrumented]",
		Upstream: absent, Ours: "*",
		Why: "every instrumented pod records <language>=<namespace>/<name>@<generation> (read by the catch-up controller)"},
	{Cases: []string{"python-namespace-annotation"}, Path: "metadata.annotations",
		Upstream: absent, Ours: `{"otelop.io/instrumented":"python=injdiff-<side>-nsannot/only@1"}`,
		Why: "the same record, on a pod that had no annotations"},
	{Cases: []string{"dotnet-arm64"}, Path: "spec.containers[app].env[CORECLR_PROFILER_PATH].value",
		Upstream: `"/otel-auto-instrumentation-dotnet/linux-x64/OpenTelemetry.AutoInstrumentation.Native.so"`,
		Ours:     `"/otel-auto-instrumentation-dotnet/linux-arm64/OpenTelemetry.AutoInstrumentation.Native.so"`,
		Why:      "a pod whose nodeSelector allows only arm64 nodes gets the arm64 profiler; upstream's x64 one does not load there"},
	{Cases: []string{"sdk-user-env"}, Path: "spec.containers[app].env[OTEL_RESOURCE_ATTRIBUTES].value",
		Upstream: `"team=own,k8s.pod.name=fixed,deployment.environment=staging,k8s.container.name=app,k8s.namespace.name=injdiff-<side>-main,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),service.instance.id=injdiff-<side>-main.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=injdiff-<side>-main,service.version=1.2.3"`,
		Ours:     `"team=own,k8s.pod.name=fixed,deployment.environment=staging,k8s.container.name=app,k8s.namespace.name=injdiff-<side>-main,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),service.instance.id=injdiff-<side>-main.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=injdiff-<side>-main,service.version=1.2.3"`,
		Why:      "a key the container's own OTEL_RESOURCE_ATTRIBUTES sets (k8s.pod.name) is not added a second time"},
	{Cases: []string{"java-init-container"}, Path: "admission",
		Upstream: `Pod "java-init-container" is invalid: spec.containers[0].volumeMounts[2].mountPath: Invalid value: "/otel-auto-instrumentation-java-app": must be unique`,
		Ours:     "admitted",
		Why:      "container-names may name init containers; upstream v0.140.0 looks only at containers, falls back to the first one for the init container's name, instruments it twice and the API server refuses the pod"},
	{Cases: apacheCases, Path: "spec.initContainers[otel-agent-source-container-clone].args", Upstream: "*", Ours: "*",
		Why: "own shell script (no upstream text is copied), the same steps; the config folder is passed as an argument, not pasted into the script"},
	{Cases: apacheCases, Path: "spec.initContainers[otel-agent-attach-apache].args", Upstream: "*", Ours: "*",
		Why: "own shell script, the same steps; set -e, so a failed step fails the init container; printf instead of echo -e (a shell whose echo has no -e, such as dash, writes it into httpd.conf)"},
	{Cases: apacheCases, Path: "spec.initContainers[otel-agent-attach-apache].env[OTEL_APACHE_AGENT_CONF].value",
		Equivalent: sameButComments,
		Why:        "the configuration differs only in its comment lines"},
	{Cases: nginxCases, Path: "spec.initContainers[otel-agent-source-container-clone].args", Upstream: "*", Ours: "*",
		Why: "own shell script, the same steps; the config folder is an argument"},
	{Cases: nginxCases, Path: "spec.initContainers[otel-agent-attach-nginx].args", Upstream: "*", Ours: "*",
		Why: "own shell script run directly instead of upstream's script written from OTEL_NGINX_I13N_SCRIPT and then run; the same steps, plus mkdir -p of conf.d (upstream's mv renames the agent configuration to conf.d when the folder is missing)"},
	{Cases: nginxCases, Path: "spec.initContainers[otel-agent-attach-nginx].env[OTEL_NGINX_I13N_SCRIPT]", Upstream: "*", Ours: absent,
		Why: "no script variable: the init container runs its commands directly"},
}
