"""python3 -m dlsanalysis tables CAMPAIGN [--out DIR] [--gemm-shape 2048x2048x2048]
   python3 -m dlsanalysis compare A B [--metric NAME[:higher|lower]|all]... [--effect 0.05] [--alpha 0.01]
                                      [--auto-threshold [--floor 0.01]] [--out DIR]   (exit 1 on a regression)
   python3 -m dlsanalysis history CAMPAIGN... [--metric NAME[:dir]]... [--effect ...] [--auto-threshold] [--out DIR]
   python3 -m dlsanalysis reproduce CAMPAIGN [--seed S] [--published DIR] [--tolerance 0.1]
                                  [--scale-tolerance 0.05] [--strict]
   python3 -m dlsanalysis report CAMPAIGN [--published DIR]
   python3 -m dlsanalysis project --site S --model M [--scheme S] --nodes|--gpus|--ranks N,... [--campaign DIR]
                                  [--spec FILE] ... (project --help)

tables     every table the campaign's records support (scaling, speed-ups, time to accuracy,
           breakdowns, tau, kernels, conv efficiency per layer and network against the sgemm
           of --gemm-shape, collectives with the alpha-beta fit), as CSV and Markdown, and the
           plots (PNG), into DIR (default CAMPAIGN/analysis/)
compare    regression detection between two campaigns, matched by point_id: the table, and
           compare.{json,csv,md} into DIR (default B/analysis/, or . for a records file)
history    one metric across campaigns in time order, each change compare would call marked:
           history.{json,csv,md,png} into DIR (default NEWEST/analysis/, or .)
reproduce  the measurements beside the published figures of the seed the plan reproduces,
           verdict per row (or why it is not measurable here) and figure, into
           CAMPAIGN/analysis/reproduce*.{csv,md}
report     CAMPAIGN/report.html, one self-contained file
project    a training step projected to a site's scale from a calibration campaign (docs/projection.md)
Exit 2 on unreadable records (the message names file and line) or bad arguments."""

import argparse
import math
import os
import sys

from .compare import (
    AUTO_K,
    DISTURBED_CORES,
    HEADLINE,
    check_metrics,
    compare_frames,
    parse_metric,
    provenance_diff,
    summary,
    write_result,
)
from .history import DEFAULT as HISTORY_DEFAULT
from .history import campaign_names, history_plot, history_table, order_campaigns
from .kernel_efficiency import DEFAULT_GEMM_SHAPE
from .outputs import FileSet
from .project.cli import add_parser as add_project_parser
from .project.cli import main_guarded as project_main
from .records import RecordError, load_campaign, load_records, read_jsonl
from .reproduce import SCALE_TOLERANCE, load_published, plan_info, reproduce_campaign
from .tables import campaign_tables, write_plots, write_tables

METRIC_HELP = (
    "a metric (key under metrics, dots for nested keys), with its direction where it has no known one; "
    "repeatable; 'all': every metric of known direction (default: the kinds' headline metrics)"
)
DEFAULT_PUBLISHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "published")


def _load_any(path):
    """A campaign folder's or a records file's frame; a file with no record line (a manifest, an
    empty file) is refused, where every line would be skipped as torn."""
    df = load_campaign(path) if os.path.isdir(path) else load_records(path)
    if df.empty and not os.path.isdir(path):
        raise RecordError(f"{path}: no dlscale record in it (expected a campaign folder or a records.jsonl)")
    return df


def _provenance(path):
    records = os.path.join(path, "records.jsonl") if os.path.isdir(path) else path
    for _, rec in read_jsonl(records, []):
        return rec.get("provenance", {})
    return {}


EXIT_CODES = {0: "no regression", 1: "a regression", 2: "bad input (unreadable records, unknown metric, no common point)"}


def _metric_choice(specs, default):
    """--metric specs -> (metrics for samples(), {name: direction}, the names to check)."""
    if not specs:
        return default, {}, []
    pairs = [(s, None) if s == "all" else parse_metric(s) for s in specs]
    directions = {n: d for n, d in pairs if d}
    named = [n for n, _ in pairs if n != "all"]
    return ("all" if "all" in specs else named), directions, named


