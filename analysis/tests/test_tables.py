"""Kernel, collective, tau, layer-share, time-to-accuracy and reproduction tables on record
fixtures whose answers are worked out by hand here; the HTML report rendered by Chromium."""

import json
import math
import os
import shutil
import subprocess

import numpy as np
import pytest

from dlsanalysis import (
    alpha_beta_table,
    busbw_table,
    fit_alpha_beta,
    kernel_table,
    layer_share_table,
    load_records,
    tau_table,
    time_to_accuracy_table,
)
from dlsanalysis.__main__ import main

PHASES = {p: 0.0 for p in ("input", "forward", "backward", "update", "sync")}


def base(kind, bench, params, metrics, pid, hp=None):
    r = {
        "schema": "dlscale.record/1",
        "kind": kind,
        "benchmark": bench,
        "params": params,
        "point_id": pid,
        "metrics": metrics,
        "status": "ok",
        "error": "",
    }
    if hp:
        r["harness_point"] = hp
    return r


def kernel(op, backend, threads, gf, shape="s", pct=None):
    m = {"op": op, "backend": backend, "shape": shape, "threads": threads, "gflop_per_s": gf, "time_s": 1.0 / gf}
    if pct is not None:
        m["pct_of_peak"] = pct
    return base("kernel", op, {"op": op, "backend": backend, "threads": threads}, m, f"{op}{backend}{threads}")


def coll(algo, ranks, nbytes, t, factor=1.0, hp=None):
    m = {
        "algo": algo,
        "ranks": ranks,
        "bytes": nbytes,
        "time_s": t,
        "algbw_bytes_per_s": nbytes / t,
        "busbw_bytes_per_s": factor * nbytes / t,
        "busbw_factor": factor,
    }
    return base("collective", "allreduce", {"algo": algo, "ranks": ranks, "bytes": nbytes}, m, f"{algo}{ranks}{nbytes}", hp)


def train(model, ranks, ips, params=None, hp=None, **metrics):
    m = {"model": model, "ranks": ranks, "images_per_s": ips, "phase_s": PHASES, "epochs": [], **metrics}
    return base("train", model, {"model": model, **(params or {})}, m, f"{model}{ranks}{json.dumps(params, sort_keys=True)}", hp)


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_kernel_table_percent_of_peak_and_conv_vs_gemm(tmp_path):
    recs = [
        kernel("gemm", "openblas", 2, 190.0, "g", 80),
        kernel("gemm", "openblas", 2, 210.0, "g", 90),
        kernel("gemm", "openblas", 2, 100.0, "small", 40),
        kernel("conv2d_fwd", "openblas", 2, 150.0, "c", 64),
        kernel("conv2d_fwd", "onednn", 2, 230.0, "c", 98),
    ]
    t = kernel_table(load_records(write(tmp_path / "r.jsonl", recs)))
    g = t[(t["op"] == "gemm") & (t["shape"] == "g")].iloc[0]
    assert (g["n"], g["gflop_per_s"], g["pct_of_peak"]) == (2, pytest.approx(200.0), pytest.approx(85.0))
    conv = t[t["op"] == "conv2d_fwd"].set_index("backend")
    assert conv.loc["openblas", "vs_gemm"] == pytest.approx(0.75)  # 150 / the fastest openblas GEMM at 2 threads (200)
    assert math.isnan(conv.loc["onednn", "vs_gemm"])  # no oneDNN GEMM timed: no ratio invented


def test_alpha_beta_fit_recovers_a_known_model():
    n = np.array([8, 1024, 65536, 1 << 20, 1 << 24], dtype=float)
    alpha, bw, worst = fit_alpha_beta(n, 5e-6 + n / 2e9)
    assert alpha == pytest.approx(5e-6, rel=1e-9)
    assert bw == pytest.approx(2e9, rel=1e-9)
    assert worst < 1e-9
    # 10 % noise on the largest size moves the fit but is seen in the residual
    t = 5e-6 + n / 2e9
    t[-1] *= 1.1
    assert fit_alpha_beta(n, t)[2] > 0.03
    with pytest.raises(ValueError, match="two message sizes"):
        fit_alpha_beta([8, 8], [1e-6, 1e-6])


