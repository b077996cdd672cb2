"""The stored-campaign comparison (golden.py) finds what a refactoring must not change and lets
pass what the clock decides."""

import copy
import json
import shutil
from pathlib import Path

import golden
import pytest

STORED = Path(__file__).parent / "golden" / "smoke"


@pytest.fixture
def campaign(tmp_path):
    """A copy of the stored campaign, to be changed by each test."""
    dst = tmp_path / "campaign"
    shutil.copytree(STORED, dst)
    return dst


def records(d: Path) -> list[dict]:
    return [json.loads(line) for line in (d / "records.jsonl").read_text().splitlines()]


def rewrite(d: Path, recs: list[dict]) -> None:
    (d / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))


def train_record(recs: list[dict]) -> dict:
    return next(r for r in recs if r["kind"] == "train")


def test_the_stored_campaign_equals_itself(campaign):
    assert golden.compare(STORED, campaign) == []


def test_times_rates_and_timed_choices_may_change(campaign):
    recs = records(campaign)
    t = train_record(recs)
    m = t["metrics"]
    m["images_per_s"] *= 3
    m["phase_s"]["forward"] *= 2
    m["epochs"][0]["time_s"] += 1
    m["allreduce"] = "ring" if m.get("allreduce") != "ring" else "tree"
    t["provenance"] = {"host": "elsewhere"}
    t["counters"] = {"PAPI_TOT_CYC": 5}
    rewrite(campaign, recs)
    assert golden.compare(STORED, campaign) == []


def test_a_changed_parameter_is_found(campaign):
    recs = records(campaign)
    train_record(recs)["params"]["batch_per_rank"] = 31
    rewrite(campaign, recs)
    found = golden.compare(STORED, campaign)
    assert len(found) == 1 and "params.batch_per_rank: 32 stored, 31 now" in found[0]


def test_a_changed_loss_or_count_is_found(campaign):
    recs = records(campaign)
    m = train_record(recs)["metrics"]
    m["epochs"][0]["train_loss"] *= 1.01
    m["parameters"] += 1
    rewrite(campaign, recs)
    found = golden.compare(STORED, campaign)
    assert any("train_loss" in f for f in found) and any("parameters" in f for f in found), found


def test_a_missing_record_or_metric_is_found(campaign):
    recs = records(campaign)
    gone = copy.deepcopy(recs[0])
    del train_record(recs)["metrics"]["phase_s"]["sync"]
    rewrite(campaign, recs[1:])
    found = golden.compare(STORED, campaign)
    key = f"record {gone['kind']}/{gone['benchmark']}/{gone['point_id']}/{gone['harness_point']}: missing"
    assert key in found and any(f.endswith("phase_s.sync: missing") for f in found), found


def test_a_changed_status_or_check_is_found(campaign):
    recs = records(campaign)
    recs[0]["check"]["status"] = "failed"
    recs[1]["status"] = "failed"
    rewrite(campaign, recs)
    found = golden.compare(STORED, campaign)
    assert any("check.status" in f for f in found) and any(f.endswith(".status: 'ok' stored, 'failed' now") for f in found)


def test_table_columns_and_row_keys_are_compared(campaign):
    scaling = campaign / "analysis" / "scaling.csv"
    lines = scaling.read_text().splitlines()
    scaling.write_text("\n".join([lines[0], *(line.replace(",2,", ",4,", 1) for line in lines[1:])]) + "\n")
    (campaign / "analysis" / "busbw.csv").write_text("op,algo\nallreduce,ring\n")
    found = golden.compare(STORED, campaign)
    assert any(f.startswith("table scaling.csv: row keys") for f in found), found
    assert any(f.startswith("table busbw.csv: columns") for f in found), found


def test_repeats_are_told_apart_and_a_record_written_twice_is_found(campaign):
    """The smoke plan times its kernels 5 times: the repeats share a point_id and differ by their
    harness point; a record appended twice (one harness point) is still found."""
    recs = records(campaign)
    gemm = [r for r in recs if r["benchmark"] == "gemm" and r["point_id"] == recs[0]["point_id"]]
    assert len({r["harness_point"] for r in gemm}) == len(gemm) >= 2
    rewrite(campaign, [*recs, gemm[0]])
    found = golden.compare(STORED, campaign)
    assert f"record: kernel/gemm/{gemm[0]['point_id']}/{gemm[0]['harness_point']} appears twice" in found, found
