"""What a calibration campaign measured, in the terms the projection uses.

- Compute profiles: per model, the one-rank training records (`kind: train`, status ok) grouped
  by batch, threads and backend; each group's mean forward and backward time split into its
  compute-bound part (layers of the types in COMPUTE_TYPES: convolutions and fully connected
  layers, GEMM-shaped) and its memory-bound part (every other layer: ReLU, pooling, batch norm,
  LRN, softmax, ...) by the record's `layer_s`, the phase totals (`phase_s`) kept; the update
  (memory-bound: the optimizer streams over the parameters) and the input phase apart.
- Collective fits: t(n) = alpha + beta n per algorithm, rank count and size band
  (SIZE_BANDS: the sweep's own timing bands), relative least squares, alpha >= 0.
- The measured overlap of an allreduce with computation (`allreduce_overlap` records).
- The rates of the machine the campaign ran on: the FMA peak and the memory bandwidth its
  manifest holds (measured_node_peak, measured_node_memory_bandwidth), else its site's values.
Every value keeps where it came from ("records.jsonl:LINE", a manifest key, a site key).
"""

import math
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..collectives import relative_lstsq, relative_residuals
from ..records import load_campaign, ok_train, read_manifest

COMPUTE_TYPES = {"conv2d", "deconv2d", "linear"}
BAND_COLUMNS = [
    "algo",
    "ranks",
    "band",
    "bytes_min",
    "bytes_max",
    "alpha_s",
    "beta_s_per_byte",
    "max_rel_residual",
    "points",
    "source",
]
SIZE_BANDS = [("small", 0, 8 * 2**10), ("medium", 8 * 2**10, 2**20), ("large", 2**20, math.inf)]


class CalibrationError(ValueError):
    """A campaign that cannot calibrate what was asked; the message says what is missing."""


@dataclass
class Profile:
    """One (model, batch, threads, backend) of one-rank training: seconds a step."""

    model: str
    batch: int
    threads: int
    backend: str
    image: int
    forward: dict  # {"compute": s, "memory": s}
    backward: dict
    update: float
    input: float
    step: float
    refs: list = field(default_factory=list)
    sample_bytes: float = math.nan
    parameter_bytes: float = math.nan
    # the network's variant: image width (the height where square), input channels, width
    # multiplier (1: the network as published)
    image_w: int = 0
    channels: int = 3
    width: float = 1.0


@dataclass
class Calibration:
    path: str
    frame: pd.DataFrame
    manifest: dict
    site: str


def load_calibration(path):
    if not os.path.isdir(path) or not os.path.exists(os.path.join(path, "records.jsonl")):
        raise CalibrationError(f"{path}: not a campaign folder (no records.jsonl)")
    manifest = read_manifest(path)
    return Calibration(path, load_campaign(path), manifest, str(manifest.get("site", "")))


def _ref(row):
    return f"{os.path.basename(str(row.get('file', 'records.jsonl')))}:{int(row.get('line', 0))}"


def _num(row, key, default=math.nan):
    v = row.get(key, default)
    try:
        v = float(v)
    except (TypeError, ValueError):
        return default
    return default if v != v else v


def _layer_split(row, phase):
    """{"compute": s, "memory": s} of a record's forward or backward phase by its layer_s."""
    parts = {"compute": 0.0, "memory": 0.0}
    for col in row.index:
        if col.startswith("metrics.layer_s.") and col.endswith(f".{phase}_s"):
            name = col[len("metrics.layer_s.") : -len(f".{phase}_s")]
            kind = row.get(f"metrics.layer_s.{name}.type", "")
            v = _num(row, col, 0.0)
            parts["compute" if kind in COMPUTE_TYPES else "memory"] += v
    total = parts["compute"] + parts["memory"]
    measured = _num(row, f"metrics.phase_s.{phase}", total)
    if total <= 0:
        return {"compute": measured, "memory": 0.0}
    return {k: v * measured / total for k, v in parts.items()}  # the phase's own total, split


