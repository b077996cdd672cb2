"""compare and history on constructed records whose verdicts are worked out by hand here."""

import json
import random
import re
from pathlib import Path

import pandas as pd
import pytest

from dlsanalysis import compare, load_records
from dlsanalysis.__main__ import main
from dlsanalysis.compare import compare_frames, direction

Z = [-1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5]  # a fixed spread: mean 0, sample standard deviation 1.0801


def rec(pid, metrics, kind="kernel", bench="gemm", start=None, provenance=None, params=None):
    r = {
        "schema": "dlscale.record/1",
        "kind": kind,
        "benchmark": bench,
        "params": params or {"backend": "openblas", "point": pid},
        "point_id": pid,
        "metrics": metrics,
        "status": "ok",
        "error": "",
    }
    if start or provenance:
        r["provenance"] = (provenance or {}) | ({"start_time": start} if start else {})
    return r


def write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def kernels(path, points, cv=0.01, start=None):
    """Kernel records: for each (pid, time_s) 7 repeats of time_s x (1 + cv z), gflop_per_s = 10 / time_s."""
    recs = []
    for pid, t in points:
        for z in Z:
            ts = t * (1 + cv * z)
            recs.append(rec(pid, {"time_s": ts, "gflop_per_s": 10 / ts, "flop": 1e10, "widgets": 100 * ts}, start=start))
    return write(path, recs)


def by(t, pid, metric):
    return t[(t["point_id"] == pid) & (t["metric"] == metric)].iloc[0]


def test_directions_of_metric_names():
    higher = ["images_per_s", "gflop_per_s", "busbw_bytes_per_s", "algbw_bytes_per_s", "pct_of_peak", "efficiency"]
    higher += ["learning_speedup", "accuracy", "busbw_fraction", "overlap_fraction", "cache.hit_rate"]
    lower = ["time_s", "step_time_s", "time_s_rank_min", "phase_s.sync", "phase_s_max.backward", "layer_s.conv1.forward_s"]
    lower += ["time_to_train_s", "epochs_to_target", "peak_rss_bytes", "memory.weights_bytes", "alpha_s", "latency_us"]
    left_out = ["bytes", "flop", "samples", "iters", "ranks", "time_s_cv", "counter_rates.step.cpu_busy", "busbw_factor"]
    left_out += ["counters_by_phase.sync.perf::TASK-CLOCK", "peak_flop_per_s", "cache.fraction", "parameters", "widgets"]
    assert {n: direction(n) for n in higher} == dict.fromkeys(higher, "higher")
    assert {n: direction(n) for n in lower} == dict.fromkeys(lower, "lower")
    assert {n: direction(n) for n in left_out} == dict.fromkeys(left_out)


def test_a_slower_time_is_regressed_and_a_higher_rate_improved(tmp_path):
    # p0 gets 20 % slower (time up, GFLOP/s down): both regressed; p1 gets 20 % faster: both improved
    a = load_records(kernels(tmp_path / "a.jsonl", [("p0", 1.0), ("p1", 2.0), ("p2", 3.0)]))
    b = load_records(kernels(tmp_path / "b.jsonl", [("p0", 1.2), ("p1", 2.0 / 1.2), ("p2", 3.0)]))
    t = compare_frames(a, b)
    assert sorted(t["metric"].unique()) == ["gflop_per_s", "time_s"]  # the kernel headline; flop and widgets not
    assert by(t, "p0", "time_s")["verdict"] == "regressed" and by(t, "p0", "time_s")["better"] == "lower"
    assert by(t, "p0", "time_s")["change"] == pytest.approx(0.2, rel=1e-9)
    assert by(t, "p0", "gflop_per_s")["verdict"] == "regressed"
    assert by(t, "p1", "gflop_per_s")["verdict"] == "improved" and by(t, "p1", "gflop_per_s")["better"] == "higher"
    assert by(t, "p1", "time_s")["verdict"] == "improved"
    assert (t[t["point_id"] == "p2"]["verdict"] == "unchanged").all()
    assert by(t, "p0", "time_s")["label"] == "gemm point=p0"


