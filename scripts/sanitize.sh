#!/usr/bin/env bash
# The unit and MPI tests again, in a build with AddressSanitizer + UndefinedBehaviorSanitizer
# (.ci/run runs it after the README's test command). The build goes to build-sanitize/ with
# -DDLS_SANITIZE=ON -DDLS_WITH_CUDA=OFF; any report fails its test. Left out: the build of the
# CPU configuration beside a CUDA one (label build: this build is already the CPU one), the real
# Slurm (label slurm: its daemons are not ours), the GPU tests (label gpu) and the analysis tests
# (Python, nothing to sanitize). Leaks inside Open MPI and PAPI are suppressed in
# scripts/sanitize/lsan.supp, each with its reason. Idempotent, like setup.sh.
#   scripts/sanitize.sh [ctest args]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${DLS_SANITIZE_BUILD_DIR:-$ROOT/build-sanitize}"
# A unity build (CMake batches each target's sources into a few translation units): the same code,
# its headers parsed once a batch: about 30 % less compile time here (ASan's instrumentation is the
# rest; the MPI-less and CPU-only builds gain more). Sources must therefore not
# repeat a name inside their anonymous namespaces (two files' `Row` or `write`) within a target.
DLS_BUILD_DIR="$BUILD" DLS_CMAKE_ARGS="-DDLS_SANITIZE=ON -DDLS_WITH_CUDA=OFF -DCMAKE_UNITY_BUILD=ON" "$ROOT/scripts/setup.sh"
# fast_unwind_on_malloc=0: the libraries (Open MPI's above all) have no frame pointers, so the
# fast unwinder ends a leak's stack in garbage frames and no suppression matches it; Open MPI
# keeps its components loaded so their frames have names (mca_base_component_disable_dlclose).
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0:strict_string_checks=1:fast_unwind_on_malloc=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$ROOT/scripts/sanitize/lsan.supp:print_suppressions=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
# harness_campaign_faults' slow points: its kills need a point running for a few seconds, which 300
# instrumented steps are (1500 took 345 s of the test's run alone here)
export DLS_FAULTS_STEPS=300
ctest --test-dir "$BUILD" --output-on-failure -j 2 -L "unit|mpi" -LE "slurm|gpu|build" -E "^analysis_" "$@"
