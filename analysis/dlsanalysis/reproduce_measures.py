"""What reproduce.py judges with: which of our models a published model name stands for
(MODEL_NAMES), which systems are a seed's own (OWN_SYSTEMS), how a published metric is measured
here (MODEL_MEASURES on one model's training records, CAMPAIGN_MEASURES on the whole campaign)
or why it cannot be (REASONS). A key is a metric, or (metric, x) where one metric names several
steps. A measure returns Points (scale, value, note, variant) or raises Unjudged (a measurable
row that this campaign cannot judge, and why).

Configurations (variants): the records of one model are split by every params.* column that
varies among them, and by the plan's scaling mode, apart from the scale and batch columns and
what follows from the scale (NOT_VARIANT). Each variant is measured on its own and named in the
row (`overlap=thread, comm_teams=2`). A variant without the 1-rank base borrows the 1-rank runs
when it differs from them only in communication settings (COMM: they do nothing on one rank).
A row whose condition names its configuration keeps only the records of it ("EASGD tau=4":
params.easgd.tau 4; "error cut-off 20 %": the --target it means, see _wanted_target)."""

import math
import re
from collections import namedtuple

import pandas as pd

from .collectives import busbw_table
from .convergence import layer_share_table
from .kernels import kernel_table
from .scaling import breakdown_table, scaling_table, speedup_table

Point = namedtuple("Point", "scale value note variant", defaults=("", ""))


class Unjudged(Exception):
    """A measurable row this campaign cannot judge: verdict ("no data", "other cut-off (...)") and why."""

    def __init__(self, verdict, note="", point=None):
        super().__init__(verdict)
        self.verdict, self.note, self.point = verdict, note, point


# published model (parentheses, the data set, stripped) -> our models (apps/models/registry.cpp)
MODEL_NAMES = {
    "ConvNet-CIFAR10": ("cifar10_full", "cifar10_quick"),
    "CaffeNet": ("caffenet",),
    "AlexNet": ("alexnet",),
    "GoogLeNet": ("googlenet",),
    "VGG-16": ("vgg16",),
    "ResNet-50": ("resnet50",),
    "Inception-v3": ("inception_v3",),
    "CVAE": ("cvae",),  # DEEPEX's: 3 conv 128, latent 3; cvae_molecules is another network
    "CNN": ("cifar10_quick",),  # seed 000 names no network; its plan's small CNN
}
MODEL_ALIASES = {"all four": ("ConvNet-CIFAR10", "CaffeNet", "AlexNet", "GoogLeNet")}  # seed 002
RMSE_MODELS = {"cvae", "cvae_molecules"}  # their held-out error is the reconstruction RMSE

# the systems each seed's authors ran; another one in the `system` column is cited, not theirs
OWN_SYSTEMS = {
    "000_e761621c6cbe39f1.txt": {"Chainer", "ChainerMN"},  # both ported to the K computer by them
    "001_b9b80fab47ad1ee4.txt": {"swFLOW"},
    "002_2748a39d5162592e.txt": {"Intel-Caffe", "MXNet", "TensorFlow"},  # all three built and run there
    "003_860fe18117d0e9ac.txt": {"Cray PE DL Plugin", "Cray PE DL Plugin vs gRPC", "-"},
    "004_857569f405b41554.txt": {"DEEPEX"},
}

