"""python3 -m dlsanalysis tables CAMPAIGN [--out DIR]
   python3 -m dlsanalysis compare A B [--effect 0.05] [--alpha 0.01]   (exit 1 on a regression)

Writes the training tables of a campaign (scaling with efficiency against the smallest scale,
per-epoch / learning speed-up where epochs were timed, per-phase breakdown), each as CSV and
Markdown, and the scaling and breakdown plots (PNG), into DIR (default CAMPAIGN/analysis/), grouped by experiment and model, and prints
them. Exit 2 on unreadable records (the message names file and line)."""
import argparse
import os
import sys

from .plots import breakdown_plot, scaling_plot
from .compare import compare_frames, provenance_diff
from .records import RecordError, load_campaign, load_records
from .scaling import breakdown_table, scaling_table, speedup_table


def markdown(table):
    """A pipe table (pandas' to_markdown needs tabulate, which Debian's pandas does not pull in)."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def _load_any(path):
    return load_campaign(path) if os.path.isdir(path) else load_records(path)


def _provenance(path):
    import json
    records = os.path.join(path, "records.jsonl") if os.path.isdir(path) else path
    with open(records) as f:
        for line in f:
            if line.strip():
                return json.loads(line).get("provenance", {})
    return {}


def compare_main(a):
    try:
        da, db = _load_any(a.a), _load_any(a.b)
    except (RecordError, OSError) as e:
        print(f"dlsanalysis: {e}", file=sys.stderr)
        return 2
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
                print(f"  {r['benchmark']:<28} {r['metric']:<18} {r['mean_a']:.4g} -> {r['mean_b']:.4g}  "
                      f"{r['change']:+.1%} ({r['better']} is better, n {r['n_a']}/{r['n_b']}){p}  {r['verdict']}")
    diff = provenance_diff(_provenance(a.a), _provenance(a.b))
    print("## provenance differences" + ("" if diff else ": none"))
    for k, va, vb in diff:
        print(f"  {k}: {va!r} -> {vb!r}")
    return 1 if t["verdict"].str.startswith("regressed").any() else 0


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m dlsanalysis", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tables", help="the training tables of a campaign")
    t.add_argument("campaign")
    t.add_argument("--out")
    c = sub.add_parser("compare", help="regression detection between two campaigns (exit 1 on a regression)")
    c.add_argument("a", help="campaign folder or records file (the baseline)")
    c.add_argument("b", help="campaign folder or records file (the candidate)")
    c.add_argument("--effect", type=float, default=0.05, help="minimum relative change that counts (default 0.05)")
    c.add_argument("--alpha", type=float, default=0.01, help="Welch t-test level (default 0.01)")
    a = p.parse_args(argv)
    if a.cmd == "compare":
        return compare_main(a)
    try:
        df = load_campaign(a.campaign)
    except (RecordError, OSError) as e:
        print(f"dlsanalysis: {e}", file=sys.stderr)
        return 2
    train = df[df["kind"] == "train"] if not df.empty else df
    if train.empty:
        print("dlsanalysis: no training records in this campaign", file=sys.stderr)
        return 1
    out = a.out or os.path.join(a.campaign, "analysis")
    os.makedirs(out, exist_ok=True)
    group = ("experiment", "params.model") if "experiment" in train else ("params.model",)
    tables = {"scaling": scaling_table(train, group=group), "breakdown": breakdown_table(train, group=group)}
    if "metrics.epoch_time_s" in train:
        tables["speedup"] = speedup_table(train, group=group)
    for name, table in tables.items():
        table.to_csv(os.path.join(out, f"{name}.csv"), index=False)
        md = markdown(table)
        with open(os.path.join(out, f"{name}.md"), "w") as f:
            f.write(md + "\n")
        print(f"## {name}\n\n{table.to_string(index=False, float_format=lambda v: f'{v:.4g}')}\n")
    scaling_plot(tables["scaling"], group, os.path.join(out, "scaling.png"))
    breakdown_plot(tables["breakdown"], group, os.path.join(out, "breakdown.png"))
    print(f"tables: {out}/{{{','.join(tables)}}}.{{csv,md}}; plots: {out}/scaling.png, breakdown.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
