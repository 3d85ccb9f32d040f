#!/usr/bin/env bash
# Regenerates the Flux CRDs the service-provider tests install on the platform API server, from the
# Flux API Go modules pinned in go.mod (HelmRelease v2, OCIRepository v1). Run from anywhere.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT="$ROOT/internal/serviceprovider/simprovider/testdata/flux-crds"
"$ROOT/hack/build-tools.sh" controller-gen >/dev/null
rm -f "$OUT"/*.yaml
cd "$ROOT"
"$ROOT/bin/tools/controller-gen" crd \
  paths=github.com/fluxcd/helm-controller/api/v2 \
  paths=github.com/fluxcd/source-controller/api/v1 \
  output:crd:artifacts:config="$OUT"
# Keep only the two kinds the provider creates.
find "$OUT" -name '*.yaml' ! -name 'helm.toolkit.fluxcd.io_helmreleases.yaml' ! -name 'source.toolkit.fluxcd.io_ocirepositories.yaml' -delete
ls "$OUT"
