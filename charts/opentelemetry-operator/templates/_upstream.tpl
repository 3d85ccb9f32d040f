{{/*
Values of upstream's opentelemetry-operator chart (0.101.0 to 0.122.0) that this chart does not
carry out. Each entry names a leaf key, the values upstream's charts default it to (a values file
copied from upstream's, or `helm upgrade --reuse-values` from upstream's release, carries those),
and either "refuse" (install and upgrade fail with that message when the key holds another value)
or "note" (harmless: NOTES.txt lists the key and the message). Every other key of upstream's
values.yaml is carried out; test/chart's TestUpstreamValues checks that each key either changes
the rendered objects or is refused or listed.
*/}}
{{- define "otelop.upstreamKeys" -}}
- key: admissionWebhooks.certFile
  defaults: [""]
  refuse: &files >-
    the chart does not read certificate files from its own folder. Create a kubernetes.io/tls Secret
    (tls.crt, tls.key) yourself, name it in admissionWebhooks.secretName, put the base64 CA in
    admissionWebhooks.caBundle and set admissionWebhooks.certManager.enabled and
    admissionWebhooks.autoGenerateCert.enabled to false
- key: admissionWebhooks.keyFile
  defaults: [""]
  refuse: *files
- key: admissionWebhooks.caFile
  defaults: [""]
  refuse: *files
- key: admissionWebhooks.autoGenerateCert.recreate
  defaults: [true]
  note: the operator issues, renews and rotates its webhook certificate itself; the chart never generates one
