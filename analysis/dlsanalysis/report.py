"""One self-contained HTML report of a campaign (CAMPAIGN/report.html): the acceptance verdict,
the points and their status, every table the records support with its plot (PNG embedded as
data URIs, so the file can be mailed or archived alone), the reproduction against the
published figures where the plan reproduces a seed, and the provenance appendix."""

import base64
import datetime
import html
import json
import os

import pandas as pd

from .outputs import FileSet
from .project.seeds import seed_projections
from .records import RecordError, flatten, load_attempts, load_campaign, read_manifest
from .reproduce import load_published, plan_info, reproduce_campaign
from .tables import campaign_tables, write_plots, write_tables

CSS = """body{font-family:sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:0.5em 0 1.5em;font-size:0.85em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}th{background:#eee}
td:first-child,th:first-child{text-align:left}
.pass{color:#070;font-weight:bold}.fail{color:#b00;font-weight:bold}.warn{color:#a60;font-weight:bold}
img{max-width:100%;border:1px solid #ddd;margin:0.5em 0}
code{background:#f4f4f4}.wide{overflow-x:auto}"""

TITLES = {
    "scaling": "Scaling efficiency (against the smallest scale)",
    "speedup": "Per-epoch and learning speed-up",
    "time_to_accuracy": "Time to accuracy",
    "breakdown": "Per-phase breakdown (seconds a step)",
    "layer_shares": "Time by layer type",
    "tau": "EASGD tau sensitivity",
    "kernels": "Kernels: GFLOP/s and % of peak",
    "busbw": "Collectives: bus bandwidth",
    "alpha_beta": "Collectives: alpha-beta model",
}


def _table(df, index=False):
    return '<div class="wide">' + df.to_html(index=index, border=0, float_format=lambda v: f"{v:.4g}", na_rep="") + "</div>"


def _busbw_view(t):
    """The long busbw table as one matrix per (op, ranks): sizes down, algorithms across, GB/s."""
    parts = []
    for (op, ranks), g in t.groupby(["op", "ranks"], sort=True):
        m = g.pivot(index="bytes", columns="algo", values="busbw_bytes_per_s") / 1e9
        parts.append(
            f"<p>{html.escape(str(op))}, {ranks} ranks: busbw in GB/s by bytes per rank "
            "(every repeat and the time: busbw.csv)</p>" + _table(m, index=True)
        )
    return "".join(parts)


def _img(path, files):
    with open(files.current(path), "rb") as f:
        data = base64.b64encode(f.read()).decode()
    return f'<img alt="{html.escape(os.path.basename(path))}" src="data:image/png;base64,{data}">'


def _last_points(campaign):
    last = load_attempts(campaign)
    return pd.DataFrame(
        [
            {
                "point": k,
                "experiment": p.get("experiment", ""),
                "status": p.get("status", ""),
                "seconds": p.get("seconds", float("nan")),
                "assignment": ", ".join(f"{a}={v}" for a, v in sorted(p.get("assignment", {}).items())),
            }
            for k, p in last.items()
        ]
    )


def _acceptance(acc):
    """The verdict line and one row per criterion: its worst group's value, 95 % interval and bound."""
    results = [v["result"] for v in acc]
    verdict = (
        "ACCEPTED"
        if all(r == "PASS" for r in results)
        else "INCONCLUSIVE"
        if all(r in ("PASS", "INCONCLUSIVE") for r in results)
        else "NOT ACCEPTED"
    )
    css = {"ACCEPTED": "pass", "INCONCLUSIVE": "warn"}.get(verdict, "fail")
    rows = []
    for v in acc:
        w = v.get("worst") or {}
        interval = f"[{w['ci_low']:.4g}, {w['ci_high']:.4g}]" if w.get("dof", 0) > 0 else "-"
        rows.append(
            {
                "result": v["result"],
                "criterion": v.get("id", ""),
                "experiment": v["experiment"],
                "judged": v.get("derived") or v.get("metric"),
                "where": v["where"] + (f"; {w['label']}" if w.get("label") else ""),
                "value": f"{w['value']:.4g} (n {w['n']})" if w else "-",
                "95 % interval": interval,
                "bound": w.get("bound", "-"),
                "reference": f"{w['reference']:.4g}" if w else "-",
                "tolerance": f"{w['tolerance']:.0%}" if w else "-",
                "from": (w.get("bound_source", "") or v.get("why", "")) + (f"; {v['disturbed']}" if v.get("disturbed") else ""),
                "description": v.get("description", ""),
            }
        )
    return [
        f'<p class="{css}">{verdict}: {results.count("PASS")} of {len(acc)} criteria pass'
        + (f", {results.count('INCONCLUSIVE')} inconclusive" if "INCONCLUSIVE" in results else "")
        + "</p>",
        _table(pd.DataFrame(rows)),
    ]


