#!/usr/bin/env bash
# Runs tools/slurm/study.sbatch under a real Slurm on this machine: starts munged, slurmctld and
# slurmd (Debian's packages) with a generated configuration in a temporary folder, as root;
# submits a 4-task job array of `recycle study --shard I/4`, waits for it (bounded), merges the
# slices with `recycle study merge` and compares the result byte for byte with an unsharded run;
# then stops the daemons it started and removes their state.
#
#   tools/slurm/test-local.sh RECYCLE
#
# Exit 0: the merged study equals the unsharded one. 77: Slurm or munge is not installed, or this
# is not root (the test reports skipped). Anything else: a failure, with the daemons' logs.
set -uo pipefail
recycle=$(readlink -f "${1:?usage: tools/slurm/test-local.sh RECYCLE}")
root=$(cd "$(dirname "$0")/../.." && pwd)
limit=${SLURM_TEST_LIMIT:-180}

for tool in munged slurmctld slurmd sbatch squeue scontrol; do
  if ! command -v "$tool" > /dev/null; then
    echo "skipped: $tool not installed (slurmctld, slurmd, slurm-client, munge)"
    exit 77
  fi
done
if [[ $(id -u) -ne 0 ]]; then
  echo "skipped: starting slurmd needs root"
  exit 77
fi

dir=$(mktemp -d /tmp/recycle-slurm.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  for p in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$p" 2> /dev/null
  done
  rm -rf "$dir"
}
trap cleanup EXIT
fail() {
  echo "error: tools/slurm/test-local.sh: $*" >&2
  for log in "$dir"/*.log; do
    [[ -f $log ]] && { echo "--- $log" >&2; tail -n 20 "$log" >&2; }
  done
  exit 1
}
# Waits up to SECONDS for COMMAND to succeed.
wait_for() {
  local seconds=$1
  shift
  local end=$((SECONDS + seconds))
  until "$@" > /dev/null 2>&1; do
    ((SECONDS < end)) || return 1
    sleep 0.5
  done
}

# munge, on its own socket and key.
mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/out"
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.sock" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munged.log" \
  --seed-file="$dir/munge/munged.seed" || fail "munged did not start"
wait_for 10 test -f "$dir/munge/munged.pid" || fail "munged wrote no pid file"
pids+=("$(cat "$dir/munge/munged.pid")")

# Two free ports for the controller and the node daemon.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
cpus=$(nproc)
host=$(hostname -s)
cat > "$dir/slurm.conf" << CONF
ClusterName=recycle-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" > "$dir/slurmctld.out.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" > "$dir/slurmd.out.log" 2>&1 &
pids+=($!)
wait_for 30 bash -c "sinfo -h -o %T 2> /dev/null | grep -qE '^(idle|mixed)'" ||
  fail "the node did not come up within 30 s"

# The study, unsharded here and as a 4-task array under Slurm.
flags=(--sweep cluster.spares=0,2,4 --sweep rate=2,8 --trace-preset llama3-like --seeds 2 --days 5
  --policy recycle,checkpoint)
job=$root/profiles/jobs/gpt3-175b-a100-1024.json
"$recycle" -q study --job "$job" "${flags[@]}" -o "$dir/unsharded.csv" || fail "the unsharded study failed"
start=$SECONDS
RECYCLE=$recycle timeout "$limit" sbatch --wait --array=0-3 --cpus-per-task=1 \
  --output="$dir/task-%a.log" --chdir="$dir" "$root/tools/slurm/study.sbatch" "$job" "$dir/out" \
  "${flags[@]}" > "$dir/sbatch.log" 2>&1 || fail "the job array did not finish (sbatch: $(tail -n 1 "$dir/sbatch.log"))"
"$recycle" -q study merge "$dir"/out/part-*.csv -o "$dir/merged.csv" || fail "study merge failed"
cmp "$dir/unsharded.csv" "$dir/merged.csv" || fail "the merged study differs from the unsharded one"
echo "slurm ok: 4 tasks in $((SECONDS - start)) s, merged $(grep -vc '^#' "$dir/merged.csv") lines equal to the unsharded run's"
