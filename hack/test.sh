#!/usr/bin/env bash
# `make test`: builds what is missing and runs every test, in phases, then checks the required-suite
# contract (hack/testreport/required.txt) and prints a table of phases and suites.
#
#   tools + generate-check + build   (niced, in the background)  |  unit packages, go test -p 2
#   cluster packages, go test -p 1 (they start API servers, clusters, a real node)
#   compat, chart, images, system    (the test modules of their own)
#   summary                          (fails when a required suite failed, ran no test or skipped)
#
# Every package whose tests read inputs outside Go's view (YAML read in TestMain, the cluster
# binaries, sources built by a test) gets the digest of those inputs as a cacheable go test flag, so a
# YAML-only change is never answered from Go's test cache (hack/testreport/inputs.go). Results and phase times are in
# bin/test-results/. Tests build with -trimpath, so that Go's caches (compiled packages and test
# results) do not depend on the checkout's folder: a fresh clone of the same content reuses them.
# OTELOP_ALLOW_SKIP=realnode lets a machine that cannot run the real node pass,
# saying so loudly at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
OUT=$ROOT/bin/test-results
PHASES=$OUT/phases.tsv
rm -rf "$OUT" && mkdir -p "$OUT"
: "${GO_TEST_TIMEOUT:=30m}"
# Packages whose tests run with the race detector instead of without it: the packages with
# concurrency (the applier, the reconcile helpers, the OpAMP bridge, the target allocator). Not
# internal/opampbridge/proxy: opamp-go's WebSocket client races inside itself on a reconnect
# (docs/architecture.md), about one run in ten.
: "${RACE_PACKAGES:=internal/apply internal/controller/statuswrite internal/controller/owned
  internal/opampbridge/agent internal/opampbridge/collectors internal/opampbridge/config
  internal/opampbridge/health internal/opampbridge/wslimit internal/opampbridge/bridge
  internal/targetallocator/allocation internal/targetallocator/config internal/targetallocator/filter
  internal/targetallocator/server internal/targetallocator/target internal/targetallocator/watchloop
  internal/targetallocator/app internal/targetallocator/collectors internal/targetallocator/promcr}"
# The race detector's one-second pause at exit, per package, buys nothing here.
export GORACE=${GORACE:-atexit_sleep_ms=0}
failed=0

# phase NAME CMD...: runs CMD, prints its time and records "NAME seconds rc" in the phase log.
phase() {
  local name=$1 start=$SECONDS rc
  shift
  echo "==> [$name] started $(date -u +%H:%M:%S)"
  "$@"
  rc=$?
  printf '%s\t%d\t%d\n' "$name" $((SECONDS - start)) $rc >>"$PHASES"
  echo "<== [$name] $((SECONDS - start))s$([ $rc = 0 ] || echo ", FAILED (exit $rc)")"
  [ $rc = 0 ] || failed=1
  return $rc
}

# gotest NAME DIR [GO TEST ARGS...]: go test -json in DIR, printed as a person reads it, events
# kept in bin/test-results/NAME.json for the summary.
gotest() {
  local name=$1 dir=$2
  shift 2
  (cd "$dir" && go test -json -trimpath -timeout "$GO_TEST_TIMEOUT" "$@") | "$ROOT/bin/testreport" tee "$OUT/$name.json"
}

# in_race PKG: whether PKG is one of RACE_PACKAGES.
in_race() {
  local p
  for p in $RACE_PACKAGES; do
    [ "$1" = "github.com/otelop/otelop/$p" ] && return 0
  done
  return 1
}
# pick KIND race|norace: the packages of kind (unit or cluster) from the split that are, or are not,
# in RACE_PACKAGES.
pick() {
  local kind=$1 race=$2 k p
  while read -r k p; do
    [ "$k" = "$kind" ] || continue
    if in_race "$p"; then [ "$race" = race ] && echo "$p"; else [ "$race" = norace ] && echo "$p"; fi
  done <"$OUT/split.txt"
}

# tools_lane fails when a tool or a binary cannot be built (the suites need them); stale generated
# files fail the run through their phase, but the suites still run.
tools_lane() {
  phase tools nice -n 10 hack/build-tools.sh k8s etcd kwok kubelet otelcol upstream-operator flux controller-gen || return 1
  phase generate-check nice -n 10 make --no-print-directory generate-check
  phase build nice -n 10 make --no-print-directory build
}

unit_lane() {
  local race norace
  norace=$(pick unit norace)
  race=$(pick unit race)
  local rc=0
  gotest unit . -p 2 $norace || rc=1
  [ -z "$race" ] || gotest unit-race . -p 2 -race $race || rc=1
  return $rc
}

