"""The rows of apps/bench/peers.py: each runs both sides and returns its summaries.

A summary is {row, case, ours, peer, ratio, target, met}; ratio > 1 means dlscale is ahead
(for memory: peer over ours is not used; the ratio is ours over the peer and the target a
ceiling). Raw records go to keep(row, record) as they arrive.
"""

import json
import os
import statistics
import subprocess
import sys
from types import SimpleNamespace

import dist_scaling
import pytorch_compare

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
DIRS = ("fwd", "bwd_data", "bwd_filter")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def summary(row, case, ours, peer, ratio, target, met):
    return {"row": row, "case": case, "ours": ours, "peer": peer, "ratio": ratio, "target": target, "met": met}


def blas_line(a):
    """Which OpenBLAS kernels dlscale runs with (one tiny GEMM's provenance), and who chose them."""
    rec = kernels(a, ["--op", "gemm", "--shape", "64x64x64", "--backend", "openblas", "--threads", "1"])[0]
    blas = rec["provenance"]["libraries"]["blas"]
    chosen = blas.get("coretype", {})
    by = {
        "dlscale": f" (dlscale's choice: OpenBLAS had chosen {chosen.get('replaced')}, below this CPU)",
        "environment": f" (OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE')} in the environment)",
    }.get(chosen.get("chosen_by"), " (OpenBLAS's own choice)")
    return f"{' '.join(blas['config'].split()[0:2])}, core {blas['corename']}{by}"


def kernels(a, args):
    """Runs `dlscale kernels ARGS --out F` and returns its records."""
    out = os.path.join(a.tmp, "kernels.jsonl")
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.dlscale, "kernels", "--counters", "none", "--out", out, *args]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [json.loads(line) for line in f]


# ---- convolutions ----


def conv_layers(models=("resnet50", "vgg16")):
    """(descriptor with its name) of every convolution layer in the models' shape files."""
    lines = []
    for m in models:
        with open(os.path.join(ROOT, "kernels/shapes", f"{m}.txt")) as f:
            lines += [ln.split()[1] for ln in f if ln.startswith("conv2d ")]
    return lines


def conv_times(a, keep, row="conv"):
    """{(layer name, dir): {algo: metrics}} for gemm, winograd, direct and blocked (where they
    apply: `dlscale kernels` skips the other layers and passes, as winograd_applicable,
    direct_applicable and blocked_applicable say) and onednn. Row conv_cold times every call
    after a cache flush (`--cold-cache`), its operands then coming from memory."""
    descs = conv_layers()
    path = os.path.join(a.tmp, "conv_shapes.txt")
    with open(path, "w") as f:
        for d in descs:
            f.writelines(f"conv2d_{x} {d}\n" for x in DIRS)
            f.writelines(f"conv2d_wino_{x} {d}\n" for x in DIRS)
            f.writelines(f"conv2d_direct_{x} {d}\n" for x in DIRS)
            f.writelines(f"conv2d_blocked_{x} {d}\n" for x in ("fwd", "bwd_data"))
    common = ["--threads", str(a.threads)] + (["--cold-cache"] if row == "conv_cold" else [])
    runs, sgemm = {}, []
    for k in range(a.conv_rounds):
        if a.conv_rounds > 1:
            print(f"  conv round {k + 1} of {a.conv_rounds}", flush=True)
        recs = kernels(a, ["--shapes", path, "--backend", "openblas,onednn", *common])
        recs += kernels(a, ["--op", "gemm", "--shape", "2048x2048x2048", "--backend", "openblas", *common])
        for r in recs:
            keep(row, r)
            m = r["metrics"]
            if r["status"] != "ok":
                continue
            if m["op"] == "gemm":
                sgemm.append(m["gflop_per_s"])
                continue
            variant = next((v for v in ("wino", "direct", "blocked") if f"_{v}_" in m["op"]), None)
            algo = {"wino": "winograd", "direct": "direct", "blocked": "blocked"}.get(variant) or {"openblas": "gemm"}.get(
                m["backend"], m["backend"]
            )
            op = m["op"].replace(f"{variant}_", "") if variant else m["op"]
            key = (m["shape"].split("_n", 1)[1], op.removeprefix("conv2d_"))
            runs.setdefault(key, {}).setdefault(algo, []).append(m)
    table = {key: {algo: median_run(ms) for algo, ms in algos.items()} for key, algos in runs.items()}
    return table, statistics.median(sgemm), runs


