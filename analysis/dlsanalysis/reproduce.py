"""A campaign's measurements beside the published figures (results/published/*.csv, the columns
of shared/reference/published_figures.csv) with a verdict per row and per figure.

Which rows: those of the seed the campaign's plan reproduces (`reproduces: {seed: ...}` in the
plan file the manifest names), or the seed given. How a published metric is measured here is
the table MEASURES below; a metric it does not name is "not measured".

Scale: the published x (nodes, GPUs, processes) is compared with the campaign's rank count, one
rank standing for one node/GPU/process. Only a measurement at the published scale is judged;
below it the row says "scale not reached" and shows the value at the largest scale measured.
Absolute model quantities (parameters, memory) are judged only on full-width models.
Throughputs of another machine (samples/s of a P100, speed-ups over a K40) are shown, never
judged: they are facts about that hardware.

Verdict of a judged row: the published value is a point v (with `value_high` a range [v, vh]);
"reproduced" when the measurement is within the relative tolerance of it (inside the widened
range), or, where the condition says "at least", "over" or ">", when it is no lower than
v (1 - tolerance). A figure is reproduced when it has judged rows and all are reproduced; not
reproduced when any judged row is not; otherwise not judged.
"""

import glob
import json
import math
import os
import re

import pandas as pd
import yaml

from .collectives import busbw_table
from .convergence import layer_share_table
from .kernels import kernel_table
from .records import ok_train
from .scaling import scaling_table, speedup_table

HARDWARE_BOUND = {
    "samples_per_s_per_node",
    "speedup_vs_k40",
    "slowdown_vs_p100",
    "slowdown_vs_k40",
    "speedup_vs_grpc",
    "min_read_bandwidth",
    "speedup_cpe_vs_mpe",
}
SCALE_NAMES = {"nodes", "gpus", "processes"}


