"""Regression detection between two campaigns (for example two software stacks).

Samples. samples(df, metrics) turns a campaign's ok records into a long frame, one row per
(point_id, metric, repeat): point_id, kind, benchmark, metric (the key under metrics, dots for
nested keys: phase_s.sync), better ("higher", "lower" or "" when unknown) and value. Other
sources (derived metrics) add rows of the same columns: concatenate them, or register a
function frame -> sample rows in SAMPLE_SOURCES; compare_samples is the one judge of them all.

Metrics. By default each kind's headline metrics:
    train       images_per_s (higher is better), step_time_s (lower)
    kernel      gflop_per_s (higher), time_s (lower)
    collective  busbw_bytes_per_s (higher), time_s (lower)
"all" takes every numeric metric whose direction direction() knows; named metrics take the
given direction (NAME:higher|lower) or the known one. Directions by name, first rule that fits:
    left out   counters (counters_*, counter_rates.*, samples, iters, steps, hits, ...), sizes
               and settings (bytes, flop, ranks, threads, busbw_factor, peak_flop_per_s, ...),
               spreads (*_cv)
    higher     *_per_s, gflop*, busbw*, algbw*, pct_*, *efficiency*, *speedup*, accuracy,
               *fraction*, *hit_rate
    lower      a word "s" (seconds) in the name: time_s*, *_s, phase_s.*, step_time_p95_s;
               latency, loss, rmse, epochs_to_target; memory: peak_rss_bytes*, memory.*,
               activation_bytes
A metric of unknown direction is still compared: its verdict is "changed" or "unchanged".

Judging. Records are matched by point_id (the hash of their parameters); each side's repeats
form a sample. The change is the ratio of the means less one, B / A - 1. It counts when it is at
least the threshold and, where both sides have at least 2 repeats, Welch's t-test agrees at
--alpha (0.01): "improved" or "regressed" by the metric's direction, else "unchanged". With a
single sample on a side no test is possible: the change counts above 3 x the threshold and the
verdict is marked "(single)". The threshold is --effect (5 %), or with --auto-threshold learned
from the baseline's own spread: max(--floor (1 %), 3 x the coefficient of variation of A's
repeats), three standard deviations of one baseline run; with a single baseline sample nothing
can be learned and --effect is used (threshold_from says so). The provenance of the two
campaigns (compiler, MPI, BLAS, libraries, environment) is compared key by key.

Beside other work. Where the records carry the load that other processes and a hypervisor put
on the harness's host while their point ran (harness_host), each row gets the most of it over
its repeats on each side (`beside_a`, `beside_b`, in cores; NaN where not recorded) and
`disturbed`: "A", "B" or "A and B" where it reached DISTURBED_CORES, as `dlscale accept` says: a
regression measured beside a busy neighbour may be the neighbour's. The verdict is not changed.

In another placement. Where the records carry the cores' cache-line round trip their threads
shared data across (metrics.cores, measure/core_latency.hpp), each row gets the largest over its
repeats on each side (`cores_a`, `cores_b`, ns) and `placement`: "differs" where one side's is
more than PLACEMENT_RATIO times the other's. A multi-threaded kernel or training run on cores that
share no cache can take twice as long as on cores that do, with the same binary (a VM moves its
vCPUs): such a change may be the placement's. The verdict is not changed."""

import json
import math
import re

import pandas as pd
from scipy import stats as st

from .derived import derived_samples

HEADLINE = {
    "train": ["images_per_s", "step_time_s"],
    "kernel": ["gflop_per_s", "time_s"],
    "collective": ["busbw_bytes_per_s", "time_s"],
}
DISTURBED_CORES = 0.25  # harness/run/proc_stat.hpp's kDisturbedCores
PLACEMENT_RATIO = 2.0  # round trips this far apart: cores sharing an L3 against cores sharing none
AUTO_K = 3.0  # the auto threshold is AUTO_K x the baseline's coefficient of variation
COLUMNS = ["point_id", "kind", "benchmark", "metric", "better", "value"]
SAMPLE_SOURCES = [derived_samples]  # functions campaign frame -> extra sample rows (COLUMNS)