def _one_rank_train(df, model):
    if df.empty or "kind" not in df:
        return df.iloc[0:0]
    d = ok_train(df)
    if "params.model" not in d:
        return d.iloc[0:0]
    d = d[d["params.model"] == model]
    ranks = d["metrics.ranks"] if "metrics.ranks" in d else d.get("params.ranks", 1)
    return d[pd.Series(ranks, index=d.index).fillna(1).astype(int) == 1]


def _sample_bytes(row):
    c, h = _num(row, "params.channels", 3), _num(row, "params.image", math.nan)
    w = _num(row, "params.image_w", h)
    return c * h * w  # decoded 8-bit pixels


VARIANT_DEFAULTS = {"params.image_w": None, "params.channels": 3, "params.width": 1.0}


def _variant_columns(d):
    """params.image_w (the height where absent: a square image), channels and width filled in."""
    out = {}
    for k, default in VARIANT_DEFAULTS.items():
        v = d[k] if k in d else pd.Series(math.nan, index=d.index)
        out[k] = v.fillna(d.get("params.image", -1) if default is None else default)
    return d.assign(**out)


def profiles(cal, model):
    """The model's one-rank Profiles, one per (batch, threads, backend, image, image_w, channels,
    width), repeats averaged: a run of another shape or width of the network is another profile."""
    d = _one_rank_train(cal.frame, model)
    keys = ["params.batch_per_rank", "params.threads", "params.backend", "params.image"]
    d = d.assign(**{k: d.get(k, -1) for k in keys})
    d = _variant_columns(d)
    keys += list(VARIANT_DEFAULTS)
    out = []
    for key, g in d.groupby(keys, dropna=False, sort=True):
        rows = [r for _, r in g.iterrows()]
        split = {
            p: {k: np.mean([_layer_split(r, p)[k] for r in rows]) for k in ("compute", "memory")} for p in ("forward", "backward")
        }

        def mean(k, rows=rows):
            return float(np.mean([_num(r, k, 0.0) for r in rows]))

        out.append(
            Profile(
                model=model,
                batch=int(key[0]),
                threads=int(key[1]),
                backend=str(key[2]),
                image=int(key[3]) if key[3] == key[3] else 0,
                forward=split["forward"],
                backward=split["backward"],
                update=mean("metrics.phase_s.update"),
                input=mean("metrics.phase_s.input"),
                step=mean("metrics.step_time_s"),
                refs=[_ref(r) for r in rows],
                sample_bytes=_sample_bytes(rows[0]),
                parameter_bytes=mean("metrics.parameter_bytes"),
                image_w=int(key[4]) if key[4] == key[4] else 0,
                channels=int(key[5]),
                width=float(key[6]),
            )
        )
    return out


def fit_band(nbytes, times):
    """(alpha_s >= 0, beta_s_per_byte, max relative residual) of t = alpha + beta n, relative LSQ."""
    n, t = np.asarray(nbytes, float), np.asarray(times, float)
    alpha, beta = relative_lstsq(n, t)
    if alpha < 0 or len(n) < 2:  # through the origin: beta alone
        alpha, beta = 0.0, float(np.sum(n / t) / np.sum((n / t) ** 2))
    if beta < 0:  # a flat band: latency alone
        alpha, beta = float(np.mean(t)), 0.0
    return float(alpha), float(beta), float(relative_residuals(alpha, beta, n, t).max())


def _timed_collectives(df):
    if df.empty or "kind" not in df:
        return df.iloc[0:0]
    d = df[(df["kind"] == "collective") & (df["status"] == "ok") & (df["benchmark"] == "allreduce")]
    if "params.memory" in d:  # the model's ranks reduce their own host vectors: not shared or device memory
        d = d[d["params.memory"].fillna("host") == "host"]
    if "metrics.time_s" in d and (d["metrics.time_s"] <= 0).any():  # a fit divides by it
        bad = d[d["metrics.time_s"] <= 0].iloc[0]
        raise CalibrationError(f"{bad['file']}:{bad['line']}: metrics.time_s {bad['metrics.time_s']} (expected a time above 0)")
    return d[[c for c in ("metrics.algo", "metrics.ranks", "metrics.bytes", "metrics.time_s", "file", "line") if c in d]]