def test_a_point_measured_in_another_placement_of_the_cores_is_marked_not_rejudged(tmp_path, capsys):
    """B's p0 ran on cores 330 ns apart in one repeat (A's: 55 to 60), p1 at 100 against 55 (under
    twice): p0's regression stands and is marked; p2's records carry no round trip (one thread)."""
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0), ("p1", 2.0), ("p2", 3.0)])
    b = kernels(tmp_path / "b.jsonl", [("p0", 1.2), ("p1", 2.0), ("p2", 3.0)])
    for path, trip in (
        (a, lambda r, i: 55.0 + i % 2 * 5),
        (b, lambda r, i: 330.0 if r["point_id"] == "p0" and i == 2 else 100.0),
    ):
        recs = [json.loads(line) for line in Path(path).read_text().splitlines()]
        for i, r in enumerate(recs):
            if r["point_id"] != "p2":
                r["metrics"]["cores"] = {"pairs": [], "round_trip_ns": trip(r, i)}
        write(Path(path), recs)
    t = compare_frames(load_records(a), load_records(b))
    p0, p1, p2 = by(t, "p0", "time_s"), by(t, "p1", "time_s"), by(t, "p2", "time_s")
    assert p0["verdict"] == "regressed" and p0["placement"] == "differs"
    assert p0["cores_a"] == pytest.approx(60.0) and p0["cores_b"] == pytest.approx(330.0)
    assert p1["placement"] == "" and p1["cores_b"] == pytest.approx(100.0)
    assert p2["placement"] == "" and p2["cores_a"] != p2["cores_a"]
    assert main(["compare", a, b, "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "cores placed apart (round trip A 60 ns, B 330 ns)" in out
    assert out.count("cores placed apart") == 2  # p0's time_s and gflop_per_s, not p1's


def test_a_point_measured_beside_other_work_is_marked_not_rejudged(tmp_path, capsys):
    """B's p0 ran while other processes took 0.9 cores and steal 0.1 (one repeat of seven), p1 beside
    0.2 (under the 0.25 of dlscale accept): p0's regression stands and is marked B; A recorded no
    load, so its side is unknown (NaN)."""
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0), ("p1", 2.0)])
    b = kernels(tmp_path / "b.jsonl", [("p0", 1.2), ("p1", 2.0)])
    recs = [json.loads(line) for line in (tmp_path / "b.jsonl").read_text().splitlines()]
    for i, r in enumerate(recs):
        busy = r["point_id"] == "p0" and i == 3
        r["harness_host"] = {
            "cpus": 2,
            "own_cores": 1.0,
            "other_cores": 0.9 if busy else 0.2,
            "steal_cores": 0.1 if busy else 0.0,
        }
    write(tmp_path / "b.jsonl", recs)
    t = compare_frames(load_records(a), load_records(b))
    p0, p1 = by(t, "p0", "time_s"), by(t, "p1", "time_s")
    assert p0["verdict"] == "regressed" and p0["disturbed"] == "B" and p0["beside_b"] == pytest.approx(1.0)
    assert p1["disturbed"] == "" and p1["beside_b"] == pytest.approx(0.2) and p0["beside_a"] != p0["beside_a"]
    assert main(["compare", a, b, "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert re.search(r"gemm point=p0 +time_s .* regressed  measured beside other work on B", out), out


def test_a_metric_of_unknown_direction_is_changed_until_given_one(tmp_path, capsys):
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0), ("p1", 1.0)])
    b = kernels(tmp_path / "b.jsonl", [("p0", 1.3), ("p1", 1.0)])
    assert main(["compare", a, b, "--metric", "widgets", "--out", str(tmp_path / "o1")]) == 0
    out = capsys.readouterr().out
    assert "## changed (1)" in out and "## regressed" not in out and "direction unknown" in out
    rows = json.loads((tmp_path / "o1" / "compare.json").read_text())["rows"]
    assert [(r["point_id"], r["metric"], r["verdict"]) for r in rows] == [
        ("p0", "widgets", "changed"),
        ("p1", "widgets", "unchanged"),
    ]
    assert main(["compare", a, b, "--metric", "widgets:lower", "--out", str(tmp_path / "o2")]) == 1
    rows = json.loads((tmp_path / "o2" / "compare.json").read_text())["rows"]
    assert [r["verdict"] for r in rows] == ["regressed", "unchanged"]
    assert main(["compare", a, b, "--metric", "widgets:higher", "--out", str(tmp_path / "o3")]) == 0
    assert "## improved (1)" in capsys.readouterr().out


