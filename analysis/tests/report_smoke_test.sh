#!/usr/bin/env bash
# The smoke campaign end to end into its HTML report, looked at in headless Chromium:
#   dlscale run (smoke plan, localhost) -> dlscale report -> a screenshot whose plots are there:
#   the page must show clearly more coloured pixels than the same page with its images removed,
#   and carry the four plots (scaling, breakdown, busbw, convergence) and the acceptance verdict.
#   Every smoke criterion is judged (no NO DATA: each derived metric found what it needs, the
#   measured peak included), each value equal to the Python analysis's (dlsanalysis.derived);
#   whether they pass depends on the machine's load, so that is the main job's to show.
#   dlscale reproduce on it says the smoke plan reproduces no seed (exit 2).
#   Its records, points and tables equal the stored campaign golden/smoke apart from provenance
#   and what the clock measured (golden.py). A change that should change them (a new metric, a
#   renamed parameter) stores it again: `python3 golden.py store CAMPAIGN golden/smoke` after
#   `dlscale tables CAMPAIGN`, and says why in its commit.
# usage: report_smoke_test.sh DLSCALE
set -euo pipefail
dlscale=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
export DLSCALE_ROOT=$root
chromium=$(command -v chromium || command -v chromium-browser) || fail "no chromium (scripts/setup.sh installs it)"

"$dlscale" run --site localhost --plan smoke --campaign "$tmp/smoke" --no-progress > "$tmp/run.log" 2>&1 \
  || { cat "$tmp/run.log"; fail "the smoke campaign failed"; }
[ -s "$tmp/smoke/acceptance.json" ] || fail "no acceptance.json"
"$dlscale" tables "$tmp/smoke" > "$tmp/tables.log" 2>&1 || { cat "$tmp/tables.log"; fail "dlscale tables failed"; }
/usr/bin/python3 "$here/golden.py" compare "$here/golden/smoke" "$tmp/smoke" \
  || fail "the smoke campaign differs from the stored one (above)"
"$dlscale" report "$tmp/smoke" > "$tmp/report.log" 2>&1 || { cat "$tmp/report.log"; fail "dlscale report failed"; }
html="$tmp/smoke/report.html"
[ -s "$html" ] || fail "no report.html"
grep -Eq "(ACCEPTED|INCONCLUSIVE): [0-9] of 6 criteria pass" "$html" || fail "the acceptance verdict is not in the report"
/usr/bin/python3 - "$tmp/smoke" "$root" <<'PY' || fail "acceptance.json: a criterion not judged, or the C++ and Python values differ"
import json, sys, yaml
sys.path.insert(0, sys.argv[2] + "/analysis")
from dlsanalysis.derived import criterion_values
from dlsanalysis.records import load_campaign
camp, root = sys.argv[1], sys.argv[2]
acc = json.load(open(camp + "/acceptance.json"))
plan = yaml.safe_load(open(root + "/harness/plans/smoke.yaml"))
site = yaml.safe_load(open(root + "/site_configs/localhost.yaml"))
manifest = json.load(open(camp + "/manifest.json"))
df = load_campaign(camp)
assert [v["id"] for v in acc] == [c["id"] for c in plan["acceptance"]], acc
for v, c in zip(acc, plan["acceptance"]):
    assert v["result"] in ("PASS", "FAIL", "INCONCLUSIVE"), (v["id"], v["result"], v["why"])
    py, _ = criterion_values(df, c, site, manifest)
    cc = v["groups"]
    assert len(py) == len(cc) > 0, (v["id"], py, cc)
    for a, b in zip(py, cc):
        assert abs(a["value"] - b["value"]) <= 1e-9 * abs(a["value"]), (v["id"], a, b)
    print(f"{v['id']}: {v['result']} {cc[0]['value']:.4g} {cc[0]['bound']}")
PY
for plot in scaling breakdown busbw convergence; do
  grep -q "alt=\"$plot.png\" src=\"data:image/png;base64," "$html" || fail "plot $plot.png is not embedded"
done
sed -E 's/<img [^>]*>//g' "$html" > "$tmp/bare.html"
shot() { "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,6000 --screenshot="$2" "file://$1" \
           > "$tmp/chromium.log" 2>&1 || { cat "$tmp/chromium.log"; fail "chromium could not render $1"; }; }
shot "$html" "$tmp/report.png"
shot "$tmp/bare.html" "$tmp/bare.png"
/usr/bin/python3 - "$tmp/report.png" "$tmp/bare.png" <<'PY'
import sys
import matplotlib.image as mi
def colored(p):
    img = mi.imread(p)[..., :3]
    return int(((img.max(axis=2) - img.min(axis=2)) > 0.3).sum())
a, b = colored(sys.argv[1]), colored(sys.argv[2])
print(f"coloured pixels: report {a}, without its images {b}")
sys.exit(0 if a > b + 20000 else 1)
PY
[ "${DLS_KEEP_SCREENSHOT:-}" ] && cp "$tmp/report.png" "$DLS_KEEP_SCREENSHOT"
set +e
"$dlscale" reproduce "$tmp/smoke" > "$tmp/repro.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q "names no seed" "$tmp/repro.log" || { cat "$tmp/repro.log"; fail "reproduce on a plan without a seed: exit $rc"; }
echo "report smoke test passed"
