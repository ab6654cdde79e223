#!/usr/bin/env bash
# On a GPU node with nvcc, cuBLAS, NCCL and CMake but none of recycle's other libraries and no
# network: unpacks the packages tools/gpu/prepare.sh downloaded into a prefix (dpkg -x, never into
# /), builds recycle with the cuda backend (Release, every core, only what the set needs), runs the
# GPU validation set and writes every result into one folder:
#   log.txt        everything the steps printed, with each step's start time and exit status
#   info.txt       nvidia-smi, recycle-cuda-info and the transfer rates (--bandwidth)
#   checks.txt     recycle_cuda_checks: every layer kind and whole runs against the cpu backend
#   report.md      tools/validate-gpu.sh's report: each case predicted against measured, the
#                  kills with the equivalence check, each job's layer against the synthesizer
#   runs.tar.gz    the `validate --json` result of every run of the report
#
#   tools/gpu/build-and-validate.sh [OUT]           (default: gpu-out)
#   tools/gpu/build-and-validate.sh --build-only    (unpack and build; no GPU needed)
#
# On an H200 the whole set with its defaults took 418 s, the build 51 s of it: one run of it and
# the machine's start fit a 15-minute lease with time to spare, not two.
#
# Environment: DEPS (the packages, default .gpu-deps), PREFIX (where they are unpacked, default
# /tmp/recycle-deps), BUILD (default build-gpu), DEADLINE (seconds from the start after which the
# remaining steps are skipped, default 470), RUNS (runs of each case, default 1), NVIDIA_SMI (the
# nvidia-smi asked for the GPUs, default nvidia-smi) and the variables of tools/validate-gpu.sh.
# Stops at once, with one error line and exit 2, when no NVIDIA GPU is visible or the packages
# are missing; every later step has a time limit, so nothing hangs.
set -uo pipefail
cd "$(dirname "$0")/../.."

build_only=0
out=gpu-out
if [[ ${1:-} == --build-only ]]; then build_only=1; else out=${1:-gpu-out}; fi
deps=${DEPS:-.gpu-deps}
prefix=${PREFIX:-/tmp/recycle-deps}
build=${BUILD:-build-gpu}
deadline=${DEADLINE:-470}
start=$SECONDS

fail() {
  echo "error: tools/gpu/build-and-validate.sh: $*" >&2
  exit 2
}

smi=${NVIDIA_SMI:-nvidia-smi}
if ((!build_only)); then
  command -v "$smi" > /dev/null || fail "no NVIDIA GPU visible ($smi not found)"
  gpus=$(timeout 30 "$smi" -L 2> /dev/null | grep -c '^GPU ') || true
  ((gpus > 0)) || fail "no NVIDIA GPU visible ($smi -L lists none)"
fi
compgen -G "$deps/*.deb" > /dev/null || fail "$deps: no packages (run tools/gpu/prepare.sh on the CPU machine first)"
command -v nvcc > /dev/null || export PATH=/usr/local/cuda/bin:$PATH
command -v nvcc > /dev/null || fail "nvcc not found (neither on PATH nor in /usr/local/cuda/bin)"
if ! command -v dpkg > /dev/null && ! command -v ar > /dev/null; then
  fail "neither dpkg nor ar found (one is needed to unpack $deps)"
fi

mkdir -p "$out"
rm -f "$out"/{log.txt,info.txt,checks.txt,report.md,runs.tar.gz}
exec > >(tee -a "$out/log.txt") 2>&1

status=0
# step NAME LIMIT COMMAND...: runs COMMAND with a time limit of LIMIT seconds (a function of this
# script runs without one: each is bounded), logged; skipped once past the deadline. A failure is
# recorded and the next step runs.
step() {
  local name=$1 limit=$2
  shift 2
  local now=$((SECONDS - start))
  if ((now >= deadline)); then
    echo "== $name: skipped ($now s, past the deadline of $deadline s)"
    status=1
    return 1
  fi
  echo "== $name (at $now s, limit $limit s)"
  local rc=0
  if declare -F "$1" > /dev/null; then
    "$@" || rc=$?
  else
    timeout --kill-after=10 "$limit" "$@" || rc=$?
  fi
  echo "== $name: exit $rc after $((SECONDS - start - now)) s"
  if ((rc != 0)); then status=1; fi
  return $rc
}