_K_STEP = "a before/after of one of Chainer's tuning steps on the K computer ({x}): our code has no such before"
REASONS = {
    "samples_per_s_per_node": "another machine's absolute throughput ({site})",
    "speedup_vs_k40": "a ratio to another machine's hardware (a K40 GPU)",
    "slowdown_vs_k40": "a ratio to another machine's hardware (a K40 GPU)",
    "slowdown_vs_p100": "a ratio to another machine's hardware (a P100 GPU)",
    "best_openmp_threads": "another machine's core count (the best thread count of a {site} node)",
    "speedup_cpe_vs_mpe": "another processor's cores (the SW26010's compute elements against its management element)",
    "min_read_bandwidth": "another machine's step time in Eq. 2 ({site}); the formula is checked by io_estimate",
    "speedup_vs_grpc": "another system's transport (TensorFlow's gRPC parameter servers on {site})",
    "kernel_time_reduction": _K_STEP,
    "total_time_reduction": _K_STEP,
    "section_time_reduction": _K_STEP,
    ("total_time_reduction", "underflow_fix"): "the SPARC64's underflow exceptions in the K computer's Python "
    "build: the underflow kernels are timed here (tables: kernels), the training has no before/after",
    "overall_speedup": "the product of the K computer's tuning steps: no untuned before here",
    "overall_efficiency": "the tuned training's fraction of the K computer's peak: no training FLOP rate against a peak here",
    "transpose_opt_gain": "swFLOW's layout transposes around swDNN on the SW26010: the transposes are timed "
    "here (tables: kernels), not a training with and without them",
    "linear_range_max_processes": "a range read off the figure's curve (efficiency above {value} up to x processes), "
    "not a value at one scale: the parallel_efficiency rows judge the curve",
}

NOT_VARIANT = {"model", "ranks", "batch_per_rank", "batch", "steps", "seed", "buckets", "lr", "workers", "alpha"}
NOT_VARIANT |= {"comm_teams_ignored", "server_idle_sleep_us", "role"}
COMM = {"overlap", "comm_teams", "comm_threads_per_team", "bucket_mb", "allreduce", "gradient_path"}


def published_models(text):
    """'ResNet-50 (ImageNet;AtomAI)' -> ['ResNet-50']; 'CaffeNet;AlexNet' -> both; '-' -> []."""
    parts = [p.strip() for p in re.split(r"[;,]| and ", re.sub(r"\(.*?\)", "", str(text)))]
    out = []
    for p in parts:
        out += MODEL_ALIASES.get(p, (p,)) if p and p != "-" else ()
    return out


def another_system(row):
    """The cited system's name when the row is another system's result, else None."""
    system = str(row["system"])
    own = OWN_SYSTEMS.get(row["seed"])
    cited = "(cited)" in system if own is None else system not in own
    return system.replace("(cited)", "").strip() if cited else None


def _last(col):
    return col.split(".")[-1]


def _fmt(v):
    if isinstance(v, float):
        return "-" if v != v else f"{v:g}"
    return str(v)


def variant_columns(d):
    cands = [c for c in d.columns if (c.startswith("params.") or c == "scaling") and _last(c) not in NOT_VARIANT]
    return [c for c in cands if d[c].map(_fmt).nunique() > 1]


def _same_config(g, one):
    """The 1-rank records with g's configuration apart from the communication settings."""
    ref, mask = g.iloc[0], pd.Series(True, index=one.index)
    for c in one.columns:
        if c.startswith("params.") and _last(c) not in NOT_VARIANT | COMM:
            mask &= one[c].map(_fmt) == _fmt(ref[c])
    return one[mask]


def variants(d, pool=None, serial=False):
    """(label, records, base note) per configuration; see the module doc. serial: every variant's
    base is the model's 1-rank runs of pool (the serial run, whatever its scheme)."""
    d = d.assign(ranks=d["metrics.ranks"].astype(int))
    pool = d if pool is None else pool.assign(ranks=pool["metrics.ranks"].astype(int))
    cols = variant_columns(d)
    label = pd.Series("", index=d.index)
    if cols:
        label = d[cols].apply(lambda r: ", ".join(f"{c.split('.', 1)[-1]}={_fmt(v)}" for c, v in r.items()), axis=1)
    one = pool[pool["ranks"] == 1]
    for lab, g in d.groupby(label, sort=True):
        if g["ranks"].min() > 1 and not one.empty:
            base = one if serial else _same_config(g, one)
            if not base.empty:
                why = "the serial run" if serial else "communication settings do nothing on one rank"
                yield lab, pd.concat([base, g]), f", the 1-rank base borrowed ({why})"
                continue
        yield lab, g, ""


