#!/usr/bin/env bash
# The host's load beside a point, measured for real: a one-point campaign (and the site's peak
# `auto`) run while two busy loops take the host's CPUs. Its points.jsonl entry, every record
# (harness_host) and the manifest's measured peak must see at least half a core of other work,
# the point its own CPU time, and acceptance.json must name the criterion as measured beside
# other work (docs/derived_metrics.md), and dlscale run must have warned of the busy host before
# its first point. A quiet host cannot be asserted here (ctest runs tests side by side), so the
# check is one-sided: a load that is there must be seen.
# usage: host_load_test.sh DLSCALE
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/campaign_test_lib.sh" "$@" || exit 1
cat > "$tmp/plan.yaml" <<'PLAN'
name: host_load
experiments:
  - name: gemm
    kind: kernels
    args: {op: gemm, shape: "384x384x384", backend: "openblas"}
    sweep: {threads: [1]}
acceptance:
  - {id: gemm_any, experiment: gemm, derived: pct_of_peak, bound: 1}
PLAN
loops=()
(while :; do :; done) &
loops+=($!)
# the other loop names itself with an escape byte (prctl), which the warning must not pass on
python3 -c 'import ctypes
ctypes.CDLL(None).prctl(15, b"busy\x1b[31m", 0, 0, 0)
while True: pass' &
loops+=($!)
trap 'set +e; kill -9 "${loops[@]}"; wait "${loops[@]}" 2> /dev/null; cleanup' EXIT
"$dlscale" run --no-progress --site localhost --plan "$tmp/plan.yaml" --campaign "$tmp/camp" > "$tmp/run.txt" 2>&1 ||
  { cat "$tmp/run.txt"; fail "the campaign failed"; }
python3 - "$tmp/camp" <<'PY' || { cat "$tmp/run.txt"; fail "the load beside the point"; }
import json, sys
camp = sys.argv[1]
pts = [json.loads(l) for l in open(f"{camp}/points.jsonl")]
recs = [json.loads(l) for l in open(f"{camp}/records.jsonl")]
assert len(pts) == 1 and pts[0]["status"] == "ok", pts
h = pts[0]["host"]
assert h["cpus"] >= 1 and h["own_cores"] > 0.1 and h["other_cores"] >= 0.5, h
assert recs and all(r["harness_host"] == h for r in recs), [r.get("harness_host") for r in recs]
peak = json.load(open(f"{camp}/manifest.json"))["measured_node_peak"]["host"]
assert peak["own_cores"] > 0.1 and peak["other_cores"] >= 0.5, peak
acc = json.load(open(f"{camp}/acceptance.json"))
assert acc[0]["disturbed"].startswith("measured beside other work"), acc[0]
PY
grep -q "measured beside other work" "$tmp/run.txt" || { cat "$tmp/run.txt"; fail "dlscale run did not say so"; }
# and it warned before the first point, naming a busy process, in its output and runner.log
for f in "$tmp/run.txt" "$tmp/camp/runner.log"; do
  grep -Eq "WARNING: the host is busy: .* other processes took [0-9.]+ .*busiest: " "$f" ||
    { cat "$f"; fail "$f: no busy-host warning"; }
  ! grep -q $'\x1b' "$f" || fail "$f: a process name's escape byte reached the output"
done
echo "host_load: ok"
