"""The analysis on small record fixtures whose answers are worked out by hand here."""

import json
import math
import re

import pytest

from dlsanalysis import RecordError, aggregate, breakdown_table, load_campaign, load_records, scaling_table, speedup_table


def rec(ranks, ips, epoch_t=None, n_target=None, phases=None, status="ok", model="m", hp=None):
    m = {
        "ranks": ranks,
        "images_per_s": ips,
        "phase_s": phases or {p: 0.0 for p in ("input", "forward", "backward", "update", "sync")},
    }
    if epoch_t is not None:
        m["epoch_time_s"] = epoch_t
    if n_target is not None:
        m["epochs_to_target"] = n_target
        m["time_to_target_s"] = epoch_t * n_target
    r = {
        "schema": "dlscale.record/1",
        "kind": "train",
        "benchmark": model,
        "params": {"model": model, "ranks": ranks},
        "point_id": f"{model}{ranks}",
        "metrics": m,
        "status": status,
        "error": "",
    }
    if hp:
        r["harness_point"] = hp
    return r


def write(tmp_path, records, name="records.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(p)


def test_weak_scaling_efficiency_by_hand(tmp_path):
    # X(1) = 100 (repeats 90, 110), X(2) = 180, X(4) = 320 (repeats 300, 340); a failed record is ignored
    path = write(tmp_path, [rec(1, 90), rec(1, 110), rec(2, 180), rec(4, 300), rec(4, 340), rec(4, 1, status="failed")])
    t = scaling_table(load_records(path))
    assert list(t["ranks"]) == [1, 2, 4]
    assert list(t["n"]) == [2, 1, 2]
    assert t["efficiency"].tolist() == pytest.approx([1.0, 0.9, 0.8])  # 180/(2*100), 320/(4*100)
    assert (t["base_ranks"] == 1).all()
    # mean 100, std sqrt(200) = 14.142..., 95 % CI half-width t(0.975, 1) * 14.142 / sqrt 2 = 12.706 * 10
    r1 = t[t["ranks"] == 1].iloc[0]
    assert r1["std"] == pytest.approx(math.sqrt(200))
    assert r1["ci_high"] - r1["mean"] == pytest.approx(127.062047, rel=1e-6)


def test_efficiency_base_is_the_smallest_scale(tmp_path):
    path = write(tmp_path, [rec(2, 200), rec(8, 600)])
    t = scaling_table(load_records(path))
    assert t["efficiency"].tolist() == pytest.approx([1.0, 0.75])  # (600/200)/(8/2)
    assert (t["base_ranks"] == 2).all()


def test_per_epoch_and_learning_speedup_by_hand(tmp_path):
    # seed 004: S_p = t_s / t_p, S_L = (t_s N_s) / (t_p N_p); 1 rank: 70 s x 4 epochs; 2 ranks: 35 s x 6
    path = write(tmp_path, [rec(1, 1, epoch_t=70.0, n_target=4), rec(2, 2, epoch_t=35.0, n_target=6)])
    t = speedup_table(load_records(path))
    two = t[t["ranks"] == 2].iloc[0]
    assert two["per_epoch_speedup"] == pytest.approx(2.0)
    assert two["learning_speedup"] == pytest.approx(280.0 / 210.0)
    assert two["time_to_target_speedup"] == pytest.approx(280.0 / 210.0)


def test_breakdown_shares_by_hand(tmp_path):
    ph = {"input": 0.1, "forward": 0.3, "backward": 0.5, "update": 0.05, "sync": 0.05}
    path = write(tmp_path, [rec(1, 1, phases=ph)])
    b = breakdown_table(load_records(path)).iloc[0]
    assert b["backward_share"] == pytest.approx(0.5)
    assert b["forward_share"] == pytest.approx(0.3)
    assert sum(b[f"{p}_share"] for p in ("input", "forward", "backward", "update", "sync")) == pytest.approx(1.0)


def test_aggregate_single_value_has_no_interval(tmp_path):
    import pandas as pd

    a = aggregate(pd.DataFrame({"g": ["x"], "v": [3.0]}), ["g"], "v").iloc[0]
    assert a["n"] == 1 and a["mean"] == 3.0 and a["std"] == 0.0 and math.isnan(a["ci_low"])


def test_campaign_adds_experiment_and_axes(tmp_path):
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "points": [
                    {"id": "p1", "experiment": "weak", "assignment": {"ranks_per_node": "1"}, "repeat": 0},
                    {"id": "p2", "experiment": "weak", "assignment": {"ranks_per_node": "2"}, "repeat": 1},
                ]
            }
        )
    )
    write(tmp_path, [rec(1, 100, hp="p1"), rec(2, 190, hp="p2")])
    df = load_campaign(str(tmp_path))
    assert df["experiment"].tolist() == ["weak", "weak"]
    assert df["axis.ranks_per_node"].tolist() == ["1", "2"]
    assert df["repeat"].tolist() == [0, 1]


