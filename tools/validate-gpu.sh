#!/usr/bin/env bash
# The standard validation set on a GPU node: each case of docs/validation.md run with
# `recycle validate --backend cuda` (RUNS times) on each workload, then a kill with the equivalence
# check, written as a markdown report: predicted and measured iteration time, the error, the
# micro-batch count. tools/gpu/build-and-validate.sh builds the binaries on a bare GPU node and
# runs this script there.
#
#   tools/validate-gpu.sh [REPORT]     (default: validate-gpu-report.md)
#
# First, with the cuda backend, CHECKS (default build/tests/recycle_cuda_checks: each layer kind
# and whole runs on the GPUs against the cpu backend, tests/gpu/cuda_checks.cpp; empty skips it)
# runs and its result heads the report; the script goes on when it fails and then exits 1 at the
# end, as it does when a run fails. Each run of recycle has RUN_LIMIT seconds (default 300); a
# report cut short (a signal, a limit) is still written, ending with a line that says so.
#
# Environment: RECYCLE (the binary, default build/tools/recycle), RUNS (default 3), SIZE (the
# dense workload's flags, default --width 4096 --layers-per-stage 4 --microbatch-size 512),
# TSIZE (the transformer workload's, default 2 blocks of width 1024, 16 heads, 4 sequences of
# 1024 tokens a micro-batch), LSIZE (the Llama workload's, the same shape with 4 key/value heads;
# empty skips it), all run on the same schedules, JSONDIR (a folder to keep each run's
# `validate --json` in, as CASE-WORKLOAD-RUN.json; default none), HARDWARE (the hardware preset
# of the default jobs, default h100-80g) and JOBS (job files, separated by spaces, whose layer
# `profile measure --job` times against the synthesizer; default GPT-3 1.3B, 6.7B and 13B with
# tp 1, one sequence a micro-batch), BACKEND (default cuda; cpu runs the same script on the
# cpu backend, a dry run of the script itself, which the tests do at small sizes) and MPIRUN (the
# launcher of the two-process cases, default `mpirun -np 2 --oversubscribe --bind-to none` where
# mpirun is on the PATH; empty skips them). On a one-GPU
# machine every worker shares the GPU and the prediction models the sharing; with a GPU per
# worker each worker has its own. It stops with the backend's own error when no GPU is visible.
set -euo pipefail

report=${1:-validate-gpu-report.md}
recycle=${RECYCLE:-build/tools/recycle}
runs=${RUNS:-3}
size=${SIZE:---width 4096 --layers-per-stage 4 --microbatch-size 512}
tsize=${TSIZE:---block transformer --width 1024 --heads 16 --sequence 1024 --microbatch-size 4 --layers-per-stage 2}
lsize=${LSIZE---block llama --width 1024 --heads 16 --kv-heads 4 --sequence 1024 --microbatch-size 4 --layers-per-stage 2}
jsondir=${JSONDIR:-}
hardware=${HARDWARE:-h100-80g}
backend=${BACKEND:-cuda}
common="--backend $backend --microbatches 8 --iterations 10 --repetitions 20 --json"

if [[ ! -x $recycle ]]; then
  echo "error: $recycle: not built (make, with nvcc, cuBLAS and NCCL found)" >&2
  exit 2
fi
# Fails here, with the backend's one error line, when there is no GPU.
# shellcheck disable=SC2086
timeout 120 "$recycle" profile measure --backend "$backend" --pp 2 --repetitions 3 $size > /dev/null

# ReCycle's case also trains fault-free from the same seed and compares the final weights.
cases=(
  "1F1B PP2|--schedule 1f1b --pp 2"
  "1F1B PP4|--schedule 1f1b --pp 4"
  "ZB-H1 PP4|--schedule zb-h1 --pp 4"
  "1F1B PP2 DP2|--schedule 1f1b --pp 2 --dp 2"
  "ReCycle PP2 DP2 fail 1:0|--schedule recycle --pp 2 --dp 2 --fail 1:0 --check-equivalence"
)
workloads=("dense|$size" "transformer|$tsize")
if [[ -n $lsize ]]; then workloads+=("llama|$lsize"); fi
[[ -z $jsondir ]] || mkdir -p "$jsondir"

if [[ -z ${MPIRUN+set} ]] && command -v mpirun > /dev/null; then
  MPIRUN="mpirun -np 2 --oversubscribe --bind-to none"
fi
mpirun_cmd=${MPIRUN:-}

# One row of a table from a `validate --json` result: row NAME FILE.
row() {
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[2]))
m = d["measured_iteration_time_s"]
w = d.get("max_relative_weight_difference")
print("| %s | %.2f | %s | %s | %s | %d | %s |" % (
    sys.argv[1], d["predicted_iteration_time_s"] * 1e3,
    "-" if m is None else "%.2f" % (m * 1e3),
    "-" if d["error_pct"] is None else "%+.1f %%" % d["error_pct"],
    "-" if d["error_from_run_costs_pct"] is None else "%+.1f %%" % d["error_from_run_costs_pct"],
    d["microbatches_processed"], "-" if w is None else "%.2g" % w))
PY
}
header() {
  echo "| case | predicted (ms) | measured (ms) | error | error from the run's own costs | micro-batches | weights against the fault-free run |"
  echo "| --- | --- | --- | --- | --- | --- | --- |"
}

# Each single-process run of recycle, under its time limit.
run_recycle() { timeout --kill-after=5 "${RUN_LIMIT:-300}" "$recycle" "$@"; }

