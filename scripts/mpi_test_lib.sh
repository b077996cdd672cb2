# Sourced by the shell tests that run dlscale under mpiexec, with their arguments:
#   source "<path to scripts>/mpi_test_lib.sh" "$@" || exit 1   # MPIEXEC DLSCALE [mpiexec flags...]
# Sets mpiexec, dlscale and flags (an array), makes $tmp (removed on exit), defines fail and
# gpu_probe. Strict mode for the caller.
set -euo pipefail
mpiexec=$1 dlscale=$2
shift 2
flags=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
source "$(dirname "${BASH_SOURCE[0]}")/test_skip.sh"

# gpu_probe NAME COMMAND...: runs COMMAND with its output in $tmp/NAME.txt. Failing because
# the build or the machine has no GPU, it prints "DLS_SKIP(no GPU): reason" and exits 77 (ctest:
# skipped), or fails where DLS_REQUIRE_GPU is set; failing otherwise, it prints the output and
# fails; passing, it returns.
gpu_probe() {
  local name=$1 rc
  shift
  set +e
  "$@" > "$tmp/$name.txt" 2>&1
  rc=$?
  set -e
  if [[ $rc -ne 0 ]]; then
    if grep -q -e "no CUDA device" -e "built without CUDA" -e "no GPU collectives" "$tmp/$name.txt"; then
      skip_or_fail GPU DLS_REQUIRE_GPU "$(cat "$tmp/$name.txt")"
    fi
    cat "$tmp/$name.txt"
    fail "the $name run exited $rc"
  fi
}