def median_run(ms):
    """One algorithm's metrics over the rounds, its time the median of theirs."""
    return {**ms[0], "time_s": statistics.median(m["time_s"] for m in ms), "rounds": len(ms)}


def ours_time(algos):
    """The best of our algorithms' times for one layer-pass."""
    return min(m["time_s"] for k, m in algos.items() if k != "onednn")


def round_trips(runs):
    """Every timing's cores' round trip (ns; metrics.cores, measure/core_latency.hpp)."""
    return [m["cores"]["round_trip_ns"] for algos in runs.values() for ms in algos.values() for m in ms if m.get("cores")]


PLACEMENT_GAP = 1.4  # a round trip this many times the next shorter one starts another placement


def placements(trips):
    """The placements `trips` (ns) fall in, as (name, test of a round trip): runs of the sorted
    trips, a new one wherever a trip is over PLACEMENT_GAP times the one before, each named by
    its range. A 2-core Zen 4 VM's two vCPUs were seen about 63 ns apart (one core's two hardware
    threads: compute-bound runs there took up to twice as long), 100 (cores sharing an L3), 320
    and 590 ns (sharing none), and one placement alone says nothing of which it was; so the names
    give the measured range, not a cache."""
    ordered = sorted(trips)
    groups = [[ordered[0]]]
    for t in ordered[1:]:
        if t > PLACEMENT_GAP * groups[-1][-1]:
            groups.append([])
        groups[-1].append(t)
    return tuple((f"{g[0]:.0f}-{g[-1]:.0f} ns apart", lambda t, lo=g[0], hi=g[-1]: lo <= t <= hi) for g in groups)


def placement_lines(runs):
    """How far apart the cores were while the layer-passes were timed, and the geometric mean
    of the layer-passes whose every algorithm was timed in one placement, for each: a time taken
    where the threads' cores share no cache is not comparable with one where they do."""
    trips = round_trips(runs)
    if not trips:
        return ["the cores' round trip was not recorded (one thread, or one CPU allowed)"]
    groups = placements(trips)
    counts = ", ".join(f"{sum(1 for t in trips if keep(t))} {name}" for name, keep in groups)
    lines = [f"the cores' cache-line round trip over {len(trips)} timings: {counts}"]
    for name, keep in groups:
        ratios = []
        for algos in runs.values():
            times = {
                a: [m["time_s"] for m in ms if m.get("cores") and keep(m["cores"]["round_trip_ns"])] for a, ms in algos.items()
            }
            if "onednn" in times and all(times.values()):
                ours = min(statistics.median(v) for a, v in times.items() if a != "onednn")
                ratios.append(statistics.median(times["onednn"]) / ours)
        if ratios:
            gm = statistics.geometric_mean(ratios)
            lines.append(f"timed with the cores {name}: geomean {gm:.3f} over {len(ratios)} layer-passes")
    return lines


def onednn_ratios(table):
    """{(layer, pass): oneDNN's time over the best of ours}."""
    return {key: algos["onednn"]["time_s"] / ours_time(algos) for key, algos in sorted(table.items())}


def ratio_stats(ratios):
    """(geometric mean, the worst layer-pass's case text and ratio, how many are below 0.9) of
    onednn_ratios."""
    worst = min(ratios, key=ratios.get)
    return (
        statistics.geometric_mean(ratios.values()),
        f"worst: {worst[0].split('*')[0]} {worst[1]}",
        ratios[worst],
        sum(1 for r in ratios.values() if r < 0.9),
    )


