"""Convolution efficiency per layer and per network, from `dlscale kernels` records of the conv
layers of a network (descriptors named '<model>:<layer>*<count>', kernels/shapes/*.txt) timed
in the three directions with the openblas and onednn backends.

kernel_efficiency_tables(df, gemm_shape)  (layers, models), two frames:
    layers  one row per conv layer (threads, model, layer, count, shape) with, per backend,
            GFLOP/s = (flop_fwd + flop_bwd_data + flop_bwd_filter) / (t_fwd + t_bwd_data +
            t_bwd_filter), empty (NaN) unless the backend timed all three directions;
            sgemm_gflop_per_s, the OpenBLAS sgemm of the reference shape (shape starting with
            gemm_shape, default 2048x2048x2048) at the same thread count; <backend>_vs_sgemm,
            the layer's GFLOP/s over that OpenBLAS sgemm (both backends against OpenBLAS's);
            openblas_vs_onednn, OpenBLAS's GFLOP/s over oneDNN's (> 1: the OpenBLAS path is
            faster)
    models  one row per (threads, model): the same rates and ratios over the whole network,
            each layer's FLOPs and time weighted by its count; a backend's total is over the
            layers it timed in all three directions (layers, instances: the layer rows and the
            sum of their counts)

Definitions are those of the former analysis/kernel_efficiency.py. Times are the records'
time_s, the median of their samples; a layer or reference timed more than once (repeats) takes
the median of its records. A record without a name is the layer '' of the model '' (count 1);
a name without '*k' counts once. Ratios without their reference (no such sgemm or no oneDNN
timing) are NaN, never invented. Only kernel records with status ok count, and a convolution
or GEMM record with status ok whose check failed is refused: ValueError naming its file and
line (the harness marks such a record failed, so it is a record that cannot be trusted).
With no convolution record both frames are empty.
"""

import math
import sys

import pandas as pd

DIRS = ("conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_filter")
BACKENDS = ("openblas", "onednn")
LAYER = ["threads", "model", "layer", "count", "shape"]
NEEDED = ["metrics.op", "metrics.backend", "metrics.shape", "metrics.threads", "metrics.flop", "metrics.time_s"]
DEFAULT_GEMM_SHAPE = "2048x2048x2048"


def _timed_kernels(df):
    """The kernel records with status ok and a time; refuses a GEMM or convolution whose check failed."""
    if df.empty or "kind" not in df:
        return df.iloc[0:0]
    d = df[(df["kind"] == "kernel") & (df["status"] == "ok")]
    if d.empty or "metrics.time_s" not in d:
        return d.iloc[0:0]
    d = d[d["metrics.time_s"].notna()]
    if "check.status" in d:
        bad = d[d["metrics.op"].isin(DIRS + ("gemm",)) & (d["check.status"] == "failed")]
        if not bad.empty:
            r = bad.iloc[0]
            raise ValueError(
                f"{r['file']}:{r['line']}: refusing a record whose check failed: "
                f"{r['metrics.op']} {r['metrics.backend']} {r['metrics.shape']}"
            )
    return d


def _split_name(name):
    """('model', 'layer', count) of a name 'model:layer*count'."""
    model, _, rest = (name if isinstance(name, str) else "").partition(":")
    layer, _, count = rest.partition("*")
    return model, layer, int(count or 1)


def _conv_rows(d):
    c = d[d["metrics.op"].isin(DIRS)]
    if c.empty:
        return c
    missing = [k for k in NEEDED if k not in c]
    if missing:
        raise ValueError(f"convolution records without {', '.join(missing)}")
    names = c["params.shape_params.name"] if "params.shape_params.name" in c else [""] * len(c)
    parts = [_split_name(n) for n in names]
    return pd.DataFrame(
        {
            "threads": c["metrics.threads"].to_numpy(),
            "model": [p[0] for p in parts],
            "layer": [p[1] for p in parts],
            "count": [p[2] for p in parts],
            "shape": c["metrics.shape"].to_numpy(),
            "backend": c["metrics.backend"].to_numpy(),
            "op": c["metrics.op"].to_numpy(),
            "flop": c["metrics.flop"].to_numpy(dtype=float),
            "time_s": c["metrics.time_s"].to_numpy(dtype=float),
        }
    )


