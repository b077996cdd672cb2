"""Kernel efficiency (seed 000): GFLOP/s and % of peak by op, shape, backend and threads, and
convolution efficiency relative to GEMM.

kernel_table   one row per (op, backend, shape, threads): repeats aggregated (mean, std, 95 %
               interval of gflop_per_s), the mean % of peak the record states (its peak and how
               it was found travel in the record), and for convolutions `vs_gemm`: the ratio of
               the convolution's GFLOP/s to the fastest GEMM of the same backend and thread
               count in the same campaign (NaN when the campaign timed no such GEMM). A ratio
               near 1 says the convolution runs as fast as the BLAS it is built on. The
               Winograd ops (conv2d_wino_*) count the direct method's FLOPs, so their rate is an
               effective one: above 1 (and above 100 % of peak) is what they are for.
"""

import math

import pandas as pd

from .stats import aggregate

KEYS = ["metrics.op", "metrics.backend", "metrics.shape", "metrics.threads"]


def kernel_table(df):
    d = df[(df["kind"] == "kernel") & (df["status"] == "ok")]
    if d.empty:
        return pd.DataFrame()
    missing = [k for k in KEYS if k not in d]
    if missing:
        raise ValueError(f"kernel records without {', '.join(missing)}")
    if "metrics.gflop_per_s" not in d:  # bandwidth kernels alone (triad): no FLOP rate to table
        return pd.DataFrame()
    d = d[d["metrics.gflop_per_s"].notna()]
    if d.empty:
        return pd.DataFrame()
    t = aggregate(d, KEYS, "metrics.gflop_per_s")
    if "metrics.pct_of_peak" in d:
        pct = d.groupby(KEYS)["metrics.pct_of_peak"].mean().rename("pct_of_peak").reset_index()
        t = t.merge(pct, on=KEYS, how="left")
    t = t.rename(columns={k: k.split(".", 1)[1] for k in KEYS}).rename(columns={"mean": "gflop_per_s"})
    gemm = t[t["op"] == "gemm"].groupby(["backend", "threads"])["gflop_per_s"].max()
    t["vs_gemm"] = [
        r.gflop_per_s / gemm.get((r.backend, r.threads), math.nan) if r.op.startswith("conv") else math.nan
        for r in t.itertuples()
    ]
    return t.sort_values(["op", "shape", "threads", "backend"], ignore_index=True)