def resnet50_sums(table):
    """ResNet-50's convolution time a batch, each layer-pass weighted by its count: (the best of
    ours, oneDNN's), in seconds."""
    ours = onednn = 0.0
    for (layer, _), algos in table.items():
        if layer.startswith("resnet50:"):
            count = int(layer.rsplit("*", 1)[1])
            ours += count * ours_time(algos)
            onednn += count * algos["onednn"]["time_s"]
    return ours, onednn


def conv_cold_rows(a, keep):
    """The conv row's layer-passes with every call timed after a cache flush, as a training step
    meets them (each layer's input, weights and output last touched a layer or a step before):
    not a target of issue 26, which times them in cache; a view of how far those ratios carry to
    training. ResNet-50's training step spent its convolutions' summed cold times, not the warm
    ones (README, 2026-11-29)."""
    table, _, _ = conv_times(a, keep, "conv_cold")
    ratios = onednn_ratios(table)
    gm, worst, worst_ratio, below = ratio_stats(ratios)
    ours, onednn = resnet50_sums(table)
    return [
        summary("conv_cold", f"geomean of {len(ratios)} layer-passes", None, None, gm, "(none)", None),
        summary("conv_cold", worst, None, None, worst_ratio, "(none)", None),
        summary("conv_cold", f"layer-passes below 0.9: {below}", None, None, below / len(ratios), "(none)", None),
        summary("conv_cold", "ResNet-50 summed, ms a batch", ours * 1e3, onednn * 1e3, onednn / ours, "(none)", None),
    ]


def conv_rows(a, keep):
    table, sgemm, runs = conv_times(a, keep)
    ratios = onednn_ratios(table)
    gm, worst, worst_ratio, below = ratio_stats(ratios)
    out = [
        summary("conv_vs_onednn", f"geomean of {len(ratios)} layer-passes", None, None, gm, ">= 1.3", gm >= 1.3),
        summary("conv_vs_onednn", worst, None, None, worst_ratio, ">= 0.9", worst_ratio >= 0.9),
    ]
    print(f"  {below} of {len(ratios)} layer-passes below 0.9", flush=True)
    for line in placement_lines(runs):
        print(f"  {line}", flush=True)
    for kind, pick in (("3x3", "_kh3kw3_"), ("1x1", "_kh1kw1_")):
        flop = time = 0.0
        for (layer, _), algos in table.items():
            gemm = algos["gemm"]
            if not layer.startswith("resnet50:") or pick not in gemm["shape"]:
                continue
            count = int(layer.rsplit("*", 1)[1])
            flop += count * gemm["flop"]
            time += count * ours_time(algos)
        rate = flop / time / 1e9
        out.append(
            summary("conv_vs_sgemm", f"ResNet-50 {kind}, GFLOP/s", rate, sgemm, rate / sgemm, ">= 0.85", rate / sgemm >= 0.85)
        )
    return out


# ---- training ----

TRAIN_TARGET = {"resnet50": 1.5, "alexnet": 1.3, "vgg16": 1.3}


