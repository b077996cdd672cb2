#!/usr/bin/env bash
# The build without MPI (DLS_WITH_MPI=OFF, CUDA off), which no CTest configuration compiles:
# builds dlscale in BUILD_DIR (default build-nompi/) and checks that what needs MPI refuses with
# the reason (exit 2) while a single-process training runs. .ci/run runs it after the tests.
# A unity build (build_config: 2.5 minutes here against about 8 per file).
#   scripts/nompi_build_test.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build-nompi}
source "$root/scripts/build_test_lib.sh"
mkdir -p "$build"
build_config "$root" "$build" "$build/nompi" "MPI=OFF" dlscale \
  -G Ninja -DCMAKE_BUILD_TYPE=Release -DDLS_WITH_MPI=OFF -DDLS_WITH_CUDA=OFF
refuses "built without MPI" "$build/dlscale" train --scheme ssgd
refuses "built without MPI" "$build/dlscale" train --allreduce ring
refuses "built without MPI" "$build/dlscale" collectives
out=$("$build/dlscale" train -m cifar10_quick --image 16 -b 8 --data synthetic:64 --steps 4 --warmup-steps 1 \
  --eval-every -1 --quiet --threads 1 2>&1) || fail "a single-process training did not run: $out"
grep -q "images/s" <<< "$out" || fail "no throughput line: $out"
echo "the build without MPI: dlscale built, MPI paths refused with the reason, single-process training ran"
