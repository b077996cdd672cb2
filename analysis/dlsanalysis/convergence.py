"""Training beyond throughput: time-to-accuracy, EASGD's tau sensitivity (seed 001, Figs. 9-10),
the per-layer-type time shares (seed 001, Table I) and the per-epoch curves.

time_to_accuracy_table  per group and scale: the target (as `dlscale train --target` wrote it),
                        how many repeats reached it, the mean seconds and epochs to reach it.
tau_table               EASGD runs by tau and worker count: throughput (all workers, 95 %
                        interval), the last epoch's training loss, and `vs_ssgd`, the throughput
                        over that of synchronous SGD with the same model and worker count in the
                        same campaign (NaN where there is none). The servers are not counted.
layer_share_table       per model and scale, the share of the layers' summed forward + backward
                        time spent in convolution forward, convolution backward, fully connected
                        (forward + backward) and everything else, from each record's layer_s.
convergence_frame       one row per evaluated or finished epoch of every record (long format).
"""

import math

import pandas as pd

from .records import ok_train
from .stats import aggregate


def time_to_accuracy_table(df, group=("params.model",)):
    d = ok_train(df)
    if d.empty or "params.target" not in d:
        return pd.DataFrame()
    d = d[d["params.target"].notna()]
    d["ranks"] = d["metrics.ranks"].astype(int)
    d["reached"] = d["metrics.target_reached"].fillna(False).astype(bool) if "metrics.target_reached" in d else False
    rows = []
    for key, g in d.groupby(list(group) + ["params.target", "ranks"], sort=True):
        hit = g[g["reached"]]
        row = dict(zip(list(group) + ["target", "ranks"], key, strict=True), runs=len(g), reached=len(hit))
        row["time_to_target_s"] = hit["metrics.time_to_target_s"].mean() if len(hit) else math.nan
        row["epochs_to_target"] = hit["metrics.epochs_to_target"].mean() if len(hit) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def _last_train_loss(epochs):
    return epochs[-1]["train_loss"] if isinstance(epochs, list) and epochs else math.nan


def tau_table(df):
    d = ok_train(df)
    if d.empty or "params.easgd.tau" not in d:
        return pd.DataFrame()
    d["workers"] = d["metrics.ranks"].astype(int)
    d["final_train_loss"] = d["metrics.epochs"].map(_last_train_loss) if "metrics.epochs" in d else math.nan
    e = d[d["params.easgd.tau"].notna()].copy()
    e["tau"] = e["params.easgd.tau"].astype(int)
    e["variant"] = e.get("params.easgd.variant", "sync")
    by = ["params.model", "variant", "tau", "workers"]
    t = aggregate(e, by, "metrics.images_per_s").rename(columns={"mean": "images_per_s"})
    loss = e.groupby(by)["final_train_loss"].mean().reset_index()
    t = t.merge(loss, on=by).rename(columns={"params.model": "model"})
    s = d[d["params.scheme"] == "ssgd"].groupby(["params.model", "workers"])["metrics.images_per_s"].mean()
    t["vs_ssgd"] = [r.images_per_s / s.get((r.model, r.workers), math.nan) for r in t.itertuples()]
    return t.sort_values(["model", "variant", "workers", "tau"], ignore_index=True)


CLASSES = ("conv_forward", "conv_backward", "fully_connected", "other")


def _classify(layer_s):
    out = dict.fromkeys(CLASSES, 0.0)
    for layer in layer_s.values():
        kind = layer.get("type", "")
        if kind in ("conv2d", "deconv2d"):
            out["conv_forward"] += layer["forward_s"]
            out["conv_backward"] += layer["backward_s"]
        elif kind == "linear":
            out["fully_connected"] += layer["forward_s"] + layer["backward_s"]
        else:
            out["other"] += layer["forward_s"] + layer["backward_s"]
    return out


def layer_share_table(df, group=("params.model",)):
    d = ok_train(df)
    if d.empty:
        return pd.DataFrame()
    cols = [c for c in d.columns if c.startswith("metrics.layer_s.") and c.endswith(".type")]
    if not cols:
        return pd.DataFrame()  # records written before layer types were recorded
    rows = []
    for _, r in d.iterrows():
        layers = {}
        for c in cols:
            name = c[len("metrics.layer_s.") : -len(".type")]
            if isinstance(r[c], str):
                layers[name] = {
                    "type": r[c],
                    "forward_s": r[f"metrics.layer_s.{name}.forward_s"],
                    "backward_s": r[f"metrics.layer_s.{name}.backward_s"],
                }
        row = {k: r[k] for k in group}
        row["ranks"] = int(r["metrics.ranks"])
        row.update(_classify(layers))
        rows.append(row)
    m = pd.DataFrame(rows).groupby(list(group) + ["ranks"])[list(CLASSES)].mean().reset_index()
    total = m[list(CLASSES)].sum(axis=1)
    for c in CLASSES:
        m[f"{c}_share"] = m[c] / total
    return m.rename(columns={c: f"{c}_s" for c in CLASSES})


def convergence_frame(df, label=("params.model", "metrics.ranks")):
    d = ok_train(df)
    rows = []
    if d.empty or "metrics.epochs" not in d:
        return pd.DataFrame()
    for _, r in d.iterrows():
        name = " ".join(f"{int(r[k])}" if isinstance(r[k], float) and r[k].is_integer() else f"{r[k]}" for k in label if k in r)
        for ep in r["metrics.epochs"] if isinstance(r["metrics.epochs"], list) else []:
            rows.append({"run": name, "file": r["file"], "line": r["line"], **ep})
    return pd.DataFrame(rows)
