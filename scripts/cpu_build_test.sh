#!/usr/bin/env bash
# The build without CUDA, compiled and linked beside a CUDA build (issue 8: CI builds both):
# configures BUILD_DIR with -DDLS_WITH_CUDA=OFF, builds dlscale and the engine's device tests,
# and checks that the GPU paths refuse with the reason while the rest runs: the GPU kernels'
# stand-in test, the net's device paths on the host device, and `dlscale train --backend cudnn`
# / `collectives --memory device` ending with exit 2 and "built without CUDA" / "no GPU
# collectives". Exit 77 (skipped) when the main build is itself the CPU build.
# usage: cpu_build_test.sh SOURCE_DIR BUILD_DIR GENERATOR BUILD_TYPE CUDA_ENABLED
set -euo pipefail
src=$1 build=$2 generator=$3 type=$4 cuda=$5
if [[ "$cuda" != "ON" ]]; then
  echo "DLS_SKIP(no CUDA build): the main build is the CPU build, which the rest of the suite tests"
  exit 77
fi
fail() { echo "FAIL: $*"; exit 1; }
cmake -S "$src" -B "$build" -G "$generator" -DCMAKE_BUILD_TYPE="$type" -DDLS_WITH_CUDA=OFF > "$build.configure.log" 2>&1 \
  || { cat "$build.configure.log"; fail "configure"; }
grep -q "CUDA=OFF" "$build.configure.log" || fail "the CPU build did not turn CUDA off"
cmake --build "$build" -j 2 --target dlscale gpu_none_test net_test > "$build.build.log" 2>&1 \
  || { tail -50 "$build.build.log"; fail "build"; }
if grep -q "warning:" "$build.build.log"; then grep "warning:" "$build.build.log" | head; fail "compiler warnings"; fi
"$build/kernels/gpu_none_test" > /dev/null || fail "gpu_none_test"
"$build/apps/net_test" --gtest_filter='NetDevice*' > /dev/null || fail "net_test (device paths on the host device)"
refuses() {  # expected text, then the command
  local want=$1 out rc
  shift
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "$out"; fail "'$*' exited $rc, expected 2"; }
  grep -q "$want" <<< "$out" || { echo "$out"; fail "'$*' does not say '$want'"; }
}
refuses "built without CUDA" "$build/dlscale" train --backend cudnn --steps 1 --quiet
refuses "no GPU collectives" "$build/dlscale" collectives --memory device -b 8 -e 8
echo "CPU build (DLS_WITH_CUDA=OFF): built without warnings; GPU paths refuse with the reason"
