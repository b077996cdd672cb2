#!/usr/bin/env bash
# Installs dlscale's dependencies from Debian's packages (and ruff from PyPI into .venv/) and
# builds it. Idempotent, and it finishes the job after any earlier failure:
#   - packages already present are not touched; an interrupted dpkg run is completed first;
#   - a build folder is configured again whenever its generator file (build.ninja) is missing,
#     e.g. after a configure that failed part-way; a cache that cannot be configured (another
#     generator, a moved source tree) is set aside and configured from scratch;
#   - the venv is (re)made when it is missing or broken, and ruff installed at its pinned version.
# Works as root on a fresh Debian 12; as another user it uses sudo for apt-get.
#   scripts/setup.sh            install + configure + build into build/
#   DLS_BUILD_DIR=dir           build somewhere else
#   DLS_CMAKE_ARGS="-D..."      extra CMake options (e.g. -DDLS_WITH_CUDA=OFF)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DLS_BUILD_DIR:-$ROOT/build}"
RUFF_VERSION=0.17.5  # the linter and formatter of analysis/ (pyproject.toml)
LIZARD_VERSION=1.24.3  # function lengths (scripts/function_length.py)

# Every package a step needs, with why where it is not obvious. A Debian library's CMake config
# may pull in more (libdnnl-dev's calls find_package(OpenCL): ocl-icd-opencl-dev).
PACKAGES=(
  build-essential cmake ninja-build git pkg-config ca-certificates
  libopenblas-dev libdnnl-dev ocl-icd-opencl-dev libopenmpi-dev openmpi-bin libpapi-dev papi-tools
  libfmt-dev libbenchmark-dev libgtest-dev nlohmann-json3-dev libyaml-cpp-dev libcli11-dev
  libpng-dev libjpeg-dev zlib1g-dev dataset-fashion-mnist
  slurmctld slurmd slurm-client slurm-wlm-basic-plugins munge
  python3 python3-venv python3-numpy python3-scipy python3-pandas python3-matplotlib python3-pytest python3-yaml
  chromium libblis-dev libblis4-openmp
  clang libclang-rt-14-dev clang-format procps  # the fuzzer and sanitizer builds, the format check, pgrep/pkill in tests
)

sudo_cmd() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; return; fi
  command -v sudo >/dev/null || { echo "setup: need root or sudo to run: $*" >&2; exit 2; }
  sudo "$@"
}

install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}"
  # an earlier install killed part-way leaves dpkg half-configured: finish that first
  sudo_cmd env DEBIAN_FRONTEND=noninteractive dpkg --configure -a
  sudo_cmd apt-get update -qq
  sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

install_python_tools() {
  local venv="$ROOT/.venv"
  if ! "$venv/bin/python" -c "import sys" 2>/dev/null; then
    rm -rf "$venv"
    # Debian's interpreter (it has pandas, scipy, pytest); its pip refuses system installs
    /usr/bin/python3 -m venv --system-site-packages "$venv"
  fi
  if [ "$("$venv/bin/ruff" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ] ||
     [ "$("$venv/bin/lizard" --version 2>/dev/null)" != "$LIZARD_VERSION" ]; then
    echo "setup: installing ruff $RUFF_VERSION and lizard $LIZARD_VERSION into $venv"
    # ruff lints the Python tree and lizard measures function lengths; nothing else needs them:
    # a machine that cannot reach PyPI (no network, or a proxy whose certificate it lacks)
    # builds, runs and tests all the same
    if ! "$venv/bin/python" -m pip install -q --disable-pip-version-check --retries 1 --timeout 30 \
         "ruff==$RUFF_VERSION" "lizard==$LIZARD_VERSION"; then
      echo "setup: WARNING: could not install ruff $RUFF_VERSION and lizard $LIZARD_VERSION from PyPI (see pip's message" \
           "above); the Python lint and function-length checks are not available on this machine until a later run" \
           "of setup reaches PyPI" >&2
    fi
  fi
}

configure() {
  # shellcheck disable=SC2086
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release ${DLS_CMAKE_ARGS:-}
}

install_packages
install_python_tools
if [ ! -f "$BUILD/build.ninja" ] || [ ! -f "$BUILD/CMakeCache.txt" ]; then
  if ! configure; then
    if [ -f "$BUILD/CMakeCache.txt" ]; then
      # a cache from another generator or source tree cannot be reused: set it aside, start over
      stale="$BUILD/CMakeCache.txt.failed-$(date -u +%Y%m%dT%H%M%SZ)"
      echo "setup: configure failed with the existing cache; moving it to $stale and configuring afresh" >&2
      mv "$BUILD/CMakeCache.txt" "$stale"
      rm -rf "$BUILD/CMakeFiles"
      configure
    else
      exit 1
    fi
  fi
fi
cmake --build "$BUILD" -j "$(nproc)"
