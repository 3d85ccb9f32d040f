#!/usr/bin/env bash
# Runs every Go fuzz target in the module for a short time each (default 10s): hack/fuzz.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-10s}
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