_LEFT_OUT = re.compile(
    r"^(counter|samples$|iters$|warmup|steps$|steady_|count$|points$|ranks$|threads$|bytes$|flop$|r2$|parameters$|"
    r"busbw_factor$|peak_flop_per_s$|batch_per_rank$|forward_macs$|cache\.(bytes|hits|reads|fraction)$)|_cv$"
)
_HIGHER = re.compile(r"(_per_s$|^gflop|^busbw|^algbw|^pct_|efficiency|speedup|^accuracy|fraction|hit_rate$)")
_LOWER = re.compile(r"(^|[_.])s($|[_.])|latency|loss|rmse|^epochs_to_target$|^peak_rss_bytes|^memory\.|^activation_bytes$")


def direction(name):
    """'higher', 'lower' or None (unknown, or a counter or setting left out) for a metric name."""
    leaf = name.rsplit(".", 1)[-1]
    if _LEFT_OUT.search(name) or _LEFT_OUT.search(leaf):
        return None
    if _HIGHER.search(leaf):
        return "higher"
    return "lower" if _LOWER.search(name) else None


def parse_metric(spec):
    """'NAME' or 'NAME:higher|lower' -> (NAME, direction or None)."""
    name, _, d = spec.partition(":")
    if d not in ("", "higher", "lower") or not name:
        raise ValueError(f"--metric {spec}: expected NAME, NAME:higher or NAME:lower")
    return name, d or None


def _numeric(col):
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def samples(df, metrics=None, directions=None):
    """The long sample frame (COLUMNS) of a campaign frame's ok records. metrics: None or "all"
    (every numeric metric of known direction), a list of names (unknown direction allowed), or
    {kind: [names]}; directions: {name: 'higher'|'lower'} over the known ones."""
    directions = directions or {}
    if df.empty or "status" not in df:
        return pd.DataFrame(columns=COLUMNS)
    ok = df[df["status"] == "ok"]
    have = {c[len("metrics.") :] for c in ok.columns if c.startswith("metrics.") and _numeric(ok[c])}
    if metrics is None or metrics == "all":
        names = sorted(n for n in have if directions.get(n) or direction(n))
    elif isinstance(metrics, dict):
        names = sorted({n for v in metrics.values() for n in v} & have)
    else:
        names = [n for n in metrics if n in have]
    parts = []
    for name in names:
        rows = ok[["point_id", "kind", "benchmark", f"metrics.{name}"]].dropna()
        if rows.empty:  # every value null, or no ok record has it: an empty mask would select columns
            continue
        if isinstance(metrics, dict):
            rows = rows[rows["kind"].map(lambda k, n=name: n in metrics.get(k, ()))]
        rows = rows.rename(columns={f"metrics.{name}": "value"}).assign(metric=name)
        parts.append(rows.assign(better=directions.get(name) or direction(name) or "", value=rows["value"].astype(float)))
    return pd.concat(parts, ignore_index=True)[COLUMNS] if parts else pd.DataFrame(columns=COLUMNS)


def campaign_samples(df, metrics=None, directions=None):
    """samples() plus the rows of every SAMPLE_SOURCES function, chosen by the same metrics."""
    s = samples(df, metrics, directions)
    extra = [f(df) for f in SAMPLE_SOURCES]
    extra = [e for e in extra if e is not None and not e.empty]
    if not extra:
        return s
    e = pd.concat(extra, ignore_index=True)[COLUMNS]
    if isinstance(metrics, dict):
        e = e[[m in metrics.get(k, ()) for k, m in zip(e["kind"], e["metric"], strict=True)]]
    elif metrics not in (None, "all"):
        e = e[e["metric"].isin(metrics)]
    for name, d in (directions or {}).items():
        e.loc[e["metric"] == name, "better"] = d
    if metrics in (None, "all"):
        e = e[e["better"].isin(["higher", "lower"])]
    return pd.concat([s, e], ignore_index=True) if not s.empty else e.reset_index(drop=True)