def _option_range(a):
    """Why a threshold or tolerance option of the command cannot judge ("" where they all can)."""
    checks = (
        ("effect", 0, math.inf),
        ("alpha", 0, 1),
        ("floor", 0, math.inf),
        ("tolerance", 0, math.inf),
        ("scale_tolerance", 0, math.inf),
    )
    for name, lo, hi in checks:
        v = getattr(a, name, None)
        if v is None:
            continue
        open_ends = name == "alpha"  # a test level of 0 or 1 decides nothing
        if not (lo < v < hi if open_ends else lo <= v < hi):
            span = f"({lo:g}, {hi:g})" if open_ends else f">= {lo:g}, finite"
            return f"--{name.replace('_', '-')} {v:g}: expected {span}"
    return ""


def _judge_args(a):
    return {"effect": a.effect, "alpha": a.alpha, "auto_threshold": a.auto_threshold, "floor": a.floor}


def _print_compare(t):
    for verdict in ("regressed", "improved", "changed", "unchanged"):
        part = t[t["verdict"].str.startswith(verdict)]
        if not part.empty:
            print(f"## {verdict} ({len(part)})")
            for _, r in part.iterrows():
                p = "" if r["p_value"] != r["p_value"] else f"  p={r['p_value']:.2g}"
                better = f"{r['better']} is better" if r["better"] else "direction unknown"
                beside = f"  measured beside other work on {r['disturbed']}" if r.get("disturbed") else ""
                if r.get("placement"):
                    beside += f"  cores placed apart (round trip A {r['cores_a']:.0f} ns, B {r['cores_b']:.0f} ns)"
                print(
                    f"  {r['label']:<36} {r['metric']:<18} {r['mean_a']:.4g} -> {r['mean_b']:.4g}  {r['change']:+.1%} "
                    f"({better}, n {r['n_a']}/{r['n_b']}, threshold {r['threshold']:.1%}){p}  {r['verdict']}{beside}"
                )


def compare_main(a):
    metrics, directions, named = _metric_choice(a.metric, HEADLINE)
    da, db = _load_any(a.a), _load_any(a.b)
    check_metrics([da, db], named)
    t = compare_frames(da, db, metrics=metrics, directions=directions, **_judge_args(a))
    if t.empty:
        print("dlsanalysis compare: no measurement is in both (records are matched by point_id)", file=sys.stderr)
        return 2
    _print_compare(t)
    diff = provenance_diff(_provenance(a.a), _provenance(a.b))
    print("## provenance differences" + ("" if diff else ": none"))
    for k, va, vb in diff:
        print(f"  {k}: {va!r} -> {vb!r}")
    code = 1 if t["verdict"].str.startswith("regressed").any() else 0
    out = a.out or (os.path.join(a.b, "analysis") if os.path.isdir(a.b) else os.getcwd())
    meta = {"a": os.path.abspath(a.a), "b": os.path.abspath(a.b), "metrics": metrics, "directions": directions}
    meta |= {"thresholds": _judge_args(a) | {"auto_k": AUTO_K}, "summary": {"verdicts": summary(t), "rows": len(t)}}
    meta |= {"exit_code": code, "exit_codes": EXIT_CODES, "provenance_differences": [list(d) for d in diff]}
    with FileSet(out) as files:
        write_result(files, "compare", t, meta)
    print(f"results: {', '.join(files.written)}")
    return code


def history_main(a):
    if len(a.campaigns) < 2:
        print("dlsanalysis history: give at least two campaigns", file=sys.stderr)
        return 2
    real = [os.path.realpath(p) for p in a.campaigns]
    twice = next((p for p, r in zip(a.campaigns, real, strict=True) if real.count(r) > 1), None)
    if twice:
        print(f"dlsanalysis history: {twice} is given twice", file=sys.stderr)
        return 2
    metrics, directions, named = _metric_choice(a.metric, HISTORY_DEFAULT)
    found, by_time = order_campaigns(a.campaigns)
    paths = [p for p, _, _ in found]
    frames = [_load_any(p) for p in paths]
    check_metrics(frames, named)
    names = campaign_names(paths)
    t = history_table(frames, names, metrics, directions, **_judge_args(a))
    if t.empty:
        print("dlsanalysis history: none of the campaigns has the metric", file=sys.stderr)
        return 2
    order = "by time" if by_time else "in the order given (some campaign has no start_time)"
    print(f"## campaigns, {order}; * marks a change compare calls")
    for n, (_, when, src) in zip(names, found, strict=True):
        print(f"  {n:<32} {when or '?'} {f'({src})' if src else ''}")
    for (metric, label, _), g in t.groupby(["metric", "label", "point_id"], sort=False):
        print(f"## {metric} ({g['better'].iloc[0] or 'direction unknown'}): {label}")
        for _, r in g.iterrows():
            vs = f"{r['ratio'] - 1:+.1%} vs {r['vs']}: {r['verdict']}" if r["vs"] else ""
            if r["beside"] >= DISTURBED_CORES:
                vs += f"  measured beside other work ({r['beside']:.2f} cores)"
            print(f"{' *' if r['change'] else '  '} {r['campaign']:<32} {r['mean']:<12.4g} n {r['n']:<3} {vs}")
    out = a.out or (os.path.join(paths[-1], "analysis") if os.path.isdir(paths[-1]) else os.getcwd())
    camps = [
        {"name": n, "path": os.path.abspath(p), "time": w, "time_from": s} for n, (p, w, s) in zip(names, found, strict=True)
    ]
    meta = {"campaigns": camps, "ordered_by": "time" if by_time else "order given", "metrics": metrics}
    meta |= {"thresholds": _judge_args(a) | {"auto_k": AUTO_K}, "changes": int((t["change"] != "").sum())}
    with FileSet(out) as files:
        write_result(files, "history", t, meta)
        history_plot(t, names, files.path("history.png"))
    print(f"results: {', '.join(files.written)}")
    return 0


