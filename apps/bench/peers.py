#!/usr/bin/python3
"""dlscale's engine against its peers on this CPU, every row of issue 26's table in one run.

A benchmark, not a test: about 20 minutes on 2 cores; run it on a quiet machine. Each row runs
both sides in the same run, one after the other (alternating where repeated), and prints the
ratio beside its target:

  conv_vs_onednn   per ResNet-50 and VGG-16 convolution layer and pass (fwd, bwd_data,
                   bwd_filter), oneDNN's time over ours (the best of our algorithms: im2col+GEMM,
                   Winograd, the direct and blocked convolutions where they apply), `dlscale kernels`,
                   checks on; geometric mean and worst. With --conv-rounds N the row runs N
                   times and each layer-pass and algorithm takes its median time.          target: each >= 0.9, mean >= 1.3
  conv_vs_sgemm    ResNet-50's 3x3 and 1x1 layers, fwd+bwd FLOPs over time (best algorithm, each
                   layer weighted by its count) over OpenBLAS sgemm 2048^3's GFLOP/s.   >= 0.85
  train_vs_pytorch images/s, dlscale over PyTorch, same network and batch, medians of --repeats
                   (apps/bench/pytorch_compare.py's runs).  ResNet-50 >= 1.5, AlexNet and VGG-16 >= 1.3
                   Each run's placement is printed (the cores' round trip: dlscale's own probes,
                   a triad kernel's just before and after PyTorch's), with the ratio of the two
                   sides' medians within each placement both ran in.
  ssgd_vs_ddp      2 ranks of --ddp-threads threads, ssgd (mpirun) over PyTorch DDP (gloo), same
                   model and per-rank batch, medians.                                   >= 1.2
  rss_vs_pytorch   peak RSS after 2 training steps at batch 16, dlscale over PyTorch, medians
                   of --repeats runs a side (PyTorch's moves by a few % from run to run).  <= 0.9
  allreduce_vs_mpi best of our allreduces' busbw over MPI_Allreduce's, 2 ranks, 16-64 MiB.  >= 1.35
                   allreduce_shared_vs_mpi: the same with every algorithm on vectors in the
                   node's shared memory (--memory shared: shm reads the other rank's in place,
                   which MPI_Allreduce cannot): a row of its own, not the target's.
  weak_scaling     2-rank ssgd weak-scaling efficiency, CIFAR-10 ConvNet, batch 64 per rank,
                   --weak-runs runs (1 and 2 ranks alternating).        median >= 0.92, worst >= 0.88
  conv_cold        (only when asked for; not a target, about 40 minutes) the conv row's layer-passes
                   each timed after a cache flush (`dlscale kernels --cold-cache`), as a training
                   step meets its operands: geometric mean, worst, the share below 0.9, and
                   ResNet-50's convolution time a batch (layer-passes weighted by their counts),
                   oneDNN's over ours.
  train_onednn     (only when asked for; not a target) `dlscale train` with our convolutions over
                   the same with oneDNN's (--backend onednn: NCHW tensors reordered into oneDNN's
                   layouts and back at each call, as PyTorch 1.13 calls it), --models, medians of
                   --repeats alternating runs: images/s, and the convolutions' seconds a step
                   (oneDNN's over ours).

  /usr/bin/python3 apps/bench/peers.py [--rows conv,train,ddp,rss,allreduce,weak]
      [--dlscale build/dlscale] [--threads 2] [--repeats 3] [--conv-rounds 1]
      [--out results/scratch/peers.jsonl]

Every raw record is appended to --out with the row it belongs to, then one summary line per row.
The environment is used as given and the BLAS kernels OpenBLAS dispatched are printed: an
OPENBLAS_CORETYPE in the environment changes our GEMM-based paths (and PyTorch's linear layers)
but not oneDNN's.
"""

import argparse
import importlib.util
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers_rows  # noqa: E402

