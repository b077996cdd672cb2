"""A campaign's measurements beside the published figures (results/published/*.csv, the columns
of shared/reference/published_figures.csv) with a verdict per row and per figure.

Which rows: those of the seed the campaign's plan reproduces (`reproduces: {seed: ...}` in the
plan file the manifest names), or the seed given. Every row maps to a measure or to a reason it
cannot be measured here (reproduce_measures.py: another system's result cited by the seed,
another machine's throughput or hardware, a tuning step of another code); such a row says
"not measurable: <reason>" (column `reason`) and counts for nothing. A measurable row the
campaign has nothing for says "no data" (the note says what is missing).

Models: a row's model names (several, ';'-separated) map to ours by MODEL_NAMES. Each of our
models measured is judged on its own, each of its configurations (variants: overlap, scheme,
comm teams, ...) too; the row is reproduced only when every judged (model, variant) is, and the
note lists each with its value and the published models not measured.

Scale: the published x (nodes, GPUs, processes) is compared with the campaign's rank count, one
rank standing for one node/GPU/process. The nearest measured scale within `scale_tolerance`
(SCALE_TOLERANCE, 5 % of the published x) is judged and said ("1500 ranks for 1536 gpus, within
5 %"); above the largest measured scale the row says "scale not reached" with the value at the
largest one, between measured scales "scale not measured".

Projections: reproduce_table(..., projected=P) takes the value of a row whose published scale is
above the largest measured scale of a (model, variant) from P instead: a callable
P(row, model, points) -> (value, note) or None (points: the measured Points of that model and
variant), or a frame with columns metric, model (ours), x, value and optionally note. The
`source` column says "measured" or "projected"; without P it is always "measured". A projected
value that is not reproduced names the term the model lacks there: P may return (value, note,
lacks) (a frame: a `lacks` column), from the projection file's `lacks:`; where none is given the
note says that it is not named.

Verdict of a judged row: the published value is a point v (with `value_high` a range [v, vh]);
"reproduced" when the measurement is within the relative tolerance of it (inside the widened
range), or, where the condition says "at least", "over" or ">", when it is no lower than
v (1 - tolerance). A figure is "reproduced" only when every measurable row is judged and
reproduced; "not reproduced" when any judged row is not; "incomplete" when some measurable row
is not judged (no data, scale not reached, another cut-off) and the judged ones pass; "not
judged" when no row is judged; "not measurable" when no row is measurable.
"""

import csv
import glob
import math
import os
import re
import sys

import pandas as pd

from .records import RecordError, manifest_file, ok_train, read_manifest, read_named_yaml
from .reproduce_measures import MODEL_NAMES, Unjudged, mapping, published_models

SCALE_NAMES = {"nodes", "gpus", "processes"}
SCALE_TOLERANCE = 0.05
ROW_KEYS = ("seed", "system", "figure", "model", "metric", "x_name", "x", "value", "value_high", "unit", "condition")


def load_published(folder):
    files = sorted(glob.glob(os.path.join(folder, "*.csv")))
    if not files:
        raise FileNotFoundError(f"{folder}: no published figures (*.csv)")
    return pd.concat([_published_file(f) for f in files], ignore_index=True)


PUBLISHED_COLUMNS = (
    "seed",
    "system",
    "site",
    "figure",
    "model",
    "metric",
    "x_name",
    "x",
    "value",
    "value_high",
    "unit",
    "condition",
)


def _published_file(path):
    """One published-figures CSV, with every column reproduce reads (a RecordError naming the file)."""
    try:
        df = pd.read_csv(path, dtype={"x": str})
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as e:
        raise RecordError(f"{path}: not a published-figures CSV ({e})") from None
    missing = [c for c in PUBLISHED_COLUMNS if c not in df.columns]
    if missing:
        raise RecordError(f"{path}: not a published-figures CSV: no column {', '.join(missing)}")
    for column, needed in (("value", True), ("value_high", False)):
        df[column] = [_published_number(path, k, column, v, needed) for k, v in enumerate(df[column])]
    return df


