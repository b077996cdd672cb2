#!/usr/bin/env bash
# The runner killed outright, a second runner, torn lines (issue 21), with real points:
#   1. a second `dlscale run` on a campaign that is running is refused: exit 5, naming the
#      holder's host and pid;
#   2. kill -9 of the runner in the middle of a point that writes many records: within 10 s no
#      process of the campaign is left (the point, the watchdog);
#   3. kill -9 of the runner while it merges a point's records into records.jsonl
#      (DLSCALE_FAULT_MERGE_PAUSE_S slows the merge down so that the kill lands inside it);
#   4. kill -9 of the runner during a 2-rank point: mpirun and both ranks are gone within 10 s;
#   5. torn last lines in records.jsonl and points.jsonl (a write cut short);
#   6. a plain resume: it takes over the dead runner's lock, merges the cut-short point again,
#      repairs the torn lines and names all of it in runner.log, and ends with every point's
#      records in records.jsonl exactly once, no partial point, every reader agreeing.
# usage: campaign_kill_test.sh DLSCALE
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/campaign_test_lib.sh" "$@" || exit 1
cat > "$tmp/plan.yaml" <<'PLAN'
name: kill
experiments:
  - name: multi
    kind: kernels
    args: {op: "relu_fwd,relu_bwd,sigmoid_fwd,tanh_fwd,add", shape: n4000000, backend: "ref,openblas"}
    sweep: {threads: [1]}
  - name: pair
    kind: train
    args: {model: cifar10_quick, data: "synthetic:512", image: "16", steps: "600", eval-every: "-1", scheme: ssgd, holdout: "0"}
    sweep: {ranks_per_node: [2], batch: [8]}
acceptance:
  - {id: multi_time, experiment: multi, metric: time_s, direction: ">", bound: 0}
  - {id: pair_rate, experiment: pair, metric: images_per_s, direction: ">", bound: 0}
PLAN
camp="$tmp/camp"
args=(--site localhost --plan "$tmp/plan.yaml" --campaign "$camp")
watchdog_of() { pgrep -P "$1" -f -- "__watchdog" || fail "runner $1 has no watchdog"; }
multi_id=$("$dlscale" run "${args[@]}" --dry-run | sed -n 's/^# point \([0-9a-f]*\) (multi .*/\1/p')
[[ -n $multi_id ]] || fail "no multi point in the dry run"

# 1 and 2: a second runner while the first is in the middle of the multi-record point
start "$tmp/run1.txt" "${args[@]}"
wait_lines "$camp/parts/$multi_id.jsonl" '"kind"' 2
set +e
"$dlscale" run --no-progress "${args[@]}" > "$tmp/second.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 5 ]] || { cat "$tmp/second.txt"; fail "a second runner exited $rc, expected 5"; }
grep -q "being run by runner pid $runner on host $(hostname)" "$tmp/second.txt" || { cat "$tmp/second.txt"; fail "the refusal does not name the holder"; }
grep -q "^\[" "$tmp/second.txt" && { cat "$tmp/second.txt"; fail "the refused runner started a point"; }
wd=$(watchdog_of $runner)
kill -9 $runner
none_left 10 "$camp/" "$wd"
echo "killed mid-point: no process of the campaign left"

# 3: kill -9 while the multi point's records are being merged
DLSCALE_FAULT_MERGE_PAUSE_S=0.5 start "$tmp/run2.txt" "${args[@]}"
wait_lines "$camp/records.jsonl" "\"harness_point\":\"$multi_id\"" 3
wd=$(watchdog_of $runner)
kill -9 $runner
none_left 10 "$camp/" "$wd"
n=$(grep -c "\"harness_point\":\"$multi_id\"" "$camp/records.jsonl")
[[ $n -ge 3 && $n -lt 10 ]] || fail "the kill did not land inside the merge ($n of 10 lines merged)"
echo "killed mid-merge: $n of 10 lines merged"

