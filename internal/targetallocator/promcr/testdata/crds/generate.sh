#!/bin/sh
# Regenerates the Prometheus Operator CRDs the envtest installs, with controller-gen from the
# API types module the allocator uses (github.com/prometheus-operator/prometheus-operator/
# pkg/apis/monitoring, the version in go.mod); run from the repository root:
#   sh internal/targetallocator/promcr/testdata/crds/generate.sh
set -eu
out=internal/targetallocator/promcr/testdata/crds
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mod=github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring
bin/tools/controller-gen crd:maxDescLen=0 paths=$mod/v1 paths=$mod/v1alpha1 output:crd:dir="$tmp"
for r in servicemonitors podmonitors probes scrapeconfigs; do
	cp "$tmp/monitoring.coreos.com_$r.yaml" "$out/"
done