def row_config(row):
    """{column: value} the row's condition names ("EASGD tau=4", "tau=1, batch 32")."""
    m = re.search(r"\btau\s*=\s*(\d+)", str(row["condition"]))
    return {"params.easgd.tau": float(m.group(1))} if m else {}


def _configured(d, row):
    for col, want in row_config(row).items():
        d = d[d[col].map(_fmt) == _fmt(want)] if col in d else d.iloc[0:0]
        if d.empty:
            raise Unjudged("no data", f"no record with {col.split('.', 1)[1]}={_fmt(want)}")
    return d


def _mode(d, mode):
    if mode:
        d = d[d["scaling"] == mode]
        if d.empty:
            raise Unjudged("no data", f"no {mode}-scaling experiment of this model")
    return d


def _efficiency(mode=None, serial=False, transform=None):
    """Throughput efficiency E(p) = (X(p)/X(p0)) / (p/p0) of each variant above its base p0
    (transform: a function of E, e.g. the per-process slowdown 1 - E against the serial run)."""

    def f(d, row):
        pool = _mode(d, mode)
        d = _configured(pool, row)
        pts = []
        for label, g, borrowed in variants(d, pool, serial):
            for r in scaling_table(g).itertuples():
                if r.ranks > r.base_ranks:
                    e = transform(r.efficiency) if transform else r.efficiency
                    pts.append(Point(int(r.ranks), float(e), f"base {int(r.base_ranks)} rank(s){borrowed}", label))
        if not pts:
            raise Unjudged("no data", f"one scale only ({sorted(set(d['metrics.ranks'].astype(int)))} ranks)")
        return pts

    return f


def _speedup_points(d, column, per_rank):
    pts = []
    for label, g, borrowed in variants(d):
        t = speedup_table(g)
        for r in t.itertuples():
            v = getattr(r, column, math.nan) / ((r.ranks / r.base_ranks) if per_rank else 1.0)
            if r.ranks > r.base_ranks and v == v:
                pts.append(Point(int(r.ranks), float(v), f"base {int(r.base_ranks)} rank(s){borrowed}", label))
    if not pts:
        raise Unjudged("no data", "no two scales with this quantity")
    return pts


def _per_epoch_efficiency(d, row):
    if "metrics.epoch_time_s" not in d:
        raise Unjudged("no data", "no epoch times")
    return _speedup_points(_configured(d, row), "per_epoch_speedup", per_rank=True)


def _parse_target(text):
    m = re.fullmatch(r"\s*(accuracy|rmse|loss)\s*(>=|<=|=)\s*([0-9.eE+-]+)\s*", str(text))
    return (m.group(1), float(m.group(3))) if m else None


def _is_target(text, want):
    got = _parse_target(text)
    return got is not None and got[0] == want[0] and math.isclose(got[1], want[1])


def _wanted_target(model, row):
    """The --target an "error cut-off E %" means: rmse<=E for the CVAE, accuracy>=1-E else; None: any."""
    m = re.search(r"error cut-off (\d+(?:\.\d+)?) ?%", str(row["condition"]))
    if not m:
        return None
    e = float(m.group(1)) / 100
    return ("rmse", e) if model in RMSE_MODELS else ("accuracy", round(1 - e, 12))


def _learning_speedup(d, row):
    """S_L at the one cut-off the campaign measured: only the runs whose --target is the row's."""
    if "params.target" not in d or d["params.target"].isna().all():
        raise Unjudged("no data", "no run with a --target")
    d = _configured(d[d["params.target"].notna()], row)
    want = _wanted_target(d["params.model"].iloc[0], row)
    if want is not None:
        hit = d["params.target"].map(lambda t: _is_target(t, want))
        if not hit.any():
            got = ", ".join(sorted(set(d["params.target"].map(str))))
            sign = "<=" if want[0] == "rmse" else ">="
            raise Unjudged(f"other cut-off (campaign {got}; published {want[0]}{sign}{want[1]:g})")
        d = d[hit]
    if "metrics.epochs_to_target" not in d or d["metrics.epochs_to_target"].isna().all():
        raise Unjudged("no data", "no run reached its target")
    return _speedup_points(d, "learning_speedup", per_rank=False)