def _row_line(path, k):
    """The file line data row k starts on, as pandas reads the rows: blank and whitespace-only
    lines skipped, a quoted field running over several lines (counting rows would point past
    both). Only read for an error's message."""
    lines, end = [], 0
    csv.field_size_limit(sys.maxsize)  # any field pandas read
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        for row in reader:
            start, end = end + 1, reader.line_num
            if any(field.strip() for field in row) or len(row) > 1:
                lines.append(start)
    return lines[k + 1] if k + 1 < len(lines) else k + 2  # past the header's line


def _published_number(path, k, column, v, needed):
    """A published value as a float (an empty value_high: NaN); a RecordError naming the file's line."""
    text = "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip()
    if not text and not needed:
        return math.nan
    x = _num(text) if text else math.nan
    if not math.isfinite(x):
        raise RecordError(f"{path}:{_row_line(path, k)}: {column}: expected a finite number, got {text!r}")
    return x


def plan_info(campaign):
    """(seed, {experiment: scaling mode}) from the plan file the campaign's manifest names."""
    plan_file = manifest_file(read_manifest(campaign), "plan_file", campaign)
    if plan_file is None:
        return None, {}
    named_by = f"{os.path.join(campaign, 'manifest.json')}: plan_file"
    plan = read_named_yaml(plan_file, named_by)
    experiments = plan.get("experiments", [])
    if not isinstance(experiments, list) or not all(isinstance(e, dict) and "name" in e for e in experiments):
        raise RecordError(f"{plan_file} (named by {named_by}): experiments: expected a list of experiments, each with its name")
    reproduces = plan.get("reproduces") or {}
    seed = reproduces.get("seed") if isinstance(reproduces, dict) else None
    return seed, {e["name"]: e.get("scaling") for e in experiments}


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def judge(row, measured, tolerance):
    lo, hi = _num(row["value"]), _num(row["value_high"])
    if re.search(r"at least|over |> ?\d|efficiency >", str(row["condition"])):
        return measured >= lo * (1 - tolerance)
    if hi == hi:
        return lo * (1 - tolerance) <= measured <= hi * (1 + tolerance)
    return abs(measured - lo) <= tolerance * abs(lo)


def _text(v):
    return "" if v is None or v != v else str(v)


def _projection(projected, row, model, points):
    """(value, note, lacks) of the projection at the row's scale, or None (see the module doc)."""
    if projected is None:
        return None
    if callable(projected):
        got = projected(row, model, points)
        return None if got is None else (got[0], _text(got[1]), _text(got[2]) if len(got) > 2 else "")
    p = projected
    m = p[(p["metric"] == row["metric"]) & (p["model"] == model) & (p["x"].map(_num) == _num(row["x"]))]
    if m.empty:
        return None
    note, lacks = (_text(m[k].iloc[0]) if k in m else "" for k in ("note", "lacks"))
    return float(m["value"].iloc[0]), note, lacks


def _lacking(note, lacks):
    """A missed projection's note with the term the model lacks (module doc)."""
    said = f"the model lacks: {lacks}" if lacks else "the term the model lacks is not named: its projection file has no `lacks:`"
    return "; ".join(x for x in (note, said) if x)


def _ranks(n):
    return f"{n} rank" + ("" if n == 1 else "s")


def _at_scale(row, points, model, scale_tolerance, projected):
    """(value, at, source, note, lacks) at the published scale: the nearest measured one within the
    tolerance, or the projection above the largest; Unjudged otherwise."""
    want, x = _num(row["x"]), f"{row['x']} {row['x_name']}"
    near = min(points, key=lambda p: (abs(p.scale - want), -p.scale))
    if abs(near.scale - want) <= scale_tolerance * want:
        at = _ranks(near.scale) + ("" if near.scale == want else f" for {x}, within {scale_tolerance:.0%}")
        return near.value, at, "measured", near.note, ""
    top = max(points, key=lambda p: p.scale)
    if want > top.scale:
        proj = _projection(projected, row, model, points)
        if proj is not None:
            return proj[0], x, "projected", proj[1], proj[2]
        raise Unjudged(f"scale not reached ({top.scale} of {x})", top.note, top)
    raise Unjudged(f"scale not measured (nearest {near.scale} of {x})", near.note, near)