def test_metric_all_and_nested_names(tmp_path):
    recs = lambda ph: [rec("t", {"phase_s": {"sync": ph * (1 + 0.01 * z)}, "steps": 60}, kind="train") for z in Z]  # noqa: E731
    a = load_records(write(tmp_path / "a.jsonl", recs(1.0)))
    b = load_records(write(tmp_path / "b.jsonl", recs(0.5)))
    assert compare_frames(a, b).empty  # no headline metric here
    t = compare_frames(a, b, metrics="all")
    assert t[["metric", "better", "verdict"]].values.tolist() == [["phase_s.sync", "lower", "improved"]]


def test_a_kind_whose_records_all_failed_is_left_out_not_a_crash(tmp_path):
    """Every collective record failed (or has its metric null): the kernels are still compared
    (an empty selection of the collectives once selected columns instead of rows: KeyError)."""
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0)])
    coll = [rec("c0", {"busbw_bytes_per_s": None}, kind="collective", bench="ring") for _ in Z]
    b_recs = [json.loads(line) for line in Path(kernels(tmp_path / "b.jsonl", [("p0", 2.0)])).read_text().splitlines()]
    b = write(tmp_path / "b2.jsonl", b_recs + coll)
    t = compare_frames(load_records(a), load_records(b), metrics={"kernel": ["time_s"], "collective": ["busbw_bytes_per_s"]})
    assert t[["point_id", "metric", "verdict"]].values.tolist() == [["p0", "time_s", "regressed"]]


def test_history_refuses_a_campaign_given_twice_and_a_file_without_records(tmp_path, capsys):
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0)])
    assert main(["history", a, a]) == 2
    assert "is given twice" in capsys.readouterr().err
    (tmp_path / "manifest.json").write_text(json.dumps({"plan": "p", "points": []}, indent=2))  # as written: no line parses
    assert main(["history", a, str(tmp_path / "manifest.json")]) == 2
    assert "manifest.json: no dlscale record in it" in capsys.readouterr().err


def test_bad_input_exits_2(tmp_path, capsys):
    a = kernels(tmp_path / "a.jsonl", [("p0", 1.0)])
    a2 = kernels(tmp_path / "a2.jsonl", [("p0", 1.0)])
    b = kernels(tmp_path / "b.jsonl", [("q0", 1.0)])
    out = ["--out", str(tmp_path)]
    assert main(["compare", a, a2, "--metric", "no_such_metric"] + out) == 2
    assert "--metric no_such_metric: no record has this metric" in capsys.readouterr().err
    assert main(["compare", a, a2, "--metric", "time_s:up"] + out) == 2
    assert main(["compare", a, b] + out) == 2  # no common point
    assert main(["compare", a, str(tmp_path / "missing.jsonl")] + out) == 2
    capsys.readouterr()
    same = str(tmp_path / ".." / tmp_path.name / "a.jsonl")
    assert main(["compare", a, same, "--out", str(tmp_path / "same")]) == 0  # an identity check, said to be one
    assert "A and B are the same campaign" in capsys.readouterr().err
    for bad, says in ((["--alpha", "5"], "--alpha 5: expected (0, 1)"), (["--effect", "-1"], "--effect -1: expected >= 0")):
        assert main(["compare", a, a2, *bad] + out) == 2
        assert says in capsys.readouterr().err
        assert main(["history", a, a2, *bad]) == 2
        assert says in capsys.readouterr().err
    assert not (tmp_path / "compare.json").exists()