- key: manager.config
  defaults: [{}]
  refuse: >-
    the operator has no --config-file; pass the settings as flags in manager.extraArgs (the
    operator's --help lists them)
- key: manager.ignoreMissingCollectorCRDs
  defaults: [false]
  refuse: >-
    the operator needs the CRDs; install them with this chart (crds.create=true) or apply
    config/crd/bases before the operator starts
- key: manager.metrics.tls.certFile
  defaults: [""]
  refuse: &metricstls >-
    the operator has no --metrics-tls-cert-file/--metrics-tls-key-file; it serves /metrics with a
    self-signed certificate (manager.metrics.secure) and Kubernetes token authentication
- key: manager.metrics.tls.keyFile
  defaults: [""]
  refuse: *metricstls
- key: manager.createRbacPermissions
  defaults: [false]
  note: the operator's ClusterRole always holds the permissions it grants to collectors (README, RBAC)
- key: manager.verticalPodAutoscaler.enabled
  defaults: [false]
  refuse: >-
    the chart renders no VerticalPodAutoscaler; add one for Deployment <fullname> (container
    manager) through extraObjects
- key: manager.verticalPodAutoscaler.controlledResources
  defaults: [[]]
  note: &vpa the chart renders no VerticalPodAutoscaler (see manager.verticalPodAutoscaler.enabled)
- key: manager.verticalPodAutoscaler.maxAllowed
  defaults: [{}]
  note: *vpa
- key: manager.verticalPodAutoscaler.minAllowed
  defaults: [{}]
  note: *vpa
- key: manager.verticalPodAutoscaler.updatePolicy.minReplicas
  defaults: [2]
  note: *vpa
- key: manager.verticalPodAutoscaler.updatePolicy.updateMode
  defaults: [Auto]
  note: *vpa
- key: kubeRBACProxy.enabled
  defaults: [true]
  note: &proxy >-
    there is no kube-rbac-proxy container: the manager serves /metrics itself, over HTTPS with
    Kubernetes token authentication unless manager.metrics.secure is false
- key: kubeRBACProxy.extraArgs
  defaults: [[]]
  refuse: >-
    there is no kube-rbac-proxy container (the manager serves /metrics itself); remove the key, or
    pass the manager's own flags in manager.extraArgs
- key: kubeRBACProxy.image.repository
  defaults: [quay.io/brancz/kube-rbac-proxy]
  note: *proxy
- key: kubeRBACProxy.image.tag
  defaults: [v0.20.0]
  note: *proxy
- key: kubeRBACProxy.ports.proxyPort
  defaults: [8443]
  note: *proxy
- key: kubeRBACProxy.resources
  defaults: [{}]
  note: *proxy
- key: kubeRBACProxy.securityContext.allowPrivilegeEscalation
  defaults: [false]
  note: *proxy
- key: kubeRBACProxy.securityContext.capabilities.drop
  defaults: [[ALL]]
  note: *proxy
- key: kubeRBACProxy.securityContext.runAsNonRoot
  defaults: [true]
  note: *proxy
- key: kubeRBACProxy.securityContext.seccompProfile.type
  defaults: [RuntimeDefault]
  note: *proxy
{{- range $k, $d := dict "certManager.env" (list (list (dict "name" "CERT_MANAGER_CLUSTERIP" "value" "cert-manager-webhook.cert-manager") (dict "name" "CERT_MANAGER_PORT" "value" "443"))) "image.repository" (list "busybox") "image.tag" (list "latest") "resources" (list dict) "securityContext.allowPrivilegeEscalation" (list false) "securityContext.capabilities.drop" (list (list "ALL")) "securityContext.runAsNonRoot" (list true) "securityContext.seccompProfile.type" (list "RuntimeDefault") }}
- key: testFramework.{{ $k }}
  defaults: {{ toJson $d }}
  note: the chart has no `helm test` pods
{{- end }}
{{- end -}}

{{/* The value at a dotted path of a map, as JSON; "" when a segment is missing. Argument: list map path. */}}
{{- define "otelop.lookup" -}}
{{- $cur := index . 0 -}}
{{- $found := true -}}
{{- range $seg := splitList "." (index . 1) -}}
{{- if and $found (kindIs "map" $cur) (hasKey $cur $seg) -}}
{{- $cur = get $cur $seg -}}
{{- else -}}
{{- $found = false -}}
{{- end -}}
{{- end -}}
{{- if $found }}{{ toJson $cur }}{{ end -}}
{{- end -}}

{{/*
Checks upstream's values against otelop.upstreamKeys and the rules below. Fails on the first
refused key; returns the harmless ones as a YAML list of "key: message" for NOTES.txt.
*/}}
{{- define "otelop.checkUpstreamValues" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $notes := list -}}
{{- range $e := include "otelop.upstreamKeys" . | fromYamlArray -}}
{{- $got := include "otelop.lookup" (list $v $e.key) -}}
{{- if $got -}}
{{- $isDefault := false -}}
{{- range $d := $e.defaults }}{{ if eq (toJson $d) $got }}{{ $isDefault = true }}{{ end }}{{ end -}}
{{- if not $isDefault -}}
{{- if $e.refuse -}}
{{- fail (printf "\n%s (or opentelemetry-operator.%s) = %s is a value of upstream's chart that this chart does not support: %s." $e.key $e.key $got $e.refuse) -}}
{{- else -}}
{{- $notes = append $notes (printf "%s: %s" $e.key $e.note) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $gates := include "otelop.featureGates" . | splitList "," -}}
{{- if or (has "operator.clusterobservability" $gates) (has "+operator.clusterobservability" $gates) -}}
{{- fail "\nmanager.featureGatesMap.operator.clusterobservability (or manager.featureGates) turns on a gate of upstream's for which this chart installs no ClusterObservability CRD and the operator has no controller. Upgrading a release of upstream's chart with this gate on would delete that CRD and every ClusterObservability: first keep it (kubectl annotate crd clusterobservabilities.opentelemetry.io helm.sh/resource-policy=keep), then remove the gate from the values." -}}
{{- end -}}
{{- $env := dig "manager" "env" dict $v -}}
{{- if and (hasKey $env "ENABLE_WEBHOOKS") (ne (toString $env.ENABLE_WEBHOOKS) "true") -}}
{{- fail "\nmanager.env.ENABLE_WEBHOOKS: this operator does not read the variable; set admissionWebhooks.create=false to run without webhooks." -}}
{{- end -}}
{{- $aw := $v.admissionWebhooks | default dict -}}
{{- $mode := include "otelop.certMode" . -}}
{{- $hookDefaults := dict "helm.sh/hook" "pre-install,pre-upgrade" "helm.sh/hook-delete-policy" "before-hook-creation" -}}
{{- range $k, $val := $aw.secretAnnotations | default dict -}}
{{- if and (hasPrefix "helm.sh/hook" $k) (ne (toString $val) (get $hookDefaults $k | toString)) -}}
{{- $notes = append $notes (printf "admissionWebhooks.secretAnnotations.%s: the chart does not create the certificate Secret, so Helm hook annotations have nothing to apply to" $k) -}}
{{- end -}}
{{- end -}}
{{- if ne $mode "cert-manager" -}}
{{- $ann := omit ($aw.secretAnnotations | default dict) "helm.sh/hook" "helm.sh/hook-delete-policy" "helm.sh/hook-weight" -}}
{{- $why := ternary "the operator creates the Secret (autoGenerateCert mode) without them" "you create the Secret (admissionWebhooks.secretName): add them there" (eq $mode "self") -}}
{{- range $k, $_ := $ann }}{{ $notes = append $notes (printf "admissionWebhooks.secretAnnotations.%s: %s" $k $why) }}{{ end -}}
{{- range $k, $_ := $aw.secretLabels | default dict }}{{ $notes = append $notes (printf "admissionWebhooks.secretLabels.%s: %s" $k $why) }}{{ end -}}
{{- with $v.clusterDomain }}{{ if ne . "cluster.local" }}{{ $notes = append $notes "clusterDomain: used only for the DNS names of cert-manager's certificate (admissionWebhooks.certManager.enabled)" }}{{ end }}{{ end -}}
{{- end -}}
{{- if ne $mode "self" -}}
{{- with dig "autoGenerateCert" "certPeriodDays" nil $aw }}{{ if ne (int .) 365 }}{{ $notes = append $notes "admissionWebhooks.autoGenerateCert.certPeriodDays: used only when the operator issues the certificate (autoGenerateCert mode)" }}{{ end }}{{ end -}}
{{- end -}}
{{- toYaml $notes -}}
{{- end -}}

{{/* The names of upstream's named templates that users' extraObjects and additionalLabels call
  (tpl), mapped to this chart's. */}}
{{- define "opentelemetry-operator.name" -}}{{ include "otelop.name" . }}{{- end -}}
{{- define "opentelemetry-operator.fullname" -}}{{ include "otelop.fullname" . }}{{- end -}}
{{- define "opentelemetry-operator.namespace" -}}{{ include "otelop.namespace" . }}{{- end -}}
{{- define "opentelemetry-operator.serviceAccountName" -}}{{ include "otelop.serviceAccountName" . }}{{- end -}}
{{- define "opentelemetry-operator.selectorLabels" -}}{{ include "otelop.selectorLabels" . }}{{- end -}}