tmp=$(mktemp -d)
trap 'if [[ -f $tmp/report.md ]]; then
  printf "\n**Stopped before the end of the set.**\n" >> "$tmp/report.md"
  mv "$tmp/report.md" "$report"
fi
rm -rf "$tmp"' EXIT
trap 'exit 143' TERM INT
{
  echo "# recycle validate --backend $backend"
  echo
  if [[ $backend == cuda ]]; then
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 ||
      echo 'GPU: unknown'
  else
    echo "$(nproc) cores"
  fi
  echo
  echo "8 micro-batches, 10 iterations (the first is warm-up), $runs runs each."
} > "$tmp/report.md"
checks_failed=0
runs_failed=0
checks=${CHECKS-build/tests/recycle_cuda_checks}
if [[ $backend == cuda && -n $checks ]]; then
  {
    echo
    echo "## The cuda backend against the cpu backend (\`$checks\`)"
    echo
    echo '```'
    "$checks" 2>&1 | tail -n 40 || checks_failed=1
    echo '```'
  } >> "$tmp/report.md"
fi
for w in "${workloads[@]}"; do
  wname=${w%%|*}
  workload=${w#*|}
  {
    echo
    echo "Workload $wname: \`$workload\`"
    echo
    header
  } >> "$tmp/report.md"
  for c in "${cases[@]}"; do
    name=${c%%|*}
    flags=${c#*|}
    for ((r = 1; r <= runs; r++)); do
      rc=0
      # shellcheck disable=SC2086
      run_recycle validate $flags $common $workload > "$tmp/run.json" || rc=$?
      if ((rc != 0)); then
        runs_failed=1
        # Exit 1 with a result (the equivalence check above its bound): the row, marked.
        if ! row "$name (exit $rc)" "$tmp/run.json" >> "$tmp/report.md" 2> /dev/null; then
          echo "| $name | run failed (exit $rc) | | | | | |" >> "$tmp/report.md"
          continue
        fi
      else
        row "$name" "$tmp/run.json" >> "$tmp/report.md"
      fi
      if [[ -n $jsondir ]]; then
        cp "$tmp/run.json" "$jsondir/$(echo "$name-$wname-$r" | tr ' :' '__').json"
      fi
    done
  done
done
{
  echo
  echo "## A kill, detected and recovered from, against the fault-free run"
  echo
  echo '```'
  for w in "${workloads[@]}"; do
    # shellcheck disable=SC2086
    run_recycle validate --backend "$backend" --schedule 1f1b --pp 2 --dp 2 --microbatches 8 \
      --iterations 6 --repetitions 10 ${w#*|} --kill 1:1@2.5 --check-equivalence || runs_failed=1
  done
  echo '```'
} >> "$tmp/report.md"
if [[ -n $mpirun_cmd ]]; then
  # The same runs over two processes: each runs its block of workers on its own GPUs (all on
  # the one GPU of a one-GPU machine); a message between them goes through the host and MPI.
  {
    echo
    echo "## Two processes (\`$mpirun_cmd\`)"
    echo
    echo "Workload: \`$size\`"
    echo
    header
  } >> "$tmp/report.md"
  for c in "1F1B PP2|--schedule 1f1b --pp 2" "1F1B PP2 DP2|--schedule 1f1b --pp 2 --dp 2" \
    "ReCycle PP2 DP2 fail 1:0|--schedule recycle --pp 2 --dp 2 --fail 1:0"; do
    for ((r = 1; r <= runs; r++)); do
      # shellcheck disable=SC2086
      $mpirun_cmd "$recycle" validate ${c#*|} $common $size > "$tmp/run.json"
      row "${c%%|*}" "$tmp/run.json" >> "$tmp/report.md"
    done
  done
  {
    echo
    echo '```'
    # shellcheck disable=SC2086
    $mpirun_cmd "$recycle" validate --backend "$backend" --schedule 1f1b --pp 2 --dp 2 \
      --microbatches 8 --iterations 6 --repetitions 10 $size --kill 1:1@2.5 --check-equivalence
    echo '```'
  } >> "$tmp/report.md"
fi
if [[ -z ${JOBS:-} ]]; then
  # A job of MODEL on HARDWARE with tensor parallelism TP and PP stages, one sequence a
  # micro-batch: $tmp/NAME.json, appended to JOBS.
  job() {
    local name=$1 model=$2 tp=$3 pp=$4
    printf '{"model": "%s", "hardware": "%s",\n "parallel": {"tp": %d, "pp": %d, "dp": 1, "microbatch_size": 1, "global_batch": 8}}\n' \
      "$model" "$hardware" "$tp" "$pp" > "$tmp/$name.json"
    JOBS="${JOBS:-} $tmp/$name.json"
  }
  job gpt3-1.3b gpt3-1.3b 1 1
  job gpt3-6.7b gpt3-6.7b 1 1
  job gpt3-13b gpt3-13b 1 1
fi
{
  echo
  echo "## One layer of each job's model against the synthesizer"
  for job in $JOBS; do
    echo
    echo '```'
    run_recycle profile measure --backend "$backend" --job "$job" --repetitions 10 \
      -o "$tmp/job-profile.json" || runs_failed=1
    echo '```'
  done
} >> "$tmp/report.md"
mv "$tmp/report.md" "$report"
echo "wrote $report"
if ((runs_failed)); then
  echo "error: a run of the set failed (see $report)" >&2
  exit 1
fi
if ((checks_failed)); then
  echo "error: $checks failed: the cuda backend's arithmetic differs from the cpu's (see $report)" >&2
  exit 1
fi
