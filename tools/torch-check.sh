#!/usr/bin/env bash
# Usage: tools/torch-check.sh [PYTHON...]          (default: python3)
#
# For each Python interpreter given, writes every recycle schedule (gpipe, 1f1b,
# interleaved x2, zb-h1, zb-h2, zb-v, dualpipe-v; pp 4, 8 micro-batches) as a
# torch compute_only CSV and as a compute_comms CSV for that interpreter's torch
# version, runs each on torch's _PipelineScheduleRuntime with
# tools/torch_check.py and compares the gradients with a single-process
# reference. Prints one line per run and a summary per interpreter; exits 1 if
# any run failed. torch 2.8 divides gradients by M only after a B (not after a
# W), so for torch older than 2.15 the runs divide the loss by M instead
# (torch_check.py --scale-in-loss). Set RECYCLE to use another recycle binary
# (default: build/tools/recycle). Run from the repository root.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
recycle="${RECYCLE:-build/tools/recycle}"
pythons=("$@")
[ ${#pythons[@]} -gt 0 ] || pythons=(python3)

schedules=(gpipe 1f1b interleaved zb-h1 zb-h2 zb-v dualpipe-v)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
any_failed=0

for python in "${pythons[@]}"; do
  if ! version="$("$python" -c 'import torch; print(".".join(torch.__version__.split("+")[0].split(".")[:2]))' 2>/dev/null)"; then
    echo "torch-check: torch is not installed for $python; skipped"
    continue
  fi
  major="${version%%.*}"
  minor="${version#*.}"
  if [ "$major" -lt 2 ] || { [ "$major" -eq 2 ] && [ "$minor" -lt 8 ]; }; then
    echo "torch-check: torch $version under $python is older than 2.8; skipped"
    continue
  fi
  scaling=()
  if [ "$major" -eq 2 ] && [ "$minor" -lt 15 ]; then tv=2.8; scaling=(--scale-in-loss); else tv=2.15; fi

  passed=0
  total=0
  for s in "${schedules[@]}"; do
    extra=()
    [ "$s" = interleaved ] && extra=(--interleave 2)
    base="$tmp/$s.torch$version"
    "$recycle" -q plan --schedule "$s" --pp 4 --microbatches 8 "${extra[@]}" \
      --format csv -o "$base.csv"
    "$recycle" -q plan --schedule "$s" --pp 4 --microbatches 8 "${extra[@]}" \
      --format csv-comms --torch-version "$tv" -o "$base.comms.csv"
    for run in "$base.csv compute_only" "$base.comms.csv compute_comms"; do
      read -r file format <<<"$run"
      total=$((total + 1))
      if "$python" "$here/torch_check.py" --csv "$file" --format "$format" "${scaling[@]}"; then
        passed=$((passed + 1))
      fi
    done
  done
  echo "torch-check: $passed of $total passed (torch $version)"
  [ "$passed" -eq "$total" ] || any_failed=1
done
exit "$any_failed"
