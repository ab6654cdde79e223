#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) into build-fuzz/ and runs each for
# FUZZ_SECONDS (default 60), FUZZ_JOBS at a time (default: the cores), from seeds taken from the
# test data. Findings (crashes, timeouts, out-of-memory; slow units apart) land in
# build-fuzz/findings/<target>/; the script exits 1 if there are any but slow units.
# Usage: tools/fuzz.sh [TARGET...]  (default: all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-$(nproc)}
build=${FUZZ_BUILD:-build-fuzz}

all=(schedule_json schedule_csv plan_table profile job native_csv bamboo infinitehbd simgrid step_table study_merge)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")

if ! command -v clang++ > /dev/null; then  # not in tools/install-deps.sh: only fuzzing needs it
  sudo_cmd=()
  [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends clang
fi
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DRECYCLE_FUZZ=ON \
  -DRECYCLE_TESTS=OFF -DRECYCLE_BENCH=OFF -DRECYCLE_CUDA=OFF > /dev/null
cmake --build "$build" -j "$(nproc)" --target $(printf 'fuzz_%s ' "${targets[@]}")

# Seeds: the files of the test data each reader reads.
seeds() {
  case "$1" in
    schedule_json) ls tests/cli/data/*.json tests/hostile/files/schedule_*.json ;;
    schedule_csv) ls tests/cli/data/*.csv tests/hostile/files/schedule_*.csv ;;
    plan_table) ls tests/hostile/files/table_*.json ;;
    profile) ls tests/hostile/files/profile_*.json profiles/*/*.json ;;
    job) ls tests/cli/data/job_*.json tests/cli/data/replay_*.json profiles/jobs/*.json ;;
    native_csv) ls tests/traces/data/*.csv tests/hostile/files/trace_*.csv tests/cli/data/replay_trace.csv ;;
    bamboo) ls tests/traces/data/*bamboo* ;;
    infinitehbd) ls tests/traces/data/*infinitehbd* tests/hostile/files/*infinitehbd* ;;
    simgrid) ls tests/traces/data/simgrid/* tests/hostile/files/simgrid_* ;;
    step_table) ls tests/cli/data/replay_*steps*.csv tests/hostile/files/steps_*.csv ;;
    study_merge) ls tests/hostile/files/study_*.csv ;;
  esac 2> /dev/null || true
}

run_one() {
  local t=$1 corpus="$build/corpus/$1" findings="$build/findings/$1"
  mkdir -p "$corpus" "$findings"
  for f in $(seeds "$t"); do cp -f "$f" "$corpus/seed-$(basename "$f")"; done
  "$build/tests/fuzz/fuzz_$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -max_len=65536 -artifact_prefix="$findings/" -print_final_stats=1 > "$build/fuzz_$t.log" 2>&1 || true
  local n slow
  n=$(find "$findings" -type f ! -name 'slow-unit-*' | wc -l)
  slow=$(find "$findings" -type f -name 'slow-unit-*' | wc -l)
  echo "fuzz_$t: $(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz_$t.log" | grep -o '[0-9]*$' || echo ?) runs in ${seconds} s, $n finding(s), $slow slow unit(s)"
}
export -f run_one seeds
export build seconds
printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_one {}'
# Crashes, timeouts, leaks and out-of-memory inputs fail the run; slow units (over 10 s under the
# sanitizers, but within the time limit) are listed to examine.
found=$(find "$build/findings" -type f ! -name 'slow-unit-*' 2> /dev/null | wc -l)
[ "$found" -eq 0 ] || { echo "findings in $build/findings"; exit 1; }