def test_busbw_and_alpha_beta_tables(tmp_path):
    # 4 ranks, allreduce busbw factor 2 (4 - 1) / 4 = 1.5; ring t = 10 us + n / 1e9, repeats at 1 MiB
    sizes = [1024, 1 << 16, 1 << 20]
    recs = [coll("ring", 4, s, 1e-5 + s / 1e9, 1.5) for s in sizes] + [
        coll("ring", 4, 1 << 20, 2 * (1e-5 + (1 << 20) / 1e9), 1.5)
    ]
    recs.append(coll("mpi", 4, 1024, 3e-6, 1.5))  # one size only: no fit
    df = load_records(write(tmp_path / "c.jsonl", recs))
    b = busbw_table(df)
    big = b[(b["algo"] == "ring") & (b["bytes"] == 1 << 20)].iloc[0]
    t1 = 1e-5 + (1 << 20) / 1e9
    assert big["n"] == 2 and big["time_s"] == pytest.approx(1.5 * t1)
    assert big["busbw_bytes_per_s"] == pytest.approx(1.5 * ((1 << 20) / t1 + (1 << 20) / (2 * t1)) / 2)
    f = alpha_beta_table(df)
    assert list(f["algo"]) == ["ring"]
    assert f.iloc[0]["sizes"] == 3
    assert f.iloc[0]["busbw_model_bytes_per_s"] == pytest.approx(1.5 * f.iloc[0]["bandwidth_bytes_per_s"])


def test_shipped_campaigns_make_their_tables(tmp_path):
    """The calibration campaign `dlscale project` ships and the projection check's: kernel records
    of a bandwidth kernel alone (triad: no GFLOP/s) and overlap records (no allreduce time) among
    the collectives are tables' input too, not a refusal or a failed fit."""
    here = os.path.dirname(os.path.abspath(__file__))
    for src in (
        os.path.join(here, "..", "..", "results", "calibration", "localhost"),
        os.path.join(here, "data", "projection_check"),
    ):
        camp = shutil.copytree(src, str(tmp_path / os.path.basename(src)))
        assert main(["tables", camp]) == 0, camp
        assert os.path.getsize(os.path.join(camp, "analysis", "alpha_beta.csv")) > 0


def test_an_out_that_is_a_file_is_refused_naming_out(tmp_path, capsys):
    here = os.path.dirname(os.path.abspath(__file__))
    camp = shutil.copytree(os.path.join(here, "data", "projection_check"), str(tmp_path / "c"))
    out = tmp_path / "a_file"
    out.write_text("kept")
    assert main(["tables", camp, "--out", str(out)]) == 2
    assert f"--out {out}: exists and is not a folder" in capsys.readouterr().err
    assert out.read_text() == "kept"


def test_a_collective_time_of_zero_is_refused_by_name(tmp_path):
    recs = [coll("ring", 2, s, 1e-5 + s / 1e9, 1.0) for s in (1024, 1 << 16, 1 << 20)]
    recs[1]["metrics"]["time_s"] = 0.0
    with pytest.raises(ValueError, match=r"allreduce ring at 65536 bytes: metrics.time_s 0.0 \(expected a time above 0\)"):
        alpha_beta_table(load_records(write(tmp_path / "c.jsonl", recs)))


def test_tau_table_against_ssgd_by_hand(tmp_path):
    ep = lambda loss: [{"epoch": 1.0, "train_loss": 9.0}, {"epoch": 2.0, "train_loss": loss}]  # noqa: E731
    recs = [
        train("m", 2, 100.0, {"scheme": "easgd", "easgd": {"tau": 1, "variant": "sync"}}, epochs=ep(1.5)),
        train("m", 2, 140.0, {"scheme": "easgd", "easgd": {"tau": 4, "variant": "sync"}}, epochs=ep(2.0)),
        train("m", 2, 160.0, {"scheme": "easgd", "easgd": {"tau": 4, "variant": "sync"}}, epochs=ep(3.0)),
        train("m", 2, 200.0, {"scheme": "ssgd"}),
    ]
    t = tau_table(load_records(write(tmp_path / "t.jsonl", recs))).set_index("tau")
    assert t.loc[1, "vs_ssgd"] == pytest.approx(0.5)
    assert t.loc[4, "images_per_s"] == pytest.approx(150.0)
    assert t.loc[4, "vs_ssgd"] == pytest.approx(0.75)
    assert t.loc[4, "final_train_loss"] == pytest.approx(2.5)
    assert t.loc[4, "n"] == 2