def _threshold(xa, effect, auto_threshold, floor):
    """(threshold, where it came from, A's coefficient of variation)."""
    cv = xa.std(ddof=1) / abs(xa.mean()) if len(xa) > 1 else math.nan
    if not auto_threshold:
        return effect, "effect", cv
    if len(xa) < 2:
        return effect, "effect (one baseline sample: nothing to learn)", cv
    learned = AUTO_K * cv
    return (learned, f"auto {AUTO_K:g} x CV", cv) if learned > floor else (floor, "auto floor", cv)


def _judge(xa, xb, better, effect, alpha, auto_threshold, floor):
    threshold, source, cv = _threshold(xa, effect, auto_threshold, floor)
    change = xb.mean() / xa.mean() - 1
    single = len(xa) < 2 or len(xb) < 2
    if single:
        p, significant = math.nan, abs(change) >= 3 * threshold
    else:
        p = st.ttest_ind(xb, xa, equal_var=False).pvalue
        significant = abs(change) >= threshold and p < alpha  # a nan p (no spread) is not significant
        if xa.std() == 0 and xb.std() == 0 and abs(change) >= threshold:
            p, significant = 0.0, True  # identical repeats on both sides: the difference is exact
    if better in ("higher", "lower"):
        good = (change > 0) == (better == "higher")
        verdict = ("improved" if good else "regressed") if significant else "unchanged"
    else:
        verdict = "changed" if significant else "unchanged"
    return {
        "n_a": len(xa),
        "n_b": len(xb),
        "mean_a": xa.mean(),
        "mean_b": xb.mean(),
        "cv_a": cv,
        "change": change,
        "threshold": threshold,
        "threshold_from": source,
        "p_value": p,
        "verdict": verdict + (" (single)" if single else ""),
    }


def compare_samples(sa, sb, effect=0.05, alpha=0.01, auto_threshold=False, floor=0.01):
    """The judge: one row per (point_id, metric) with samples on both sides (see the module doc)."""
    rows = []
    gb = dict(iter(sb.groupby(["point_id", "metric"], sort=False))) if not sb.empty else {}
    for key, ga in sa.groupby(["point_id", "metric"], sort=True) if not sa.empty else ():
        if key not in gb:
            continue
        xa, xb = ga["value"].astype(float), gb[key]["value"].astype(float)
        if xa.mean() == 0:
            continue
        better = next((d for d in list(ga["better"]) + list(gb[key]["better"]) if d in ("higher", "lower")), "")
        head = {"point_id": key[0], "kind": ga["kind"].iloc[0], "benchmark": ga["benchmark"].iloc[0]}
        rows.append(head | {"metric": key[1], "better": better} | _judge(xa, xb, better, effect, alpha, auto_threshold, floor))
    return pd.DataFrame(rows)


def point_labels(df):
    """{point_id: 'benchmark k=v ...'} naming the parameters that tell a benchmark's points apart."""
    if df.empty or "point_id" not in df:
        return {}
    out = {}
    for bench, g in df.drop_duplicates("point_id").groupby("benchmark", sort=False):
        cols = [c for c in g.columns if c.startswith("params.") and g[c].map(repr).nunique() > 1]
        for _, r in g.iterrows():
            out[r["point_id"]] = " ".join([str(bench)] + [f"{c[7:]}={r[c]}" for c in cols if r[c] == r[c]])
    return out