def probe_round_trip(a):
    """The cores' cache-line round trip now (ns, the larger of a triad kernel's two probes,
    measure/core_latency.hpp), or None where none is measured (one thread, one CPU allowed)."""
    out = os.path.join(a.tmp, "probe.jsonl")
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.dlscale, "kernels", "--counters", "none", "--op", "triad", "--shape", "n65536", "--threads", str(a.threads)]
    # a given peak: the probe needs no FMA-peak measurement (the run's percentages are unused)
    subprocess.run([*cmd, "--check-limit", "1", "--peak-gflops", "100", "--out", out], check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        cores = [json.loads(line)["metrics"].get("cores") for line in f]
    trips = [c["round_trip_ns"] for c in cores if c]
    return max(trips) if trips else None


def torch_run_placed(a, model, steps):
    """A PyTorch training run with the cores' round trip probed just before and just after it
    (its "cores", as the dlscale side records its own at its start and end)."""
    before = probe_round_trip(a)
    run = pytorch_compare.run_torch(a, model, 16, steps, a.warmup)
    after = probe_round_trip(a)
    trips = [t for t in (before, after) if t is not None]
    run["cores"] = {"probes_ns": trips, "round_trip_ns": max(trips)} if trips else None
    return run


def train_placement_lines(ours, theirs):
    """Where each side's runs ran (the cores' round trip, ns) and, for each placement both sides
    ran in, the ratio of their medians there: a run where the two vCPUs share no cache is not
    comparable with one where they do (ResNet-50: 8.25-8.27 images/s against 8.42-8.54)."""
    trip = lambda r: r["cores"]["round_trip_ns"] if r.get("cores") else None  # noqa: E731
    trips = [t for t in map(trip, ours + theirs) if t is not None]
    show = lambda rs: "/".join(f"{trip(r):.0f}" if trip(r) is not None else "-" for r in rs)  # noqa: E731
    lines = [f"cores' round trip (ns), run by run: ours {show(ours)}, PyTorch {show(theirs)}"]
    if not trips:
        return lines
    for name, keep in placements(trips):
        o = [r["images_per_s"] for r in ours if trip(r) is not None and keep(trip(r))]
        t = [r["images_per_s"] for r in theirs if trip(r) is not None and keep(trip(r))]
        if o and t:
            ratio = statistics.median(o) / statistics.median(t)
            lines.append(f"both sides' runs with the cores {name}: {len(o)} and {len(t)}, ratio {ratio:.3f}")
    return lines


def alternating_runs(a, keep, row, model, peer_run):
    """--repeats training runs a side of `model` at batch 16, ours (`dlscale train`) then the
    peer's (peer_run(a, model, steps)) in turn, each record kept under `row`: (ours, the peer's)."""
    steps = max(2, a.steps // 2) if model == "vgg16" else a.steps
    ours, theirs = [], []
    for _ in range(a.repeats):
        ours.append(pytorch_compare.run_dlscale(a, model, 16, steps, a.warmup))
        theirs.append(peer_run(a, model, steps))
        keep(row, ours[-1])
        keep(row, theirs[-1])
    return ours, theirs


def train_rows(a, keep):
    out = []
    for model in a.models.split(","):
        ours, theirs = alternating_runs(a, keep, "train", model, torch_run_placed)
        if ours[0]["parameters"] != theirs[0]["parameters"]:
            sys.exit(f"peers: {model}: {ours[0]['parameters']} parameters here, {theirs[0]['parameters']} in PyTorch")
        for line in train_placement_lines(ours, theirs):
            print(f"  {model}: {line}", flush=True)
        o = statistics.median(r["images_per_s"] for r in ours)
        t = statistics.median(r["images_per_s"] for r in theirs)
        target = TRAIN_TARGET.get(model, 1.0)
        out.append(summary("train_vs_pytorch", f"{model} batch 16 img/s", o, t, o / t, f">= {target}", o / t >= target))
    return out


def conv_step_s(run):
    """A dlscale run's convolution seconds a step: its conv layers' forward and backward (layer_s)."""
    return sum(v["forward_s"] + v["backward_s"] for v in run["layer_s"].values() if v["type"] == "conv2d")


def onednn_run(a, model, steps):
    """`dlscale train` with oneDNN's convolutions (--backend onednn), tagged as such."""
    return {**pytorch_compare.run_dlscale(a, model, 16, steps, a.warmup, ["--backend", "onednn"]), "backend": "onednn"}


def train_onednn_rows(a, keep):
    """Our convolutions against oneDNN's inside one engine's training step: `dlscale train` with
    its own kernels (the default backend) and with oneDNN's (--backend onednn: the activations
    stay NCHW and each call reorders them into oneDNN's layouts and back, as a framework with NCHW
    tensors calls it, PyTorch 1.13 among them), medians of --repeats alternating runs. Not a target
    of issue 26: its conv row times oneDNN in its own layouts, the reorders left out; this row
    says what that leaves of oneDNN's lead in a whole step."""
    out = []
    for model in a.models.split(","):
        ours, theirs = alternating_runs(a, keep, "train_onednn", model, onednn_run)
        shown = {side: "/".join(f"{conv_step_s(r):.3f}" for r in runs) for side, runs in (("ours", ours), ("oneDNN", theirs))}
        print(f"  {model}: convolutions, s a step, run by run: ours {shown['ours']}, oneDNN {shown['oneDNN']}", flush=True)
        o = statistics.median(r["images_per_s"] for r in ours)
        t = statistics.median(r["images_per_s"] for r in theirs)
        co = statistics.median(map(conv_step_s, ours))
        ct = statistics.median(map(conv_step_s, theirs))
        out.append(summary("train_onednn", f"{model} batch 16 img/s", o, t, o / t, "(none)", None))
        out.append(summary("train_onednn", f"{model} convolutions, s a step", co, ct, ct / co, "(none)", None))
    return out


def rss_gib(runs):
    """The runs' peak RSS in GiB."""
    return [r["peak_rss_bytes"] / 2**30 for r in runs]


def rss_rows(a, keep):
    """Peak RSS after 2 steps, medians of --repeats runs a side, alternating: PyTorch's moves
    from run to run (VGG-16 3.05-3.17 GiB, ResNet-50 2.33-2.51 in four runs on one day) where
    dlscale's did not (2.755 and 1.918 GiB each time)."""
    out = []
    for model in ("vgg16", "resnet50"):
        ours, theirs = [], []
        for _ in range(a.repeats):
            ours.append(pytorch_compare.run_dlscale(a, model, 16, 2, 0))
            theirs.append(pytorch_compare.run_torch(a, model, 16, 2, 0))
            keep("rss", ours[-1])
            keep("rss", theirs[-1])
        shown = {side: "/".join(f"{v:.3f}" for v in rss_gib(runs)) for side, runs in (("ours", ours), ("PyTorch", theirs))}
        print(f"  {model}: peak RSS (GiB), run by run: ours {shown['ours']}, PyTorch {shown['PyTorch']}", flush=True)
        o, t = statistics.median(rss_gib(ours)), statistics.median(rss_gib(theirs))
        out.append(summary("rss_vs_pytorch", f"{model} batch 16, GiB", o, t, o / t, "<= 0.9", o / t <= 0.9))
    return out


# ---- distributed ----


def ssgd_run(a, model, batch, steps):
    out = os.path.join(a.tmp, "ssgd.jsonl")
    if os.path.exists(out):
        os.remove(out)
    train = pytorch_compare.dlscale_train_args(model, batch, steps + a.warmup, a.warmup, a.ddp_threads, out)
    cmd = [a.mpirun, "-np", "2", "--oversubscribe", "--bind-to", "none", a.dlscale, *train, "--scheme", "ssgd"]
    env = dict(os.environ, OMPI_MCA_mpi_yield_when_idle="1", **MPI_ENV)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    with open(out) as f:
        return json.loads(f.readline())


def ddp_run(a, model, batch, steps):
    here = os.path.dirname(os.path.abspath(__file__))
    port = str(29500 + os.getpid() % 1000)
    args = ["--model", model, "--batch", str(batch), "--steps", str(steps), "--warmup", str(a.warmup)]
    procs = []
    for rank in range(2):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        cmd = [sys.executable, os.path.join(here, "ddp_worker.py"), *args, "--threads", str(a.ddp_threads)]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit(f"peers: ddp_worker exited {[p.returncode for p in procs]}")
    return json.loads(outs[0].strip().splitlines()[-1])


def ddp_rows(a, keep):
    model, batch = a.ddp_model, 16
    ours, theirs = [], []
    for _ in range(a.repeats):
        ours.append(ssgd_run(a, model, batch, a.steps))
        theirs.append(ddp_run(a, model, batch, a.steps))
        keep("ddp", ours[-1])
        keep("ddp", theirs[-1])
    o = statistics.median(r["metrics"]["images_per_s"] for r in ours)
    t = statistics.median(r["images_per_s"] for r in theirs)
    case = f"{model} 2x{batch}, {a.ddp_threads} thr/rank img/s"
    return [summary("ssgd_vs_ddp", case, o, t, o / t, ">= 1.2", o / t >= 1.2)]


def allreduce_rows(a, keep):
    """Best of our allreduces against MPI_Allreduce, each size, in one sweep on private vectors
    (--memory host: the issue's row) and, as a row of its own, one on vectors in the node's shared
    memory (--memory shared: every algorithm, MPI_Allreduce too, on the same memory; shm reads the
    other rank's vector in place, which MPI_Allreduce cannot)."""
    rows = []
    for memory in ("host", "shared"):
        out = os.path.join(a.tmp, f"allreduce_{memory}.jsonl")
        cmd = [a.mpirun, "-np", "2", "--oversubscribe", "--bind-to", "none", a.dlscale, "collectives"]
        cmd += ["-b", "16M", "-e", "64M", "--algo", "all", "--memory", memory, "--out", out]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ, **MPI_ENV))
        by_size = {}
        with open(out) as f:
            for line in f:
                r = json.loads(line)
                keep("allreduce", r)
                m = r["metrics"]
                if "busbw_bytes_per_s" not in m:  # the sweep's alpha-beta fit records
                    continue
                by_size.setdefault(m["bytes"], {})[m["algo"]] = m["busbw_bytes_per_s"]
        for size, algos in sorted(by_size.items()):
            best = max((v, k) for k, v in algos.items() if k != "mpi")
            ratio = best[0] / algos["mpi"]
            case = f"{size >> 20} MiB {memory} memory, busbw GB/s (best: {best[1]})"
            row = "allreduce_vs_mpi" if memory == "host" else "allreduce_shared_vs_mpi"  # beside the target's
            rows.append(summary(row, case, best[0] / 1e9, algos["mpi"] / 1e9, ratio, ">= 1.35", ratio >= 1.35))
    return rows


