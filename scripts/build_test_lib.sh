# Sourced by the tests of the other build configurations (cpu_build_test.sh, nompi_build_test.sh):
#   fail MESSAGE                 prints FAIL: MESSAGE and exits 1
#   build_config SRC BUILD LOG EXPECT "TARGETS" [CMAKE_ARGS...]
#                                configures SRC into BUILD with CMAKE_ARGS as a unity build
#                                (CMAKE_UNITY_BUILD: each target's sources compiled in a few
#                                batches, a third to half the time of a build per file, as
#                                scripts/sanitize.sh's), checks that the
#                                configure output says EXPECT (e.g. CUDA=OFF), builds TARGETS and
#                                fails on any compiler warning; the logs are LOG.configure.log and
#                                LOG.build.log
#   refuses TEXT COMMAND...      COMMAND must exit 2 and say TEXT (a path the build lacks, refused
#                                with the reason)
fail() {
  echo "FAIL: $*"
  exit 1
}

build_config() {
  local src=$1 build=$2 log=$3 expect=$4 targets=$5
  shift 5
  cmake -S "$src" -B "$build" -DCMAKE_UNITY_BUILD=ON "$@" > "$log.configure.log" 2>&1 || { cat "$log.configure.log"; fail "configure"; }
  grep -q "$expect" "$log.configure.log" || fail "the configure output does not say $expect"
  # shellcheck disable=SC2086  # TARGETS is a list
  cmake --build "$build" -j 2 --target $targets > "$log.build.log" 2>&1 || { tail -50 "$log.build.log"; fail "build"; }
  if grep -q "warning:" "$log.build.log"; then
    grep "warning:" "$log.build.log" | head
    fail "compiler warnings"
  fi
}

refuses() {
  local want=$1 out rc
  shift
  set +e
  out=$("$@" 2>&1)
  rc=$?
  set -e
  [[ $rc -eq 2 ]] || { echo "$out"; fail "'$*' exited $rc, expected 2"; }
  grep -q "$want" <<< "$out" || { echo "$out"; fail "'$*' does not say '$want'"; }
}
