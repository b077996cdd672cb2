"""A projection's outputs: records of kind `projection` (one per scale, JSON Lines), one JSON
of inputs and outputs for other tools, a table (CSV and Markdown), the alpha-beta table as its
own CSV, and a plot of projected efficiency against scale, the published points beside it.
The files are written as one set (outputs.FileSet): a failure leaves none of a new set."""

import json
import math
import os

import pandas as pd

from .. import tables

SCHEMA = "dlscale.record/1"
TABLE_COLUMNS = [
    "x",
    "ranks",
    "batch_per_rank",
    "global_batch",
    "forward_s",
    "backward_s",
    "update_s",
    "comm_s",
    "comm_exposed_s",
    "sync_floor_extra_s",
    "input_s",
    "step_s",
    "images_per_s",
    "efficiency",
    "efficiency_compute_x0.5",
    "efficiency_compute_x2",
    "per_epoch_speedup",
    "per_epoch_efficiency",
    "learning_speedup",
]


def _clean(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _clean(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_clean(x) for x in v]
    return v


def spec_dict(spec):
    d = dict(spec.__dict__)
    d["scheme"] = dict(spec.scheme.__dict__)
    d["sync_floor"] = dict(spec.sync_floor.__dict__)
    return d


def as_json(p):
    return _clean(
        dict(
            kind="projection",
            site=p.site.name,
            site_file=p.site.path,
            calibration=p.calibration,
            request=spec_dict(p.spec),
            inputs=p.inputs,
            assumptions=p.assumptions,
            rows=p.rows,
        )
    )


def records(p):
    out = []
    for r in p.rows:
        params = dict(
            site=p.site.name,
            model=p.spec.model,
            scheme=p.spec.scheme.name,
            scaling=p.spec.scaling,
            unit=p.spec.unit,
            x=r["x"],
            ranks=r["ranks"],
            batch_per_rank=r["batch_per_rank"],
        )
        out.append(
            _clean(
                dict(
                    schema=SCHEMA,
                    kind="projection",
                    benchmark=f"projection:{p.spec.model}",
                    params=params,
                    metrics=r,
                    status="ok",
                    error="",
                    check={"status": "skipped", "reason": "a model, not a measurement"},
                    inputs=p.inputs,
                    assumptions=p.assumptions,
                    calibration=p.calibration,
                )
            )
        )
    return out


def table(p):
    t = pd.DataFrame(p.rows)
    cols = [c for c in TABLE_COLUMNS if c in t and not (c == "x" and p.spec.unit == "ranks")]
    cols = [c for c in cols if c != "sync_floor_extra_s" or p.sync_floor_s > 0]  # only where a floor was given
    return t[cols].rename(columns={"x": p.spec.unit})


def markdown(df):
    """tables.markdown, an empty cell where a value does not apply (NaN)."""
    return tables.markdown(df.astype(object).where(df.notna(), "")) + "\n"


def plot(p, path, published=None, column="efficiency"):
    """The projected `column` (efficiency or per_epoch_efficiency; the efficiency with the compute
    time halved and doubled beside it) against scale, and `published` [(x, value, label)] as
    stars on the same axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = pd.DataFrame(p.rows)
    column = column if column in t else "efficiency"
    fig, ax = plt.subplots(figsize=(6, 4))
    lines = [(column, "o-", "projected")]
    if column == "efficiency":
        lines += [("efficiency_compute_x0.5", ":", "compute x0.5"), ("efficiency_compute_x2", "--", "compute x2")]
    for col, style, label in lines:
        if col in t:
            ax.plot(t["x"], t[col], style, label=label)
    for i, (x, v, label) in enumerate(published or []):
        ax.plot([x], [v], "k*", markersize=10, label="published" if i == 0 else None)
        ax.annotate(label, (x, v), fontsize=7)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(p.spec.unit)
    ax.set_ylabel(column.replace("_", " "))
    ax.set_ylim(0, 1.1)
    ax.set_title(f"{p.spec.model} {p.spec.scheme.name} on {p.site.name} ({p.spec.scaling})")
    ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100, format="png")
    finally:
        plt.close(fig)


def stage(p, files, sub, published=None, column="efficiency"):
    """projection.{json,jsonl,csv,md,png} and alpha_beta.csv staged in the FileSet `files` under
    its folder `sub`; the projection's final paths."""
    base = os.path.join(sub, "projection")
    files.text(base + ".json", json.dumps(as_json(p), indent=1, default=str) + "\n")
    files.text(base + ".jsonl", "".join(json.dumps(r, default=str) + "\n" for r in records(p)))
    t = table(p)
    files.text(base + ".csv", t.to_csv(index=False))
    files.text(base + ".md", markdown(t))
    if p.alpha_beta is not None:
        files.text(os.path.join(sub, "alpha_beta.csv"), p.alpha_beta.to_csv(index=False))
    plot(p, files.path(base + ".png"), published, column)
    return [files.final(base + e) for e in (".json", ".jsonl", ".csv", ".md", ".png")]
