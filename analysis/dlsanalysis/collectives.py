"""Collective bandwidth (nccl-tests conventions, kernels_collectives.md) and the alpha-beta model.

busbw_table      one row per (op, algo, ranks, bytes): time (max over ranks of the per-rank
                 mean, as the record states it), algbw and busbw aggregated over repeats.
alpha_beta_fit   per (op, algo, ranks) the model t(n) = alpha + n / B fitted to the measured
                 times by least squares on the *relative* residual (each size weighs the same,
                 so the latency end is not drowned by the bandwidth end): alpha (s), B
                 (bytes/s, the asymptotic algorithm bandwidth), the busbw the model predicts
                 for large messages (B x the record's busbw factor) and the worst relative
                 residual, which says how well two parameters describe the curve.
"""

import numpy as np
import pandas as pd

KEYS = ["benchmark", "metrics.algo", "metrics.ranks", "metrics.bytes"]


def _collectives(df):
    d = df[(df["kind"] == "collective") & (df["status"] == "ok")]
    missing = [k for k in KEYS + ["metrics.time_s", "metrics.busbw_bytes_per_s"] if k not in d]
    if not d.empty and missing:
        raise ValueError(f"collective records without {', '.join(missing)}")
    return d


def busbw_table(df):
    d = _collectives(df)
    if d.empty:
        return pd.DataFrame()
    cols = {
        "metrics.time_s": "time_s",
        "metrics.algbw_bytes_per_s": "algbw_bytes_per_s",
        "metrics.busbw_bytes_per_s": "busbw_bytes_per_s",
    }
    cols = {k: v for k, v in cols.items() if k in d}
    g = d.groupby(KEYS)
    t = g[list(cols)].mean().rename(columns=cols)
    t["n"] = g.size()
    t["busbw_std"] = g["metrics.busbw_bytes_per_s"].std(ddof=1).fillna(0.0)
    t = t.reset_index().rename(
        columns={"benchmark": "op", "metrics.algo": "algo", "metrics.ranks": "ranks", "metrics.bytes": "bytes"}
    )
    return t.sort_values(["op", "ranks", "algo", "bytes"], ignore_index=True)


def relative_lstsq(n, t):
    """(alpha, beta) minimising the relative residuals of t = alpha + beta n, and the residuals'
    absolute values: (alpha + beta n) / t = 1 by least squares."""
    a = np.column_stack([1.0 / t, n / t])
    (alpha, beta), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    return alpha, beta


def relative_residuals(alpha, beta, n, t):
    return np.abs((alpha + beta * n) / t - 1.0)


def fit_alpha_beta(nbytes, times):
    """(alpha_s, bandwidth_bytes_per_s, max_rel_residual) of t = alpha + n / B, relative least squares."""
    n = np.asarray(nbytes, dtype=float)
    t = np.asarray(times, dtype=float)
    if len(n) < 2 or len(np.unique(n)) < 2:
        raise ValueError("an alpha-beta fit needs at least two message sizes")
    alpha, beta = relative_lstsq(n, t)
    return alpha, (1.0 / beta if beta > 0 else np.inf), float(relative_residuals(alpha, beta, n, t).max())


def alpha_beta_table(df):
    d = _collectives(df)
    if d.empty:
        return pd.DataFrame()
    rows = []
    means = d.groupby(KEYS)["metrics.time_s"].mean().reset_index()
    means = means[means["metrics.time_s"].notna()]  # records that time no allreduce (overlap's)
    bad = means[~(np.isfinite(means["metrics.time_s"]) & (means["metrics.time_s"] > 0))]
    if not bad.empty:
        r = bad.iloc[0]
        raise ValueError(
            f"collective records of {r['benchmark']} {r['metrics.algo']} at {r['metrics.bytes']:.0f} bytes: "
            f"metrics.time_s {r['metrics.time_s']} (expected a time above 0)"
        )
    factor = d.groupby(KEYS[:3])["metrics.busbw_factor"].first() if "metrics.busbw_factor" in d else None
    for (op, algo, ranks), g in means.groupby(KEYS[:3], sort=True):
        if g["metrics.bytes"].nunique() < 2:
            continue
        alpha, bw, worst = fit_alpha_beta(g["metrics.bytes"], g["metrics.time_s"])
        f = float(factor[(op, algo, ranks)]) if factor is not None else 1.0
        rows.append(
            {
                "op": op,
                "algo": algo,
                "ranks": ranks,
                "sizes": len(g),
                "alpha_s": alpha,
                "bandwidth_bytes_per_s": bw,
                "busbw_model_bytes_per_s": bw * f,
                "max_rel_residual": worst,
            }
        )
    return pd.DataFrame(rows)
