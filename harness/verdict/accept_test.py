"""`dlscale accept` on constructed campaigns (usage: accept_test.py DLSCALE).

A campaign of three repeats per point is written by hand: a training at 1 and 2 ranks, an
allreduce, a GEMM. Three plans judge the same four derived metrics (efficiency, busbw_fraction,
pct_of_peak, time_to_train_s) with bounds below, above and inside each value's 95 % interval:
every criterion passes (exit 0), fails (exit 1), or is inconclusive (exit 4). `bound: site` reads
the site's reference; `--baseline` makes the bounds from another campaign. Every value and
interval is checked against the Python analysis (dlsanalysis.derived), computed apart."""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "analysis"))
import yaml  # noqa: E402

from dlsanalysis.derived import criterion_values  # noqa: E402
from dlsanalysis.records import load_campaign  # noqa: E402

DLSCALE = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="dls_accept_")
SITE = {
    "name": "testsite",
    "node": {"cores": 2, "peak_flops_sp": "100 GFLOP/s"},
    "network": {"bandwidth": "10 GB/s"},
    "launcher": {"kind": "mpirun"},
    "references": {"p_site": {"eff": {"value": 0.95, "tolerance": 0.1, "direction": ">="}}},
}

# (experiment, kind, assignment, params, metric values of the three repeats)
POINTS = [
    # given in epochs: the 2-rank run takes half the steps, and is still the same configuration
    ("train", "train", {"ranks_per_node": "1"}, {"model": "m", "ranks": 1, "steps": 100}, {"images_per_s": [99, 100, 101]}),
    ("train", "train", {"ranks_per_node": "2"}, {"model": "m", "ranks": 2, "steps": 50}, {"images_per_s": [189, 190, 191]}),
    (
        "allreduce",
        "collective",
        {"ranks_per_node": "2"},
        {"algo": "mpi", "bytes": 8388608},
        {"busbw_bytes_per_s": [4.9e9, 5e9, 5.1e9]},
    ),
    ("gemm", "kernel", {"threads": "2"}, {"op": "gemm", "threads": 2}, {"gflop_per_s": [79, 80, 81], "threads": [2, 2, 2]}),
]


# the harness's host while a point ran (points.jsonl `host`), quiet but for the tick noise
QUIET = {"cpus": 2, "own_cores": 1.0, "other_cores": 0.01, "steal_cores": 0.0}


def put(path, text):
    pathlib.Path(path).write_text(text)


def load_json(path):
    with open(path) as f:
        return json.load(f)


def write_campaign(name, scale_2rank=1.0, points_table=POINTS, failed=(), isa=None, host=None, manifest_extra=None):
    d = os.path.join(TMP, name)
    os.makedirs(d)
    points, lines = [], []
    for i, (exp, kind, assignment, params, metrics) in enumerate(points_table):
        for rep in range(3):
            pid = f"p{i}r{rep}"
            points.append({"id": pid, "experiment": exp, "assignment": assignment, "repeat": rep})
            m = {k: v[rep] * (scale_2rank if params.get("ranks") == 2 else 1) for k, v in metrics.items()}
            rec = {"schema": "dlscale.record/1", "kind": kind, "benchmark": exp, "params": params, "metrics": m}
            rec.update(status="failed" if i in failed else "ok", point_id=f"id{i}", harness_point=pid)
            if isa is not None:
                rec["provenance"] = {"cpu": {"isa": isa}}
            rec["harness_merge"] = {"token": pid, "lines": 1}
            rec["harness_host"] = (host or {}).get((i, rep), QUIET)
            lines.append(json.dumps(rec))
    manifest = {"plan": "p", "site": "testsite", "site_file": os.path.join(TMP, "site.yaml"), "points": points}
    manifest.update(manifest_extra or {})
    put(os.path.join(d, "manifest.json"), json.dumps(manifest))
    put(os.path.join(d, "records.jsonl"), "\n".join(lines) + "\n")
    return d


def plan(name, eff, busbw, peak, ttt, bound_eff=None):
    crit = [
        {"id": "eff", "experiment": "train", "derived": "efficiency", "where": {"ranks_per_node": 2}, "bound": bound_eff or eff},
        {"id": "busbw", "experiment": "allreduce", "derived": "busbw_fraction", "where": {"algo": "mpi"}, "bound": busbw},
        {"id": "peak", "experiment": "gemm", "derived": "pct_of_peak", "bound": peak},
        {"id": "ttt", "experiment": "train", "derived": "time_to_train_s", "where": {"ranks_per_node": 2}, "epochs": 10},
    ]
    crit[3].update(images=1900, direction="<=", bound=ttt)
    exps = [
        {"name": e, "kind": k.replace("kernel", "kernels").replace("collective", "collectives")}
        for e, k in (("train", "train"), ("allreduce", "collective"), ("gemm", "kernel"))
    ]
    p = {"name": name, "experiments": exps, "acceptance": crit}
    path = os.path.join(TMP, name + ".yaml")
    put(path, yaml.safe_dump(p))
    return path, p


