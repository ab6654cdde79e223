#!/usr/bin/env bash
# Installs, from Debian's packages, exactly what recycle's build, tests and notebooks need.
# Idempotent: when every package is already installed it does nothing (no apt-get call at all).
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libboost-dev libboost-graph-dev
  libfmt-dev libspdlog-dev nlohmann-json3-dev
  doctest-dev libbenchmark-dev libcli11-dev
  coinor-libcbc-dev coinor-libcgl-dev coinor-libosi-dev coinor-libclp-dev coinor-libcoinutils-dev
  libopenblas-dev
  libopenmpi-dev openmpi-bin
  clang-format librsvg2-bin
  slurmctld slurmd slurm-client munge
  python3 python3-matplotlib python3-pandas python3-nbclient python3-nbformat python3-ipykernel
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
