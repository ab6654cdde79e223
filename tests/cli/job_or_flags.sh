#!/bin/sh
# One job, one number, whichever way the schedule and layout are given. For every generator (V
# shapes and interleave included) `simulate` and `plan` must print the same iteration time for:
#   job   - a job file whose "schedule" is the generator;
#   over  - a job file with another schedule, and --schedule naming the generator;
#   flags - --pp/--dp/--microbatches(/--interleave) with the profile `profile synth` writes for the
#           job file, and --schedule;
# and `degradation` the same table for the job file and for the flags: ReCycle plans on the job's
# schedule when it is a base it takes (interleaved, zb-v, dualpipe-v: --base with the flags), on
# 1F1B for the other generators of one chunk a worker. Prints one line per generator, then
# "agree: N generators".
#   job_or_flags.sh RECYCLE OUT_DIR
set -eu
P=$1
OUT=$2
mkdir -p "$OUT"
job() {  # job SCHEDULE INTERLEAVE FILE
  printf '{"model": "gpt3-350m", "hardware": "a100-80g", "parallel": {"tp": 1, "pp": 4, "dp": 2, "interleave": %s, "microbatch_size": 1, "global_batch": 16}, "schedule": "%s"}\n' "$2" "$1" > "$3"
}
field() {  # field KEY: the number after "KEY": in JSON on stdin
  sed -n "s/.*\"$1\": \\([0-9.e+-]*\\),*\$/\\1/p" | head -n 1
}
n=0
job gpipe 1 "$OUT/base.json"
"$P" profile synth --job "$OUT/base.json" -o "$OUT/base_profile.json" 2>/dev/null
degradation_base=$("$P" degradation --pp 4 --dp 2 --microbatches 8 --max-failures 1 --profile "$OUT/base_profile.json")
for s in gpipe 1f1b interleaved zb-h1 zb-h2 zb-v dualpipe-v; do
  il=1
  [ "$s" = interleaved ] && il=2
  job "$s" "$il" "$OUT/$s.json"
  other=1f1b
  [ "$s" = 1f1b ] && other=gpipe
  job "$other" "$il" "$OUT/over_$s.json"
  "$P" profile synth --job "$OUT/$s.json" -o "$OUT/${s}_profile.json" 2>/dev/null
  flags="--pp 4 --dp 2 --microbatches 8 --interleave $il --profile $OUT/${s}_profile.json --schedule $s"
  a=$("$P" simulate --job "$OUT/$s.json" --json | field iteration_time_s)
  b=$("$P" simulate --job "$OUT/over_$s.json" --schedule "$s" --json | field iteration_time_s)
  c=$("$P" simulate $flags --json | field iteration_time_s)
  d=$("$P" plan --job "$OUT/$s.json" --format json | field period_s)
  e=$("$P" plan --job "$OUT/over_$s.json" --schedule "$s" --format json | field period_s)
  f=$("$P" plan $flags --format json | field period_s)
  g=$("$P" degradation --job "$OUT/$s.json" --max-failures 1 | sed 's/^.*; fault-free/fault-free/')
  case "$s" in
    interleaved | zb-v | dualpipe-v)
      want=$("$P" degradation --pp 4 --dp 2 --microbatches 8 --interleave "$il" --base "$s" \
        --profile "$OUT/${s}_profile.json" --max-failures 1) ;;
    *) want=$degradation_base ;;
  esac
  echo "$s: simulate job $a over $b flags $c; plan job $d over $e flags $f"
  if [ -z "$a" ] || [ "$a" != "$b" ] || [ "$a" != "$c" ] || [ "$a" != "$d" ] || [ "$a" != "$e" ] ||
     [ "$a" != "$f" ]; then
    echo "differ: $s"
    exit 1
  fi
  if [ "$g" != "$(printf '%s\n' "$want" | sed 's/^.*; fault-free/fault-free/')" ]; then
    echo "differ: degradation of the $s job"
    printf '%s\n%s\n' "$g" "$want"
    exit 1
  fi
  n=$((n + 1))
done
echo "agree: $n generators"