# 4: kill -9 during the 2-rank point (the resumed runner merges multi again first)
start "$tmp/run3.txt" "${args[@]}"
wait_for "dlscale train .*--out $camp/"
for _ in $(seq 600); do [[ $(pgrep -c -f -- "dlscale train .*--out $camp/") -ge 3 ]] && break; sleep 0.1; done
[[ $(pgrep -c -f -- "dlscale train .*--out $camp/") -ge 3 ]] || fail "mpirun and its two ranks did not start"
wd=$(watchdog_of $runner)
kill -9 $runner
none_left 10 "$camp/" "$wd"
echo "killed during the 2-rank point: mpirun and both ranks stopped"

# 5: torn last lines, as a write cut short leaves them
torn_record='{"schema":"dlscale.record/1","kind":"ker' torn_point='{"id":"0123'
printf '%s' "$torn_record" >> "$camp/records.jsonl"
printf '%s' "$torn_point" >> "$camp/points.jsonl"

# 6: resume to the end
set +e
"$dlscale" run --no-progress "${args[@]}" > "$tmp/run4.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 0 ]] || { cat "$tmp/run4.txt"; fail "the resumed campaign exited $rc"; }
log="$camp/runner.log"
grep -q "took over the lock of a runner that is gone (runner pid" "$log" || { cat "$log"; fail "the stale lock was not named"; }
grep -qF "records.jsonl: a torn last line (${#torn_record} bytes, a write cut short) was moved to $camp/records.jsonl.torn" "$log" \
  || { cat "$log"; fail "the torn records line was not named"; }
grep -qF "points.jsonl: a torn last line (${#torn_point} bytes" "$log" || { cat "$log"; fail "the torn points line was not named"; }
grep -q "point $multi_id (multi): its merge into records.jsonl was cut short; merging it again" "$log" \
  || { cat "$log"; fail "the cut-short merge was not redone"; }
grep -q "merge cut short ($n of 10 lines) is ignored" "$log" || { cat "$log"; fail "the cut-short merge was not named"; }
[[ -f "$camp/runner.lock" ]] && fail "the lock was left behind by a runner that ended"
lines_parse "$camp/records.jsonl"
lines_parse "$camp/points.jsonl"
grep -qxF "$torn_record" "$camp/records.jsonl.torn" || fail "the torn bytes were not kept in records.jsonl.torn"
python3 - "$camp" "$multi_id" "$n" <<'PY' || fail "the campaign after resuming"
import collections, json, sys
camp, multi, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
man = json.load(open(f"{camp}/manifest.json"))
lines = [json.loads(l) for l in open(f"{camp}/records.jsonl")]
merges = collections.defaultdict(list)
for r in lines:
    merges[(r["harness_point"], r["harness_merge"]["token"])].append(r)
complete = collections.Counter(p for (p, t), rs in merges.items() if len(rs) == rs[0]["harness_merge"]["lines"])
partial = [(p, len(rs)) for (p, t), rs in merges.items() if len(rs) != rs[0]["harness_merge"]["lines"]]
ids = {p["id"]: p["experiment"] for p in man["points"]}
assert set(complete) == set(ids) and all(n == 1 for n in complete.values()), (complete, ids)  # each exactly once
assert partial == [(multi, cut)], partial                                                     # the kill's leftover, ignored
whole = [rs for (p, t), rs in merges.items() if len(rs) == rs[0]["harness_merge"]["lines"]]
size = {rs[0]["harness_point"]: len(rs) for rs in whole}
assert size == {multi: 10, [i for i in ids if i != multi][0]: 1}, size
acceptance = json.load(open(f"{camp}/acceptance.json"))                                    # the C++ reader agrees
assert [(v["experiment"], sum(g["n"] for g in v["groups"])) for v in acceptance] == [("multi", 10), ("pair", 1)], acceptance
PY
PYTHONPATH="$root/analysis" /usr/bin/python3 - "$camp" <<'PY' 2> "$tmp/py.err" || { cat "$tmp/py.err"; fail "the Python reader"; }
import sys
from dlsanalysis.records import load_campaign
df = load_campaign(sys.argv[1])
sizes = sorted(df.groupby("harness_point").size().tolist())
assert sizes == [1, 10], sizes                             # the Python reader agrees
PY
grep -q "merge cut short" "$tmp/py.err" || { cat "$tmp/py.err"; fail "the Python reader did not name the cut-short merge"; }