def test_layer_shares_by_hand(tmp_path):
    layers = {
        "c1": {"type": "conv2d", "forward_s": 0.2, "backward_s": 0.4},
        "c2": {"type": "conv2d", "forward_s": 0.1, "backward_s": 0.2},
        "fc": {"type": "linear", "forward_s": 0.05, "backward_s": 0.05},
        "r": {"type": "relu", "forward_s": 0.0, "backward_s": 0.0},
    }
    t = layer_share_table(load_records(write(tmp_path / "l.jsonl", [train("vgg16", 1, 1.0, layer_s=layers)]))).iloc[0]
    assert t["conv_forward_share"] == pytest.approx(0.3)
    assert t["conv_backward_share"] == pytest.approx(0.6)
    assert t["fully_connected_share"] == pytest.approx(0.1)
    assert t["other_share"] == pytest.approx(0.0)


def test_time_to_accuracy_counts_runs_that_missed(tmp_path):
    hit = dict(target_reached=True)
    recs = [
        train("m", 1, 1.0, {"target": "accuracy>=0.9"}, time_to_target_s=100.0, epochs_to_target=4.0, **hit),
        train("m", 1, 1.0, {"target": "accuracy>=0.9"}, time_to_target_s=120.0, epochs_to_target=5.0, **hit),
        train("m", 1, 1.0, {"target": "accuracy>=0.9"}, target_reached=False),
    ]
    t = time_to_accuracy_table(load_records(write(tmp_path / "a.jsonl", recs))).iloc[0]
    assert (t["runs"], t["reached"]) == (3, 2)
    assert t["time_to_target_s"] == pytest.approx(110.0)
    assert t["epochs_to_target"] == pytest.approx(4.5)


PUBLISHED = """seed,system,site,figure,model,metric,x_name,x,value,value_high,unit,condition
S,sys,site,Fig. 1,ConvNet-CIFAR10,weak_scaling_efficiency,nodes,2,0.80,,fraction,"about 80 %"
S,sys,site,Fig. 1,ConvNet-CIFAR10,weak_scaling_efficiency,nodes,8,0.80,,fraction,"at 8 nodes"
S,sys,site,Fig. 2,ConvNet-CIFAR10,strong_scaling_efficiency,nodes,2,0.50,,fraction,
S,sys,site,Sec. 3,ResNet-50,parameters,-,-,25559081,,count,
S,sys,site,Sec. 3,ResNet-50,samples_per_s_per_node,nodes,1,148,,samples/s,
S,sys,site,Sec. 4,-,custom_reduction_gain_vs_mpi_allreduce,message,relevant,0.35,,fraction,at least 35 % faster
S,sys,site,Sec. 5,VGG-16,time_share_conv_backward,processes,1,0.62,,fraction,
O,sys,site,Fig. 9,ResNet-50,parameters,-,-,1,,count,
"""


def campaign(tmp_path):
    """A campaign folder with a manifest naming a plan that reproduces seed S."""
    (tmp_path / "plan.yaml").write_text(
        "name: p\nreproduces: {seed: S, figure: x}\nexperiments:\n"
        "  - {name: weak, kind: train, scaling: weak}\n  - {name: strong, kind: train, scaling: strong}\n"
        "  - {name: r50, kind: train}\n  - {name: ar, kind: collectives}\n"
    )
    points = [
        {"id": "w1", "experiment": "weak"},
        {"id": "w2", "experiment": "weak"},
        {"id": "s1", "experiment": "strong"},
        {"id": "s2", "experiment": "strong"},
        {"id": "r", "experiment": "r50"},
        {"id": "a", "experiment": "ar"},
    ]
    (tmp_path / "manifest.json").write_text(
        json.dumps(
            {
                "plan": "p",
                "site": "localhost",
                "plan_file": str(tmp_path / "plan.yaml"),
                "points": points,
                "provenance": {"build": {"compiler": "GNU 12"}},
            }
        )
    )
    # weak: 100 -> 170 img/s at 2 ranks (0.85); strong: 100 -> 120 (0.60); ResNet-50's parameters;
    # allreduce at the largest size: mpi 1.0 ms, ring 0.7 ms (gain 1/0.7 - 1 = 0.43), tree 0.9 ms
    recs = [
        train("cifar10_quick", 1, 100.0, hp="w1"),
        train("cifar10_quick", 2, 170.0, hp="w2"),
        train("cifar10_quick", 1, 100.0, {"batch": 128}, hp="s1"),
        train("cifar10_quick", 2, 120.0, {"batch": 128}, hp="s2"),
        train("resnet50", 1, 5.0, {"width": 1.0}, hp="r", parameters=25559081),
        coll("mpi", 2, 1 << 20, 1e-3, hp="a"),
        coll("ring", 2, 1 << 20, 7e-4, hp="a"),
        coll("tree", 2, 1 << 20, 9e-4, hp="a"),
        coll("mpi", 2, 1024, 1e-6, hp="a"),
        coll("ring", 2, 1024, 5e-6, hp="a"),
    ]
    write(tmp_path / "records.jsonl", recs)
    pub = tmp_path / "published"
    pub.mkdir()
    (pub / "figures.csv").write_text(PUBLISHED)
    return str(tmp_path), str(pub)


