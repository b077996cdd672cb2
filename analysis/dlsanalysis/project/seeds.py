"""The projections a seed's published scaling figures are judged against (`dlscale reproduce`).

harness/projections/*.yaml: `seed:` (the seed file) and `projections:`, each a request
(run.spec_from's keys) with a `name`, the `site` (the seed's machine), the published `figure`
and `metric`, our `model`, optionally a `condition` (text of the published row's condition it
applies to, e.g. "tau=4"), `why` (where each assumed number comes from) and `lacks` (the term
the model lacks for this figure, which a row the projection misses names). Each is calibrated on
the campaign being reproduced when it holds one-rank training records of the model at the
requested image size, else on the shipped calibration (results/calibration/localhost), and the
note says which. A request that cannot be projected (no calibration of the model anywhere) gives
no value, and its row stays "scale not reached" with the reason in the log.
"""

import glob
import math
import os
import sys
from dataclasses import replace

import yaml

from .calibration import load_calibration, profiles
from .cli import DEFAULT_CALIBRATION, ROOT, requests
from .model import SpecError
from .run import pick_profiles, project, spec_from
from .sync_floor import SyncFloor

METRIC_COLUMN = {
    "weak_scaling_efficiency": "efficiency",
    "strong_scaling_efficiency": "efficiency",
    "throughput_scaling_efficiency": "efficiency",
    "parallel_efficiency": "efficiency",
    "per_process_slowdown_vs_serial": "slowdown",
    "per_epoch_parallel_efficiency": "per_epoch_efficiency",
    "learning_speedup": "learning_speedup",
}


def projection_files(seed, root=ROOT):
    out = []
    for path in sorted(glob.glob(os.path.join(root, "harness", "projections", "*.yaml"))):
        with open(path) as f:
            doc = yaml.safe_load(f) or {}
        if doc.get("seed") == seed:
            out.append((path, doc))
    return out


def _has_model(cal, spec):
    """Whether the campaign trained the network a Spec asks for (its image, channels and width
    multiplier as pick_profiles takes them)."""
    if cal is None:
        return False
    return bool(pick_profiles(profiles(cal, spec.model), spec.backend, spec.image, spec.image_w, spec.channels, spec.width))


def _loaded(campaign):
    try:
        return load_calibration(campaign)
    except (ValueError, OSError):
        return None


def _value(row, column):
    if column == "slowdown":
        return 1.0 - row["efficiency"]
    v = row.get(column)
    return math.nan if v is None else float(v)


def _without_floor(spec, cal, site, root, column):
    """{x: value} of the same projection without its sync floor (sync_floor.py), which a note
    gives beside the value with it; {} where the request has none."""
    if not spec.sync_floor.given():
        return {}
    p = project(replace(spec, sync_floor=SyncFloor()), cal, site, root)
    return {int(r["x"]): _value(r, column) for r in p.rows}


def run_seed(seed, campaign, root=ROOT, calibration=DEFAULT_CALIBRATION):
    """([{figure, metric, model, condition, x, value, note}], [(name, Projection, request)])."""
    values, done = [], []
    own, shipped = _loaded(campaign), None  # each campaign read once
    for path, doc in projection_files(seed, root):
        try:
            entries = requests(doc, path)
        except SpecError as e:
            print(f"dlsanalysis reproduce: {e}", file=sys.stderr)
            continue
        for i, (name, site, req, it) in enumerate(entries):
            where = f"{path}: projections[{i}] ({name})"
            try:
                spec = spec_from(req, where)
                mine = _has_model(own, spec)
                if not mine and shipped is None:
                    shipped = load_calibration(calibration)
                col = METRIC_COLUMN.get(it["metric"], "efficiency")
                p = project(spec, own if mine else shipped, site, root)
                bare = _without_floor(spec, own if mine else shipped, site, root, col)
            except (ValueError, OSError) as e:
                print(f"dlsanalysis reproduce: projection {where}: {e}", file=sys.stderr)
                continue
            done.append((name, p, it))
            by = "this campaign" if mine else f"the shipped calibration ({os.path.relpath(calibration, root)})"
            for r in p.rows:
                note = f"projected on {p.site.name} from {by}, {p.spec.scheme.name}; {it.get('why', '')}".rstrip("; ")
                if bare:
                    note += f"; {spec.sync_floor.describe(p.sync_floor_s)}; without it: {bare[int(r['x'])]:.3g}"
                values.append(
                    dict(
                        figure=it["figure"],
                        metric=it["metric"],
                        model=it["model"],
                        condition=str(it.get("condition", "")),
                        x=int(r["x"]),
                        value=_value(r, col),
                        note=note,
                        lacks=str(it.get("lacks") or "").strip(),
                    )
                )
    return values, done


def plotted_column(metric):
    """The projection's column a published metric is drawn on (a slowdown as its efficiency)."""
    col = METRIC_COLUMN.get(metric, "efficiency")
    return "efficiency" if col in ("slowdown", "learning_speedup") else col


def published_points(published, it):
    """[(x, value, label)]: the published rows of a projection request's figure, metric, model
    and condition, on its plotted column's axis (a slowdown s as the efficiency 1 - s; a learning
    speed-up is not drawn)."""
    from ..reproduce_measures import MODEL_NAMES, published_models

    col = METRIC_COLUMN.get(it["metric"], "efficiency")
    out = []
    if col == "learning_speedup" or published is None:
        return out
    for _, r in published.iterrows():
        ours = {m for name in published_models(r["model"]) for m in MODEL_NAMES.get(name, ())}
        if r["figure"] != it["figure"] or r["metric"] != it["metric"] or it["model"] not in ours:
            continue
        if str(it.get("condition", "")) not in str(r["condition"]):
            continue
        try:
            x, v = float(r["x"]), float(r["value"])
        except (TypeError, ValueError):
            continue
        out.append((x, 1 - v if col == "slowdown" else v, f"{r['figure']} {r['value']}"))
    return out


def seed_projections(seed, campaign, files, sub, published=None):
    """Runs the seed's projections and stages each in the FileSet `files` under SUB/projections/NAME/
    (its plot with the published points); (the reproduce hook or None, [(name, plot path)])."""
    from . import output

    values, done = run_seed(seed, campaign)
    plots = []
    for name, p, it in done:
        paths = output.stage(
            p,
            files,
            os.path.join(sub, "projections", name),
            published=published_points(published, it),
            column=plotted_column(it["metric"]),
        )
        plots.append((name, next(f for f in paths if f.endswith(".png"))))
    return (lookup(values) if values else None), plots


def lookup(values):
    """The reproduce hook: (row, our model, points) -> (value, note, lacks) or None."""

    def find(row, model, points):
        for v in values:
            same = v["figure"] == row["figure"] and v["metric"] == row["metric"] and v["model"] == model
            if same and v["x"] == int(float(row["x"])) and v["condition"] in str(row["condition"]):
                return v["value"], v["note"], v["lacks"]
        return None

    return find
