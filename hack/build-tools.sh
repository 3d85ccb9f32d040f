#!/usr/bin/env bash
# Builds the binaries the project's tests and `make run` need, from Go modules under hack/tools/,
# into bin/. A fresh clone on a machine that built a tool once relinks nothing:
#
#   hack/build-tools.sh [k8s] [kubelet] [etcd] [kwok] [otelcol] [controller-gen] [golangci-lint] [flux] [upstream-operator] [all]
#   (upstream-operator, upstream's operator v0.140.0 for test/takeover, is not part of all)
#
# The tool cache. Each tool's binaries are kept under $OTELOP_TOOL_CACHE (default
# ${XDG_CACHE_HOME:-~/.cache}/otelop/tools), in a folder named by a key: the SHA-256 of the tool's
# module files (go.mod, go.sum and its sources in hack/tools/<dir>), the build flags and packages, the
# Go version and the platform. A key that is there is linked into bin/ (hard link, or a copy across
# file systems); one that is not is built into the cache first. bin/tool-keys lists the key each
# binary in bin/ came from (paths relative to the checkout), so that the test runner can tell when a
# tool changed (hack/test.sh).
#
# A failing build names the tool and prints the tail of its log (the full log is in bin/logs/).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
K8S_BIN="$ROOT/bin/k8s/$K8S_VERSION"
TOOLS_BIN="$ROOT/bin/tools"
LOGS="$ROOT/bin/logs"
CACHE=${OTELOP_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/otelop/tools}
KEYS="$ROOT/bin/tool-keys"
mkdir -p "$K8S_BIN" "$TOOLS_BIN" "$LOGS" "$CACHE"
touch "$KEYS"

# key NAME MODULE_DIR GO-BUILD-ARGS...: the cache key of one tool build.
key() {
  local name=$1 dir=$2; shift 2
  {
    echo "tool $name"
    echo "go $(go env GOVERSION) $(go env GOOS)/$(go env GOARCH) cgo=${CGO_ENABLED:-$(go env CGO_ENABLED)}"
    # Output paths name the checkout; the key must not (another clone uses the same entry).
    printf 'arg %s\n' "${@//"$ROOT"/<checkout>}"
    (cd "$ROOT/hack/tools/$dir" && find . -maxdepth 1 -type f ! -name '*_test.go' -print | LC_ALL=C sort |
      while read -r f; do echo "file $f $(sha256sum <"$f" | cut -c1-64)"; done)
  } | sha256sum | cut -c1-32
}

# link SRC DST: DST becomes SRC's content, as a hard link when both are on one file system.
link() {
  rm -f "$2"
  ln "$1" "$2" 2>/dev/null || cp "$1" "$2"
}

# build NAME MODULE_DIR "WHY IT IS SLOW" OUTPUT... -- GO BUILD ARGS...
# GO BUILD ARGS name every output with -o; the outputs' base names are their names in the cache.
build() {
  local name=$1 dir=$2 why=$3; shift 3
  local outs=()
  while [ "$1" != "--" ]; do outs+=("$1"); shift; done
  shift
  local k entry
  k=$(key "$name" "$dir" "$@")
  entry="$CACHE/${name//[^A-Za-z0-9._-]/_}-$k"
  local missing=0 o
  for o in "${outs[@]}"; do
    [ -x "$o" ] && grep -qxF "${o#"$ROOT"/} $k" "$KEYS" || missing=1
  done
  if [ $missing = 0 ]; then
    echo "==> $name: up to date"
    return 0
  fi
  local cached=1
  for o in "${outs[@]}"; do [ -x "$entry/$(basename "$o")" ] || cached=0; done
  if [ $cached = 0 ]; then
    echo "==> building $name ($why)"
    local start=$SECONDS log="$LOGS/${name//[^A-Za-z0-9._-]/_}.log" tmp="$entry.tmp.$$"
    rm -rf "$tmp" && mkdir -p "$tmp"
    # Outputs go to the cache entry: -o DIR/ or -o FILE are rewritten to the temporary entry.
    local args=() a next=0
    for a in "$@"; do
      if [ $next = 1 ]; then
        case $a in */) args+=("$tmp/") ;; *) args+=("$tmp/$(basename "$a")") ;; esac
        next=0
      else
        args+=("$a")
        [ "$a" = "-o" ] && next=1
      fi
    done
    if ! (cd "$ROOT/hack/tools/$dir" && go build "${args[@]}") >"$log" 2>&1; then
      echo "!! building $name failed after $((SECONDS - start))s; last lines of $log:" >&2
      tail -n 40 "$log" >&2
      rm -rf "$tmp"
      exit 1
    fi
    rm -rf "$entry" && mv "$tmp" "$entry"
    echo "    $name built in $((SECONDS - start))s (cached as $entry)"
  else
    echo "==> $name: from the tool cache ($entry)"
  fi
  for o in "${outs[@]}"; do
    link "$entry/$(basename "$o")" "$o"
    { grep -v "^${o#"$ROOT"/} " "$KEYS" || true; echo "${o#"$ROOT"/} $k"; } | LC_ALL=C sort >"$KEYS.tmp.$$" && mv "$KEYS.tmp.$$" "$KEYS"
  done
}