unpack() {
  rm -rf "$prefix"
  mkdir -p "$prefix"
  local f
  for f in "$deps"/*.deb; do
    if command -v dpkg > /dev/null; then
      dpkg -x "$f" "$prefix" || return 1
    else  # a .deb is an ar archive whose data.tar.* holds the files
      local member
      member=$(ar t "$f" | grep '^data\.tar') || return 1
      ar p "$f" "$member" | tar -x -a -f - -C "$prefix" 2> /dev/null ||
        ar p "$f" "$member" | xz -d | tar -x -f - -C "$prefix" || return 1
    fi
  done
  local lib=$prefix/usr/lib/x86_64-linux-gnu
  # What Debian's alternatives would link: BLAS and LAPACK from OpenBLAS.
  local n
  for n in libblas.so.3 libblas.so liblapack.so.3 liblapack.so libopenblas.so.0 libopenblas.so; do
    ln -sf "openblas-pthread/$n" "$lib/$n"
  done
  # Packages name their files under /usr: point them into the prefix.
  sed -i -E "s#^(prefix|exec_prefix|libdir|includedir)=/usr#\1=$prefix/usr#" \
    "$lib"/pkgconfig/*.pc "$prefix"/usr/share/pkgconfig/*.pc
  sed -i "s#/usr/#$prefix/usr/#g" "$lib"/openblas-pthread/cmake/openblas/OpenBLASConfig.cmake
  echo "unpacked $(ls "$deps"/*.deb | wc -l) packages into $prefix"
}

configure() {
  local generator=()
  if command -v ninja > /dev/null; then generator=(-G Ninja); fi
  local arch=${CUDAARCHS:-90}
  # CMake 4 refuses packages' files written for CMake before 3.5 unless told a minimum.
  CMAKE_POLICY_VERSION_MINIMUM=3.5 cmake -S . -B "$build" "${generator[@]}" \
    -DCMAKE_BUILD_TYPE=Release -DRECYCLE_CUDA=ON -DRECYCLE_MPI=OFF -DRECYCLE_BENCH=OFF \
    -DRECYCLE_TESTS=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_PREFIX_PATH="$prefix/usr" \
    -DOpenBLAS_DIR="$prefix/usr/lib/x86_64-linux-gnu/openblas-pthread/cmake/openblas" || return 1
  grep -E '^(fmt|spdlog|nlohmann_json|CLI11|OpenBLAS|doctest)_DIR|^NCCL_LIBRARY|^CMAKE_CUDA_COMPILER:' \
    "$build/CMakeCache.txt"
}

lib=$prefix/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$prefix/usr/share/pkgconfig
export LD_LIBRARY_PATH=$lib:$lib/openblas-pthread${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
command -v pkg-config > /dev/null || export PATH=$PATH:$prefix/usr/bin

echo "recycle build-and-validate: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) cores, $(nvcc --version | tail -1)"
step unpack 120 unpack || exit 1
step configure 180 configure || exit 1
step build 600 cmake --build "$build" -j "$(nproc)" --target recycle recycle-cuda-info recycle_cuda_checks || exit 1
if ((build_only)); then
  echo "built $build/tools/recycle, $build/executor/cuda/recycle-cuda-info and $build/tests/recycle_cuda_checks in $((SECONDS - start)) s"
  exit 0
fi

{
  timeout 30 "$smi"
  "$build/executor/cuda/recycle-cuda-info" --bandwidth
} > "$out/info.txt" 2>&1
echo "== info: $(grep -c . "$out/info.txt") lines"
cat "$out/info.txt"
step checks 180 sh -c "'$build/tests/recycle_cuda_checks' > '$out/checks.txt' 2>&1"
tail -n 5 "$out/checks.txt"

gpu_name=$("$smi" --query-gpu=name --format=csv,noheader 2> /dev/null | head -1)
hardware=h100-80g
if [[ $gpu_name == *H200* ]]; then hardware=h200; fi
json=$(mktemp -d)
step validate $((deadline - (SECONDS - start))) env RECYCLE="$build/tools/recycle" \
  CHECKS= MPIRUN= RUNS="${RUNS:-1}" JSONDIR="$json" HARDWARE="${HARDWARE:-$hardware}" \
  tools/validate-gpu.sh "$out/report.md"
tar -czf "$out/runs.tar.gz" -C "$json" .
rm -rf "$json"
echo "done in $((SECONDS - start)) s, exit $status; results in $out"
exit $status