def round_trip(metrics):
    """A train record's cores' round trip (ns, the largest probed), or '-' where none was."""
    return f"{metrics['cores']['round_trip_ns']:.0f}" if metrics.get("cores") else "-"


def weak_rows(a, keep):
    ds = SimpleNamespace(dlscale=a.dlscale, mpirun=a.mpirun, steps=20, out=os.path.join(a.tmp, "weak.jsonl"))
    effs = []
    for i in range(a.weak_runs):
        one = dist_scaling.run(ds, "cifar10_quick", 1, 64, "ssgd")
        two = dist_scaling.run(ds, "cifar10_quick", 2, 64, "ssgd")
        keep("weak", one)
        keep("weak", two)
        effs.append(two["metrics"]["images_per_s"] / (2 * one["metrics"]["images_per_s"]))
        # where the loss is: a rank's compute slowing beside the other (shared caches, memory, the
        # host's clock) or the exchange (the sync phase: mostly waiting for the other rank)
        # and the placement: two ranks on cores that share an L3 share its capacity too
        p1, p2 = one["metrics"]["phase_s"], two["metrics"]["phase_s"]
        c1, c2 = p1["forward"] + p1["backward"], p2["forward"] + p2["backward"]
        trips = "/".join(round_trip(r["metrics"]) for r in (one, two))
        print(
            f"  run {i + 1}: efficiency {effs[-1]:.3f}; forward+backward {c1 * 1e3:.1f} ms alone, "
            f"{c2 * 1e3:.1f} ms at 2 ranks (x{c2 / c1:.2f}); sync {p2['sync'] * 1e3:.1f} ms a step; "
            f"cores' round trip {trips} ns (1 rank / 2 ranks)",
            flush=True,
        )
    med, worst = statistics.median(effs), min(effs)
    return [
        summary("weak_scaling", f"median of {len(effs)} runs", None, None, med, ">= 0.92", med >= 0.92),
        summary("weak_scaling", f"worst of {len(effs)} runs", None, None, worst, ">= 0.88", worst >= 0.88),
    ]
