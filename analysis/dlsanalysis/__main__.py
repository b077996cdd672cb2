"""python3 -m dlsanalysis tables CAMPAIGN [--out DIR]

Writes the training tables of a campaign (scaling with efficiency against the smallest scale,
per-epoch / learning speed-up where epochs were timed, per-phase breakdown), each as CSV and
Markdown, and the scaling and breakdown plots (PNG), into DIR (default CAMPAIGN/analysis/), grouped by experiment and model, and prints
them. Exit 2 on unreadable records (the message names file and line)."""
import argparse
import os
import sys

from .plots import breakdown_plot, scaling_plot
from .records import RecordError, load_campaign
from .scaling import breakdown_table, scaling_table, speedup_table


def markdown(table):
    """A pipe table (pandas' to_markdown needs tabulate, which Debian's pandas does not pull in)."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m dlsanalysis", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("tables", help="the training tables of a campaign")
    t.add_argument("campaign")
    t.add_argument("--out")
    a = p.parse_args(argv)
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