def test_auto_threshold_learns_the_noise_from_the_baseline(tmp_path):
    def pair(cv, n, change):
        rnd = random.Random(1)
        zs = [rnd.gauss(0, 1) for _ in range(n)]
        mk = lambda f: pd.DataFrame(  # noqa: E731
            [
                {
                    "point_id": "p",
                    "kind": "kernel",
                    "benchmark": "gemm",
                    "metric": "time_s",
                    "better": "lower",
                    "value": f * (1 + cv * z),
                }
                for z in zs
            ]
        )
        return mk(1.0), mk(1.0 + change)

    noisy_a, noisy_b = pair(0.10, 100, 0.05)  # 10 % spread, 5 % slower
    assert compare.compare_samples(noisy_a, noisy_b, effect=0.04)["verdict"].iloc[0] == "regressed"  # a fixed effect calls it
    r = compare.compare_samples(noisy_a, noisy_b, auto_threshold=True).iloc[0]
    assert r["verdict"] == "unchanged" and r["threshold_from"] == "auto 3 x CV"
    assert r["threshold"] == pytest.approx(3 * r["cv_a"]) and 0.25 < r["threshold"] < 0.35
    quiet_a, quiet_b = pair(0.005, 5, 0.05)  # 0.5 % spread: learned 1.5 %, above the 1 % floor
    r = compare.compare_samples(quiet_a, quiet_b, auto_threshold=True).iloc[0]
    assert r["verdict"] == "regressed" and r["threshold"] < 0.02
    assert (
        compare.compare_samples(quiet_a, quiet_b.assign(value=quiet_b["value"] / 1.05 * 1.012), auto_threshold=True)[
            "verdict"
        ].iloc[0]
        == "unchanged"
    )  # 1.2 % is under the learned 1.5 %
    one = compare.compare_samples(quiet_a.head(1), quiet_b, auto_threshold=True, effect=0.07).iloc[0]
    assert one["threshold"] == 0.07 and "one baseline sample" in one["threshold_from"]


def test_compare_writes_json_csv_markdown_beside_the_table(tmp_path, capsys):
    kernels(tmp_path / "A" / "records.jsonl", [("p0", 1.0), ("p1", 2.0)])
    kernels(tmp_path / "B" / "records.jsonl", [("p0", 1.25), ("p1", 2.0)])
    assert main(["compare", str(tmp_path / "A"), str(tmp_path / "B"), "--auto-threshold"]) == 1
    out = tmp_path / "B" / "analysis"  # the default: B's analysis folder
    assert f"results: {out}/compare.json" in capsys.readouterr().out
    j = json.loads((out / "compare.json").read_text())
    assert j["summary"] == {"verdicts": {"regressed": 2, "unchanged": 2}, "rows": 4}
    assert j["exit_code"] == 1 and j["exit_codes"]["1"] == "a regression"
    assert j["a"] == str(tmp_path / "A") and j["thresholds"]["auto_threshold"] is True and j["thresholds"]["auto_k"] == 3
    assert {r["verdict"] for r in j["rows"] if r["point_id"] == "p0"} == {"regressed"}
    assert all(r["threshold_from"] == "auto 3 x CV" for r in j["rows"])
    assert len(pd.read_csv(out / "compare.csv")) == 4
    assert (out / "compare.md").read_text().startswith("| point_id | kind | benchmark | label | metric |")


def test_extra_sample_rows_are_judged_by_the_same_judge(tmp_path, monkeypatch):
    def derived(df):  # a derived metric, one row per record, as derived.py provides them
        return pd.DataFrame(
            {"point_id": df["point_id"], "kind": df["kind"], "benchmark": df["benchmark"], "metric": "efficiency"}
            | {"better": "higher", "value": 1 / df["metrics.time_s"]}
        )

    monkeypatch.setattr(compare, "SAMPLE_SOURCES", [derived])
    a = load_records(kernels(tmp_path / "a.jsonl", [("p0", 1.0)]))
    b = load_records(kernels(tmp_path / "b.jsonl", [("p0", 1.25)]))
    t = compare_frames(a, b, metrics=["efficiency"])
    assert t[["metric", "verdict"]].values.tolist() == [["efficiency", "regressed"]]
    assert set(compare_frames(a, b, metrics="all")["metric"]) == {"efficiency", "gflop_per_s", "time_s"}


def _campaign(folder, start, t0):
    return kernels(folder / "records.jsonl", [("p0", t0), ("p1", 1.0)], start=start)


