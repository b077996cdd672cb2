"""Convolution efficiency per layer and per network (kernel_efficiency*.csv of `tables`) on
records whose FLOPs and times give round answers worked out by hand here."""

import json
import math

import pandas as pd
import pytest

from dlsanalysis import load_records
from dlsanalysis.__main__ import main
from dlsanalysis.kernel_efficiency import kernel_efficiency_tables

DIRS = ("conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_filter")


def rec(op, backend, shape, flop, t, name=None, threads=2, check="passed", status="ok"):
    m = {"op": op, "backend": backend, "shape": shape, "threads": threads, "flop": flop, "time_s": t}
    m["gflop_per_s"] = flop / t * 1e-9
    params = {"op": op, "backend": backend, "threads": threads, "shape_params": {} if name is None else {"name": name}}
    return {
        "schema": "dlscale.record/1",
        "kind": "kernel",
        "benchmark": op,
        "params": params,
        "point_id": f"{op}{backend}{shape}{threads}",
        "metrics": m,
        "check": {"status": check},
        "status": status,
        "error": "",
    }


def conv(backend, name, flop_per_dir, times, **kw):
    """The three directions of one layer, each of flop_per_dir FLOPs, in times (fwd, bwd_data, bwd_filter)."""
    return [rec(op, backend, f"shape_{name}", flop_per_dir, t, name, **kw) for op, t in zip(DIRS, times, strict=True)]


def gemm(backend, shape, gflops, **kw):
    return rec("gemm", backend, shape, 2e9, 2e9 / (gflops * 1e9), **kw)


# a: 3e9 FLOPs once; openblas 1 s (3 GFLOP/s), onednn 0.3 s (10 GFLOP/s)
# b: 6e9 FLOPs, three times in the network; openblas 3 s (2 GFLOP/s), onednn 1.5 s (4 GFLOP/s)
# the reference: OpenBLAS sgemm 2048^3 at 6 GFLOP/s (oneDNN's 20 and a 1024^3 at 50 are not it)
NET = [
    *conv("openblas", "net:a*1", 1e9, (0.5, 0.25, 0.25)),
    *conv("onednn", "net:a*1", 1e9, (0.1, 0.1, 0.1)),
    *conv("openblas", "net:b*3", 2e9, (1.0, 1.0, 1.0)),
    *conv("onednn", "net:b*3", 2e9, (0.5, 0.5, 0.5)),
    gemm("openblas", "2048x2048x2048", 6.0),
    gemm("onednn", "2048x2048x2048", 20.0),
    gemm("openblas", "1024x1024x1024", 50.0),
]


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def tables(tmp_path, records, **kw):
    return kernel_efficiency_tables(load_records(write(tmp_path / "r.jsonl", records)), **kw)


def test_tables_writes_per_layer_and_count_weighted_network_efficiency(tmp_path):
    write(tmp_path / "records.jsonl", NET)
    assert main(["tables", str(tmp_path)]) == 0
    out = tmp_path / "analysis"
    assert (out / "kernel_efficiency.md").read_text().startswith("| threads | model | layer | count |")
    layers = pd.read_csv(out / "kernel_efficiency.csv").set_index("layer")
    a, b = layers.loc["a"], layers.loc["b"]
    assert (a["model"], a["count"], b["count"], a["threads"]) == ("net", 1, 3, 2)
    assert a["openblas_gflop_per_s"] == pytest.approx(3.0) and a["onednn_gflop_per_s"] == pytest.approx(10.0)
    assert a["sgemm_gflop_per_s"] == pytest.approx(6.0)
    assert a["openblas_vs_sgemm"] == pytest.approx(0.5) and a["onednn_vs_sgemm"] == pytest.approx(10 / 6)
    assert a["openblas_vs_onednn"] == pytest.approx(0.3)
    assert b["openblas_gflop_per_s"] == pytest.approx(2.0) and b["openblas_vs_onednn"] == pytest.approx(0.5)
    net = pd.read_csv(out / "kernel_efficiency_models.csv").iloc[0]
    assert (net["model"], net["layers"], net["instances"]) == ("net", 2, 4)
    # weighted by count: (3e9 + 3 * 6e9) / (1 + 3 * 3) s; not (3 + 2) / 2, not 9e9 / 4 s
    assert net["openblas_gflop_per_s"] == pytest.approx(2.1)
    assert net["onednn_gflop_per_s"] == pytest.approx(21.0 / 4.8)  # (0.3 + 3 * 1.5) s
    assert net["openblas_vs_sgemm"] == pytest.approx(0.35)
    assert net["openblas_vs_onednn"] == pytest.approx(2.1 / (21.0 / 4.8))


