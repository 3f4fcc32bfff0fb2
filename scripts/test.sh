#!/usr/bin/env bash
# make test: every test, in two tiers, on a build `make build` (swift build --build-tests) made.
#
#   1. the fast tier: every suite not tagged `.system` (Tests/Support/Tags.swift), in one
#      process, in parallel: no cameras, browsers, packages or `nvr` processes; seconds.
#   2. the system tier: the suites tagged `.system` (real GStreamer and simulated cameras,
#      Chromium, the Debian package, `nvr` as a child process, network namespaces), each suite
#      in a process of its own, NVR_TEST_WORKERS (3) of them at a time, longest first. Inside a
#      process tests run one at a time, as they always have: a test that blocks a thread cannot
#      starve another suite's in-process simulator, and no two tests of a suite overlap.
#
# The tiers are chosen by the tag in the sources, so a new suite lands in one of them without
# editing this script; at the end the tests run are counted against the tests that exist.
#   scripts/test.sh [fast|system|all]      (default all)
set -uo pipefail
cd "$(dirname "$0")/.."
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
tier=${1:-all}
workers=${NVR_TEST_WORKERS:-3}
bin="$("$swift" build --show-bin-path)/nvrPackageTests.xctest"
[ -x "$bin" ] || { echo "test.sh: no test binary at $bin (run: swift build --build-tests)" >&2; exit 2; }
logs=$(mktemp -d /tmp/nvr-tests.XXXXXX)
export NO_COLOR=1

# The suites tagged .system, by name ("@Suite(.serialized, .tags(.system)) struct FooTests").
system_suites=$(grep -rhE '^@Suite\(.*\.tags\(\.system\).*\) (final class|struct) [A-Za-z0-9_]+' Tests --include='*.swift' |
                sed -E 's/.* (final class|struct) ([A-Za-z0-9_]+).*/\2/' | sort -u)
# Longest first (measured: bench/README.md "Test tiers"), then the rest by name.
slow_first="DebianPackageTests ReadmeTests GoProRecordingTests APIPropertyTests RecordingTests PageTests Insta360Tests
  RetentionTests DiscoveryTests TuyaLANTests HostileCameraTests PlaybackTests MotionEventTests PluginEventTests
  AdminCommandTests CardSyncCommandTests ONVIFRecordingTests TuyaRecordingTests"
queue=()
for s in $slow_first; do grep -qx "$s" <<<"$system_suites" && queue+=("$s"); done
for s in $system_suites; do [[ " ${queue[*]} " == *" $s "* ]] || queue+=("$s"); done
system_regex=$(printf '\\.%s/|' "${queue[@]}"); system_regex=${system_regex%|}

run() { # name, args...: runs the test binary, output to $logs/name.log
  local name=$1; shift
  local start=$SECONDS
  "$bin" --testing-library swift-testing "$@" >"$logs/$name.log" 2>&1
  local status=$?
  echo "$((SECONDS - start)) $name" >>"$logs/durations"
  return $status
}

# Ctrl-C stops every worker and what it started (background jobs ignore SIGINT otherwise).
trap 'trap - INT TERM; kill -TERM 0' INT TERM

failed=0
if [ "$tier" = all ] || [ "$tier" = fast ]; then
  echo "== fast tier (in-process; suites not tagged .system)"
  run fast --skip "$system_regex" || failed=1
  cat "$logs/fast.log"
fi

if [ "$tier" = all ] || [ "$tier" = system ]; then
  echo "== system tier: ${#queue[@]} suites, $workers at a time"
  # A shared queue: each worker takes the next suite (an atomic mkdir claims it).
  mkdir -p "$logs/claimed"
  worker() {
    local status=0
    for s in "${queue[@]}"; do
      mkdir "$logs/claimed/$s" 2>/dev/null || continue
      run "$s" --no-parallel --filter "\\.$s/" || status=1
      echo "-- $s: $(grep -E 'Test run with' "$logs/$s.log" | tail -1)"
    done
    return $status
  }
  pids=()
  for _ in $(seq "$workers"); do worker & pids+=($!); done
  for p in "${pids[@]}"; do wait "$p" || failed=1; done
  for s in "${queue[@]}"; do echo "==== $s"; cat "$logs/$s.log"; done
fi

# Count: every test that exists ran in one tier (a suite the regexes missed would be silent).
ran=0; bad=0
for f in "$logs"/*.log; do
  n=$(sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' "$f" | tail -1)
  [ -n "$n" ] || { echo "test.sh: $(basename "$f" .log) ended without its summary line" >&2; failed=1; continue; }
  ran=$((ran + n))
  bad=$((bad + $(grep -E '✘ Test ' "$f" | grep -v 'Test run with' | grep -c 'failed after')))
done
if [ "$tier" = all ]; then
  listed=$("$bin" --testing-library swift-testing --list-tests 2>/dev/null | grep -c '/')
  [ "$ran" -eq "$listed" ] || { echo "test.sh: $ran tests ran, $listed exist" >&2; failed=1; }
fi
echo "== longest (seconds):"; sort -rn "$logs/durations" | head -8 | sed 's/^/   /'
echo "tests: $((ran - bad)) passed, $bad failed"
rm -rf "$logs"
exit $failed