@pytest.mark.parametrize(
    "manifest",
    [
        "[1, 2]",
        '{"points": "x"}',
        '{"points": [1]}',
        '{"points": [{"experiment": "e"}]}',
        '{"points": [{"id": ["x"]}]}',
        '{"points": [{"id": "p1", "assignment": ["x"]}]}',
        '{"points": [{"id": "p1", "assignment": {"nodes": [1]}}]}',
        '{"points": [], "provenance": "x"}',
        '{"points": [], "measured_node_peak": [1]}',
    ],
)
def test_a_manifest_of_another_shape_is_refused_naming_it(tmp_path, manifest):
    (tmp_path / "manifest.json").write_text(manifest)
    write(tmp_path, [rec(1, 100, hp="p1")])
    with pytest.raises(RecordError, match="manifest.json: not a campaign manifest"):
        load_campaign(str(tmp_path))


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("images_per_s", "fast", "metrics.images_per_s: expected a finite number, got 'fast'"),
        ("ranks", True, "metrics.ranks: expected a finite number, got True"),
        ("images_per_s", 10**400, "metrics.images_per_s: expected a finite number, got 1000"),
        ("phase_s", "x", "metrics.phase_s: expected seconds by phase, got 'x'"),
        ("phase_s", {"forward": "slow"}, "metrics.phase_s: expected seconds by phase"),
        ("phase_s", {"forward": -0.1}, "metrics.phase_s: expected seconds by phase"),
        ("step_time_s", -1.0, "metrics.step_time_s: a time cannot be negative, got -1.0"),
        ("layer_s", {"conv1": {"forward_s": "x"}}, "metrics.layer_s: expected {layer: {type, forward_s, backward_s}}"),
        ("algo", ["ring"], "metrics.algo: expected a single value, got ['ring']"),
        ("params.model", ["x"], "params.model: expected a single value, got ['x']"),
        ("harness_point", {"a": 1}, "harness_point: expected a single value"),
        ("provenance", [1], "provenance: expected a mapping, got [1]"),
    ],
)
def test_a_metric_of_another_type_names_file_line_and_key(tmp_path, key, value, says):
    bad = rec(2, 190)
    if key.startswith("params."):
        bad["params"][key[len("params.") :]] = value
    elif key in ("harness_point", "provenance"):
        bad[key] = value
    else:
        bad["metrics"][key] = value
    with pytest.raises(RecordError, match=f"r.jsonl:2: {re.escape(says)}"):
        load_records(write(tmp_path, [rec(1, 100), bad], "r.jsonl"))


def test_a_number_that_overflows_a_double_is_refused(tmp_path):
    """1e400 is valid JSON and reads as infinity: compare called it '916 -> inf'."""
    p = write(tmp_path, [rec(1, 100)], "r.jsonl")
    with open(p, "a") as f:
        f.write(json.dumps(rec(2, 190)).replace('"images_per_s": 190', '"images_per_s": 1e400') + "\n")
    with pytest.raises(RecordError, match=re.escape("r.jsonl:2: metrics.images_per_s: expected a finite number, got inf")):
        load_records(p)


def test_objects_that_are_not_records_name_file_and_line(tmp_path):
    p = tmp_path / "r.jsonl"
    p.write_text('{"schema": "dlscale.record/1", "kind": "train"}\n')
    with pytest.raises(RecordError, match="r.jsonl:1: not a dlscale record: missing benchmark, params, metrics, status"):
        load_records(str(p))