# 7. the watchdog itself killed while a point runs: the runner (which ignores SIGPIPE) warns and
#    finishes the campaign, its next point included
cat > "$tmp/plan2.yaml" <<'PLAN'
name: nowatchdog
experiments:
  - name: two
    kind: kernels
    args: {op: "relu_fwd,tanh_fwd", shape: n4000000, backend: "ref,openblas"}
    sweep: {threads: [1, 2]}
PLAN
start "$tmp/run5.txt" --site localhost --plan "$tmp/plan2.yaml" --campaign "$tmp/camp2"
wait_for "dlscale kernels .*--out $tmp/camp2/"
kill -9 "$(watchdog_of $runner)"
set +e
wait $runner
rc=$?
set -e
[[ $rc -eq 0 ]] || { cat "$tmp/run5.txt"; fail "the runner whose watchdog was killed exited $rc"; }
grep -q "WARNING: the watchdog is gone" "$tmp/run5.txt" || { cat "$tmp/run5.txt"; fail "no warning that the watchdog is gone"; }
[[ $(grep -c '"status":"ok"' "$tmp/camp2/points.jsonl") -eq 2 ]] || fail "the points after the watchdog died did not complete"

# 8. a resume with another plan is refused, naming what changed; --allow-plan-change goes on and
#    keeps the old plan's hash in the manifest
sed -i 's/op: "relu_fwd,tanh_fwd"/op: "relu_fwd"/' "$tmp/plan2.yaml"
before=$(cat "$tmp/camp2/records.jsonl")
set +e
"$dlscale" run --no-progress --site localhost --plan "$tmp/plan2.yaml" --campaign "$tmp/camp2" > "$tmp/run6.txt" 2>&1
rc=$?
set -e
[[ $rc -eq 2 ]] || { cat "$tmp/run6.txt"; fail "a resume with another plan exited $rc, expected 2"; }
grep -q "this campaign was started with another plan or site: 2 points removed (two .*\[--op relu_fwd,tanh_fwd " "$tmp/run6.txt" \
  || { cat "$tmp/run6.txt"; fail "the refusal does not name the removed points"; }
grep -q "2 points added (two .*\[--op relu_fwd --shape" "$tmp/run6.txt" || { cat "$tmp/run6.txt"; fail "the refusal does not name the added points"; }
[[ $(cat "$tmp/camp2/records.jsonl") == "$before" ]] || fail "the refused resume changed records.jsonl"
"$dlscale" run --no-progress --site localhost --plan "$tmp/plan2.yaml" --campaign "$tmp/camp2" --allow-plan-change > "$tmp/run7.txt" 2>&1 \
  || { cat "$tmp/run7.txt"; fail "--allow-plan-change did not go on"; }
python3 - "$tmp/camp2" <<'PY' || fail "the manifest after --allow-plan-change"
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert len(m["plan_history"]) == 1 and "2 points removed" in m["plan_history"][0]["changes"], m.get("plan_history")
assert len(m["points"]) == 2 and m["plan_hash"] != m["plan_history"][0]["plan_hash"]
PY
grep -q "the plan changed (--allow-plan-change)" "$tmp/camp2/runner.log" || fail "runner.log does not say the plan changed"
echo "campaign kill: ok (second runner refused, no orphans after 3 kills, cut-short merge redone, torn lines repaired," \
  "a dead watchdog survived, a changed plan refused and then allowed)"