def load_published(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.csv")))
    if not files:
        raise FileNotFoundError(f"{folder}: no published figures (*.csv)")
    return pd.concat([pd.read_csv(f, dtype={"x": str}) for f in files], ignore_index=True)


def plan_info(campaign):
    """(seed, {experiment: scaling mode}) from the plan file the campaign's manifest names."""
    manifest = os.path.join(campaign, "manifest.json")
    if not os.path.exists(manifest):
        return None, {}
    with open(manifest) as f:
        plan_file = json.load(f).get("plan_file")
    if not plan_file or not os.path.exists(plan_file):
        return None, {}
    with open(plan_file) as f:
        plan = yaml.safe_load(f)
    seed = (plan.get("reproduces") or {}).get("seed")
    return seed, {e["name"]: e.get("scaling") for e in plan.get("experiments", [])}


def _model_key(name):
    return re.sub(r"[^a-z0-9]", "", str(name).lower())


def _model_matches(published_model, model):
    """'ResNet-50 (ImageNet;AtomAI)' matches resnet50; 'VGG-16' vgg16; 'ConvNet-CIFAR10' cifar10_*."""
    m = _model_key(model)
    for part in re.split(r"[;,]| and ", re.sub(r"\(.*?\)", "", str(published_model))):
        p = _model_key(part)
        if p and (p == m or (p == "convnetcifar10" and m.startswith("cifar10")) or (p == "cvae" and m.startswith("cvae"))):
            return True
    return False


def _full_width(d):
    return d[d["params.width"].fillna(1.0).astype(float) == 1.0] if "params.width" in d else d


def _train(c, row, mode=None):
    d = c["train"]
    if d.empty:
        return d
    d = d[[_model_matches(row["model"], m) for m in d["params.model"]]]
    if mode and "experiment" in d:
        d = d[d["experiment"].map(lambda e: c["scaling"].get(e) == mode)]
    return d


def _efficiency(mode):
    def f(c, row):
        d = _train(c, row, mode)
        if d.empty:
            return []
        t = scaling_table(d, group=("params.model",))
        return [
            (int(r["ranks"]), r["efficiency"], f"{r['params.model']}, base {int(r['base_ranks'])} rank(s)")
            for _, r in t.iterrows()
        ]

    return f


def _per_epoch_efficiency(c, row):
    d = _train(c, row)
    if d.empty:
        return []
    t = speedup_table(d)
    return [(int(r.ranks), r.per_epoch_speedup / (r.ranks / r.base_ranks), "") for r in t.itertuples()]


def _learning_speedup(c, row):
    d = _train(c, row)
    if d.empty or "metrics.epochs_to_target" not in d:
        return []
    t = speedup_table(d)
    return [(int(r.ranks), r.learning_speedup, "") for r in t.itertuples() if r.learning_speedup == r.learning_speedup]


def _layer_share(kind):
    def f(c, row):
        d = _train(c, row)
        t = layer_share_table(d) if not d.empty else d
        return [] if t.empty else [(int(r["ranks"]), r[f"{kind}_share"], "") for _, r in t.iterrows()]

    return f


def _model_quantity(metric, scale=1.0, batch_x=False):
    def f(c, row):
        d = _full_width(_train(c, row))
        if d.empty or metric not in d:
            return []
        if batch_x:
            d = d[d["metrics.batch_per_rank"].astype(str) == str(row["x"])]
            return [(str(row["x"]), v * scale, "") for v in d[metric]]
        return [(None, float(d[metric].iloc[0]) * scale, "")]

    return f


def _conv_efficiency(c, row):
    t = kernel_table(c["all"])
    if t.empty:
        return []
    t = t[t["op"].str.startswith("conv") & t["pct_of_peak"].notna()]
    t = t[t["threads"] == t["threads"].max()] if not t.empty else t
    return [(None, b["pct_of_peak"].mean() / 100, f"{name}, mean over {len(b)} conv timings") for name, b in t.groupby("backend")]


def _reduction_gain(c, row):
    t = busbw_table(c["all"])
    if t.empty:
        return []
    t = t[(t["op"] == "allreduce") & (t["ranks"] == t["ranks"].max())]
    t = t[t["bytes"] == t["bytes"].max()]
    mpi = t[t["algo"] == "mpi"]
    other = t[t["algo"] != "mpi"]
    if mpi.empty or other.empty:
        return []
    best = other.loc[other["time_s"].idxmin()]
    return [
        (
            None,
            mpi["time_s"].iloc[0] / best["time_s"] - 1,
            f"{best['algo']} vs MPI_Allreduce at {int(best['bytes'])} B, {int(best['ranks'])} ranks",
        )
    ]


MEASURES = {
    "weak_scaling_efficiency": _efficiency("weak"),
    "strong_scaling_efficiency": _efficiency("strong"),
    "throughput_scaling_efficiency": _efficiency(None),
    "scaling_efficiency": _efficiency(None),
    "per_epoch_parallel_efficiency": _per_epoch_efficiency,
    "learning_speedup": _learning_speedup,
    "time_share_conv_backward": _layer_share("conv_backward"),
    "time_share_conv_forward": _layer_share("conv_forward"),
    "time_share_fully_connected": _layer_share("fully_connected"),
    "parameters": _model_quantity("metrics.parameters"),
    "weight_bytes_exchanged": _model_quantity("metrics.parameter_bytes"),
    "heap_bytes": _model_quantity("metrics.peak_rss_bytes", batch_x=True),
    "gemm_convolution_efficiency": _conv_efficiency,
    "custom_reduction_gain_vs_mpi_allreduce": _reduction_gain,
}


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def judge(row, measured, tolerance):
    lo, hi = _num(row["value"]), _num(row["value_high"])
    if re.search(r"at least|over |> ?\d|efficiency >", str(row["condition"])):
        return measured >= lo * (1 - tolerance)
    if hi == hi:
        return lo * (1 - tolerance) <= measured <= hi * (1 + tolerance)
    return abs(measured - lo) <= tolerance * abs(lo)


def reproduce_table(campaign_frames, published, tolerance=0.10):
    rows = []
    for _, row in published.iterrows():
        out = {
            k: row[k] for k in ("seed", "figure", "model", "metric", "x_name", "x", "value", "value_high", "unit", "condition")
        }
        out.update(measured=math.nan, measured_at="", note="", verdict="not measured")
        if row["metric"] in HARDWARE_BOUND:
            out["verdict"] = "not judged (another machine's hardware)"
            rows.append(out)
            continue
        f = MEASURES.get(row["metric"])
        found = f(campaign_frames, row) if f else []
        found = [m for m in found if m[1] == m[1]]
        if not found:
            rows.append(out)
            continue
        if row["x_name"] in SCALE_NAMES and _num(row["x"]) == _num(row["x"]):
            want = int(_num(row["x"]))
            at = [m for m in found if m[0] == want]
            if not at:
                top = max(found, key=lambda m: m[0])
                out.update(
                    measured=top[1],
                    measured_at=f"{top[0]} ranks",
                    note=top[2],
                    verdict=f"scale not reached ({top[0]} of {want} {row['x_name']})",
                )
                rows.append(out)
                continue
            found = at
        m = found[-1]
        ok = judge(row, m[1], tolerance)
        out.update(
            measured=m[1],
            measured_at="" if m[0] is None else f"{m[0]}",
            note=m[2],
            verdict="reproduced" if ok else "not reproduced",
        )
        rows.append(out)
    return pd.DataFrame(rows)


def reproduce_campaign(df, modes, published, tolerance=0.10):
    """(rows, figures): a campaign's frame (and its experiments' scaling modes) against the
    published rows of its seed."""
    rows = reproduce_table({"all": df, "train": ok_train(df), "scaling": modes}, published, tolerance)
    return rows, figure_verdicts(rows)


def figure_verdicts(table):
    rows = []
    for (seed, fig), g in table.groupby(["seed", "figure"], sort=False):
        judged = g[g["verdict"].isin(["reproduced", "not reproduced"])]
        if judged.empty:
            v = "not judged"
        elif (judged["verdict"] == "reproduced").all():
            v = "reproduced"
        else:
            v = "not reproduced"
        rows.append(
            {
                "seed": seed,
                "figure": fig,
                "rows": len(g),
                "judged": len(judged),
                "reproduced": int((judged["verdict"] == "reproduced").sum()),
                "verdict": v,
            }
        )
    return pd.DataFrame(rows)
