#!/usr/bin/env bash
# Coverage-guided fuzzing of the NVR's parsers with libFuzzer (see bench/fuzz/README.md).
#   bench/fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]     (make fuzz FUZZ_SECONDS=1800)
# A target stops at SECONDS or at FUZZ_RUNS executions (default 10 million), whichever comes first.
# Each target starts from its kept inputs in Tests/Fixtures/fuzz/<target> (seeds from real
# captures plus earlier findings) and grows a working corpus in bench/results/fuzz/<target>.
# A crash leaves crash-* in bench/results/fuzz/ and stops the run: copy it into
# Tests/Fixtures/fuzz/<target>/ (the normal tests replay it) and fix it.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
swift=${SWIFT:-$(command -v swift || echo /opt/swift/usr/bin/swift)}
(cd Fuzz && "$swift" build -c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library \
    --product nvr-fuzz --scratch-path ../.build-fuzz >/dev/null)
bin=.build-fuzz/release/nvr-fuzz
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ls Tests/Fixtures/fuzz)
fi
out=bench/results/fuzz
mkdir -p "$out"
for t in "${targets[@]}"; do
  mkdir -p "$out/$t"
  echo "== $t: $seconds s"
  log="$out/$t.log"
  # -timeout: one input may take at most 5 s (a hang is a finding); -rss_limit_mb: memory.
  if ! NVR_FUZZ_TARGET=$t "$bin" "$out/$t" "Tests/Fixtures/fuzz/$t" -max_total_time="$seconds" -runs="${FUZZ_RUNS:-10000000}" -timeout=5 \
       -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 -artifact_prefix="$out/crash-$t-" >"$log" 2>&1; then
    if grep -q "run interrupted" "$log"; then
      runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
      echo "   interrupted after ${runs:-?} executions, no crash"
      echo "$(date -u +%FT%TZ) $t interrupted ${runs:-0} executions" >> "$out/summary.txt"
      exit 130
    fi
    echo "   FOUND A PROBLEM: see $log and $out/crash-$t-*"
    tail -30 "$log"
    exit 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$')
  echo "   $runs executions ($rate/s), no crash"
  echo "$(date -u +%FT%TZ) $t $seconds s $runs executions $rate/s" >> "$out/summary.txt"
done
