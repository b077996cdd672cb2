"""The derived metrics of docs/derived_metrics.md, computed as the C++ verdict code computes them
(harness/verdict/derived.cpp, estimate.cpp): the values a criterion judges, one per group of
repeats it selects, each with its standard error and degrees of freedom (delta method over the
groups' means; no interval where a group behind the value has a single repeat).

    criterion_values(df, criterion, site, manifest, scaling) -> (values, why)

df is a campaign frame (records.load_campaign: columns experiment and axis.<name> from the
manifest), criterion a plan's acceptance entry (a dict as in the plan file), site the site file
(a dict), manifest the campaign's manifest.json (a dict) and scaling the experiment's mode.
"""

import math
import re

import pandas as pd
from scipy import stats as st

RATE = {"train": "metrics.images_per_s", "kernel": "metrics.gflop_per_s", "collective": "metrics.busbw_bytes_per_s"}
# the prefixes of the C++ site reader (harness/config/yaml_reader.cpp: parse_quantity)
PREFIX = {"": 1, "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
PREFIX.update({"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40})


def quantity(text, unit):
    """'10 GB/s' -> 1e10, '1.3 us' -> 1.3e-6, as the site reader's parse_quantity (spaces
    ignored, prefixes n u m k K M G T P Ki Mi Gi Ti); a plain number, quoted or not, is already in
    the SI unit. NaN, the infinities and negative values are refused, as there."""
    if isinstance(text, bool):
        raise ValueError(f"'{text}': expected a number with unit {unit}")
    if isinstance(text, int | float):
        value, factor = float(text), 1.0
    else:
        pattern = r"([0-9.eE+-]+)(?:(Ki|Mi|Gi|Ti|[numkKMGTP]?)" + re.escape(unit.replace(" ", "")) + ")?"
        m = re.fullmatch(pattern, str(text).replace(" ", ""))
        try:
            value = float(m.group(1)) if m else None
        except ValueError:
            value = None
        if value is None:
            raise ValueError(f"'{text}': expected a number with unit {unit} (prefixes n u m k M G T P Ki Mi Gi Ti)")
        factor = PREFIX[m.group(2) or ""]
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"'{text}' must be a finite, non-negative quantity")
    return value * factor


class Estimate:
    def __init__(self, value=math.nan, se=0.0, dof=0, n=0):
        self.value, self.se, self.dof, self.n = value, se, dof, n

    def half_width(self):
        return st.t.ppf(0.975, self.dof) * self.se if self.dof > 0 else 0.0


def mean_of(xs):
    xs = [float(x) for x in xs if x == x]
    n = len(xs)
    if n == 0:
        return Estimate()
    m = sum(xs) / n
    if n < 2:
        return Estimate(m, 0.0, 0, 1)
    s = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return Estimate(m, s / math.sqrt(n), n - 1, n)


def _combine(a, b, value):
    dof = min(a.dof, b.dof) if a.dof > 0 and b.dof > 0 else 0
    if dof == 0 or a.value == 0 or b.value == 0:
        return Estimate(value, 0.0, dof, a.n)
    return Estimate(value, abs(value) * math.hypot(a.se / a.value, b.se / b.value), dof, a.n)


def quotient(a, b):
    return _combine(a, b, a.value / b.value if b.value != 0 else math.nan)


def product(a, b):
    return _combine(a, b, a.value * b.value)


def scaled(a, k):
    return Estimate(a.value * k, a.se * abs(k), a.dof, a.n)


def reciprocal(a):
    return Estimate(1 / a.value, a.se / (a.value * a.value) if a.value else 0.0, a.dof, a.n)


def _same_text(a, b):
    if str(a) == str(b):
        return True
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _param(key):
    return "params." + key.replace("-", "_")


class Group:
    """The repeats of one measurement: the same point_id and the same axis values."""

    def __init__(self, rows):
        self.rows = rows
        self.first = rows.iloc[0]
        self.point_id = self.first["point_id"]
        self.kind = self.first["kind"]

    def metric(self, name):
        col = "metrics." + name
        return mean_of(self.rows[col].dropna().tolist()) if col in self.rows else Estimate()

    def axis(self, name, default):
        v = self.first.get(f"axis.{name}")
        return int(v) if v is not None and v == v else default

    def value_of(self, key):
        v = self.first.get(f"axis.{key}")
        if v is not None and v == v:
            return v
        v = self.first.get(_param(key))
        return None if v is None or (isinstance(v, float) and v != v) else v

    def params(self):
        return {k: v for k, v in self.first.items() if k.startswith("params.") and not (isinstance(v, float) and v != v)}

    def ranks(self):
        return int(self.params().get("params.ranks", 1))


def groups_of(df, experiment):
    d = df[(df["experiment"] == experiment) & (df["status"] == "ok")]
    axes = sorted(c for c in d.columns if c.startswith("axis."))
    keys = ["point_id"] + axes
    d = d.assign(_key=d[keys].astype(str).agg("|".join, axis=1)) if not d.empty else d
    return [] if d.empty else [Group(g) for _, g in d.groupby("_key", sort=False)]


def find_variant(groups, g, free, fixed):
    free = {_param(k) for k in free}
    best = None
    for o in groups:
        po, pg = o.params(), g.params()
        same = set(po) == set(pg) and all(k in free or _same_text(po[k], v) for k, v in pg.items())
        same = same and all(o.value_of(k) is not None and _same_text(o.value_of(k), v) for k, v in fixed.items())
        if same and (best is None or o.ranks() < best.ranks()):
            best = o
    return best


def node_cores(site, manifest):
    """Physical cores a node: the site's, or (`auto`) the campaign host's from its manifest."""
    cores = (site.get("node") or {}).get("cores", "auto")
    if cores != "auto" and int(cores) > 0:
        return int(cores)
    return int(((manifest.get("provenance") or {}).get("cpu") or {}).get("physical_cores", 0))


def _node_peak(site, manifest):
    peak = (site.get("node") or {}).get("peak_flops_sp")
    if peak is not None and peak != "auto":
        return quantity(peak, "FLOP/s")
    return float((manifest.get("measured_node_peak") or {}).get("flop_per_s", 0))


def pct_of_peak(g, ctx):
    cores, peak = node_cores(ctx["site"], ctx["manifest"]), _node_peak(ctx["site"], ctx["manifest"])
    if peak <= 0 or cores <= 0:
        return None, "no node peak or cores"
    if g.kind == "kernel":
        share = min(1.0, max(1, int(g.metric("threads").value)) / cores)
        return scaled(g.metric("gflop_per_s"), 1e9 * 100 / (peak * share)), ""
    if g.kind == "train":
        share = min(1.0, g.axis("ranks_per_node", 1) * g.axis("threads", 1) / cores)
        flop = 6 * g.metric("forward_macs").value
        return scaled(g.metric("images_per_s"), flop * 100 / (g.axis("nodes", 1) * peak * share)), ""
    return None, "pct_of_peak is defined for kernel and train records"


def busbw_fraction(g, ctx):
    bw = (ctx["site"].get("network") or {}).get("bandwidth")
    if g.kind != "collective" or not bw:
        return None, "no collective records or no network.bandwidth"
    return scaled(g.metric("busbw_bytes_per_s"), 1 / quantity(bw, "B/s")), ""


def _planned_ranks(assignment):
    """nodes x ranks_per_node of a manifest point's assignment (1 where not swept)."""
    return int(assignment.get("nodes", 1)) * int(assignment.get("ranks_per_node", 1))


def _own_base_refusal(g, ctx, free):
    """As derived.cpp's own_base_refusal: why g, its own base, is not one ("" at the fewest)."""
    for o in ctx["groups"]:
        if o.ranks() < g.ranks():
            po, pg, frees = o.params(), g.params(), {_param(k) for k in free}
            keys = {
                k.split(".", 1)[1].split(".")[0]
                for k in set(po) | set(pg)
                if k not in frees and not (k in po and k in pg and _same_text(po[k], pg[k]))
            }
            return f"no base scale with the same parameters ({o.ranks()} rank(s) differ in {', '.join(sorted(keys))})"
    points = (ctx["manifest"] or {}).get("points", [])
    mine = next((p for p in points if p.get("id") == g.first.get("harness_point")), None)
    if mine is not None:
        at = _planned_ranks(mine.get("assignment", {}))
        for p in points:
            n = _planned_ranks(p.get("assignment", {}))
            if p.get("experiment") == mine.get("experiment") and n < at:
                return f"no base scale: the planned point {p['id']} ({n} rank(s)) has no ok record"
    return ""


def _base(g, ctx):
    """(base group or None, why): as derived.cpp's base_of. `steps` is free (a run given in epochs
    takes fewer on more ranks); a group is its own base only at the experiment's fewest ranks,
    planned or run."""
    free = {"ranks", "steps"} | ({"batch_per_rank"} if ctx["scaling"] == "strong" else set())
    b = find_variant(ctx["groups"], g, free, {})
    if b is None:
        return None, "no base scale with the same parameters"
    why = _own_base_refusal(g, ctx, free) if b.ranks() == g.ranks() else ""
    return (None, why) if why else (b, "")


def efficiency(g, ctx):
    b, why = _base(g, ctx)
    if b is None:
        return None, why
    return scaled(quotient(g.metric("images_per_s"), b.metric("images_per_s")), b.ranks() / g.ranks()), ""


def learning_speedup(g, ctx):
    b, why = _base(g, ctx)
    if b is None:
        return None, why
    n, n0 = g.metric("epochs_to_target"), b.metric("epochs_to_target")
    if n.n == 0 or n0.n == 0:
        return None, "no epochs_to_target"
    t = g.metric("epoch_time_s")
    e = quotient(product(b.metric("epoch_time_s"), n0), product(t, n))
    e.n = t.n  # the judged group's, not the base's
    return e, ""


def speedup(g, ctx):
    r = find_variant(ctx["groups"], g, set(ctx["c"]["against"]), ctx["c"]["against"])
    if r is None:
        return None, "no reference variant with the same parameters"
    m = RATE[g.kind].split(".", 1)[1]
    return quotient(g.metric(m), r.metric(m)), ""  # n: the judged group's (quotient keeps a's)


def time_to_train_s(g, ctx):
    if g.kind != "train":
        return None, "time_to_train_s is defined for train records"
    ips = g.metric("images_per_s")
    return (scaled(reciprocal(ips), float(ctx["c"]["epochs"]) * float(ctx["c"]["images"])) if ips.n else None), ""


DERIVED = {
    "efficiency": efficiency,
    "speedup": speedup,
    "pct_of_peak": pct_of_peak,
    "busbw_fraction": busbw_fraction,
    "time_to_train_s": time_to_train_s,
    "learning_speedup": learning_speedup,
}


def _selected(c, groups):
    where, against = c.get("where") or {}, c.get("against") or {}
    out = []
    for g in groups:
        ok = all(g.value_of(k) is not None and _same_text(g.value_of(k), v) for k, v in where.items())
        ref = bool(against) and all(g.value_of(k) is not None and _same_text(g.value_of(k), v) for k, v in against.items())
        if ok and not ref:
            out.append(g)
    return out


def criterion_values(df, c, site, manifest, scaling="weak"):
    """([{point_id, value, se, dof, n, half_width}], why) for one criterion (a plan entry)."""
    groups = groups_of(df, c["experiment"]) if "experiment" in df else []
    ctx = {"c": c, "site": site, "manifest": manifest, "scaling": scaling, "groups": groups}
    values, why = [], ""
    for g in _selected(c, groups):
        if c.get("derived"):
            est, reason = DERIVED[c["derived"]](g, ctx)
        else:
            est, reason = g.metric(c["metric"]), ""
        if est is None or est.n == 0 or not math.isfinite(est.value):
            why = why or reason or f"no record has metrics.{c.get('metric')}"
            continue
        values.append(
            {"point_id": g.point_id, "value": est.value, "se": est.se, "dof": est.dof, "n": est.n, "half_width": est.half_width()}
        )
    return values, why


def derived_frame(df, criteria, site, manifest, scalings):
    """Every criterion's values as one frame: id, point_id, value, se, dof, n, half_width."""
    rows = []
    for c in criteria:
        values, _ = criterion_values(df, c, site, manifest, scalings.get(c["experiment"], "weak"))
        rows += [{"id": c["id"], **v} for v in values]
    return pd.DataFrame(rows)


def _campaign_context(df):
    """(site, manifest, {experiment: scaling}) of the campaign folder the frame was read from."""
    folder = df.attrs.get("folder")
    if not folder:
        return {}, {}, {}
    import os

    from .records import manifest_file, read_manifest, read_named_yaml
    from .reproduce import plan_info

    manifest = read_manifest(folder)
    site_file = manifest_file(manifest, "site_file", folder)
    named_by = f"{os.path.join(folder, 'manifest.json')}: site_file"
    site = read_named_yaml(site_file, named_by) if site_file else {}
    return site, manifest, plan_info(folder)[1]


SAMPLE_COLUMNS = ["point_id", "kind", "benchmark", "metric", "better", "value"]  # compare.COLUMNS
APPLIES = {"efficiency": ("train",), "pct_of_peak": ("train", "kernel"), "busbw_fraction": ("collective",)}


def derived_samples(df):
    """compare's samples of derived metrics, one per record: the rate of the record times its
    group's derived value over the group's mean rate (each is linear in the rate: efficiency,
    pct_of_peak, busbw_fraction; the latter two where the frame knows its campaign folder, for the
    site). The mean over a group is the group's value."""
    if df.empty or "experiment" not in df:
        return pd.DataFrame(columns=SAMPLE_COLUMNS)
    site, manifest, modes = _campaign_context(df)
    rows = []
    for exp in df["experiment"].dropna().unique():
        ctx = {"c": {}, "site": site, "manifest": manifest, "scaling": modes.get(exp, "weak"), "groups": groups_of(df, exp)}
        for g, (name, kinds) in ((g, a) for g in ctx["groups"] for a in APPLIES.items()):
            rate = RATE.get(g.kind)
            if g.kind not in kinds or rate not in g.rows:
                continue
            est, _ = DERIVED[name](g, ctx)
            x = g.metric(rate.split(".", 1)[1])
            if est is not None and est.n and x.value:
                k = est.value / x.value
                for v in g.rows[rate].dropna().astype(float):
                    rows.append(
                        {
                            "point_id": g.point_id,
                            "kind": g.kind,
                            "benchmark": g.first["benchmark"],
                            "metric": name,
                            "value": v * k,
                        }
                    )
    return pd.DataFrame(rows).assign(better="higher")[SAMPLE_COLUMNS] if rows else pd.DataFrame(columns=SAMPLE_COLUMNS)
