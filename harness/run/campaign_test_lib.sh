# Sourced by the campaign tests: source campaign_test_lib.sh DLSCALE
# Sets dlscale, here, root, tmp (removed on exit, with any runner still in the background), and
# defines fail, start, wait_for, wait_lines, none_left and lines_parse. Strict mode for the caller.
set -euo pipefail
dlscale=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
cleanup() {
  local j
  for j in $(jobs -p); do kill -9 "$j" 2> /dev/null && wait "$j" 2> /dev/null; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; exit 1; }
export DLSCALE_ROOT=$root OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

# start LOG ARGS...: `dlscale run ARGS` in the background; $runner is its own pid (not a subshell's)
start() {
  local log=$1
  shift
  "$dlscale" run --no-progress "$@" > "$log" 2>&1 &
  runner=$!
}

# wait_for PATTERN: a process whose command line matches, up to 60 s
wait_for() {
  for _ in $(seq 600); do pgrep -f -- "$1" > /dev/null && return 0; sleep 0.1; done
  fail "no process matching '$1' appeared"
}

# wait_lines FILE PATTERN N: FILE has at least N lines matching PATTERN, up to 60 s
wait_lines() {
  for _ in $(seq 600); do
    [[ -f "$1" && $(grep -c -- "$2" "$1") -ge $3 ]] && return 0
    sleep 0.1
  done
  fail "$1 never had $3 lines matching '$2'"
}

# running PID: the process exists and is not a zombie (one that nobody reaped yet has ended)
running() { [[ -r /proc/$1/stat ]] && [[ $(awk '{print $3}' "/proc/$1/stat" 2> /dev/null) != Z ]]; }

# none_left SECONDS PATTERN [PID...]: within SECONDS no process matches PATTERN and the PIDs are gone
none_left() {
  local secs=$1 pat=$2 p q alive
  shift 2
  for _ in $(seq $((secs * 10))); do
    alive=0
    for q in $(pgrep -f -- "$pat"); do running "$q" && alive=1; done
    for p in "$@"; do running "$p" && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  echo "left running:"
  ps -eo pid,pgid,sid,args | awk -v pat="$pat" '$0 ~ pat'
  for p in "$@"; do ps -eo pid,pgid,sid,args | awk -v pid="$p" '$1 == pid'; done
  fail "processes of the campaign were still running $secs s after its runner died"
}

# lines_parse FILE: every line of FILE is a JSON object
lines_parse() {
  python3 -c "import json,sys; [json.loads(l) for l in open(sys.argv[1]) if l.strip()]" "$1" || fail "a torn line in $1"
}
