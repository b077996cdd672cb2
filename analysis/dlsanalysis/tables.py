"""Every table a campaign supports, written as CSV and Markdown, and the plots beside them.

campaign_tables(df, modes, gemm_shape)  name -> DataFrame for the tables that the campaign's
records feed:
    training     scaling (efficiency against the smallest scale, the plan's weak/strong mode
                 stated), speedup (per-epoch and learning), time_to_accuracy, breakdown (per
                 phase), layer_shares (per layer type), tau (EASGD)
    kernels      kernels (GFLOP/s, % of peak, convolution vs GEMM); with convolution records,
                 kernel_efficiency (per conv layer: GFLOP/s of the three directions per backend,
                 vs the OpenBLAS sgemm of gemm_shape, OpenBLAS vs oneDNN) and
                 kernel_efficiency_models (the same per network, count-weighted)
    collectives  busbw (by size, ranks, algorithm), alpha_beta (the fitted model)
"""

import os

from .collectives import alpha_beta_table, busbw_table
from .convergence import convergence_frame, layer_share_table, tau_table, time_to_accuracy_table
from .kernel_efficiency import DEFAULT_GEMM_SHAPE, kernel_efficiency_tables
from .kernels import kernel_table
from .plots import breakdown_plot, busbw_plot, convergence_plot, scaling_plot
from .records import ok_train
from .scaling import breakdown_table, scaling_table, speedup_table


def markdown(table):
    """A pipe table (pandas' to_markdown needs tabulate, which Debian's pandas does not pull in)."""
    fmt = lambda v: f"{v:.4g}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines)


def train_group(train):
    return ("experiment", "params.model") if "experiment" in train else ("params.model",)


def campaign_tables(df, modes=None, gemm_shape=DEFAULT_GEMM_SHAPE):
    tables = {}
    if df.empty:
        return tables
    train = ok_train(df)
    if not train.empty:
        group = train_group(train)
        # EASGD runs count workers in metrics.ranks; they are in the tau table, not the scaling one
        plain = train[train["params.easgd.tau"].isna()] if "params.easgd.tau" in train else train
        if not plain.empty:
            s = scaling_table(plain, group=group)
            if modes and "experiment" in s:
                s.insert(1, "mode", s["experiment"].map(lambda e: modes.get(e) or ""))
            tables["scaling"] = s
            if "metrics.epoch_time_s" in plain:
                tables["speedup"] = speedup_table(plain, group=group)
        tables["time_to_accuracy"] = time_to_accuracy_table(train, group=group)
        tables["breakdown"] = breakdown_table(train, group=group)
        tables["layer_shares"] = layer_share_table(train, group=group)
        tables["tau"] = tau_table(train)
    tables["kernels"] = kernel_table(df)
    tables["kernel_efficiency"], tables["kernel_efficiency_models"] = kernel_efficiency_tables(df, gemm_shape)
    tables["busbw"] = busbw_table(df)
    tables["alpha_beta"] = alpha_beta_table(df)
    return {k: v for k, v in tables.items() if v is not None and not v.empty}


def write_tables(tables, files, sub=""):
    """NAME.csv and NAME.md of each table into the FileSet `files` (under its folder `sub`)."""
    for name, table in tables.items():
        table.to_csv(files.path(os.path.join(sub, f"{name}.csv")), index=False)
        files.text(os.path.join(sub, f"{name}.md"), markdown(table) + "\n")


def write_plots(tables, df, files, sub=""):
    """The PNGs the tables support, into the FileSet `files` (under `sub`); {name: final path}."""
    plots = {}

    def staged(name):
        plots[name] = files.final(os.path.join(sub, f"{name}.png"))
        return files.path(os.path.join(sub, f"{name}.png"))

    train = df[df["kind"] == "train"] if not df.empty else df
    group = train_group(train) if not train.empty else ()
    if "scaling" in tables:
        scaling_plot(tables["scaling"], group, staged("scaling"))
    if "breakdown" in tables:
        breakdown_plot(tables["breakdown"], group, staged("breakdown"))
    if "busbw" in tables:
        busbw_plot(tables["busbw"], tables.get("alpha_beta"), staged("busbw"))
    conv = convergence_frame(train) if not train.empty else train
    if not conv.empty:
        convergence_plot(conv, staged("convergence"))
    return plots
