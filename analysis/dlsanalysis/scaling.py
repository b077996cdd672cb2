"""The tables of the seed papers (definitions: models_and_recipes.md section 6).

scaling_table     throughput X(p) by scale p (ranks = nodes x ranks per node, or workers) and
                  the efficiency against the base scale p0 (the smallest, stated in the table):
                  E(p) = (X(p) / X(p0)) / (p / p0). With a fixed batch per worker this is the weak
                  scaling efficiency, with a fixed global batch the strong one (same formula on
                  throughput, T_iter(1) / (p T_iter(p)) on times).
speedup_table     per-epoch speed-up S_p = t_epoch(p0) / t_epoch(p) and, where the runs have a
                  target, the learning speed-up S_L = (t_epoch(p0) N(p0)) / (t_epoch(p) N(p)),
                  N the epochs each needed to reach it (seed 004), and the time-to-target ratio.
breakdown_table   mean per-phase seconds (input, forward, backward, update, sync) by scale and
                  each phase's share of their sum (seed 004, Table II).
"""

import pandas as pd

from .stats import aggregate


def _groups(df, group):
    """Iterate over groups without pandas' warning about one-element key lists."""
    keys = list(group)
    return df.groupby(keys if len(keys) > 1 else keys[0], sort=True)


PHASES = ("input", "forward", "backward", "update", "sync")


def _scale(df):
    if "metrics.ranks" not in df:
        raise ValueError("no metrics.ranks: these are not training records")
    return df["metrics.ranks"].astype(int)


def scaling_table(df, metric="metrics.images_per_s", group=("params.model",)):
    """Rows: group, ranks, n, mean, std, CI, efficiency against the smallest rank count."""
    d = df[df["status"] == "ok"].copy()
    d["ranks"] = _scale(d)
    agg = aggregate(d, list(group) + ["ranks"], metric)
    out = []
    for _, g in _groups(agg, group):
        g = g.sort_values("ranks").copy()
        p0, x0 = g["ranks"].iloc[0], g["mean"].iloc[0]
        g["base_ranks"] = p0
        g["efficiency"] = (g["mean"] / x0) / (g["ranks"] / p0)
        out.append(g)
    return pd.concat(out, ignore_index=True)


def speedup_table(df, group=("params.model",)):
    d = df[df["status"] == "ok"].copy()
    d["ranks"] = _scale(d)
    cols = {"metrics.epoch_time_s": "epoch_time_s"}
    if "metrics.epochs_to_target" in d:
        cols["metrics.epochs_to_target"] = "epochs_to_target"
    if "metrics.time_to_target_s" in d:
        cols["metrics.time_to_target_s"] = "time_to_target_s"
    m = d.groupby(list(group) + ["ranks"])[list(cols)].mean().rename(columns=cols).reset_index()
    out = []
    for _, g in _groups(m, group):
        g = g.sort_values("ranks").copy()
        b = g.iloc[0]
        g["base_ranks"] = b["ranks"]
        g["per_epoch_speedup"] = b["epoch_time_s"] / g["epoch_time_s"]
        if "epochs_to_target" in g:
            g["learning_speedup"] = (b["epoch_time_s"] * b["epochs_to_target"]) / (g["epoch_time_s"] * g["epochs_to_target"])
        if "time_to_target_s" in g:
            g["time_to_target_speedup"] = b["time_to_target_s"] / g["time_to_target_s"]
        out.append(g)
    return pd.concat(out, ignore_index=True)


def breakdown_table(df, group=("params.model",)):
    d = df[df["status"] == "ok"].copy()
    d["ranks"] = _scale(d)
    cols = [f"metrics.phase_s.{p}" for p in PHASES]
    m = d.groupby(list(group) + ["ranks"])[cols].mean().reset_index()
    m.columns = list(group) + ["ranks"] + [f"{p}_s" for p in PHASES]
    total = m[[f"{p}_s" for p in PHASES]].sum(axis=1)
    for p in PHASES:
        m[f"{p}_share"] = m[f"{p}_s"] / total
    return m
