"""python3 -m dlsanalysis tables CAMPAIGN [--out DIR] [--gemm-shape 2048x2048x2048]
   python3 -m dlsanalysis compare A B [--effect 0.05] [--alpha 0.01]      (exit 1 on a regression)
   python3 -m dlsanalysis reproduce CAMPAIGN [--seed S] [--published DIR] [--tolerance 0.1] [--strict]
   python3 -m dlsanalysis report CAMPAIGN [--published DIR]

tables     every table the campaign's records support (scaling, speed-ups, time to accuracy,
           breakdowns, tau, kernels, conv efficiency per layer and network against the sgemm
           of --gemm-shape, collectives with the alpha-beta fit), as CSV and Markdown, and the
           plots (PNG), into DIR (default CAMPAIGN/analysis/)
compare    regression detection between two campaigns, matched by point_id
reproduce  the measurements beside the published figures of the seed the plan reproduces,
           verdict per row and figure, into CAMPAIGN/analysis/reproduce*.{csv,md}
report     CAMPAIGN/report.html, one self-contained file
Exit 2 on unreadable records (the message names file and line) or bad arguments."""

import argparse
import os
import sys

from .compare import compare_frames, provenance_diff
from .kernel_efficiency import DEFAULT_GEMM_SHAPE
from .records import RecordError, load_campaign, load_records, read_jsonl
from .reproduce import load_published, plan_info, reproduce_campaign
from .tables import campaign_tables, write_plots, write_tables

DEFAULT_PUBLISHED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "published")


def _load_any(path):
    return load_campaign(path) if os.path.isdir(path) else load_records(path)


def _provenance(path):
    records = os.path.join(path, "records.jsonl") if os.path.isdir(path) else path
    for _, rec in read_jsonl(records, []):
        return rec.get("provenance", {})
    return {}


def compare_main(a):
    da, db = _load_any(a.a), _load_any(a.b)
    t = compare_frames(da, db, effect=a.effect, alpha=a.alpha)
    if t.empty:
        print("dlsanalysis compare: no measurement is in both (records are matched by point_id)", file=sys.stderr)
        return 2
    for verdict in ("regressed", "improved", "unchanged"):
        part = t[t["verdict"].str.startswith(verdict)]
        if not part.empty:
            print(f"## {verdict} ({len(part)})")
            for _, r in part.iterrows():
                p = "" if r["p_value"] != r["p_value"] else f"  p={r['p_value']:.2g}"
                print(
                    f"  {r['benchmark']:<28} {r['metric']:<18} {r['mean_a']:.4g} -> {r['mean_b']:.4g}  "
                    f"{r['change']:+.1%} ({r['better']} is better, n {r['n_a']}/{r['n_b']}){p}  {r['verdict']}"
                )
    diff = provenance_diff(_provenance(a.a), _provenance(a.b))
    print("## provenance differences" + ("" if diff else ": none"))
    for k, va, vb in diff:
        print(f"  {k}: {va!r} -> {vb!r}")
    return 1 if t["verdict"].str.startswith("regressed").any() else 0


def tables_main(a):
    df = load_campaign(a.campaign)
    _, modes = plan_info(a.campaign)
    tables = campaign_tables(df, modes, a.gemm_shape)
    if not tables:
        print("dlsanalysis: no ok records in this campaign to tabulate", file=sys.stderr)
        return 1
    out = a.out or os.path.join(a.campaign, "analysis")
    write_tables(tables, out)
    plots = write_plots(tables, df, out)
    for name, table in tables.items():
        print(f"## {name}\n\n{table.to_string(index=False, float_format=lambda v: f'{v:.4g}')}\n")
    print(f"tables: {out}/{{{','.join(tables)}}}.{{csv,md}}; plots: " + ", ".join(os.path.basename(p) for p in plots.values()))
    return 0


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
    rows, figs = reproduce_campaign(df, modes, pub, a.tolerance)
    out = os.path.join(a.campaign, "analysis")
    write_tables({"reproduce": rows, "reproduce_figures": figs}, out)
    print(f"## {seed}: measured beside published (relative tolerance {a.tolerance:.0%})\n")
    for _, r in rows.iterrows():
        m = "" if r["measured"] != r["measured"] else f"{r['measured']:.4g}"
        at = f" at {r['measured_at']}" if r["measured_at"] else ""
        print(
            f"  {r['figure']:<10} {r['metric']:<34} {r['x_name']}={r['x']:<8} published {r['value']:<8} "
            f"measured {m:<10}{at:<12} {r['verdict']}"
        )
    print("\n## figures")
    for _, f in figs.iterrows():
        print(
            f"  {f['figure']:<12} {f['verdict']:<16} "
            f"({f['reproduced']} of {f['judged']} judged rows reproduced, {f['rows']} rows)"
        )
    print(f"\ntables: {out}/reproduce.{{csv,md}}, reproduce_figures.{{csv,md}}")
    return 1 if a.strict and (figs["verdict"] == "not reproduced").any() else 0


def report_main(a):
    from .report import write_report

    path = write_report(a.campaign, a.published, a.tolerance)
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
    c.add_argument("--effect", type=float, default=0.05, help="minimum relative change that counts (default 0.05)")
    c.add_argument("--alpha", type=float, default=0.01, help="Welch t-test level (default 0.01)")
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
            r.add_argument("--strict", action="store_true", help="exit 1 when a judged figure is not reproduced")
    a = p.parse_args(argv)
    for attr in ("campaign", "a", "b"):
        path = getattr(a, attr, None)
        if path is not None and not os.path.exists(path):
            print(f"dlsanalysis {a.cmd}: {path}: no such campaign folder or records file", file=sys.stderr)
            return 2
    if getattr(a, "tolerance", 0.1) < 0:
        print(f"dlsanalysis {a.cmd}: --tolerance must be >= 0", file=sys.stderr)
        return 2
    try:
        return {"compare": compare_main, "tables": tables_main, "reproduce": reproduce_main, "report": report_main}[a.cmd](a)
    except (RecordError, OSError, ValueError) as e:
        print(f"dlsanalysis {a.cmd}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
