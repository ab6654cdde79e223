#!/usr/bin/env bash
# Regenerates the traces shipped in traces/data with `recycle trace gen`, one per preset, seed 1.
# Usage: traces/data/regenerate.sh [path/to/recycle]   (default: build/tools/recycle, then PATH)
# tests/traces/shipped_data_test.cpp fails when these files differ from what the generator makes.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
recycle=${1:-}
if [ -z "$recycle" ]; then
  recycle="$here/../../build/tools/recycle"
  [ -x "$recycle" ] || recycle=recycle
fi
for preset in llama3-like cloud-bad infinitehbd-like; do
  "$recycle" -q trace gen --preset "$preset" --seed 1 -o "$here/$preset.csv"
done