def check_metrics(frames, names):
    """ValueError naming a metric that no frame has as a numeric metrics column (nor a sample source)."""
    extra = {m for df in frames for f in SAMPLE_SOURCES for m in f(df)["metric"]} if SAMPLE_SOURCES else set()
    for name in names:
        cols = [df[f"metrics.{name}"] for df in frames if f"metrics.{name}" in df]
        if name in extra:
            continue
        if not cols:
            raise ValueError(f"--metric {name}: no record has this metric")
        if not any(_numeric(c) for c in cols):
            raise ValueError(f"--metric {name}: not a numeric metric")


def compare_frames(a, b, effect=0.05, alpha=0.01, metrics=HEADLINE, directions=None, auto_threshold=False, floor=0.01):
    """compare_samples over the two campaign frames' samples (SAMPLE_SOURCES included), with a label per point."""
    sa, sb = campaign_samples(a, metrics, directions), campaign_samples(b, metrics, directions)
    t = compare_samples(sa, sb, effect, alpha, auto_threshold, floor)
    if not t.empty:
        labels = point_labels(a)
        t.insert(3, "label", [labels.get(p, b_) for p, b_ in zip(t["point_id"], t["benchmark"], strict=True)])
        mark_disturbed(t, a, b)
        mark_placement(t, a, b)
    return t


def host_load(df):
    """{point_id: the most cores that other processes and steal took beside any of its records}."""
    cols = ["harness_host.other_cores", "harness_host.steal_cores"]
    if df.empty or not any(c in df for c in cols):
        return {}
    load = sum(pd.to_numeric(df[c], errors="coerce").fillna(0.0) if c in df else 0.0 for c in cols)
    known = df[[c for c in cols if c in df]].notna().any(axis=1)
    return load[known].groupby(df.loc[known, "point_id"]).max().to_dict()


def mark_disturbed(t, a, b):
    """beside_a, beside_b and disturbed columns of a compare table (module doc)."""
    la, lb = host_load(a), host_load(b)
    t["beside_a"] = [la.get(p, math.nan) for p in t["point_id"]]
    t["beside_b"] = [lb.get(p, math.nan) for p in t["point_id"]]
    sides = [
        [s for s, x in (("A", xa), ("B", xb)) if x >= DISTURBED_CORES]
        for xa, xb in zip(t["beside_a"], t["beside_b"], strict=True)
    ]
    t["disturbed"] = [" and ".join(s) for s in sides]
    return t


def core_round_trip(df):
    """{point_id: the largest cores' round trip (ns) any of its records measured}."""
    col = "metrics.cores.round_trip_ns"
    if df.empty or col not in df:
        return {}
    trip = pd.to_numeric(df[col], errors="coerce")
    known = trip.notna()
    return trip[known].groupby(df.loc[known, "point_id"]).max().to_dict()


def mark_placement(t, a, b):
    """cores_a, cores_b and placement columns of a compare table (module doc)."""
    ca, cb = core_round_trip(a), core_round_trip(b)
    t["cores_a"] = [ca.get(p, math.nan) for p in t["point_id"]]
    t["cores_b"] = [cb.get(p, math.nan) for p in t["point_id"]]
    t["placement"] = [
        "differs" if max(x, y) > PLACEMENT_RATIO * min(x, y) else "" for x, y in zip(t["cores_a"], t["cores_b"], strict=True)
    ]  # NaN on either side compares False: not known to differ
    return t


def summary(t):
    """Counts per verdict (the '(single)' mark dropped)."""
    return {k: int(v) for k, v in t["verdict"].str.replace(" (single)", "", regex=False).value_counts().sort_index().items()}


def write_result(files, name, table, meta):
    """NAME.json ({meta..., rows: [...]}, NaN as null), NAME.csv and NAME.md into the FileSet."""
    from .tables import markdown

    rows = json.loads(table.to_json(orient="records")) if not table.empty else []
    files.text(f"{name}.json", json.dumps(meta | {"rows": rows}, indent=1, default=str) + "\n")
    table.to_csv(files.path(f"{name}.csv"), index=False)
    files.text(f"{name}.md", markdown(table) + "\n")


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
