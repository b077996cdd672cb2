"""PNG figures of the tables: scaling curves against the ideal line, stacked per-phase
breakdowns. matplotlib with the Agg backend (no display needed)."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .scaling import PHASES  # noqa: E402


def _label(key):
    return " / ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))


def scaling_plot(table, group, path):
    """Throughput by ranks, with error bars (95 % interval) and the ideal line from the base scale."""
    fig, ax = plt.subplots(figsize=(6, 4))
    keys = list(group)
    for key, g in table.groupby(keys if len(keys) > 1 else keys[0], sort=True):
        g = g.sort_values("ranks")
        err = (g["ci_high"] - g["mean"]).fillna(0)
        line = ax.errorbar(g["ranks"], g["mean"], yerr=err, marker="o", capsize=3, label=_label(key))
        p0, x0 = g["ranks"].iloc[0], g["mean"].iloc[0]
        ax.plot(g["ranks"], x0 * g["ranks"] / p0, linestyle="--", color=line[0].get_color(), alpha=0.5)
    ax.set_xticks(sorted(table["ranks"].unique()))
    ax.set_xlabel("ranks")
    ax.set_ylabel("images/s (all ranks)")
    ax.set_title("throughput scaling (dashed: ideal from the smallest scale)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def breakdown_plot(table, group, path):
    """Stacked per-phase seconds per step, one bar per (group, ranks)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = [f"{_label(tuple(r[k] for k in group))}\n{r['ranks']} ranks" for _, r in table.iterrows()]
    bottom = [0.0] * len(table)
    for p in PHASES:
        vals = table[f"{p}_s"].tolist()
        ax.bar(range(len(table)), vals, bottom=bottom, label=p)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(range(len(table)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("seconds a step (mean over ranks)")
    ax.set_title("per-phase breakdown")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
