{{/*
Effective values. The chart takes its own keys at the top level (upstream's opentelemetry-operator
chart) and the same keys under "opentelemetry-operator" (opentelemetry-kube-stack's subchart
values), so one ProviderConfig can point at either chart. A key under "opentelemetry-operator"
wins over the same key at the top level; maps are merged key by key, anything else (lists,
strings, booleans, including false) is replaced. Usage:
  {{- $v := include "otelop.values" . | fromJson }}
*/}}
{{- define "otelop.values" -}}
{{- $v := deepCopy (omit .Values "opentelemetry-operator") -}}
{{- $sub := index .Values "opentelemetry-operator" | default dict -}}
{{- include "otelop.mergeInto" (list $v (deepCopy $sub)) -}}
{{- toJson $v -}}
{{- end -}}

{{/* mergeInto copies the second map into the first (which it changes), recursing into maps. */}}
{{- define "otelop.mergeInto" -}}
{{- $dst := index . 0 -}}
{{- $src := index . 1 -}}
{{- range $k, $val := $src -}}
{{- if and (kindIs "map" $val) (kindIs "map" (get $dst $k)) -}}
{{- include "otelop.mergeInto" (list (get $dst $k) $val) -}}
{{- else -}}
{{- $_ := set $dst $k $val -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The operator's objects are rendered unless opentelemetry-operator.enabled is false. */}}
{{- define "otelop.operatorEnabled" -}}
{{- $sub := index .Values "opentelemetry-operator" | default dict -}}
{{- if or (not (hasKey $sub "enabled")) (eq (toString $sub.enabled) "true") }}true{{ end -}}
{{- end -}}

{{/*
The CRDs are rendered when crds.installOtel (the kube-stack switch) is true; when it is not set,
when opentelemetry-operator.crds.create (else crds.create, default true) is true.
*/}}
{{- define "otelop.crdsEnabled" -}}
{{- $crds := .Values.crds | default dict -}}
{{- if hasKey $crds "installOtel" -}}
{{- if eq (toString $crds.installOtel) "true" }}true{{ end -}}
{{- else -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $c := $v.crds | default dict -}}
{{- if or (not (hasKey $c "create")) (eq (toString $c.create) "true") }}true{{ end -}}
{{- end -}}
{{- end -}}

{{/* Chart name, overridable with nameOverride. */}}
{{- define "otelop.name" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- default .Chart.Name $v.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Full name: fullnameOverride, else <release>-<name>, or the release name when it already contains
the chart name (as upstream's chart). Object names are built from it; it is cut at 55 characters
so that the webhook Service name (<fullname>-webhook) stays a valid DNS label.
*/}}
{{- define "otelop.fullname" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- if $v.fullnameOverride -}}
{{- $v.fullnameOverride | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name $v.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 55 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 55 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The manager's ServiceAccount. */}}
{{- define "otelop.serviceAccountName" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $sa := $v.manager.serviceAccount | default dict -}}
{{- if and $sa.name (ne $sa.name "") -}}{{ $sa.name }}{{- else -}}{{ include "otelop.fullname" . }}{{- end -}}
{{- end -}}

{{/*
The Secret holding the webhook serving certificate (every certificate mode). Default: upstream's
name <fullname>-controller-manager-service-cert, where cert-manager (or the user) writes it; when
the operator issues the certificate (self mode), <fullname>-webhook-cert: upstream's chart
generates its certificate into a Helm hook Secret of upstream's name, which a switch to this chart
leaves in place (hooks are not part of the release) and a helm rollback to upstream's revision needs
as it was.
*/}}
{{- define "otelop.certSecretName" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $suffix := ternary "webhook-cert" "controller-manager-service-cert" (eq (include "otelop.certMode" .) "self") -}}
{{- default (printf "%s-%s" (include "otelop.fullname" .) $suffix) $v.admissionWebhooks.secretName -}}
{{- end -}}

{{/*
Certificate mode of the operator (--webhook-cert-mode): cert-manager when
admissionWebhooks.certManager.enabled, self when admissionWebhooks.autoGenerateCert.enabled,
files otherwise (the user provides the Secret and admissionWebhooks.caBundle).
*/}}
{{- define "otelop.certMode" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $aw := $v.admissionWebhooks | default dict -}}
{{- if eq (toString (dig "certManager" "enabled" false $aw)) "true" -}}cert-manager
{{- else if eq (toString (dig "autoGenerateCert" "enabled" false $aw)) "true" -}}self
{{- else -}}files
{{- end -}}
{{- end -}}

{{/*
Name of a chart object that config/default names <prefix><suffix> (prefix
"opentelemetry-operator-"): the objects the templates write get upstream chart names, RBAC objects
get <fullname>-<suffix without -role/-rolebinding/-binding>. Names without the prefix (built-in
ClusterRoles, the leader-election Lease, CRDs) are kept. Argument: list $ configName.
*/}}
{{- define "otelop.rename" -}}
{{- $root := index . 0 -}}
{{- $name := index . 1 -}}
{{- $prefix := "opentelemetry-operator-" -}}
{{- if not (hasPrefix $prefix $name) -}}{{ $name }}
{{- else -}}
{{- $full := include "otelop.fullname" $root -}}
{{- $suffix := trimPrefix $prefix $name -}}
{{- $fixed := dict
    "controller-manager" (include "otelop.serviceAccountName" $root)
    "webhook-service" (printf "%s-webhook" $full)
    "webhook-cert" (include "otelop.certSecretName" $root)
    "mutating-webhook-configuration" (printf "%s-mutation" $full)
    "validating-webhook-configuration" (printf "%s-validation" $full)
    "controller-manager-metrics-service" $full
    "metrics-service" $full
    "metrics-reader" (printf "%s-metrics" $full) -}}
{{- if hasKey $fixed $suffix -}}{{ get $fixed $suffix }}
{{- else -}}{{ printf "%s-%s" $full (regexReplaceAll "-(role|rolebinding|binding)$" $suffix "") }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Selector labels of the manager's pods: name and component, the same pair as upstream's chart, so
that `helm upgrade` of a release made with upstream's chart keeps the Deployment (its selector is
immutable). The release is told apart by app.kubernetes.io/instance, which is a label of every
object but not part of the selector (as upstream's).
*/}}
{{- define "otelop.selectorLabels" -}}
app.kubernetes.io/name: {{ include "otelop.name" . }}
app.kubernetes.io/component: controller-manager
{{- end -}}

{{/* The labels of one operator Deployment (dict "top" $ "instance" <instance>): the main instance's
  are otelop.labels; a shard's component is shard-<key>, so that its pods match neither the main
  Deployment's selector nor the webhook and metrics Services; the webhook Deployment's
  (manager.webhookDeployment) is webhook, selected by the webhook Service alone. */}}
{{- define "otelop.instanceComponent" -}}
{{- if .instance.component -}}
app.kubernetes.io/component: {{ .instance.component }}
{{- else if .instance.main -}}
app.kubernetes.io/component: controller-manager
{{- else -}}
app.kubernetes.io/component: {{ printf "shard-%s" .instance.shard | trunc 63 | trimSuffix "-" }}
{{- end -}}
{{- end -}}

{{- define "otelop.instanceSelectorLabels" -}}
{{ include "otelop.selectorLabels" .top | replace "app.kubernetes.io/component: controller-manager" (include "otelop.instanceComponent" .) }}
{{- end -}}

{{- define "otelop.instanceLabels" -}}
{{ include "otelop.labels" .top | replace "app.kubernetes.io/component: controller-manager" (include "otelop.instanceComponent" .) }}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "otelop.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "otelop.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | replace "+" "_" | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: opentelemetry-operator
{{- $v := include "otelop.values" . | fromJson }}
{{- with $v.additionalLabels }}
{{ tpl (toYaml .) $ }}
{{- end }}
{{- end -}}

{{/* The cert-manager annotation that injects the CA bundle, in cert-manager mode. */}}
{{- define "otelop.injectCA" -}}
{{- if eq (include "otelop.certMode" .) "cert-manager" -}}
cert-manager.io/inject-ca-from: {{ printf "%s/%s-serving-cert" (include "otelop.namespace" .) (include "otelop.fullname" .) }}
{{- end -}}
{{- end -}}

{{/* The CA bundle the chart writes into webhook configurations (files mode only). */}}
{{- define "otelop.caBundle" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- if eq (include "otelop.certMode" .) "files" -}}{{ $v.admissionWebhooks.caBundle | default "" }}{{- end -}}
{{- end -}}

{{/* imagePullSecrets as [{name: ...}], also when given as bare names. Argument: the effective values. */}}
{{- define "otelop.pullSecrets" -}}
{{- $out := list -}}
{{- range .imagePullSecrets -}}
{{- if kindIs "string" . -}}{{ $out = append $out (dict "name" .) }}{{- else -}}{{ $out = append $out . }}{{- end -}}
{{- end -}}
{{- if $out }}{{ toYaml $out }}{{ end -}}
{{- end -}}

{{/* Namespace of the release's namespaced objects: namespaceOverride, else the release namespace. */}}
{{- define "otelop.namespace" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- default .Release.Namespace $v.namespaceOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
The default collector image's tag: the one upstream's chart 0.101.0 (appVersion 0.140.0, the
operator this chart's is compatible with) passes, a patch release of the operator's collector
version (internal/manifests/collector DefaultCollectorVersion; test/chart checks both). A helm
upgrade from that chart then keeps every collector's image (test/chart/chartswitch).
*/}}
{{- define "otelop.collectorImageTag" -}}0.140.1{{- end -}}

{{/*
An image flag's value from {repository, tag}: "repository:tag"; a repository alone gets the
default tag; nothing when both are empty (the operator's built-in default applies); a tag alone is
refused. Argument: dict "image" <map> "defaultTag" <string> "key" <values path, for messages>.
*/}}
{{- define "otelop.imageRef" -}}
{{- $i := .image | default dict -}}
{{- $repo := toString ($i.repository | default "") -}}
{{- $tag := toString ($i.tag | default "") -}}
{{- if $repo -}}
{{- $tag = default .defaultTag $tag -}}
{{- if $tag }}{{ printf "%s:%s" $repo $tag }}{{ else }}{{ fail (printf "%s.repository is set without %s.tag, and this image has no default tag: set %s.tag too" .key .key .key) }}{{ end -}}
{{- else if $tag -}}
{{- fail (printf "%s.tag is set without %s.repository: set %s.repository too (or remove the tag)" .key .key .key) -}}
{{- end -}}
{{- end -}}

{{/* Name of the MutatingWebhookConfiguration: <namePrefix><fullname>-mutation (namePrefix orders
  it among the cluster's mutating webhooks, as upstream's admissionWebhooks.namePrefix). */}}
{{- define "otelop.mutatingName" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $p := toString (dig "admissionWebhooks" "namePrefix" "" $v) -}}
{{- printf "%s-%s" $p (include "otelop.fullname" .) | trimPrefix "-" }}-mutation
{{- end -}}

{{/* The webhooks are served unless admissionWebhooks.create is false (then the chart renders no
  webhook configuration, webhook Service or certificate, and the operator runs with
  --enable-webhooks=false). */}}
{{- define "otelop.webhooksEnabled" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- if and (include "otelop.operatorEnabled" .) (ne (toString (dig "admissionWebhooks" "create" true $v)) "false") }}true{{ end -}}
{{- end -}}

{{/* --feature-gates from manager.featureGates (a string) and manager.featureGatesMap (gate: bool,
  false written as -gate), joined; a later entry wins in the operator. */}}
{{- define "otelop.featureGates" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- $out := list -}}
{{- with $v.manager.featureGates }}{{ $out = append $out (toString .) }}{{ end -}}
{{- range $k, $on := ($v.manager.featureGatesMap | default dict) -}}
{{- if eq (toString $on) "true" }}{{ $out = append $out $k }}{{ else }}{{ $out = append $out (printf "-%s" $k) }}{{ end -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/* Whether manager.webhookDeployment runs the webhooks apart from the main Deployment ("true" or empty). */}}
{{- define "otelop.webhookDeployment" -}}
{{- $v := include "otelop.values" . | fromJson -}}
{{- if and (include "otelop.webhooksEnabled" .) (eq (toString (dig "webhookDeployment" "enabled" false $v.manager)) "true") -}}true{{- end -}}
{{- end -}}