@pytest.mark.parametrize("torn", ['{"schema": "dlscale.record/1"', "[1, 2]", "\x00\x00garbage"])
def test_torn_lines_are_skipped_and_named_as_the_cpp_reader_does(tmp_path, capsys, torn):
    p = tmp_path / "r.jsonl"
    good = json.dumps(rec(1, 100))
    p.write_text(f"{good}\n{torn}\n{good}\n{torn}")  # one torn line inside, one torn tail
    df = load_records(str(p))
    assert len(df) == 2 and df["line"].tolist() == [1, 3]
    n = len(torn.encode())
    expected = [f"{p}:2: torn or unreadable line ({n} bytes) skipped", f"{p}:4: torn or unreadable line ({n} bytes) skipped"]
    assert df.attrs["warnings"] == expected
    assert capsys.readouterr().err.splitlines() == [f"dlsanalysis: {w}" for w in expected]


def test_a_merge_cut_short_is_ignored_and_a_second_copy_is_not_counted(tmp_path, capsys):
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {"points": [{"id": "a", "experiment": "e", "assignment": {}}, {"id": "b", "experiment": "e", "assignment": {}}]}
        )
    )
    tag = lambda t, n: {"token": t, "lines": n}  # noqa: E731
    lines = [
        dict(rec(1, 10, hp="a"), harness_merge=tag("t1", 2)),  # a's first merge, cut short
        dict(rec(1, 11, hp="a"), harness_merge=tag("t2", 2)),  # a merged again, whole
        dict(rec(2, 12, hp="a"), harness_merge=tag("t2", 2)),
        dict(rec(1, 13, hp="b"), harness_merge=tag("t3", 1)),  # b, whole
        dict(rec(1, 14, hp="b"), harness_merge=tag("t4", 1)),
    ]  # b again: not counted
    write(tmp_path, lines)
    df = load_campaign(str(tmp_path))
    assert df["metrics.images_per_s"].tolist() == [11, 12, 13]
    assert df.attrs["warnings"] == [
        f"{tmp_path}/records.jsonl: point a: a merge cut short (1 of 2 lines) is ignored",
        f"{tmp_path}/records.jsonl: point b was merged more than once; the first copy counts",
    ]


def test_mixed_schemas_are_refused(tmp_path):
    good = rec(1, 1)
    other = dict(good, schema="dlscale.record/2")
    path = write(tmp_path, [good, other], name="mixed.jsonl")
    with pytest.raises(RecordError, match=r"mixed.jsonl:2: schema 'dlscale.record/2'"):
        load_records(path)


def test_tables_command_writes_csv_and_markdown(tmp_path, capsys):
    from dlsanalysis.__main__ import main

    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {"points": [{"id": "a", "experiment": "weak", "assignment": {}}, {"id": "b", "experiment": "weak", "assignment": {}}]}
        )
    )
    write(tmp_path, [rec(1, 100, epoch_t=10.0, hp="a"), rec(2, 150, epoch_t=6.0, hp="b")])
    assert main(["tables", str(tmp_path)]) == 0
    for name in ("scaling", "breakdown", "speedup"):
        assert (tmp_path / "analysis" / f"{name}.csv").exists()
    for name in ("scaling", "breakdown"):  # real PNGs with something drawn
        png = (tmp_path / "analysis" / f"{name}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10000
    md = (tmp_path / "analysis" / "scaling.md").read_text().splitlines()
    assert md[0].startswith("| experiment | params.model | ranks |")
    assert md[3].endswith("| 0.75 |")  # 150 / (2 x 100)
    (tmp_path / "records.jsonl").write_text('{"schema": "dlscale.record/1"}\n')
    assert main(["tables", str(tmp_path)]) == 2
    assert "records.jsonl:1: not a dlscale record: missing kind" in capsys.readouterr().err


@pytest.mark.parametrize(
    "text, unit, want",
    [("10 GB/s", "B/s", 1e10), ("1.3 us", "s", 1.3e-6), ("64 GiB", "B", 64 * 2**30), ("25", "B/s", 25.0), (600, "s", 600.0)],
)
def test_a_quantity_reads_as_the_site_reader_reads_it(text, unit, want):
    from dlsanalysis.derived import quantity

    assert quantity(text, unit) == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("text", ["nan", float("nan"), "-5", -5, "1e400", float("inf"), "12 GB", "fast", True])
def test_a_quantity_that_is_not_finite_non_negative_or_in_its_unit_is_refused(text):
    from dlsanalysis.derived import quantity

    with pytest.raises(ValueError, match=re.escape(f"'{text}'")):
        quantity(text, "B/s")