def _unjudged(who, u):
    p = u.point
    at = "" if p is None or p.scale is None else _ranks(p.scale)
    return dict(who=who, state="unjudged", verdict=u.verdict, note=u.note, value=math.nan if p is None else p.value, at=at)


def _decide(row, who, model, points, tol, scale_tol, projected):
    """The results of one (model, variant): one at the published scale, or one per point."""
    scaled = [p for p in points if p.scale is not None and not isinstance(p.scale, str)]
    at_scale = row["x_name"] in SCALE_NAMES and _num(row["x"]) == _num(row["x"])
    if at_scale and not points:  # a model this campaign did not train: the projection alone
        proj = _projection(projected, row, model, points)
        if proj is None:
            return [_unjudged(who, Unjudged("no data", "not trained in this campaign, and not projected"))]
        found = [(proj[0], f"{row['x']} {row['x_name']}", "projected", proj[1], proj[2])]
    elif at_scale and scaled:
        try:
            found = [_at_scale(row, scaled, model, scale_tol, projected)]
        except Unjudged as u:
            return [_unjudged(who, u)]
    else:
        found = [(p.value, "" if p.scale is None else f"{p.scale}", "measured", p.note, "") for p in points]
    out = []
    for value, at, source, note, lacks in found:
        ok = judge(row, value, tol)
        verdict = "reproduced" if ok else "not reproduced"
        if source == "projected" and not ok:
            note = _lacking(note, lacks)
        out.append(dict(who=who, state="judged", ok=ok, value=value, at=at, source=source, note=note, verdict=verdict))
    return out


def _by_variant(model, points):
    groups = {}
    for p in points:
        groups.setdefault(p.variant, []).append(p)
    return [(", ".join(x for x in (model, v) if x), model, pts) for v, pts in groups.items()]


def _entries(row, kind, measure, c, projected=None):
    """([(who, our model, points or Unjudged)], [published models with no record]); a model with
    no record but a projection at the row's scale comes with no points."""
    if kind == "campaign":
        try:
            return _by_variant("", measure(c, row)), []
        except Unjudged as u:
            return [("", None, u)], []
    train, out, missing, seen = c["train"], [], [], set()
    for pub in published_models(row["model"]):
        names = MODEL_NAMES.get(pub, ())
        recs = [(n, train[train["params.model"] == n]) for n in names] if "params.model" in train else []
        recs = [(n, d) for n, d in recs if not d.empty]
        unmeasured = [n for n in names if n not in {r for r, _ in recs} and _projection(projected, row, n, []) is not None]
        out += [(n, n, []) for n in unmeasured if n not in seen]
        seen.update(unmeasured)
        if not recs and not unmeasured:
            missing.append(f"{pub} ({', '.join(names) or 'no model of ours'})")
        for name, d in recs:
            if name in seen:
                continue
            seen.add(name)
            try:
                out += _by_variant(name, measure(d, row))
            except Unjudged as u:  # nothing measured for this row: a projection stands alone
                out.append((name, name, [] if _projection(projected, row, name, []) is not None else u))
    return out, missing


def _deviation(row, value):
    lo = _num(row["value"])
    return abs(value - lo) / abs(lo) if lo else abs(value)


def _detail(r, several):
    if not several:
        return ": ".join(x for x in (r["who"], r["note"]) if x)
    v = "" if r["value"] != r["value"] else f" {r['value']:.4g}" + (f" at {r['at']}" if r["at"] else "")
    return f"{r['who'] or 'measured'}:{v} {r['verdict']}" + (f" ({r['note']})" if r["note"] else "")


