#!/usr/bin/env bash
# Installs dlscale's dependencies from Debian's packages and builds it. Idempotent: packages
# already present are not touched, an existing build folder is reused (incremental build).
# Works as root on a fresh Debian 12; as another user it uses sudo for apt-get.
#   scripts/setup.sh            install + configure + build into build/
#   DLS_BUILD_DIR=dir           build somewhere else
#   DLS_CMAKE_ARGS="-D..."      extra CMake options (e.g. -DDLS_WITH_CUDA=OFF)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DLS_BUILD_DIR:-$ROOT/build}"

PACKAGES=(
  build-essential cmake ninja-build git pkg-config ca-certificates
  libopenblas-dev libdnnl-dev libopenmpi-dev openmpi-bin libpapi-dev papi-tools
  libfmt-dev libbenchmark-dev libgtest-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  libpng-dev libjpeg-dev zlib1g-dev dataset-fashion-mnist
  slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
  python3 python3-numpy python3-scipy python3-pandas python3-matplotlib python3-pytest python3-yaml
  chromium libblis-dev libblis4-openmp
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 2; }
    SUDO="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${DLS_CMAKE_ARGS:-}
fi
cmake --build "$BUILD" -j "$(nproc)"
