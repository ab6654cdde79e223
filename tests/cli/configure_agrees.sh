#!/bin/sh
# `recycle configure --write-job` writes its best configuration as a job file that `recycle
# simulate --job` times to the same nanosecond, for spaces whose winners run different schedules.
# Prints one line per space, then "agree: N spaces".
#   configure_agrees.sh RECYCLE OUT_DIR
set -eu
P=$1
OUT=$2
mkdir -p "$OUT"
field() {  # field KEY: the first number after "KEY": in JSON on stdin
  sed -n "s/.*\"$1\": \\([0-9.e+-]*\\),*\$/\\1/p" | head -n 1
}
n=0
for schedules in 1f1b interleaved zb-v,dualpipe-v 2bw zb-h2; do
  "$P" configure --model gpt3-1.3b --hardware a100-80g --gpus 16 --global-batch 64 --quiet \
    --schedules "$schedules" --top 1 --json --write-job "$OUT/best.json" -o "$OUT/ranked.json"
  ranked=$(field iteration_time_s < "$OUT/ranked.json")
  simulated=$("$P" simulate --job "$OUT/best.json" --json | field iteration_time_s)
  echo "$schedules: $ranked $simulated"
  [ "$ranked" = "$simulated" ] || { echo "differ"; exit 1; }
  n=$((n + 1))
done
echo "agree: $n spaces"