def accept(campaign, plan_path, *extra):
    out = os.path.join(TMP, "verdicts.json")
    r = subprocess.run(
        [DLSCALE, "accept", "--campaign", campaign, "--plan", plan_path, "--json", out, *extra], capture_output=True, text=True
    )
    return r, (load_json(out) if os.path.exists(out) and r.returncode in (0, 1, 4) else None)


def cross_check(campaign, p, verdicts, site=None):
    """Every group's value and interval, and the reason of a criterion without values, equal the
    Python analysis's."""
    df = load_campaign(campaign)
    for c, v in zip(p["acceptance"], verdicts, strict=True):
        values, why = criterion_values(df, c, site or SITE, load_json(os.path.join(campaign, "manifest.json")))
        assert len(values) == len(v["groups"]), (c["id"], values, v["groups"])
        assert values or why == v.get("why"), (c["id"], why, v.get("why"))
        for py, cc in zip(values, v["groups"], strict=True):
            assert abs(py["value"] - cc["value"]) <= 1e-9 * abs(py["value"]), (c["id"], py, cc)
            hw = cc["ci_high"] - cc["value"]
            assert abs(py["half_width"] - hw) <= 1e-6 * max(1e-12, abs(hw)), (c["id"], py, cc)


def per_cpu_references(path):
    """A criterion's references by CPU: the first whose isa the records' host lists, or that
    names none; none for this host: NO REFERENCE, saying so; an entry after one without isa, which
    could never apply, is refused with exit 2."""
    site = os.path.join(TMP, "site_isa.yaml")
    wide = {"value": 0.95, "tolerance": 0.1, "direction": ">=", "isa": "avx512f"}
    narrow = {"value": 0.5, "tolerance": 0.1, "direction": ">="}
    put(site, yaml.safe_dump({**SITE, "references": {"p_site": {"eff": [wide, narrow]}}}))
    avx512 = write_campaign("isa512", isa=["avx2", "fma", "avx512f"])
    avx2 = write_campaign("isa2", isa=["avx2", "fma"])
    for camp, low, source in ((avx512, 0.855, "site testsite [avx512f]"), (avx2, 0.45, "site testsite")):
        r, v = accept(camp, path, "--site", site)
        assert r.returncode == 0 and abs(v[0]["worst"]["low"] - low) < 1e-12, (camp, r.stdout, r.stderr)
        assert v[0]["worst"]["bound_source"] == source, v[0]["worst"]
    put(site, yaml.safe_dump({**SITE, "references": {"p_site": {"eff": [wide]}}}))
    r, v = accept(avx2, path, "--site", site)
    assert v[0]["result"] == "NO REFERENCE" and "for this host's CPU (isa: avx2 fma)" in v[0]["why"], (r.stdout, v[0])
    put(site, yaml.safe_dump({**SITE, "references": {"p_site": {"eff": [narrow, wide]}}}))
    r, _ = accept(avx2, path, "--site", site)
    assert r.returncode == 2 and "site.references.p_site.eff[1]" in r.stderr and "never applies" in r.stderr, r.stderr
    put(site, yaml.safe_dump({**SITE, "references": {"p_site": {"eff": []}}}))
    r, _ = accept(avx2, path, "--site", site)
    assert r.returncode == 2 and "site.references.p_site.eff: expected a reference" in r.stderr, r.stderr