k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
k8s_ldflags=${k8s_ldflags%.*}
k8s_ldflags="$k8s_ldflags -X k8s.io/component-base/version.gitTreeState=clean"

# upstream's operator v0.140.0 (test/takeover and the differential tests), stamped with the versions
# of its release (versions.txt of v0.140.0) the way its Makefile does, so that its defaults (collector
# image, status.version) are those of the release users run.
up=github.com/open-telemetry/opentelemetry-operator/internal/version
upstream_ldflags="-s -w -X $up.version=0.140.0 -X $up.buildDate=2025-11-17T00:00:00Z -X $up.otelCol=0.140.0 \
 -X $up.targetAllocator=0.140.0 -X $up.operatorOpAMPBridge=0.140.0 \
 -X $up.autoInstrumentationJava=1.33.6 -X $up.autoInstrumentationNodeJS=0.66.0 \
 -X $up.autoInstrumentationPython=0.59b0 -X $up.autoInstrumentationDotNet=1.2.0 \
 -X $up.autoInstrumentationGo=v0.22.1 -X $up.autoInstrumentationApacheHttpd=1.0.4 \
 -X $up.autoInstrumentationNginx=1.0.4"

tool() {
  case $1 in
  k8s)
    build "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl $K8S_VERSION" k8s \
      "compiles Kubernetes from source: ~15 min on 2 cores the first time, seconds afterwards" \
      "$K8S_BIN/kube-apiserver" "$K8S_BIN/kube-controller-manager" "$K8S_BIN/kube-scheduler" "$K8S_BIN/kubectl" -- \
      -ldflags "$k8s_ldflags" -o "$K8S_BIN/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl ;;
  kubelet)
    build "kubelet $K8S_VERSION" k8s \
      "compiles the kubelet for the real-node tests: ~3 min once the control plane is built" \
      "$K8S_BIN/kubelet" -- -ldflags "$k8s_ldflags" -o "$K8S_BIN/kubelet" k8s.io/kubernetes/cmd/kubelet ;;
  etcd)
    build "etcd" etcd "compiles etcd from source: ~2 min the first time" \
      "$K8S_BIN/etcd" -- -ldflags "-s -w" -o "$K8S_BIN/etcd" . ;;
  kwok)
    build "kwok" kwok "compiles kwok from source: ~3 min the first time" \
      "$K8S_BIN/kwok" -- -ldflags "-s -w" -o "$K8S_BIN/kwok" sigs.k8s.io/kwok/cmd/kwok ;;
  controller-gen)
    build "controller-gen" controller-gen "compiles controller-tools: ~1 min the first time" \
      "$TOOLS_BIN/controller-gen" -- -o "$TOOLS_BIN/controller-gen" sigs.k8s.io/controller-tools/cmd/controller-gen ;;
  golangci-lint)
    build "golangci-lint" golangci-lint "compiles golangci-lint and its linters: ~4 min the first time" \
      "$TOOLS_BIN/golangci-lint" -- -o "$TOOLS_BIN/golangci-lint" github.com/golangci/golangci-lint/v2/cmd/golangci-lint ;;
  otelcol)
    # A real collector with the opamp extension (OTLP receiver, debug exporter) for the OpAMP
    # bridge's end-to-end tests.
    build "otelcol-opamp" otelcol "collector v0.149.0 with the opamp extension: ~2 min the first time" \
      "$TOOLS_BIN/otelcol-opamp" -- -ldflags "-s -w" -o "$TOOLS_BIN/otelcol-opamp" . ;;
  flux)
    # Flux's controllers for the service provider's whole-system test (test/system), one tools
    # module each (their go.mod replace lines differ); new names, so no tool is overwritten.
    build "flux-source-controller" flux/source-controller \
      "compiles Flux source-controller v1.7.0 with its cloud SDKs, Helm, cosign and notation: ~12 min the first time on 2 loaded cores" \
      "$TOOLS_BIN/flux-source-controller" -- -ldflags "-s -w" -o "$TOOLS_BIN/flux-source-controller" github.com/fluxcd/source-controller
    build "flux-helm-controller" flux/helm-controller \
      "compiles Flux helm-controller v1.4.0: ~16 min the first time on 2 loaded cores" \
      "$TOOLS_BIN/flux-helm-controller" -- -ldflags "-s -w" -o "$TOOLS_BIN/flux-helm-controller" github.com/fluxcd/helm-controller ;;
  upstream-operator)
    build "upstream-operator" upstream-operator "upstream's operator v0.140.0, its full dependency tree: ~10 min on 2 cores the first time" \
      "$TOOLS_BIN/upstream-operator" -- -ldflags "$upstream_ldflags" -o "$TOOLS_BIN/upstream-operator" \
      github.com/open-telemetry/opentelemetry-operator ;;
  all) for t in k8s kubelet etcd kwok otelcol controller-gen golangci-lint flux; do tool $t; done ;;
  *) echo "unknown tool: $1 (want k8s, kubelet, etcd, kwok, otelcol, controller-gen, golangci-lint, flux, upstream-operator or all)" >&2; exit 2 ;;
  esac
}

[ $# -gt 0 ] || set -- all
for t in "$@"; do tool "$t"; done
