# shellcheck shell=bash
# The kit of the command-line test scripts (kernels/bench/cli_test.sh, apps/cli/train_cli_test.sh),
# sourced: a scratch folder $TMP removed at exit, the cases' counters ok / bad, refusal (a case's
# exit status and stderr, $TMP/stderr, against a refusal's: 2 and a pattern), and finish (the
# summary line; a non-zero status where a case failed).
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
fails=0
passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# refusal NAME RC PATTERN: 0 where RC is 2 and $TMP/stderr matches PATTERN (grep -e), else bad.
refusal() {
  local name="$1" rc="$2" pattern="$3"
  [ "$rc" -eq 2 ] || { bad "$name: exit $rc, expected 2: $(cat "$TMP/stderr")"; return 1; }
  grep -q -e "$pattern" "$TMP/stderr" || { bad "$name: stderr lacks '$pattern': $(cat "$TMP/stderr")"; return 1; }
}

finish() {
  echo "${1:-}${1:+: }$passes passed, $fails failed"
  [ "$fails" -eq 0 ]
}