def _read_acceptance(path):
    """acceptance.json's verdicts (a list of mappings, as dlscale run writes it), checked enough to
    be shown: a file of another shape is a RecordError naming it."""
    try:
        with open(path) as f:
            acc = json.load(f)
        if not isinstance(acc, list):
            raise TypeError("expected a list of verdicts")
        _acceptance(acc)  # every field it shows is there and of its type
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise RecordError(f"{path}: not the verdicts dlscale run writes ({type(e).__name__}: {e})") from None
    return acc


def write_report(campaign, published_dir=None, tolerance=0.10, projection=True):
    df = load_campaign(campaign)
    seed, modes = plan_info(campaign)
    manifest = read_manifest(campaign)
    acc_path = os.path.join(campaign, "acceptance.json")
    acc = _read_acceptance(acc_path) if os.path.exists(acc_path) else None  # refused before any write
    tables = campaign_tables(df, modes)
    with FileSet(campaign) as files:  # the tables, plots, projections and report together, or none
        return _write_report(files, campaign, df, seed, modes, manifest, acc, tables, published_dir, tolerance, projection)


def _write_report(files, campaign, df, seed, modes, manifest, acc, tables, published_dir, tolerance, projection):
    plots = write_plots(tables, df, files, "analysis")
    write_tables(tables, files, "analysis")

    body = [
        f"<h1>dlscale campaign {html.escape(os.path.basename(os.path.abspath(campaign)))}</h1>",
        f"<p>plan <code>{html.escape(str(manifest.get('plan')))}</code>, "
        f"site <code>{html.escape(str(manifest.get('site')))}</code>"
        + (f", reproduces <code>{html.escape(seed)}</code>" if seed else "")
        + f"; {len(df)} records; report written {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC</p>",
    ]
    body.append("<h2>Acceptance</h2>")
    if acc is not None:
        if acc:
            body += _acceptance(acc)
        else:
            body.append("<p>The plan states no acceptance criteria.</p>")
    else:
        body.append("<p>No acceptance.json in this campaign (written by <code>dlscale run</code>).</p>")
    points = _last_points(campaign)
    if not points.empty:
        body.append(f"<h2>Points</h2><p>{(points['status'] == 'ok').sum()} of {len(points)} ok</p>" + _table(points))
    for name, table in tables.items():
        body.append(f"<h2>{html.escape(TITLES.get(name, name))}</h2>")
        if name in plots:
            body.append(_img(plots[name], files))
        body.append(_busbw_view(table) if name == "busbw" else _table(table))
    if "convergence" in plots:
        body.append("<h2>Convergence</h2>" + _img(plots["convergence"], files))
    if seed and published_dir and os.path.isdir(published_dir):
        pub = load_published(published_dir)
        pub = pub[pub["seed"] == seed]
        if not pub.empty:
            hook, projections = seed_projections(seed, campaign, files, "analysis", pub) if projection else (None, [])
            rt, figs = reproduce_campaign(df, modes, pub, tolerance, projected=hook)
            body.append(f"<h2>Reproduction of {html.escape(seed)} (tolerance {tolerance:.0%})</h2>" + _table(figs) + _table(rt))
            for name, png in projections:
                body.append(f"<h3>Projection {html.escape(name)} (published points as stars)</h3>" + _img(png, files))
    prov = {}
    flatten("", manifest.get("provenance", {}), prov)
    prov = [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in prov.items()]
    body.append("<h2>Appendix: provenance</h2>" + _table(pd.DataFrame(prov, columns=["key", "value"])))
    doc = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>dlscale report</title>"
        f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n"
    )
    files.text("report.html", doc)
    return files.final("report.html")