def test_reproduce_verdicts_by_hand(tmp_path, capsys):
    camp, pub = campaign(tmp_path)
    assert main(["reproduce", camp, "--published", pub]) == 0
    out = capsys.readouterr().out
    import pandas as pd

    t = pd.read_csv(os.path.join(camp, "analysis", "reproduce.csv"), dtype={"x": str})
    v = {(r["metric"], r["x"]): r for _, r in t.iterrows()}
    assert len(t) == 7  # seed O's row is not this campaign's
    assert v[("weak_scaling_efficiency", "2")]["verdict"] == "reproduced"  # |0.85 - 0.80| <= 0.08
    assert v[("weak_scaling_efficiency", "2")]["measured"] == pytest.approx(0.85)
    assert v[("weak_scaling_efficiency", "8")]["verdict"] == "scale not reached (2 of 8 nodes)"
    assert v[("strong_scaling_efficiency", "2")]["verdict"] == "not reproduced"  # 0.60 vs 0.50: 20 % off
    assert v[("strong_scaling_efficiency", "2")]["measured"] == pytest.approx(0.60)
    assert v[("parameters", "-")]["verdict"] == "reproduced"
    assert v[("samples_per_s_per_node", "1")]["verdict"].startswith("not measurable: another machine")
    gain = v[("custom_reduction_gain_vs_mpi_allreduce", "relevant")]
    assert gain["measured"] == pytest.approx(1 / 0.7 - 1) and gain["verdict"] == "reproduced"
    assert v[("time_share_conv_backward", "1")]["verdict"] == "no data"
    figs = pd.read_csv(os.path.join(camp, "analysis", "reproduce_figures.csv")).set_index("figure")
    assert figs.loc["Fig. 1", "verdict"] == "incomplete"  # one judged row, reproduced; one not reached
    assert figs.loc["Fig. 2", "verdict"] == "not reproduced"
    assert figs.loc["Sec. 5", "verdict"] == "not judged"
    assert "not reproduced" in out
    assert main(["reproduce", camp, "--published", pub, "--strict"]) == 1
    # a tolerance of 25 % takes in the strong-scaling point
    assert main(["reproduce", camp, "--published", pub, "--tolerance", "0.25", "--strict"]) == 0


def test_reproduce_bad_input(tmp_path, capsys):
    camp, pub = campaign(tmp_path)
    assert main(["reproduce", camp, "--published", pub, "--seed", "nope"]) == 2
    assert "no published figure of seed 'nope'" in capsys.readouterr().err
    assert main(["reproduce", str(tmp_path / "missing")]) == 2
    assert "no such campaign" in capsys.readouterr().err
    assert main(["reproduce", camp, "--published", str(tmp_path / "empty")]) == 2
    assert "no published figures" in capsys.readouterr().err


@pytest.mark.parametrize("acceptance", ["[1, 2]", '"x"', "{", '[{"result": "PASS"}]'])
def test_a_report_over_an_acceptance_json_of_another_shape_is_refused_before_any_write(tmp_path, capsys, acceptance):
    here = os.path.dirname(os.path.abspath(__file__))
    camp = shutil.copytree(os.path.join(here, "data", "projection_check"), str(tmp_path / "c"))
    with open(os.path.join(camp, "acceptance.json"), "w") as f:
        f.write(acceptance)
    assert main(["report", camp, "--no-projection"]) == 2
    assert "acceptance.json: not the verdicts dlscale run writes" in capsys.readouterr().err
    assert not os.path.exists(os.path.join(camp, "analysis")) and not os.path.exists(os.path.join(camp, "report.html"))


