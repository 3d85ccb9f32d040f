#!/usr/bin/env bash
# Builds the binaries the project's tests and `make run` need, from Go modules under hack/tools/,
# into bin/. Each tool is built only when its binary is missing, so a second run takes seconds.
#
#   hack/build-tools.sh [k8s] [kubelet] [etcd] [kwok] [otelcol] [controller-gen] [golangci-lint] [flux] [upstream-operator] [all]
#   (upstream-operator, upstream's operator v0.140.0 for the takeover test, is not part of all)
#
# A failing build names the tool and prints the tail of its log (the full log is in bin/logs/).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
K8S_VERSION=${K8S_VERSION:-v1.37.2}
K8S_BIN="$ROOT/bin/k8s/$K8S_VERSION"
TOOLS_BIN="$ROOT/bin/tools"
LOGS="$ROOT/bin/logs"
mkdir -p "$K8S_BIN" "$TOOLS_BIN" "$LOGS"

# build NAME MODULE_DIR "WHY IT IS SLOW" OUTPUT... -- GO BUILD ARGS...
build() {
  local name=$1 dir=$2 why=$3; shift 3
  local outs=()
  while [ "$1" != "--" ]; do outs+=("$1"); shift; done
  shift
  local missing=0
  for o in "${outs[@]}"; do [ -x "$o" ] || missing=1; done
  if [ $missing = 0 ]; then
    echo "==> $name: up to date"
    return 0
  fi
  echo "==> building $name ($why)"
  local start=$SECONDS log="$LOGS/$name.log"
  if ! (cd "$ROOT/hack/tools/$dir" && go build "$@") >"$log" 2>&1; then
    echo "!! building $name failed after $((SECONDS - start))s; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
  echo "    $name built in $((SECONDS - start))s"
}

k8s_ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
k8s_ldflags=${k8s_ldflags%.*}
k8s_ldflags="$k8s_ldflags -X k8s.io/component-base/version.gitTreeState=clean"

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
  otelcol) "$ROOT/hack/tools/otelcol/build.sh" ;;
  flux)
    # Flux's controllers for the service provider's whole-system test (test/system), one tools
    # module each (their go.mod replace lines differ); new names, so no tool is overwritten.
    build "flux-source-controller" flux/source-controller \
      "compiles Flux source-controller v1.7.0 with its cloud SDKs, Helm, cosign and notation: ~12 min the first time on 2 loaded cores" \
      "$TOOLS_BIN/flux-source-controller" -- -ldflags "-s -w" -o "$TOOLS_BIN/flux-source-controller" github.com/fluxcd/source-controller
    build "flux-helm-controller" flux/helm-controller \
      "compiles Flux helm-controller v1.4.0: ~16 min the first time on 2 loaded cores" \
      "$TOOLS_BIN/flux-helm-controller" -- -ldflags "-s -w" -o "$TOOLS_BIN/flux-helm-controller" github.com/fluxcd/helm-controller ;;
  upstream-operator) "$ROOT/hack/tools/upstream-operator/build.sh" ;;
  all) for t in k8s kubelet etcd kwok otelcol controller-gen golangci-lint flux; do tool $t; done ;;
  *) echo "unknown tool: $1 (want k8s, kubelet, etcd, kwok, otelcol, controller-gen, golangci-lint, flux, upstream-operator or all)" >&2; exit 2 ;;
  esac
}

[ $# -gt 0 ] || set -- all
for t in "$@"; do tool "$t"; done