TORCH_ROWS = ("train", "ddp", "rss")  # the rows with a PyTorch side
ROWS = {
    "conv": peers_rows.conv_rows,
    "train": peers_rows.train_rows,
    "ddp": peers_rows.ddp_rows,
    "rss": peers_rows.rss_rows,
    "allreduce": peers_rows.allreduce_rows,
    "weak": peers_rows.weak_rows,
    "conv_cold": peers_rows.conv_cold_rows,
    "train_onednn": peers_rows.train_onednn_rows,
}
DEFAULT_ROWS = ("conv", "train", "ddp", "rss", "allreduce", "weak")  # issue 26's; conv_cold, train_onednn on request


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.abspath(__file__))
    p.add_argument("--dlscale", default=os.path.normpath(os.path.join(here, "../../build/dlscale")))
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument(
        "--rows",
        default=",".join(DEFAULT_ROWS),
        help=f"comma list of {', '.join(ROWS)} (default: all but conv_cold and train_onednn)",
    )
    p.add_argument("--threads", type=int, default=os.cpu_count(), help="threads of one-process rows")
    p.add_argument("--ddp-threads", type=int, default=1, help="threads per rank of ssgd_vs_ddp")
    p.add_argument("--ddp-model", default="resnet50")
    p.add_argument("--models", default="resnet50,alexnet,vgg16", help="train_vs_pytorch's models")
    p.add_argument("--repeats", type=int, default=3, help="runs of each side of train, ddp and rss")
    p.add_argument(
        "--conv-rounds",
        type=int,
        default=1,
        help="runs of the whole conv row; each layer-pass and algorithm then takes the median of its times",
    )
    p.add_argument("--steps", type=int, default=6, help="timed training steps (VGG-16: half)")
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--weak-runs", type=int, default=5)
    p.add_argument("--out", default="results/scratch/peers.jsonl")
    a = p.parse_args(argv)
    rows = a.rows.split(",")
    unknown = [r for r in rows if r not in ROWS]
    if unknown:
        p.error(f"--rows: unknown {', '.join(unknown)} (known: {', '.join(ROWS)})")
    for name in ("threads", "ddp_threads", "repeats", "conv_rounds", "steps", "weak_runs"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')}: expected at least 1, got {getattr(a, name)}")
    if not (os.path.isfile(a.dlscale) and os.access(a.dlscale, os.X_OK)):
        p.error(f"--dlscale: {a.dlscale} is not an executable (build it: scripts/setup.sh)")
    torch_rows = [r for r in rows if r in TORCH_ROWS]
    missing = [m for m in ("torch", "torchvision") if importlib.util.find_spec(m) is None]
    if torch_rows and missing:
        p.error(
            f"--rows {','.join(torch_rows)}: run PyTorch, and {sys.executable} has no {' or '.join(missing)} "
            "(Debian: apt-get install python3-torch python3-torchvision; or leave those rows out, "
            "e.g. --rows conv,allreduce,weak)"
        )
    a.rows = rows
    a.device, a.math = "cpu", "fp32"  # what pytorch_compare's runs read
    return a


def print_table(summaries):
    w = max([34] + [len(s["case"]) for s in summaries])
    r = max([18] + [len(s["row"]) for s in summaries])
    print(f"\n{'row':<{r}} {'case':<{w}} {'ours':>10} {'peer':>10} {'ratio':>7}  {'target':<10} met")
    for s in summaries:
        ours = "" if s.get("ours") is None else f"{s['ours']:.4g}"
        peer = "" if s.get("peer") is None else f"{s['peer']:.4g}"
        met = {True: "yes", False: "NO", None: "-"}[s["met"]]
        print(f"{s['row']:<{r}} {s['case']:<{w}} {ours:>10} {peer:>10} {s['ratio']:>7.3f}  {s['target']:<10} {met}")


def main(argv=None):
    a = parse(argv)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    summaries = []
    with open(a.out, "a") as out, tempfile.TemporaryDirectory(prefix="dls_peers_") as tmp:
        a.tmp = tmp
        print(f"# {peers_rows.blas_line(a)}; threads {a.threads}; out {a.out}", flush=True)

        def keep(row, record):
            out.write(json.dumps({"row": row, **record}) + "\n")
            out.flush()

        for row in a.rows:
            print(f"# {row} ...", flush=True)
            for s in ROWS[row](a, keep):
                keep("summary", s)
                summaries.append(s)
    print_table(summaries)


if __name__ == "__main__":
    main()