def alpha_beta_bands(cal):
    """One row per (algorithm, ranks, size band): alpha, beta, fit error, points, source."""
    d = _timed_collectives(cal.frame)
    rows = []
    if d.empty:
        return pd.DataFrame(columns=BAND_COLUMNS)
    means = d.groupby(["metrics.algo", "metrics.ranks", "metrics.bytes"])["metrics.time_s"].mean().reset_index()
    for (algo, ranks), g in means.groupby(["metrics.algo", "metrics.ranks"]):
        for band, lo, hi in SIZE_BANDS:
            b = g[(g["metrics.bytes"] > lo) & (g["metrics.bytes"] <= hi)]
            if b.empty:
                continue
            alpha, beta, err = fit_band(b["metrics.bytes"], b["metrics.time_s"])
            rows.append(
                dict(
                    algo=algo,
                    ranks=int(ranks),
                    band=band,
                    bytes_min=int(b["metrics.bytes"].min()),
                    bytes_max=int(b["metrics.bytes"].max()),
                    alpha_s=alpha,
                    beta_s_per_byte=beta,
                    max_rel_residual=err,
                    points=len(b),
                    source=f"{cal.path}: {len(b)} allreduce sizes",
                )
            )
    return pd.DataFrame(rows, columns=BAND_COLUMNS)


def overlap_fraction(cal, algo=None):
    """(mean overlap of the allreduce with computation, source) over the campaign's
    allreduce_overlap records of at least 1 MiB (the thread method; any algorithm when None)."""
    df = cal.frame
    if df.empty or "benchmark" not in df:
        return None, "no allreduce_overlap records"
    d = df[(df["benchmark"] == "allreduce_overlap") & (df["status"] == "ok")]
    if "metrics.bytes" in d:
        d = d[d["metrics.bytes"] >= 2**20]
    if algo is not None and "metrics.algo" in d:
        d = d[d["metrics.algo"] == algo] if (d["metrics.algo"] == algo).any() else d
    if d.empty or "metrics.overlap_fraction" not in d:
        return None, "no allreduce_overlap records of 1 MiB or more"
    mean = float(d["metrics.overlap_fraction"].mean())
    src = f"{cal.path}: {len(d)} allreduce_overlap records >= 1 MiB, mean"
    if not 0 <= mean <= 1:  # a fraction of the allreduce: noise takes a measured mean past its bounds
        src += f" {mean:.3g}, taken as {min(1.0, max(0.0, mean)):g}"
    return min(1.0, max(0.0, mean)), src


def _triad(cal, threads):
    """(B/s, source) of the campaign's best STREAM triad at `threads` threads, or None."""
    d = cal.frame
    if d.empty or "metrics.op" not in d or "metrics.bytes_per_s" not in d:
        return None
    t = d[(d["kind"] == "kernel") & (d["status"] == "ok") & (d["metrics.op"] == "triad")]
    if "metrics.threads" in t:
        t = t[t["metrics.threads"] == threads]
    if t.empty:
        return None
    best = t.loc[t["metrics.bytes_per_s"].idxmax()]
    return float(best["metrics.bytes_per_s"]), f"triad at {threads} thread(s), {_ref(best)}"


def machine_rates(cal, site_facts, threads):
    """(peak FLOP/s, memory B/s, sources) of `threads` threads of the machine the campaign ran on.
    The peak: the node's times the share of its physical cores used. The bandwidth: the
    campaign's STREAM triad at that thread count where it ran one (one core nearly saturates a
    node's memory: 41 of 45 GB/s here), else the node's, undivided."""
    cores = site_facts.cores or 1
    share = min(1.0, threads / cores)
    src = {"calibration_peak": f"{site_facts.sources.get('peak_flops_sp')} x {threads}/{cores} cores"}
    triad = _triad(cal, threads)
    if triad is not None:
        bw, src["calibration_memory_bandwidth"] = triad
    else:
        bw = site_facts.node_memory_bandwidth
        src["calibration_memory_bandwidth"] = f"{site_facts.sources.get('memory_bandwidth')} (the node's, undivided)"
    return site_facts.node_peak * share, bw, src