def disturbed_groups(path):
    """A group measured beside other work (its records' harness_host, or its base's, or the
    measured peak's) is named beside its criterion, whatever the result; below a quarter of a core
    nothing is said. Results are unchanged."""
    busy = {"cpus": 2, "own_cores": 1.0, "other_cores": 0.9, "steal_cores": 0.05}
    camp = write_campaign("busy_base", host={(0, 1): busy})  # a repeat of the 1-rank base
    r, v = accept(camp, path, "--site", os.path.join(TMP, "site.yaml"))
    assert r.returncode == 0 and [x["result"] for x in v] == ["PASS"] * 4, r.stdout
    d = v[0]["disturbed"]
    assert "other processes took 0.90 and a hypervisor 0.05 of the host's 2 CPUs" in d and "group id1" in d, v[0]
    assert "measured beside other work" in r.stdout, r.stdout
    assert [x["disturbed"] for x in v[1:]] == ["", "", ""], v
    quiet = write_campaign("quiet_enough", host={(3, 0): {**busy, "other_cores": 0.2, "steal_cores": 0.0}})
    steal = write_campaign("steal", host={(3, 2): {**busy, "other_cores": 0.0, "steal_cores": 0.3}})
    for c, said in ((quiet, False), (steal, True)):
        _, v = accept(c, path, "--site", os.path.join(TMP, "site.yaml"))
        assert bool(v[2]["disturbed"]) == said and not v[0]["disturbed"], (c, v[2])
    # the peak `auto` measured beside a busy neighbour: the GEMM judged against it is named
    site = os.path.join(TMP, "site_auto.yaml")
    put(site, yaml.safe_dump({**SITE, "node": {"cores": 2, "peak_flops_sp": "auto"}}))
    peak = {"measured_node_peak": {"flop_per_s": 100e9, "source": "measured", "host": busy}}
    camp = write_campaign("busy_peak", manifest_extra=peak)
    _, v = accept(camp, path, "--site", site)
    assert v[2]["result"] == "PASS" and abs(v[2]["worst"]["value"] - 80) < 1e-9, v[2]
    assert "group id3" in v[2]["disturbed"] and not v[0]["disturbed"], v
    # a baseline measured beside other work is what --baseline judges against: named too
    quiet_now = write_campaign("quiet_now")
    busy_then = write_campaign("busy_then", host={(1, 0): busy})
    _, v = accept(quiet_now, path, "--site", os.path.join(TMP, "site.yaml"), "--baseline", busy_then)
    assert v[0]["result"] == "PASS" and "group id1" in v[0]["disturbed"], v[0]
    _, v = accept(busy_then, path, "--site", os.path.join(TMP, "site.yaml"), "--baseline", quiet_now)
    assert "group id1" in v[0]["disturbed"] and not v[1]["disturbed"], v


def auto_cores(path, p):
    """A site's `cores: auto` is, for a verdict, the campaign host's physical cores (its manifest),
    not the CPUs of the host that runs `accept`: a 2-thread GEMM on a 4-core node used half of it
    (80 GFLOP/s of a 100 GFLOP/s node's half: 160 %), whatever this host has."""
    site = os.path.join(TMP, "site_auto_cores.yaml")
    auto = {**SITE, "node": {"cores": "auto", "peak_flops_sp": "100 GFLOP/s"}}
    put(site, yaml.safe_dump(auto))
    camp = write_campaign("four_cores", manifest_extra={"provenance": {"cpu": {"physical_cores": 4}}})
    r, v = accept(camp, path, "--site", site)
    assert abs(v[2]["worst"]["value"] - 160) < 1e-9, (r.stdout, v[2])
    cross_check(camp, p, v, auto)
    # no physical cores in the manifest: no share of the node to judge against, said so
    r, v = accept(write_campaign("no_cores"), path, "--site", site)
    assert v[2]["result"] == "NO DATA" and "physical cores" in v[2]["why"], (r.stdout, v[2])


