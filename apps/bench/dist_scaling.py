#!/usr/bin/python3
"""Scaling of the distributed schemes on this machine, side by side in one run (a benchmark,
not a test: minutes; run it on a quiet machine).

For each model, under mpirun with one thread per rank:
  * weak scaling of ssgd: 1 rank at batch b, 2 ranks at batch b each (global 2b);
    E_w = X(2) / (2 X(1)) (models_and_recipes.md §6)
  * strong scaling of ssgd: 2 ranks at batch b/2 each (global b); E_s = X(2) / (2 X(1))
  * overlap: ssgd at 2 ranks with the gradient buckets reduced during backward (thread engine)
    and after it (none); the share of sync hidden = 1 - exposed / total, where total is the sync
    phase without overlap and exposed is the sync phase plus the bucket waits inside backward
    with it
  * localsgd (weights averaged every --local-period steps) and EASGD (2 workers + 1 parameter
    server, tau 1, 4, 8, sync) throughput against ssgd at the same 2 workers
The throughput of a run is the images of all workers over the wall time of the steady window
on the slowest rank (warm-up excluded; whole exchange periods, exchange steps counted). Each
configuration runs --repeats times, alternating, and the median is kept. Prints tables and appends every record to --out.

  /usr/bin/python3 apps/bench/dist_scaling.py [--dlscale build/dlscale] [--models cifar10_quick,resnet50]
      [--steps 20] [--repeats 1] [--out results/scratch/dist_scaling.jsonl]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

MODELS = {  # batch per rank for weak scaling, image size, steps scale, gradient bucket MiB
    "cifar10_quick": {"batch": 64, "image": 32, "steps": 1.0, "bucket_mb": 0.1},  # 0.44 MiB of gradients
    "resnet50": {"batch": 16, "image": 224, "steps": 0.3, "bucket_mb": 25},
}


def run(a, model, ranks, batch, scheme, extra=(), steps=None):
    cfg = MODELS[model]
    steps = steps or max(4, int(a.steps * cfg["steps"]))
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "r.jsonl")
        cmd = [
            a.mpirun,
            "-np",
            str(ranks),
            "--oversubscribe",
            "--bind-to",
            "none",
            "--mca",
            "mpi_yield_when_idle",
            "1",
            a.dlscale,
            "train",
            "-m",
            model,
            "-b",
            str(batch),
            "--image",
            str(cfg["image"]),
            "--data",
            f"synthetic:{max(512, 8 * batch * ranks)}",
            "--holdout",
            "0",
            "--eval-every",
            "-1",
            "--steps",
            str(steps + 2),
            "--warmup-steps",
            "2",
            "--threads",
            "1",
            "--optim",
            "sgd_torch",
            "--lr",
            "0.01",
            "--scheme",
            scheme,
            "--bucket-mb",
            str(cfg["bucket_mb"]),
            "--quiet",
            "--out",
            out,
            *extra,
        ]
        env = dict(
            os.environ,
            OMP_NUM_THREADS="1",
            OPENBLAS_NUM_THREADS="1",
            OMPI_ALLOW_RUN_AS_ROOT="1",
            OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        )
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            sys.exit(f"dist_scaling: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
        with open(out) as f:
            rec = json.loads(f.readline())
    with open(a.out, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return rec


def best_of(a, *args, **kw):
    recs = [run(a, *args, **kw) for _ in range(a.repeats)]
    recs.sort(key=lambda r: r["metrics"]["images_per_s"])
    return recs[len(recs) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dlscale", default="build/dlscale")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--models", default="cifar10_quick,resnet50")
    p.add_argument("--steps", type=int, default=20, help="timed steps (ResNet-50 runs 0.3 of them)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--local-period", type=int, default=8)
    p.add_argument("--out", default="results/scratch/dist_scaling.jsonl")
    a = p.parse_args()
    os.makedirs(os.path.dirname(a.out) or ".", exist_ok=True)
    for model in a.models.split(","):
        if model not in MODELS:
            sys.exit(f"dist_scaling: --models: unknown '{model}' (known: {', '.join(MODELS)})")
        b = MODELS[model]["batch"]

        def x(r):
            return r["metrics"]["images_per_s"]

        one = best_of(a, model, 1, b, "ssgd", ["--overlap", "none"])
        weak = best_of(a, model, 2, b, "ssgd", ["--overlap", "thread"])
        weak_none = best_of(a, model, 2, b, "ssgd", ["--overlap", "none"])
        strong = best_of(a, model, 2, b // 2, "ssgd", ["--overlap", "thread"])
        local = best_of(a, model, 2, b, "localsgd", ["--local-period", str(a.local_period)])
        easgd = {tau: best_of(a, model, 3, b, "easgd", ["--easgd-tau", str(tau)]) for tau in (1, 4, 8)}
        print(
            f"\n{model}: batch {b} per rank, 1 thread per rank, allreduce {weak['metrics'].get('allreduce')}, "
            f"{weak['params'].get('buckets')} buckets"
        )
        print(f"  1 rank                 {x(one):9.2f} img/s  step {one['metrics']['step_time_s']:.4f} s")
        print(f"  weak   2 ranks x {b:<4}  {x(weak):9.2f} img/s  E_w = {x(weak) / (2 * x(one)):.3f}")
        print(f"  strong 2 ranks x {b // 2:<4}  {x(strong):9.2f} img/s  E_s = {x(strong) / (2 * x(one)):.3f}")
        sync_none = weak_none["metrics"]["phase_s"]["sync"]
        exposed = weak["metrics"]["phase_s"]["sync"] + weak["metrics"].get("sync_waited_in_backward_s", 0.0)
        hidden = 1 - exposed / sync_none if sync_none > 0 else float("nan")
        print(
            f"  overlap: sync without {sync_none * 1e3:.2f} ms/step, exposed with {exposed * 1e3:.2f} ms/step "
            f"-> hidden {hidden:.1%};  throughput none {x(weak_none):.2f} vs thread {x(weak):.2f} img/s"
        )
        print(f"  localsgd (every {a.local_period})      {x(local):9.2f} img/s  = {x(local) / x(weak):.3f} x ssgd")
        for tau, r in easgd.items():
            print(f"  easgd tau {tau} (2 workers + 1 server) {x(r):9.2f} img/s  = {x(r) / x(weak):.3f} x ssgd")


if __name__ == "__main__":
    main()
