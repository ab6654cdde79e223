#!/usr/bin/env bash
# Under a limit on the user's threads (ulimit -u) too low for a run: validate, whose workers are
# threads that wait on each other, ends with one `error:` line and exit 2, writing nothing; study
# --threads 4096 runs on the threads it gets and writes the same bytes as without the limit.
# Root ignores the limit, so the limited runs are made as nobody through setpriv; skipped (exit 77)
# where the tests do not run as root or setpriv is missing. OpenBLAS starts one thread a core as
# it loads, before main: OPENBLAS_NUM_THREADS=1 keeps that from the count on any machine.
#   thread_limit.sh RECYCLE JOB_FILE
set -uo pipefail
P=$1
JOB=$2
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null; then
  echo "skipped: needs root and setpriv"
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 777 "$dir"
# The build may sit where nobody cannot read it (under /root): the program and the job go along.
cp "$P" "$dir/recycle" && cp "$JOB" "$dir/job.json" && chmod 755 "$dir/recycle" &&
  chmod 644 "$dir/job.json" || { echo "FAIL: cannot copy the program"; exit 1; }
P=$dir/recycle
JOB=$dir/job.json
limited() {  # limited LIMIT COMMAND...: as nobody, with at most LIMIT processes and threads
  local limit=$1
  shift
  OPENBLAS_NUM_THREADS=1 setpriv --reuid=65534 --regid=65534 --clear-groups \
    bash -c "ulimit -u $limit && exec \"\$@\"" limited "$@"
}
fail() { echo "FAIL: $*"; exit 1; }

out=$(limited 4 "$P" validate --schedule 1f1b --pp 8 --microbatches 4 --width 64 \
  --chrome-trace "$dir/v.json" 2>&1)
code=$?
[ "$code" -eq 2 ] || fail "validate under the limit exited $code: $out"
[ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] || fail "validate printed more than one line: $out"
case "$out" in
  "error: validate: the system refused to start thread "*" of the 8 this run needs"*) ;;
  *) fail "validate's error: $out" ;;
esac
[ ! -e "$dir/v.json" ] || fail "validate wrote its trace"

sweep=checkpoint.interval_s=600,1200,1800,2400,3000,3600
OPENBLAS_NUM_THREADS=1 "$P" -q study --job "$JOB" --trace-preset cloud-bad --days 1 --sweep "$sweep" \
  --threads 4096 -o "$dir/free.csv" || fail "study without the limit"
limited 5 "$P" -q study --job "$JOB" --trace-preset cloud-bad --days 1 --sweep "$sweep" \
  --threads 4096 -o "$dir/limited.csv" || fail "study under the limit exited $?"
cmp -s "$dir/free.csv" "$dir/limited.csv" || fail "study under the limit wrote other bytes"
echo "validate refused in one line; study the same bytes on the threads it got"