def test_reference_shape_is_a_parameter_and_repeats_take_the_median(tmp_path):
    repeats = [r for r in NET if r["params"]["shape_params"].get("name") != "net:b*3"]
    repeats += conv("openblas", "net:a*1", 1e9, (0.5, 0.25, 4.0))  # a second and a third timing of a
    repeats += conv("openblas", "net:a*1", 1e9, (0.5, 0.25, 0.25))
    layers, models = tables(tmp_path, repeats, gemm_shape="1024x1024x1024")
    a = layers.iloc[0]
    assert a["openblas_gflop_per_s"] == pytest.approx(3.0)  # median bwd_filter 0.25 s, not the mean 1.5 s
    assert a["sgemm_gflop_per_s"] == pytest.approx(50.0) and a["openblas_vs_sgemm"] == pytest.approx(0.06)
    assert len(layers) == 1 and models.iloc[0]["instances"] == 1


def test_a_reference_shape_no_record_has_is_said(tmp_path, capsys):
    layers, _ = tables(tmp_path, NET, gemm_shape="abc")
    assert layers["openblas_vs_sgemm"].isna().all()
    assert "no OpenBLAS sgemm record of a shape starting 'abc' (--gemm-shape)" in capsys.readouterr().err
    tables(tmp_path, NET)
    assert "no OpenBLAS sgemm record" not in capsys.readouterr().err


def test_a_backend_missing_a_direction_has_no_rate_and_no_invented_ratio(tmp_path):
    recs = [*conv("openblas", "net:a*1", 1e9, (0.5, 0.25, 0.25)), *conv("openblas", "net:b*3", 2e9, (1, 1, 1))]
    recs += conv("onednn", "net:a*1", 1e9, (0.1, 0.1, 0.1)) + conv("onednn", "net:b*3", 2e9, (0.5, 0.5, 0.5))[:2]
    layers, models = tables(tmp_path, recs)
    b = layers.set_index("layer").loc["b"]
    assert math.isnan(b["onednn_gflop_per_s"]) and math.isnan(b["openblas_vs_onednn"])
    assert math.isnan(b["sgemm_gflop_per_s"]) and math.isnan(b["openblas_vs_sgemm"])  # no sgemm timed
    net = models.iloc[0]
    assert net["openblas_gflop_per_s"] == pytest.approx(2.1)
    assert net["onednn_gflop_per_s"] == pytest.approx(10.0)  # over layer a only, the one oneDNN timed whole


def test_unnamed_convolutions_are_one_layer_of_the_model_named_nothing(tmp_path):
    layers, models = tables(tmp_path, conv("openblas", None, 1e9, (1.0, 1.0, 1.0)))
    r = layers.iloc[0]
    assert (r["model"], r["layer"], r["count"], r["shape"]) == ("", "", 1, "shape_None")
    assert r["openblas_gflop_per_s"] == pytest.approx(1.0) and math.isnan(r["onednn_gflop_per_s"])


def test_an_ok_record_whose_check_failed_is_refused(tmp_path, capsys):
    bad = conv("onednn", "net:c*1", 1e9, (1.0, 1.0, 1.0), check="failed")
    with pytest.raises(ValueError, match=r"r\.jsonl:\d+: refusing a record whose check failed: conv2d_fwd onednn"):
        tables(tmp_path, NET + bad)
    write(tmp_path / "records.jsonl", NET + bad)
    assert main(["tables", str(tmp_path)]) == 2
    assert "refusing a record whose check failed" in capsys.readouterr().err
    assert not (tmp_path / "analysis" / "kernel_efficiency.csv").exists()
    # a record the harness marked failed is left out, not refused
    failed = conv("onednn", "net:c*1", 1e9, (1.0, 1.0, 1.0), check="failed", status="failed")
    layers, _ = tables(tmp_path, NET + failed)
    assert list(layers["layer"]) == ["a", "b"]


def test_a_campaign_without_convolutions_writes_no_kernel_efficiency_table(tmp_path):
    write(tmp_path / "records.jsonl", [gemm("openblas", "2048x2048x2048", 6.0), gemm("onednn", "2048x2048x2048", 20.0)])
    assert main(["tables", str(tmp_path)]) == 0
    out = tmp_path / "analysis"
    assert (out / "kernels.csv").exists()
    assert not list(out.glob("kernel_efficiency*"))
    layers, models = tables(tmp_path, [gemm("openblas", "2048x2048x2048", 6.0)])
    assert layers.empty and models.empty