def _backend_sums(rows):
    """Per layer and backend: FLOPs and time over the three directions, where all three were timed."""
    per_dir = rows.groupby(LAYER + ["backend", "op"], sort=False)[["flop", "time_s"]].median().reset_index()
    g = per_dir.groupby(LAYER + ["backend"], sort=False)
    s = g[["flop", "time_s"]].sum().join(g.size().rename("dirs")).reset_index()
    return s[s["dirs"] == len(DIRS)]


def _sgemm(d, gemm_shape):
    """OpenBLAS sgemm GFLOP/s of the reference shape by thread count (median of its records)."""
    g = d[(d["metrics.op"] == "gemm") & (d["metrics.backend"] == "openblas")]
    g = g[g["metrics.shape"].astype(str).str.startswith(gemm_shape)]
    if g.empty or "metrics.gflop_per_s" not in g:
        return {}
    return g.groupby("metrics.threads")["metrics.gflop_per_s"].median().to_dict()


def _ratios(t, sgemm):
    """Adds the GFLOP/s of each backend from its flop and time columns, and the ratios."""
    for b in BACKENDS:
        t[f"{b}_gflop_per_s"] = t[f"{b}_flop"] / t[f"{b}_time_s"] * 1e-9
    t["sgemm_gflop_per_s"] = [sgemm.get(th, math.nan) for th in t["threads"]]
    for b in BACKENDS:
        t[f"{b}_vs_sgemm"] = t[f"{b}_gflop_per_s"] / t["sgemm_gflop_per_s"]
    t["openblas_vs_onednn"] = t["openblas_gflop_per_s"] / t["onednn_gflop_per_s"]
    return t


RATES = [f"{b}_gflop_per_s" for b in BACKENDS] + ["sgemm_gflop_per_s"]
RATES += [f"{b}_vs_sgemm" for b in BACKENDS] + ["openblas_vs_onednn"]
SUMS = [f"{b}_{q}" for b in BACKENDS for q in ("flop", "time_s")]


def _layer_sums(rows):
    """One row per layer (first-seen order) with <backend>_flop and <backend>_time_s (NaN: not all directions)."""
    t = rows[LAYER].drop_duplicates().reset_index(drop=True)
    sums = _backend_sums(rows)
    for b in BACKENDS:
        s = sums[sums["backend"] == b][LAYER + ["flop", "time_s"]]
        t = t.merge(s.rename(columns={"flop": f"{b}_flop", "time_s": f"{b}_time_s"}), on=LAYER, how="left")
    return t


def _model_sums(layers):
    """Per (threads, model): count-weighted FLOPs and times (NaN where a backend timed no whole layer)."""
    w = layers[["threads", "model"]].copy()
    w["layers"] = 1
    w["instances"] = layers["count"]
    for col in SUMS:
        w[col] = layers[col] * layers["count"]
    g = w.groupby(["threads", "model"], sort=False)
    return g[["layers", "instances"]].sum().join(g[SUMS].sum(min_count=1)).reset_index()


def kernel_efficiency_tables(df, gemm_shape=DEFAULT_GEMM_SHAPE):
    """(layers, models): the tables of the module doc; both empty without convolution records."""
    d = _timed_kernels(df)
    rows = _conv_rows(d) if not d.empty else d
    if rows.empty:
        return pd.DataFrame(), pd.DataFrame()
    sgemm = _sgemm(d, gemm_shape)
    if not sgemm:
        print(
            f"dlsanalysis: no OpenBLAS sgemm record of a shape starting {gemm_shape!r} (--gemm-shape): "
            "the convolutions' *_vs_sgemm columns are empty",
            file=sys.stderr,
        )
    layers = _layer_sums(rows)
    models = _model_sums(layers)
    layers = _ratios(layers, sgemm)[LAYER + RATES]
    models = _ratios(models, sgemm)[["threads", "model", "layers", "instances"] + RATES]
    return layers, models
