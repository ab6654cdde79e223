#!/usr/bin/env bash
# On a CPU machine with network (Debian 12, where tools/install-deps.sh runs): downloads the
# Debian packages that the cuda build and the GPU validation set need into an ignored folder, for
# a GPU node that has nvcc, cuBLAS, NCCL and CMake but none of the libraries below and no network.
# tools/gpu/build-and-validate.sh unpacks them there into a prefix (dpkg -x, never into /).
#
#   tools/gpu/prepare.sh [DIR]      (default: .gpu-deps, ignored by git)
#
# The versions are the ones apt would install here, i.e. the ones tools/install-deps.sh installs.
# MPI, Google Benchmark and clang-format are left out: the GPU set runs in one process and times
# nothing with Google Benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-.gpu-deps}

packages=(
  # headers and CMake packages of the build
  libboost1.74-dev libfmt-dev libspdlog-dev nlohmann-json3-dev libcli11-dev doctest-dev
  # the MILP solver (CBC and the COIN-OR libraries under it), found through pkg-config
  coinor-libcbc-dev coinor-libcgl-dev coinor-libosi-dev coinor-libclp-dev coinor-libcoinutils-dev
  coinor-libcbc3 coinor-libcgl1 coinor-libosi1v5 coinor-libclp1 coinor-libcoinutils3v5
  libbz2-dev zlib1g-dev libbz2-1.0 zlib1g
  # OpenBLAS (the cpu backend's arithmetic; also BLAS and LAPACK for CoinUtils)
  libopenblas-dev libopenblas-pthread-dev libopenblas0-pthread libopenblas0 libgfortran5
  libquadmath0
  # shared libraries of the packages above
  libfmt9 libspdlog1.10
  # pkg-config, for a node without one
  pkgconf pkgconf-bin libpkgconf3
)

if ! command -v apt-get > /dev/null; then
  echo "error: tools/gpu/prepare.sh: apt-get not found (run it on the Debian machine the project builds on)" >&2
  exit 2
fi
mkdir -p "$dir"
rm -f "$dir"/*.deb
(cd "$dir" && apt-get download -q "${packages[@]}" > /dev/null)
count=$(find "$dir" -maxdepth 1 -name '*.deb' | wc -l)
if ((count != ${#packages[@]})); then
  echo "error: tools/gpu/prepare.sh: $count of ${#packages[@]} packages downloaded into $dir" >&2
  exit 2
fi
echo "prepare: ${#packages[@]} packages, $(du -sh "$dir" | cut -f1), in $dir"
