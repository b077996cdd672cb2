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
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax.set_xticks(range(len(table)))
    ax.set_xticklabels(labels, fontsize=7)
    ax.set_ylabel("seconds a step (mean over ranks)")
    ax.set_title("per-phase breakdown")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def busbw_plot(table, fits, path):
    """Bus bandwidth by message size, one line per (op, algo, ranks); dotted: the alpha-beta model
    (fits: the alpha_beta table, or None)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for (op, algo, ranks), g in table.groupby(["op", "algo", "ranks"], sort=True):
        g = g.sort_values("bytes")
        line = ax.plot(g["bytes"], g["busbw_bytes_per_s"] / 1e9, marker=".", label=f"{op} {algo} {ranks} ranks")
        f = None if fits is None else fits[(fits["op"] == op) & (fits["algo"] == algo) & (fits["ranks"] == ranks)]
        if f is not None and not f.empty:
            f = f.iloc[0]
            busbw_over_algbw = f["busbw_model_bytes_per_s"] / f["bandwidth_bytes_per_s"]
            model = g["bytes"] / (f["alpha_s"] + g["bytes"] / f["bandwidth_bytes_per_s"]) * busbw_over_algbw
            ax.plot(g["bytes"], model / 1e9, linestyle=":", color=line[0].get_color(), alpha=0.7)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title("collective bus bandwidth (dotted: alpha-beta model)")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def convergence_plot(frame, path):
    """Training loss by epoch for every run; held-out accuracy or RMSE beside it where evaluated."""
    quality = next((m for m in ("accuracy", "rmse") if m in frame and frame[m].notna().any()), None)
    fig, axes = plt.subplots(1, 2 if quality else 1, figsize=(9 if quality else 6, 4), squeeze=False)
    for run, g in frame.groupby(["run", "file", "line"], sort=True):
        axes[0][0].plot(g["epoch"], g["train_loss"], marker=".", label=run[0])
        if quality:
            q = g[g[quality].notna()]
            axes[0][1].plot(q["epoch"], q[quality], marker=".", label=run[0])
    axes[0][0].set_xlabel("epoch")
    axes[0][0].set_ylabel("training loss")
    axes[0][0].set_title("convergence")
    if quality:
        axes[0][1].set_xlabel("epoch")
        axes[0][1].set_ylabel(f"held-out {quality}")
    for ax in axes[0]:
        ax.grid(alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    if len(labels) <= 12:
        axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