def main():
    put(os.path.join(TMP, "site.yaml"), yaml.safe_dump(SITE))
    camp = write_campaign("c")
    # efficiency 0.95 in [0.916, 0.984]; busbw 0.5 in [0.475, 0.525]; 80 % in [77.5, 82.5]; 100 s
    cases = [
        ("pass", (0.9, 0.4, 70, 120), 0, "PASS"),
        ("fail", (0.99, 0.6, 90, 90), 1, "FAIL"),
        ("inconclusive", (0.95, 0.5, 80, 100), 4, "INCONCLUSIVE"),
    ]
    for name, bounds, code, result in cases:
        path, p = plan("p_" + name, *bounds)
        r, v = accept(camp, path, "--site", os.path.join(TMP, "site.yaml"))
        assert r.returncode == code, (name, r.returncode, r.stdout, r.stderr)
        assert [x["result"] for x in v] == [result] * 4, (name, r.stdout)
        cross_check(camp, p, v)
    # bound: site reads the site's reference (0.95 - 10 %: 0.855)
    path, p = plan("p_site", 0, 0.4, 70, 120, bound_eff="site")
    r, v = accept(camp, path, "--site", os.path.join(TMP, "site.yaml"))
    assert r.returncode == 0 and v[0]["worst"]["low"] == 0.855 and "site testsite" in v[0]["worst"]["bound_source"], r.stdout
    del SITE["references"]
    put(os.path.join(TMP, "site.yaml"), yaml.safe_dump(SITE))
    r, v = accept(camp, path, "--site", os.path.join(TMP, "site.yaml"))
    assert r.returncode == 1 and v[0]["result"] == "NO REFERENCE", r.stdout
    # --baseline: the campaign against itself passes; a 2-rank throughput 20 % lower fails
    slow = write_campaign("slow", scale_2rank=0.8)
    for cand, code in ((camp, 0), (slow, 1)):
        r, v = accept(cand, path, "--site", os.path.join(TMP, "site.yaml"), "--baseline", camp)
        assert r.returncode == code, (cand, r.stdout, r.stderr)
        assert v[0]["worst"]["bound_source"].startswith("baseline"), v[0]
        assert abs(v[0]["worst"]["reference"] - 0.95) < 1e-12, v[0]
    # --emit-references freezes a campaign: its block in the site, the slow campaign fails it
    cmd = [DLSCALE, "accept", "--campaign", camp, "--plan", path, "--site", os.path.join(TMP, "site.yaml")]
    r = subprocess.run([*cmd, "--emit-references"], capture_output=True, text=True)
    refs = yaml.safe_load(r.stdout)["references"]["p_site"]
    assert r.returncode == 0 and abs(refs["eff"]["value"] - 0.95) < 1e-5 and refs["eff"]["tolerance"] == 0.05, r.stdout
    put(os.path.join(TMP, "site.yaml"), yaml.safe_dump({**SITE, "references": {"p_site": refs}}))
    for cand, code in ((camp, 0), (slow, 1)):
        r, v = accept(cand, path, "--site", os.path.join(TMP, "site.yaml"))
        assert r.returncode == code and abs(v[0]["worst"]["low"] - 0.95 * 0.95) < 1e-5, (cand, r.stdout, r.stderr)
    # a 1-rank run in another configuration is no base: no value (not the 2-rank run against
    # itself, 1.0), and the reason names the parameter
    other = [(e, k, a, {**p, "lr": 0.1} if p.get("ranks") == 1 else p, m) for e, k, a, p, m in POINTS]
    camp_other = write_campaign("other", points_table=other)
    r, v = accept(camp_other, path, "--site", os.path.join(TMP, "site.yaml"))
    assert v[0]["result"] == "NO DATA" and "differ in lr" in v[0]["why"], (r.stdout, v[0])
    cross_check(camp_other, p, v)
    # nor when the 1-rank point failed: the 2-rank group is not the experiment's fewest as planned
    camp_failed = write_campaign("failed", failed={0})
    r, v = accept(camp_failed, path, "--site", os.path.join(TMP, "site.yaml"))
    assert v[0]["result"] == "NO DATA" and "p0r0 (1 rank(s)) has no ok record" in v[0]["why"], (r.stdout, v[0])
    cross_check(camp_failed, p, v)
    # another model's 1-rank run does not stand in the way of this model's 2-rank base at 4 ranks
    two = [
        ("train", "train", {"ranks_per_node": "1"}, {"model": "m", "ranks": 1}, {"images_per_s": [99, 100, 101]}),
        ("train", "train", {"ranks_per_node": "2"}, {"model": "n", "ranks": 2}, {"images_per_s": [99, 100, 101]}),
        ("train", "train", {"ranks_per_node": "4"}, {"model": "n", "ranks": 4}, {"images_per_s": [189, 190, 191]}),
    ]
    p4 = {**p, "acceptance": [{**p["acceptance"][0], "where": {"ranks_per_node": 4}, "bound": 0.9}]}
    put(os.path.join(TMP, "p4.yaml"), yaml.safe_dump(p4))
    camp_two = write_campaign("two", points_table=two)
    r, v = accept(camp_two, os.path.join(TMP, "p4.yaml"), "--site", os.path.join(TMP, "site.yaml"))
    assert v[0]["result"] == "PASS" and abs(v[0]["groups"][0]["value"] - 0.95) < 1e-9, (r.stdout, v[0])
    cross_check(camp_two, p4, v)
    per_cpu_references(path)
    disturbed_groups(path)
    auto_cores(path, p)
    # bad input: exit 2 with the reason
    r, _ = accept(os.path.join(TMP, "missing"), path)
    assert r.returncode == 2 and "missing" in r.stderr, r.stderr
    # an output that cannot be written is refused before judging, not after
    for out, says in ((os.path.join(TMP, "nodir", "v.json"), "no folder"), (TMP, "a folder (expected a file name)")):
        r = subprocess.run([DLSCALE, "accept", "--campaign", camp, "--plan", path, "--json", out], capture_output=True, text=True)
        assert r.returncode == 2 and f"--json {out}: " in r.stderr and says in r.stderr and not r.stdout, (r.stdout, r.stderr)
    r = subprocess.run(
        [DLSCALE, "accept", "--campaign", camp, "--plan", path, "--emit-references", "--json", os.path.join(TMP, "v.json")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "excludes" in r.stderr, r.stderr
    bad = os.path.join(TMP, "bad.yaml")
    put(bad, pathlib.Path(path).read_text().replace("derived: efficiency", "derived: efficency"))
    r, _ = accept(camp, bad)
    assert r.returncode == 2 and "efficency" in r.stderr and "expected one of" in r.stderr, r.stderr
    print("accept_test: ok")


main()
shutil.rmtree(TMP)  # after a failure (an exception above) it stays, for its reader