def _combined(row, results, missing, c):
    """measured, measured_at, source, note, verdict of a row from its (model, variant) results."""
    judged = [r for r in results if r["state"] == "judged"]
    if judged:
        shown = max(judged, key=lambda r: (not r["ok"], _deviation(row, r["value"])))
        verdict = "reproduced" if all(r["ok"] for r in judged) else "not reproduced"
    elif results:
        shown = next((r for r in results if r["verdict"] != "no data"), results[0])
        verdict = shown["verdict"]
    else:
        shown, verdict = dict(value=math.nan, at=""), "no data"
    notes = [_detail(r, len(results) > 1) for r in results]
    if missing:
        notes.append("not measured: " + ", ".join(missing))
    if not results and "params.model" in c["train"] and missing:
        notes.append("the campaign trained: " + ", ".join(sorted(set(c["train"]["params.model"].map(str)))))
    return dict(
        measured=shown["value"],
        measured_at=shown["at"],
        source=", ".join(sorted({r["source"] for r in judged})),
        note="; ".join(n for n in notes if n),
        verdict=verdict,
    )


def _row(row, c, tol, scale_tol, projected):
    out = {k: row.get(k, "") for k in ROW_KEYS}
    out.update(measured=math.nan, measured_at="", source="", note="", reason="", verdict="")
    kind, what = mapping(row)
    if kind == "reason":
        out.update(reason=what, verdict=f"not measurable: {what}")
        return out
    if kind == "unmapped":
        out.update(verdict="unmapped: no measure and no reason for this metric")
        return out
    results = []
    entries, missing = _entries(row, kind, what, c, projected)
    for who, model, pts in entries:
        if isinstance(pts, Unjudged):
            results.append(_unjudged(who, pts))
        else:
            results += _decide(row, who, model, pts, tol, scale_tol, projected)
    out.update(_combined(row, results, missing, c))
    return out


def _prepared(c):
    """The campaign frames with train records carrying their experiment's scaling mode."""
    c = dict(c)
    train = c.get("train")
    train = ok_train(c["all"]) if train is None else train
    if "scaling" not in train:
        modes = c.get("scaling") or {}
        exp = train["experiment"] if "experiment" in train else pd.Series(None, index=train.index, dtype=object)
        train = train.assign(scaling=[modes.get(e) for e in exp])
    c["train"] = train
    return c


def reproduce_table(campaign_frames, published, tolerance=0.10, scale_tolerance=SCALE_TOLERANCE, projected=None):
    """One row per published row: measured, measured_at, source, note, reason, verdict (module doc)."""
    c = _prepared(campaign_frames)
    rows = [_row(r, c, tolerance, scale_tolerance, projected) for _, r in published.iterrows()]
    cols = list(ROW_KEYS) + ["measured", "measured_at", "source", "note", "reason", "verdict"]
    return pd.DataFrame(rows, columns=cols)


def reproduce_campaign(df, modes, published, tolerance=0.10, scale_tolerance=SCALE_TOLERANCE, projected=None):
    """(rows, figures): a campaign's frame (and its experiments' scaling modes) against the
    published rows of its seed."""
    frames = {"all": df, "train": ok_train(df), "scaling": modes}
    rows = reproduce_table(frames, published, tolerance, scale_tolerance, projected)
    return rows, figure_verdicts(rows)


def _figure_verdict(measurable, judged):
    if measurable.empty:
        return "not measurable"
    if (judged["verdict"] == "not reproduced").any():
        return "not reproduced"
    if judged.empty:
        return "not judged"
    return "incomplete" if len(judged) < len(measurable) else "reproduced"


def figure_verdicts(table):
    """Per figure: reproduced only when every measurable row is judged and reproduced (module doc)."""
    rows = []
    for (seed, fig), g in table.groupby(["seed", "figure"], sort=False):
        measurable = g[~g["verdict"].astype(str).str.startswith("not measurable")]
        judged = measurable[measurable["verdict"].isin(["reproduced", "not reproduced"])]
        rows.append(
            {
                "seed": seed,
                "figure": fig,
                "rows": len(g),
                "measurable": len(measurable),
                "judged": len(judged),
                "reproduced": int((judged["verdict"] == "reproduced").sum()),
                "verdict": _figure_verdict(measurable, judged),
            }
        )
    return pd.DataFrame(rows, columns=["seed", "figure", "rows", "measurable", "judged", "reproduced", "verdict"])
