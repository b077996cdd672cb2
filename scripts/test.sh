#!/usr/bin/env bash
# The whole test suite: set up, build, then every CTest test (unit, mpi, slow labels).
# Extra arguments go to ctest (e.g. -L unit, -R conv).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
ctest --test-dir "${DLS_BUILD_DIR:-$ROOT/build}" --output-on-failure -j 2 "$@"
