#!/usr/bin/env bash
# The build without CUDA, compiled and linked beside a CUDA build (issue 8: CI builds both):
# configures BUILD_DIR with -DDLS_WITH_CUDA=OFF, builds dlscale and the engine's device tests,
# and checks that the GPU paths refuse with the reason while the rest runs: the GPU kernels'
# stand-in test, the net's device paths on the host device, and `dlscale train --backend cudnn`
# / `collectives --memory device` ending with exit 2 and "built without CUDA" / "no GPU
# collectives". Exit 77 (skipped) when the main build is itself the CPU build. A unity build
# (build_config: 3.3 minutes here against 8.5 per file).
# usage: cpu_build_test.sh SOURCE_DIR BUILD_DIR GENERATOR BUILD_TYPE CUDA_ENABLED
set -euo pipefail
src=$1 build=$2 generator=$3 type=$4 cuda=$5
if [[ "$cuda" != "ON" ]]; then
  echo "DLS_SKIP(no CUDA build): the main build is the CPU build, which the rest of the suite tests"
  exit 77
fi
source "$(dirname "${BASH_SOURCE[0]}")/build_test_lib.sh"
build_config "$src" "$build" "$build" "CUDA=OFF" "dlscale gpu_none_test net_test" \
  -G "$generator" -DCMAKE_BUILD_TYPE="$type" -DDLS_WITH_CUDA=OFF
"$build/kernels/gpu_none_test" > /dev/null || fail "gpu_none_test"
"$build/apps/net_test" --gtest_filter='NetDevice*' > /dev/null || fail "net_test (device paths on the host device)"
refuses "built without CUDA" "$build/dlscale" train --backend cudnn --steps 1 --quiet
refuses "no GPU collectives" "$build/dlscale" collectives --memory device -b 8 -e 8
echo "CPU build (DLS_WITH_CUDA=OFF): built without warnings; GPU paths refuse with the reason"