def test_report_is_one_self_contained_file(tmp_path):
    camp, pub = campaign(tmp_path)
    worst = {"label": "", "n": 2, "value": 135, "dof": 1, "ci_low": 70, "ci_high": 200, "bound": "> 200", "reference": 200}
    worst.update(tolerance=0, bound_source="plan")
    (tmp_path / "acceptance.json").write_text(
        json.dumps(
            [
                {
                    "id": "weak_rate",
                    "result": "FAIL",
                    "experiment": "weak",
                    "metric": "images_per_s",
                    "derived": "",
                    "where": "-",
                    "groups": [worst],
                    "worst": worst,
                },
                {
                    "id": "none",
                    "result": "NO DATA",
                    "experiment": "weak",
                    "metric": "x",
                    "derived": "",
                    "where": "-",
                    "why": "no record has metrics.x",
                    "groups": [],
                },
            ]
        )
    )
    assert main(["report", camp, "--published", pub]) == 0
    doc = (tmp_path / "report.html").read_text()
    assert "NOT ACCEPTED" in doc and "0 of 2 criteria pass" in doc
    assert "[70, 200]" in doc and "&gt; 200" in doc and "no record has metrics.x" in doc
    assert doc.count("data:image/png;base64,") >= 2  # scaling and busbw at least, embedded
    assert "Reproduction of S" in doc and "scale not reached" in doc
    assert "GNU 12" in doc  # the provenance appendix
    assert 'src="http' not in doc and "<script" not in doc


def test_report_judges_rows_above_the_measured_scale_by_projection(tmp_path):
    """A campaign of seed 004 without its models' scaling runs: its Fig. 4 rows at 1,500 and 10,000
    GPUs are projected (the shipped calibration), and the report shows them and the projection's
    plot; --no-projection leaves them unjudged."""
    camp, pub = campaign(tmp_path)
    plan = (tmp_path / "plan.yaml").read_text().replace("{seed: S,", "{seed: 004_857569f405b41554.txt,")
    (tmp_path / "plan.yaml").write_text(plan)
    published = os.path.join(os.path.dirname(__file__), "..", "..", "results", "published")
    assert main(["report", camp, "--published", published]) == 0
    doc = (tmp_path / "report.html").read_text()
    assert "<h3>Projection s004_fig4_resnet50_summit" in doc and "projected on summit" in doc
    assert os.path.exists(tmp_path / "analysis" / "projections" / "s004_fig4_resnet50_summit" / "projection.png")
    assert main(["report", camp, "--published", published, "--no-projection"]) == 0
    doc = (tmp_path / "report.html").read_text()
    assert "<h3>Projection" not in doc and "projected on summit" not in doc


def colored_pixels(png):
    import matplotlib.image

    img = matplotlib.image.imread(png)[..., :3]
    return int(((img.max(axis=2) - img.min(axis=2)) > 0.3).sum())


def screenshot(html_path, png):
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1280,3000",
            f"--screenshot={png}",
            f"file://{html_path}",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return png


@pytest.mark.skipif(
    not (shutil.which("chromium") or shutil.which("chromium-browser")) and not os.environ.get("DLS_REQUIRE_CHROMIUM"),
    reason="no chromium (scripts/setup.sh installs it; ctest sets DLS_REQUIRE_CHROMIUM)",
)
def test_report_renders_with_its_plots_in_chromium(tmp_path):
    camp, pub = campaign(tmp_path)
    assert main(["report", camp, "--published", pub]) == 0
    html_path = os.path.join(camp, "report.html")
    with_plots = colored_pixels(screenshot(html_path, str(tmp_path / "a.png")))
    # the same page without its images: what colour is left is text, not plots
    with open(html_path) as f:
        doc = f.read()
    import re

    bare = tmp_path / "bare.html"
    bare.write_text(re.sub(r"<img [^>]*>", "", doc))
    without = colored_pixels(screenshot(str(bare), str(tmp_path / "b.png")))
    assert with_plots > without + 2000, (with_plots, without)