def test_history_orders_campaigns_by_time_and_marks_the_change(tmp_path, capsys):
    # in time: c1 (day 1), c2 (day 2, p0 25 % slower), c3 (day 3, as c2); given out of order
    _campaign(tmp_path / "c2", "2024-05-02T10:00:00Z", 1.25)
    _campaign(tmp_path / "c3", "2024-05-03T10:00:00Z", 1.25)
    _campaign(tmp_path / "c1", "2024-05-01T10:00:00Z", 1.0)
    dirs = [str(tmp_path / c) for c in ("c3", "c1", "c2")]
    assert main(["history", *dirs, "--out", str(tmp_path / "h")]) == 0
    t = pd.read_csv(tmp_path / "h" / "history.csv", keep_default_na=False)
    p0 = t[t["point_id"] == "p0"]
    assert p0["campaign"].tolist() == ["c1", "c2", "c3"] and (t["metric"] == "gflop_per_s").all()
    assert p0["change"].tolist() == ["", "regressed", ""]
    assert (t[t["point_id"] == "p1"]["change"] == "").all()
    assert p0["mean"].tolist()[1] == pytest.approx(p0["mean"].tolist()[0] / 1.25, rel=2e-3)
    j = json.loads((tmp_path / "h" / "history.json").read_text())
    assert j["ordered_by"] == "time" and [c["name"] for c in j["campaigns"]] == ["c1", "c2", "c3"] and j["changes"] == 1
    png = (tmp_path / "h" / "history.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    assert sorted(p.name for p in (tmp_path / "h").iterdir()) == [f"history.{x}" for x in ("csv", "json", "md", "png")]
    out = capsys.readouterr().out
    assert re.search(r"\n \* c2 .*-20\.\d% vs c1: regressed\n", out) and "beside other work" not in out
    # c2's p0 measured beside 0.8 cores of other work: the change stands and is marked
    recs = [json.loads(line) for line in (tmp_path / "c2" / "records.jsonl").read_text().splitlines()]
    for r in recs:
        r["harness_host"] = {"cpus": 2, "own_cores": 1, "other_cores": 0.8 if r["point_id"] == "p0" else 0.0, "steal_cores": 0}
    write(tmp_path / "c2" / "records.jsonl", recs)
    assert main(["history", *dirs, "--out", str(tmp_path / "h")]) == 0
    t = pd.read_csv(tmp_path / "h" / "history.csv")
    assert t[(t["point_id"] == "p0") & (t["campaign"] == "c2")]["beside"].tolist() == [0.8]
    assert t[(t["point_id"] == "p1") & (t["campaign"] == "c2")]["beside"].tolist() == [0.0]
    assert re.search(r"\n \* c2 .*vs c1: regressed  measured beside other work \(0\.80 cores\)\n", capsys.readouterr().out)


def test_history_without_times_keeps_the_order_given(tmp_path, capsys):
    _campaign(tmp_path / "x", None, 1.0)
    _campaign(tmp_path / "y", "2024-05-01T10:00:00Z", 2.0)
    _campaign(tmp_path / "z", "2023-05-01T10:00:00Z", 2.0)
    out = ["--out", str(tmp_path / "h"), "--metric", "time_s"]
    assert main(["history", str(tmp_path / "y"), str(tmp_path / "x"), str(tmp_path / "z")] + out) == 0
    assert "in the order given (some campaign has no start_time)" in capsys.readouterr().out
    t = pd.read_csv(tmp_path / "h" / "history.csv", keep_default_na=False)
    assert t[t["point_id"] == "p0"][["campaign", "change"]].values.tolist() == [["y", ""], ["x", "improved"], ["z", "regressed"]]
    assert main(["history", str(tmp_path / "y")] + out) == 2  # one campaign is no history


def _sample(tmp_path, name, means, sd, n, seed, provenance=None):
    rnd = random.Random(seed)
    recs = []
    for k, mu in enumerate(means):
        for _ in range(n):
            recs.append(
                rec(
                    f"pt{k}",
                    {"ranks": 1, "images_per_s": rnd.gauss(mu, sd)},
                    kind="train",
                    bench=f"m{k}",
                    provenance=provenance or {"blas": "openblas 0.3.21", "compiler": "gcc 12"},
                    params={"model": f"m{k}", "ranks": 1},
                )
            )
    return write(tmp_path / name, recs)


def test_compare_finds_a_planted_ten_percent_regression(tmp_path):
    means = [100.0 + 10 * k for k in range(20)]
    a = load_records(_sample(tmp_path, "a.jsonl", means, 2.0, 5, 1))
    slowed = [m * (0.9 if k == 7 else 1.0) for k, m in enumerate(means)]  # point 7 loses 10 %
    b = load_records(_sample(tmp_path, "b.jsonl", slowed, 2.0, 5, 2))
    t = compare_frames(a, b)
    ips = t[t["metric"] == "images_per_s"]
    assert ips[ips["verdict"] == "regressed"]["point_id"].tolist() == ["pt7"]
    assert (ips[ips["point_id"] != "pt7"]["verdict"] == "unchanged").all()
    assert ips[ips["point_id"] == "pt7"]["change"].iloc[0] == pytest.approx(-0.1, abs=0.03)


def test_compare_raises_no_alarm_on_the_same_distribution(tmp_path):
    means = [100.0 + 10 * k for k in range(20)]
    for seed in range(5):  # five pairs of campaigns drawn from one distribution
        a = load_records(_sample(tmp_path, f"a{seed}.jsonl", means, 2.0, 5, 100 + seed))
        b = load_records(_sample(tmp_path, f"b{seed}.jsonl", means, 2.0, 5, 200 + seed))
        assert (compare_frames(a, b)["verdict"] == "unchanged").all()


def test_compare_command_exit_status_and_provenance(tmp_path, capsys):
    a = _sample(tmp_path, "a.jsonl", [100.0], 1.0, 4, 1)
    b = _sample(tmp_path, "b.jsonl", [80.0], 1.0, 4, 2, provenance={"blas": "reference 3.11", "compiler": "gcc 12"})
    assert main(["compare", a, b, "--out", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "## regressed" in out and re.search(r"-(19|20|21)\.\d%", out), out
    assert "blas: 'openblas 0.3.21' -> 'reference 3.11'" in out
    assert "compiler" not in out.split("## provenance differences")[1]
    assert main(["compare", a, a, "--out", str(tmp_path)]) == 0


def _train_campaign(folder, rate_2rank):
    """1 and 2 ranks, three repeats each, as a campaign folder (manifest with the axes)."""
    folder.mkdir()
    points, recs = [], []
    for ranks, rate in ((1, 100.0), (2, rate_2rank)):
        for r in range(3):
            hp = f"r{ranks}x{r}"
            points.append({"id": hp, "experiment": "train", "assignment": {"ranks_per_node": str(ranks)}, "repeat": r})
            x = rec(f"t{ranks}", {"images_per_s": rate + r - 1, "ranks": ranks}, kind="train", bench="m", params={"ranks": ranks})
            recs.append({**x, "harness_point": hp})
    (folder / "manifest.json").write_text(json.dumps({"points": points}))
    write(folder / "records.jsonl", recs)
    return str(folder)


def test_a_derived_efficiency_is_compared(tmp_path, capsys):
    """The 2-rank throughput falls from 190 to 150 (efficiency 0.95 -> 0.75) while the 1-rank one
    stays: compare --metric efficiency calls the 2-rank point regressed and the base unchanged."""
    a = _train_campaign(tmp_path / "a", 190.0)
    b = _train_campaign(tmp_path / "b", 150.0)
    assert main(["compare", a, b, "--metric", "efficiency", "--out", str(tmp_path / "o")]) == 1
    rows = json.loads((tmp_path / "o" / "compare.json").read_text())["rows"]
    eff = {r["point_id"]: r for r in rows if r["metric"] == "efficiency"}
    assert eff["t2"]["verdict"] == "regressed" and abs(eff["t2"]["mean_a"] - 0.95) < 1e-9, eff
    assert abs(eff["t2"]["mean_b"] - 0.75) < 1e-9 and eff["t1"]["verdict"] == "unchanged", eff