def tables_main(a):
    df = load_campaign(a.campaign)
    _, modes = plan_info(a.campaign)
    tables = campaign_tables(df, modes, a.gemm_shape)
    if not tables:
        ok = int((df["status"] == "ok").sum()) if "status" in df else 0
        print(f"dlsanalysis tables: {a.campaign}: no table to make ({len(df)} records, {ok} ok)", file=sys.stderr)
        return 1
    out = a.out or os.path.join(a.campaign, "analysis")
    with FileSet(out) as files:
        write_tables(tables, files)
        plots = write_plots(tables, df, files)
    for name, table in tables.items():
        print(f"## {name}\n\n{table.to_string(index=False, float_format=lambda v: f'{v:.4g}')}\n")
    print(f"tables: {out}/{{{','.join(tables)}}}.{{csv,md}}; plots: " + ", ".join(os.path.basename(p) for p in plots.values()))
    return 0


def _seed_projections(seed, campaign, files, published):
    """The seed's projections (harness/projections), staged in the FileSet `files` under
    projections/NAME/; the reproduce hook, or None when the seed has none."""
    from .project.seeds import seed_projections

    hook, plots = seed_projections(seed, campaign, files, "", published)
    if plots:
        print(f"projections: {len(plots)} ({', '.join(n for n, _ in plots)}) into {files.folder}/projections/")
    return hook


def reproduce_main(a):
    seed, modes = plan_info(a.campaign)
    seed = a.seed or seed
    if not seed:
        print(
            f"dlsanalysis reproduce: {a.campaign}: its plan names no seed (reproduces: {{seed: ...}}); give --seed",
            file=sys.stderr,
        )
        return 2
    pub = load_published(a.published)
    pub = pub[pub["seed"] == seed]
    if pub.empty:
        print(f"dlsanalysis reproduce: no published figure of seed '{seed}' in {a.published}", file=sys.stderr)
        return 2
    df = load_campaign(a.campaign)
    with FileSet(os.path.join(a.campaign, "analysis")) as files:  # written together, or none
        projected = None if a.no_projection else _seed_projections(seed, a.campaign, files, pub)
        rows, figs = reproduce_campaign(df, modes, pub, a.tolerance, a.scale_tolerance, projected)
        write_tables({"reproduce": rows, "reproduce_figures": figs}, files)
    print(f"## {seed}: measured beside published (relative tolerance {a.tolerance:.0%}, scale within {a.scale_tolerance:.0%})\n")
    for _, r in rows.iterrows():
        m = "" if r["measured"] != r["measured"] else f"{r['measured']:.4g}"
        at = f" at {r['measured_at']}" if r["measured_at"] else ""
        print(
            f"  {r['figure']:<10} {r['metric']:<34} {r['x_name']}={r['x']:<8} published {r['value']:<8} "
            f"{r['source'] or 'measured'} {m:<10}{at:<12} {r['verdict']}"
        )
    print("\n## figures")
    for _, f in figs.iterrows():
        print(
            f"  {f['figure']:<12} {f['verdict']:<16} "
            f"({f['reproduced']} of {f['judged']} judged rows reproduced, {f['measurable']} measurable, {f['rows']} rows)"
        )
    print(f"\ntables: {files.folder}/reproduce.{{csv,md}}, reproduce_figures.{{csv,md}}")
    return 1 if a.strict and (figs["verdict"] == "not reproduced").any() else 0


