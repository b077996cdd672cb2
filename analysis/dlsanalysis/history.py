"""One metric followed across many campaigns in time order, with the changes `compare` would call.

Order. A campaign's time is the earliest provenance.start_time of its records (when its
measurements began), else its manifest's provenance.start_time (when the folder was made). When
some campaign has neither, the campaigns stay in the order given and the result says so; equal
times keep the order given.

Table. One row per (point, metric, campaign): the campaign's mean and count of repeats, and,
from the second campaign on, the change against the previous campaign holding that point and
the verdict of compare_samples between the two (the same judge, thresholds and test as
`compare`); "change" holds it where it is "improved" or "regressed" (or "changed" for a metric
of unknown direction), else is empty; "beside" the most cores that other processes and a
hypervisor took of the harness's host while the point's repeats ran in that campaign (NaN where
not recorded), marked in the printout from DISTURBED_CORES, as `compare` does. Default metric:
each kind's headline (images_per_s, gflop_per_s, busbw_bytes_per_s)."""

import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from .compare import campaign_samples, compare_samples, host_load, point_labels  # noqa: E402
from .records import read_jsonl  # noqa: E402

DEFAULT = {"train": ["images_per_s"], "kernel": ["gflop_per_s"], "collective": ["busbw_bytes_per_s"]}
CALLED = ("improved", "regressed", "changed")


def campaign_time(path):
    """(time, where it came from) of a campaign folder or records file; (None, '') when unknown."""
    records = os.path.join(path, "records.jsonl") if os.path.isdir(path) else path
    provs = [r.get("provenance") for _, r in read_jsonl(records, [])]
    times = [p.get("start_time") for p in provs if isinstance(p, dict)]
    times = [t for t in times if isinstance(t, str) and t]
    if times:
        return min(times), "records"
    try:
        with open(os.path.join(path, "manifest.json")) as f:
            t = json.load(f).get("provenance", {}).get("start_time")
    except (OSError, ValueError, AttributeError):
        t = None
    return (t, "manifest") if isinstance(t, str) and t else (None, "")


def order_campaigns(paths):
    """[(path, time, source)] in time order, and whether time ordered them (else the order given)."""
    found = [(p, *campaign_time(p)) for p in paths]
    if any(t is None for _, t, _ in found):
        return found, False
    return sorted(found, key=lambda x: x[1]), True  # stable: equal times keep the order given


def campaign_names(paths):
    """The folder (or file) names, the whole paths where two names are the same."""
    names = [os.path.basename(os.path.normpath(p)) for p in paths]
    return [n if names.count(n) == 1 else p for n, p in zip(names, paths, strict=True)]


def history_table(frames, names, metrics=DEFAULT, directions=None, **judge):
    """frames in time order, names their campaign names; judge: effect, alpha, auto_threshold, floor."""
    rows, labels, prev = [], {}, {}
    for i, (df, name) in enumerate(zip(frames, names, strict=True)):
        labels = point_labels(df) | labels
        s, beside = campaign_samples(df, metrics, directions), host_load(df)
        for (pid, metric), g in s.groupby(["point_id", "metric"], sort=True) if not s.empty else ():
            row = {"point_id": pid, "label": labels.get(pid, g["benchmark"].iloc[0]), "metric": metric}
            row |= {"better": g["better"].iloc[0], "campaign": name, "order": i, "n": len(g), "mean": g["value"].mean()}
            row |= {"vs": "", "ratio": float("nan"), "verdict": "", "change": "", "beside": beside.get(pid, float("nan"))}
            if (pid, metric) in prev:
                vs, before = prev[(pid, metric)]
                j = compare_samples(before, g, **judge)
                if not j.empty:
                    v = j.iloc[0]["verdict"]
                    row |= {"vs": vs, "ratio": j.iloc[0]["mean_b"] / j.iloc[0]["mean_a"], "verdict": v}
                    row["change"] = v.split(" ")[0] if v.startswith(CALLED) else ""
            prev[(pid, metric)] = (name, g)
            rows.append(row)
    t = pd.DataFrame(rows)
    return t.sort_values(["metric", "label", "point_id", "order"], kind="stable").reset_index(drop=True) if rows else t


PLOT_METRICS = 40  # panels of one figure at most (a figure of hundreds passes what an image holds)


def history_plot(t, names, path):
    """Each point's mean over the campaigns, relative to its first campaign; called changes marked
    (the first PLOT_METRICS metrics by name; the tables hold them all), as a PNG into `path`."""
    metrics = sorted(t["metric"].unique())
    if len(metrics) > PLOT_METRICS:
        print(f"dlsanalysis history: the plot shows the first {PLOT_METRICS} of {len(metrics)} metrics", file=sys.stderr)
        metrics = metrics[:PLOT_METRICS]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(7, 3.5 * len(metrics)), squeeze=False)
    marks = {"improved": ("^", "tab:green"), "regressed": ("v", "tab:red"), "changed": ("D", "tab:orange")}
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        m = t[t["metric"] == metric]
        for (label, _), g in m.groupby(["label", "point_id"], sort=True):
            y = g["mean"] / g["mean"].iloc[0]
            ax.plot(g["order"], y, marker=".", label=label)
            for change, (marker, color) in marks.items():
                c = g["change"] == change
                ax.scatter(g["order"][c], y[c], marker=marker, s=90, color=color, edgecolors="black", zorder=3)
        better = m["better"].iloc[0] or "direction unknown"
        ax.set_title(f"{metric} ({better} is better); ^ improved, v regressed")
        ax.set_ylabel("mean / first campaign's")
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, fontsize=7, rotation=20)
        ax.grid(alpha=0.3)
        if m["point_id"].nunique() <= 12:
            ax.legend(fontsize=7)
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100, format="png")
    finally:
        plt.close(fig)
