#!/usr/bin/env bash
# The standard validation set on a GPU node: each case of docs/validation.md run with
# `recycle validate --backend cuda` (RUNS times), then a kill with the equivalence check, written
# as a markdown report: predicted and measured iteration time, the error, the micro-batch count.
#
#   tools/validate-gpu.sh [REPORT]     (default: validate-gpu-report.md)
#
# First, with the cuda backend, CHECKS (default build/tests/recycle_cuda_checks: each layer kind
# and whole runs on the GPUs against the cpu backend, tests/gpu/cuda_checks.cpp) runs and its
# result heads the report; the script goes on when it fails and then exits 1 at the end.
#
# Environment: RECYCLE (the binary, default build/tools/recycle), RUNS (default 3), SIZE (the
# dense workload's flags, default --width 4096 --layers-per-stage 4 --microbatch-size 512),
# TSIZE (the transformer workload's, default 2 blocks of width 1024, 16 heads, 4 sequences of
# 1024 tokens a micro-batch), both run on the same schedules, and JOBS (job files, separated by
# spaces, whose layer `profile measure --job` times against the synthesizer; default GPT-3 1.3B
# with tp 1, Llama 3 8B with tp 2 (its whole layer at 8192 tokens in fp32 with the attention
# probabilities kept is past the executor's 16 GiB), GPT-3 175B and Llama 3 70B with tp 8 (one
# rank's share of the layer; 70B's a group of 8 query heads on its one key/value head), on
# h100-80g, one sequence a micro-batch), BACKEND (default cuda; cpu runs the same script on the
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
backend=${BACKEND:-cuda}
common="--backend $backend --microbatches 8 --iterations 10 --repetitions 20 --json"

if [[ ! -x $recycle ]]; then
  echo "error: $recycle: not built (make, with nvcc, cuBLAS and NCCL found)" >&2
  exit 2
fi
# Fails here, with the backend's one error line, when there is no GPU.
# shellcheck disable=SC2086
"$recycle" profile measure --backend "$backend" --pp 2 --repetitions 3 $size > /dev/null

cases=(
  "1F1B PP2|--schedule 1f1b --pp 2"
  "ZB-H1 PP2|--schedule zb-h1 --pp 2"
  "GPipe PP2|--schedule gpipe --pp 2"
  "1F1B PP4|--schedule 1f1b --pp 4"
  "ZB-H1 PP4|--schedule zb-h1 --pp 4"
  "1F1B PP1 DP2|--schedule 1f1b --pp 1 --dp 2"
  "ReCycle PP2 DP2 fail 1:0|--schedule recycle --pp 2 --dp 2 --fail 1:0"
  "1F1B PP2 DP2|--schedule 1f1b --pp 2 --dp 2"
)

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
print("| %s | %.2f | %s | %s | %s | %d |" % (
    sys.argv[1], d["predicted_iteration_time_s"] * 1e3,
    "-" if m is None else "%.2f" % (m * 1e3),
    "-" if d["error_pct"] is None else "%+.1f %%" % d["error_pct"],
    "-" if d["error_from_run_costs_pct"] is None else "%+.1f %%" % d["error_from_run_costs_pct"],
    d["microbatches_processed"]))
PY
}
header() {
  echo "| case | predicted (ms) | measured (ms) | error | error from the run's own costs | micro-batches |"
  echo "| --- | --- | --- | --- | --- | --- |"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
if [[ $backend == cuda ]]; then
  checks=${CHECKS:-build/tests/recycle_cuda_checks}
  {
    echo
    echo "## The cuda backend against the cpu backend (\`$checks\`)"
    echo
    echo '```'
    "$checks" 2>&1 | tail -n 40 || checks_failed=1
    echo '```'
  } >> "$tmp/report.md"
fi
for workload in "$size" "$tsize"; do
  {
    echo
    echo "Workload: \`$workload\`"
    echo
    header
  } >> "$tmp/report.md"
  for c in "${cases[@]}"; do
    name=${c%%|*}
    flags=${c#*|}
    for ((r = 1; r <= runs; r++)); do
      # shellcheck disable=SC2086
      "$recycle" validate $flags $common $workload > "$tmp/run.json"
      row "$name" "$tmp/run.json" >> "$tmp/report.md"
    done
  done
done
{
  echo
  echo "## A kill, detected and recovered from, against the fault-free run"
  echo
  echo '```'
  for workload in "$size" "$tsize"; do
    # shellcheck disable=SC2086
    "$recycle" validate --backend "$backend" --schedule 1f1b --pp 2 --dp 2 --microbatches 8 \
      --iterations 6 --repetitions 10 $workload --kill 1:1@2.5 --check-equivalence
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
  # A job of MODEL on h100-80g with tensor parallelism TP and PP stages, one sequence a
  # micro-batch: $tmp/NAME.json, appended to JOBS.
  job() {
    local name=$1 model=$2 tp=$3 pp=$4
    printf '{"model": "%s", "hardware": "h100-80g",\n "parallel": {"tp": %d, "pp": %d, "dp": 1, "microbatch_size": 1, "global_batch": 8}}\n' \
      "$model" "$tp" "$pp" > "$tmp/$name.json"
    JOBS="${JOBS:-} $tmp/$name.json"
  }
  job gpt3-1.3b gpt3-1.3b 1 1
  job llama3-8b-tp2 llama3-8b 2 1
  job gpt3-175b-tp8 gpt3-175b 8 8
  job llama3-70b-tp8 llama3-70b 8 8
fi
{
  echo
  echo "## One layer of each job's model against the synthesizer"
  for job in $JOBS; do
    echo
    echo '```'
    "$recycle" profile measure --backend "$backend" --job "$job" --repetitions 10 \
      -o "$tmp/job-profile.json"
    echo '```'
  done
} >> "$tmp/report.md"
mv "$tmp/report.md" "$report"
echo "wrote $report"
if ((checks_failed)); then
  echo "error: $checks failed: the cuda backend's arithmetic differs from the cpu's (see $report)" >&2
  exit 1
fi