def _layer_share(kind):
    def f(d, row):
        t = layer_share_table(d)
        if t.empty:
            raise Unjudged("no data", "no per-layer times")
        return [Point(int(r["ranks"]), float(r[f"{kind}_share"])) for _, r in t.iterrows()]

    return f


def _model_quantity(metric, batch_x=False):
    """A model's count (parameters, bytes): full-width models only; heap at the published batch."""

    def f(d, row):
        if metric not in d or d[metric].isna().all():
            raise Unjudged("no data", f"no {metric.split('.', 1)[1]} recorded")
        if "params.width" in d:
            d = d[d["params.width"].fillna(1.0).astype(float) == 1.0]
        if d.empty:
            raise Unjudged("no data", "no full-width run of this model")
        if batch_x:
            d = d[d["metrics.batch_per_rank"].map(_fmt) == str(row["x"])]
            if d.empty:
                raise Unjudged("no data", f"no full-width run at batch {row['x']}")
            return [Point(None, float(d[metric].mean()), f"mean of {len(d)} run(s)")]
        return [Point(None, float(d[metric].dropna().iloc[0]))]

    return f


def _engine_speedup(d, row):
    """oneDNN (MKL2017's successor) over the BLAS im2col engine, one rank, most threads timed with both."""
    if "params.backend" not in d or "params.threads" not in d:
        raise Unjudged("no data", "no backend or thread sweep")
    d = d[d["metrics.ranks"].astype(int) == 1]
    ips = d.groupby(["params.threads", "params.backend"])["metrics.images_per_s"].mean()
    both = [t for t in ips.index.get_level_values(0).unique() if {(t, "onednn"), (t, "openblas")} <= set(ips.index)]
    if not both:
        raise Unjudged("no data", "no thread count timed with both onednn and openblas")
    t = max(both)
    return [Point(1, float(ips[(t, "onednn")] / ips[(t, "openblas")]), f"onednn / openblas at {_fmt(t)} threads")]


def _ranks_vs_threads(d, row):
    """Seed 000 Fig. 2: data parallel R ranks x 1 thread against 1 rank x R threads, same cores."""
    if "params.threads" not in d:
        raise Unjudged("no data", "no thread counts")
    r, t = d["metrics.ranks"].astype(int), d["params.threads"].astype(int)
    for n in sorted(set(r[t == 1]) & set(t[r == 1]), reverse=True):
        if n > 1:
            a, b = d[(r == n) & (t == 1)], d[(r == 1) & (t == n)]
            v = a["metrics.images_per_s"].mean() / b["metrics.images_per_s"].mean()
            return [Point(None, float(v), f"{n} ranks x 1 thread against 1 rank x {n} threads")]
    raise Unjudged("no data", "no ranks x threads pair at the same core count")


def _comm_over_compute(d, row):
    """Seed 004 Figs. 6, 8: sync time / (forward + backward) by scale; 1 where they are equal."""
    if "metrics.phase_s.sync" not in d:
        raise Unjudged("no data", "no phase times")
    pts = []
    for label, g, _ in variants(_configured(d, row)):
        for r in breakdown_table(g).itertuples():
            if r.forward_s + r.backward_s > 0:  # records without phase times carry zeros
                pts.append(
                    Point(int(r.ranks), float(r.sync_s / (r.forward_s + r.backward_s)), "sync / (forward + backward)", label)
                )
    if not pts:
        raise Unjudged("no data", "no forward and backward times")
    return pts


