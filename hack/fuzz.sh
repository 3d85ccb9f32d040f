#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a bounded run each: hack/fuzz.sh [FUZZTIME]
# FUZZTIME is a count of inputs (default 30000x) or a duration. A count is the default because Go's
# fuzz coordinator can fail a duration-bounded run with a bare "context deadline exceeded" when the
# machine is loaded (golang/go#75804), which is not a finding.
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-30000x}
found=0
while IFS= read -r file; do
  pkg="./$(dirname "$file")"
  for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
    found=1
    echo "==> fuzzing $fn in $pkg for $time"
    go test "$pkg" -run '^$' -fuzz "^${fn}\$" -fuzztime "$time"
  done
done < <(grep -rl --include='*_test.go' -E '^func Fuzz' . | grep -v '/hack/tools/' | sort)
[ $found = 1 ] || echo "no fuzz targets yet"