cluster_lane() {
  local race norace
  norace=$(pick cluster norace)
  race=$(pick cluster race)
  local rc=0
  gotest cluster . -p 1 $DIGEST_FLAG $norace || rc=1
  prebuild_wait
  [ -z "$race" ] || gotest cluster-race . -p 1 -race $DIGEST_FLAG $race || rc=1
  return $rc
}

# prebuild_lane compiles, at the lowest priority while the cluster packages run one at a time (their
# tests wait on API servers and nodes much of the time), what the later phases would otherwise compile
# in series: the race-instrumented cluster packages (-race rebuilds client-go and controller-runtime),
# the test modules' binaries (the Helm SDK of test/chart) and every image's binaries for each
# platform (CGO_ENABLED=0 and cross-compiled, as internal/imagebuild builds them). It only fills Go's
# build cache with the flags the phases use (-trimpath, -race); its binaries are thrown away, and a
# failure here costs time, not correctness: the phase compiles what is missing.
prebuild_lane() {
  local dir=$OUT/prebuild m race
  race=$(pick cluster race)
  [ -z "$race" ] || go test -c -trimpath -race -o "$dir/race/" $race
  for m in compat chart images system; do
    [ -f "test/$m/go.mod" ] && (cd "test/$m" && go test -c -trimpath -o "$dir/$m/" ./...)
  done
  go run ./hack/images build --out="$dir/images" $(ls cmd)
  rm -rf "$dir"
}

# prebuild_wait lets the prebuild finish at normal priority before a phase that needs what it builds,
# so that the two never compile the same packages at once.
prebuild_wait() {
  [ -n "${prebuild_pid:-}" ] || return 0
  if kill -0 "$prebuild_pid" 2>/dev/null; then
    echo "==> waiting for the prebuild (bin/test-results/prebuild.log) at normal priority"
    renice -n 0 -g "$prebuild_pid" >/dev/null 2>&1 || true
  fi
  wait "$prebuild_pid"
  echo "==> prebuild: exit $? after $((SECONDS - prebuild_start))s (its output: bin/test-results/prebuild.log)"
  prebuild_pid=
}

module() {
  gotest "$1" "test/$1" -p 1 $DIGEST_FLAG ./...
}

start=$SECONDS
phase testreport go build -o bin/testreport ./hack/testreport || exit 1
# A fresh clone gives every file a new modification time, and Go's test cache keys the files a test
# reads on size and time: in CI (or with OTELOP_STAMP_MTIMES=1) tracked files get times derived
# from their content first, so unchanged inputs are recognised across clones (testreport stamp).
# Not by default in a working copy, where make and editors rely on real times.
if [ -n "${CI:-}" ] || [ "${OTELOP_STAMP_MTIMES:-}" = 1 ]; then
  phase stamp bin/testreport stamp || exit 1
fi
phase split sh -c 'bin/testreport split ./... >"$0"' "$OUT/split.txt" || exit 1
for p in $RACE_PACKAGES; do
  if ! grep -q " github.com/otelop/otelop/$p\$" "$OUT/split.txt"; then
    echo "!! RACE_PACKAGES names $p, which is no package with tests" >&2
    exit 1
  fi
done

# The tools, generated files and binaries build in the background (niced) while the unit packages,
# which need none of them, run.
tools_lane >"$OUT/tools.log" 2>&1 &
tools_pid=$!
phase unit unit_lane
wait $tools_pid
tools_rc=$?
cat "$OUT/tools.log"
if [ $tools_rc != 0 ]; then
  failed=1
  echo "!! the tools or binaries failed to build (above); the suites that need them do not run"
else
  DIGEST_FLAG=$(bin/testreport digest -flag)
  echo "==> inputs digest: $DIGEST_FLAG (given to the packages that read inputs outside Go's view; no benchmark runs)"
  prebuild_start=$SECONDS
  set -m # the prebuild gets a process group of its own, reniced as one (prebuild_wait)
  nice -n 19 bash -c "$(declare -f pick in_race prebuild_lane); OUT='$OUT' RACE_PACKAGES='$RACE_PACKAGES' prebuild_lane" \
    >"$OUT/prebuild.log" 2>&1 &
  prebuild_pid=$!
  set +m
  phase cluster cluster_lane
  prebuild_wait
  for m in compat chart images; do phase "$m" module "$m"; done
  phase system gotest system test/system -p 1 -v $DIGEST_FLAG ./...
fi

bin/testreport summary -phases "$PHASES" "$OUT"/*.json
rc=$?
echo "==> make test: $((SECONDS - start))s"
[ $failed = 0 ] && [ $rc = 0 ]
