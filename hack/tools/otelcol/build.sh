#!/usr/bin/env bash
# Builds bin/tools/otelcol-opamp, a real OpenTelemetry Collector with the opamp extension (OTLP
# receiver, debug exporter), from this Go module. The OpAMP bridge's end-to-end tests run it
# against the bridge's proxy server. It builds only when the binary is missing (~2 min cold).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../.." && pwd)
OUT="$ROOT/bin/tools/otelcol-opamp"
if [ -x "$OUT" ]; then
  echo "==> otelcol-opamp: up to date"
  exit 0
fi
mkdir -p "$ROOT/bin/tools" "$ROOT/bin/logs"
echo "==> building otelcol-opamp (collector v0.149.0 with the opamp extension: ~2 min the first time)"
start=$SECONDS
log="$ROOT/bin/logs/otelcol-opamp.log"
if ! (cd "$ROOT/hack/tools/otelcol" && go build -ldflags "-s -w" -o "$OUT" .) >"$log" 2>&1; then
  echo "!! building otelcol-opamp failed; last lines of $log:" >&2
  tail -n 40 "$log" >&2
  exit 1
fi
echo "    otelcol-opamp built in $((SECONDS - start))s"