def _conv_efficiency(c, row):
    """The GEMM convolution (im2col + OpenBLAS) at the most threads: mean fraction of peak."""
    t = kernel_table(c["all"]) if "kind" in c["all"] else pd.DataFrame()
    if not t.empty:
        t = t[t["op"].str.startswith("conv") & t["pct_of_peak"].notna() & (t["backend"] == "openblas")]
    if t.empty:
        raise Unjudged("no data", "no OpenBLAS convolution timing with a fraction of peak")
    t = t[t["threads"] == t["threads"].max()]
    return [Point(None, t["pct_of_peak"].mean() / 100, f"openblas, mean over {len(t)} conv timings")]


def _reduction_gain(c, row):
    t = busbw_table(c["all"]) if "kind" in c["all"] else pd.DataFrame()
    t = t[t["op"] == "allreduce"] if not t.empty else t
    if t.empty:
        raise Unjudged("no data", "no allreduce timings")
    t = t[t["ranks"] == t["ranks"].max()]
    t = t[t["bytes"] == t["bytes"].max()]
    mpi, other = t[t["algo"] == "mpi"], t[t["algo"] != "mpi"]
    if mpi.empty or other.empty:
        raise Unjudged("no data", "no MPI_Allreduce and custom algorithm at the same size")
    best = other.loc[other["time_s"].idxmin()]
    note = f"{best['algo']} vs MPI_Allreduce at {int(best['bytes'])} B, {int(best['ranks'])} ranks"
    return [Point(None, float(mpi["time_s"].iloc[0] / best["time_s"] - 1), note)]


MODEL_MEASURES = {
    "weak_scaling_efficiency": _efficiency("weak"),
    "strong_scaling_efficiency": _efficiency("strong"),
    "throughput_scaling_efficiency": _efficiency(),
    "scaling_efficiency": _efficiency(),
    "parallel_efficiency": _efficiency(),
    "per_process_slowdown_vs_serial": _efficiency(serial=True, transform=lambda e: 1 - e),
    "per_epoch_parallel_efficiency": _per_epoch_efficiency,
    "learning_speedup": _learning_speedup,
    "compute_equals_communication": _comm_over_compute,
    "time_share_conv_backward": _layer_share("conv_backward"),
    "time_share_conv_forward": _layer_share("conv_forward"),
    "time_share_fully_connected": _layer_share("fully_connected"),
    "parameters": _model_quantity("metrics.parameters"),
    "weight_bytes_exchanged": _model_quantity("metrics.parameter_bytes"),
    "heap_bytes": _model_quantity("metrics.peak_rss_bytes", batch_x=True),
    "engine_speedup_mkl2017_vs_default": _engine_speedup,
    ("total_time_reduction", "data_parallel"): _ranks_vs_threads,
}
CAMPAIGN_MEASURES = {
    "gemm_convolution_efficiency": _conv_efficiency,
    "custom_reduction_gain_vs_mpi_allreduce": _reduction_gain,
}


def _mapped(row, key):
    reason = REASONS.get(key)
    if reason:
        return "reason", reason.format(**{k: row[k] for k in ("site", "x", "value")})
    if key in CAMPAIGN_MEASURES:
        return "campaign", CAMPAIGN_MEASURES[key]
    if key in MODEL_MEASURES:
        if not any(m in MODEL_NAMES for m in published_models(row["model"])):
            return "reason", f"no model of ours stands for '{row['model']}'"
        return "model", MODEL_MEASURES[key]
    return None


def mapping(row):
    """("model", measure) | ("campaign", measure) | ("reason", text) | ("unmapped", None) for a
    published row: another system's first, then what (metric, x) names, then the metric."""
    cited = another_system(row)
    if cited:
        return "reason", f"another system's result ({cited}), cited by the seed"
    return _mapped(row, (row["metric"], str(row["x"]))) or _mapped(row, row["metric"]) or ("unmapped", None)
