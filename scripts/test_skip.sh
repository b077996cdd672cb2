# Sourced by the shell tests: a test skips only for its one named reason, and fails instead on a
# machine that must run it (DLS_REQUIRE_<THING>=1; kernels/common/test_require.hpp is the C++ side).
#   skip_or_fail THING VAR WHY   prints "DLS_SKIP(no THING): WHY" and exits 77 (ctest: skipped),
#                                or "FAIL: VAR is set, but WHY" and exits 1 where VAR is set
skip_or_fail() {
  local thing=$1 var=$2 why=$3
  if [[ -n ${!var:-} && ${!var} != 0 ]]; then
    echo "FAIL: $var is set, but $why"
    exit 1
  fi
  echo "DLS_SKIP(no $thing): $why"
  exit 77
}
