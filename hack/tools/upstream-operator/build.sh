#!/usr/bin/env bash
# Builds upstream's operator v0.140.0 into bin/tools/upstream-operator, stamped with the versions of its
# release (versions.txt of v0.140.0) the way its Makefile does, so that its defaults (collector image,
# status.version) are those of the release users run. Only when the binary is missing.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../../.." && pwd)
OUT="$ROOT/bin/tools/upstream-operator"
[ -x "$OUT" ] && { echo "==> upstream-operator: up to date"; exit 0; }
P=github.com/open-telemetry/opentelemetry-operator/internal/version
LDFLAGS="-s -w -X $P.version=0.140.0 -X $P.buildDate=2025-11-17T00:00:00Z -X $P.otelCol=0.140.0 \
 -X $P.targetAllocator=0.140.0 -X $P.operatorOpAMPBridge=0.140.0 \
 -X $P.autoInstrumentationJava=1.33.6 -X $P.autoInstrumentationNodeJS=0.66.0 \
 -X $P.autoInstrumentationPython=0.59b0 -X $P.autoInstrumentationDotNet=1.2.0 \
 -X $P.autoInstrumentationGo=v0.22.1 -X $P.autoInstrumentationApacheHttpd=1.0.4 \
 -X $P.autoInstrumentationNginx=1.0.4"
echo "==> building upstream-operator v0.140.0 (upstream's full dependency tree: ~10 min on 2 cores the first time)"
cd "$HERE" && go build -ldflags "$LDFLAGS" -o "$OUT.tmp" github.com/open-telemetry/opentelemetry-operator
mv "$OUT.tmp" "$OUT"