def report_main(a):
    from .report import write_report

    path = write_report(a.campaign, a.published, a.tolerance, projection=not a.no_projection)
    print(f"report: {path}")
    return 0


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python3 -m dlsanalysis", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tables", help="a campaign's tables and plots")
    t.add_argument("campaign")
    t.add_argument("--out", help="folder for the tables and plots (default CAMPAIGN/analysis)")
    t.add_argument(
        "--gemm-shape",
        default=DEFAULT_GEMM_SHAPE,
        help=f"prefix of the OpenBLAS sgemm shape the convolutions are compared with (default {DEFAULT_GEMM_SHAPE})",
    )
    c = sub.add_parser("compare", help="regression detection between two campaigns (exit 1 on a regression)")
    c.add_argument("a", help="campaign folder or records file (the baseline)")
    c.add_argument("b", help="campaign folder or records file (the candidate)")
    h = sub.add_parser("history", help="one metric across campaigns in time order, with the changes compare calls")
    h.add_argument("campaigns", nargs="+", help="campaign folders or records files (at least two)")
    for x, out_default in ((c, "B/analysis, or . when B is a records file"), (h, "NEWEST/analysis, or .")):
        x.add_argument("--metric", action="append", metavar="NAME[:higher|lower]", help=METRIC_HELP)
        x.add_argument("--effect", type=float, default=0.05, help="minimum relative change that counts (default 0.05)")
        x.add_argument("--alpha", type=float, default=0.01, help="Welch t-test level (default 0.01)")
        x.add_argument("--auto-threshold", action="store_true", help=f"threshold max(--floor, {AUTO_K:g} x A's CV)")
        x.add_argument("--floor", type=float, default=0.01, help="least auto threshold (default 0.01)")
        x.add_argument("--out", help=f"folder for the .json, .csv, .md (default {out_default})")
    for name, helptext in (
        ("reproduce", "measurements beside the published figures"),
        ("report", "the HTML report of a campaign"),
    ):
        r = sub.add_parser(name, help=helptext)
        r.add_argument("campaign")
        r.add_argument("--published", default=os.path.normpath(DEFAULT_PUBLISHED), help="folder of published figures (*.csv)")
        r.add_argument("--tolerance", type=float, default=0.10, help="relative tolerance of a reproduction (default 0.10)")
        if name == "reproduce":
            r.add_argument("--seed", help="the seed file name, when the plan names none")
            r.add_argument(
                "--scale-tolerance",
                type=float,
                default=SCALE_TOLERANCE,
                help=f"a measured scale stands for the published one within this fraction of it (default {SCALE_TOLERANCE})",
            )
            r.add_argument("--strict", action="store_true", help="exit 1 when a judged figure is not reproduced")
        r.add_argument(
            "--no-projection",
            action="store_true",
            help="judge measured scales only (default: rows above them against harness/projections/)",
        )
    add_project_parser(sub)
    a = p.parse_args(argv)
    for path in [getattr(a, x, None) for x in ("campaign", "a", "b")] + getattr(a, "campaigns", []):
        if path is not None and not os.path.exists(path):
            print(f"dlsanalysis {a.cmd}: {path}: no such campaign folder or records file", file=sys.stderr)
            return 2
    out = getattr(a, "out", None)
    if out and os.path.exists(out) and not os.path.isdir(out):
        print(f"dlsanalysis {a.cmd}: --out {out}: exists and is not a folder (the outputs go into a folder)", file=sys.stderr)
        return 2
    why = _option_range(a)
    if why:
        print(f"dlsanalysis {a.cmd}: {why}", file=sys.stderr)
        return 2
    if a.cmd == "compare" and os.path.realpath(a.a) == os.path.realpath(a.b):
        print(f"dlsanalysis compare: note: A and B are the same campaign ({a.a}): every change is 0", file=sys.stderr)
    try:
        mains = {"compare": compare_main, "history": history_main, "tables": tables_main}
        return (mains | {"reproduce": reproduce_main, "report": report_main, "project": project_main})[a.cmd](a)
    except (RecordError, OSError, ValueError) as e:
        print(f"dlsanalysis {a.cmd}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
