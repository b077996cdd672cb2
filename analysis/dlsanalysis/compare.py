"""Regression detection between two campaigns (for example two software stacks).

Records are matched by point_id (the hash of their parameters, the same on both sides for the
same measurement); each side's repeats form a sample of the kind's headline metrics:
    train       images_per_s (higher is better), step_time_s (lower)
    kernel      gflop_per_s (higher), time_s (lower)
    collective  busbw_bytes_per_s (higher), time_s (lower)
A change is the ratio of the means, B / A. The verdict needs both a minimum effect size (default
5 %) and, where both sides have at least 2 repeats, Welch's t-test at the given level (default
0.01): "improved" or "regressed" (by the metric's direction), else "unchanged". With a single
sample on a side no test is possible: the change is reported, flagged only above 3 x the
effect size, and marked "single". The provenance of the two campaigns (compiler, MPI, BLAS,
libraries, environment) is compared key by key."""

import math

import pandas as pd
from scipy import stats as st

METRICS = {
    "train": [("metrics.images_per_s", "higher"), ("metrics.step_time_s", "lower")],
    "kernel": [("metrics.gflop_per_s", "higher"), ("metrics.time_s", "lower")],
    "collective": [("metrics.busbw_bytes_per_s", "higher"), ("metrics.time_s", "lower")],
}


def compare_frames(a, b, effect=0.05, alpha=0.01):
    """One row per (point_id, metric) present on both sides."""
    rows = []
    a = a[a["status"] == "ok"]
    b = b[b["status"] == "ok"]
    for pid, ga in a.groupby("point_id", sort=True):
        gb = b[b["point_id"] == pid]
        if gb.empty:
            continue
        kind = ga["kind"].iloc[0]
        for metric, better in METRICS.get(kind, []):
            if metric not in ga or metric not in gb:
                continue
            xa, xb = ga[metric].dropna().astype(float), gb[metric].dropna().astype(float)
            if xa.empty or xb.empty or xa.mean() == 0:
                continue
            ratio = xb.mean() / xa.mean()
            change = ratio - 1
            single = len(xa) < 2 or len(xb) < 2
            if single:
                p = math.nan
                significant = abs(change) >= 3 * effect
            else:
                p = st.ttest_ind(xb, xa, equal_var=False).pvalue
                significant = abs(change) >= effect and p < alpha
            good = (change > 0) == (better == "higher")
            verdict = ("improved" if good else "regressed") if significant else "unchanged"
            rows.append(
                {
                    "point_id": pid,
                    "kind": kind,
                    "benchmark": ga["benchmark"].iloc[0],
                    "metric": metric.split(".", 1)[1],
                    "better": better,
                    "n_a": len(xa),
                    "n_b": len(xb),
                    "mean_a": xa.mean(),
                    "mean_b": xb.mean(),
                    "change": change,
                    "p_value": p,
                    "verdict": verdict + (" (single)" if single else ""),
                }
            )
    return pd.DataFrame(rows)


def provenance_diff(pa, pb, prefix=""):
    """(key, A, B) for every flattened provenance key whose values differ."""
    out = []
    for k in sorted(set(pa) | set(pb)):
        va, vb = pa.get(k), pb.get(k)
        name = f"{prefix}{k}"
        if isinstance(va, dict) and isinstance(vb, dict):
            out += provenance_diff(va, vb, name + ".")
        elif va != vb and k not in ("start_time", "command_line", "host", "pid", "hostname"):
            out.append((name, va, vb))
    return out
