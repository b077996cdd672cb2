#!/usr/bin/python3
"""Training throughput and peak memory of dlscale's engine against PyTorch, side by side.

A benchmark, not a test (run it on a quiet machine; it takes minutes). For each model the two
engines train the same network (same layers, parameter count checked equal) on synthetic
224x224 images with SGD + momentum, batch 16, the same thread count, alternating
dlscale / PyTorch `--repeats` times in separate processes; the throughput of each engine is the
median over its runs of images/s by the wall clock in steady state (warm-up steps excluded; the
mean step, as dlscale's steady window). Peak resident memory
is each process's ru_maxrss (VGG-16, batch 64). Prints a table of ratios and writes JSON lines.

  /usr/bin/python3 apps/bench/pytorch_compare.py [--dlscale build/dlscale] [--threads N]
      [--models resnet50,vgg16,alexnet] [--steps 6] [--warmup 2] [--repeats 1] [--rss-batch 64]
      [--out results/scratch/pytorch_compare.jsonl]

On a GPU (--device cuda): dlscale trains with --backend cudnn, PyTorch on CUDA with
cudnn.benchmark on (cuDNN's algorithm search, as dlscale's cudnnFind), both in strict FP32
unless --math tf32 (DLS_GPU_MATH for dlscale, allow_tf32 for PyTorch); each PyTorch step ends
with torch.cuda.synchronize(), as dlscale's does; no memory comparison. Issue 8's target for
ResNet-50 there is a ratio of at least 0.9.

  /usr/bin/python3 apps/bench/pytorch_compare.py --device cuda --models resnet50 --batch 64 --steps 20 --warmup 5

Needs Debian's python3-torch and python3-torchvision (CPU), or a CUDA build of PyTorch for --device cuda.
AlexNet is the BVLC one (grouped
convolutions, LRN, ceil-mode pooling) written out in PyTorch below, as torchvision's AlexNet is a
different network.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time


def bvlc_alexnet(torch, classes=1000):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, 96, 11, stride=4),
        nn.ReLU(inplace=True),
        nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(96, 256, 5, padding=2, groups=2),
        nn.ReLU(inplace=True),
        nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Conv2d(256, 384, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(384, 384, 3, padding=1, groups=2),
        nn.ReLU(inplace=True),
        nn.Conv2d(384, 256, 3, padding=1, groups=2),
        nn.ReLU(inplace=True),
        nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Flatten(),
        nn.Linear(256 * 6 * 6, 4096),
        nn.ReLU(inplace=True),
        nn.Dropout(0.5),
        nn.Linear(4096, 4096),
        nn.ReLU(inplace=True),
        nn.Dropout(0.5),
        nn.Linear(4096, classes),
    )


def torch_worker(args):
    """Runs in a child process: trains one model with PyTorch, prints one JSON line."""
    import torch
    import torchvision

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    cuda = args.device == "cuda"
    if cuda:
        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.allow_tf32 = args.math == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = args.math == "tf32"
    net = bvlc_alexnet(torch) if args.model == "alexnet" else getattr(torchvision.models, args.model)()
    net = net.to(args.device)
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.randn(args.batch, 3, 224, 224, device=args.device)
    y = torch.randint(0, 1000, (args.batch,), device=args.device)
    times = []
    for _ in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        if cuda:
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    steady = times[args.warmup :]
    step = statistics.fmean(steady)  # the wall-clock mean step, as dlscale's images_per_s
    print(
        json.dumps(
            {
                "engine": "pytorch",
                "model": args.model,
                "batch": args.batch,
                "parameters": sum(p.numel() for p in net.parameters()),
                "images_per_s": args.batch / step,
                "step_time_s": step,
                "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                "torch": torch.__version__,
                "device": torch.cuda.get_device_name() if cuda else "cpu",
                "math": args.math if cuda else "fp32",
            }
        )
    )


def dlscale_train_args(model, batch, steps, warmup, threads, out):
    """`dlscale train` arguments of the comparison: synthetic 224x224 images, SGD as PyTorch's."""
    return [
        "train",
        "-m",
        model,
        "-b",
        str(batch),
        "--image",
        "224",
        "--data",
        f"synthetic:{4 * batch}",
        "--holdout",
        "0",
        "--steps",
        str(steps),
        "--warmup-steps",
        str(warmup),
        "--eval-every",
        "-1",
        "--optim",
        "sgd_torch",
        "--lr",
        "0.01",
        "--momentum",
        "0.9",
        "--weight-decay",
        "5e-4",
        "--threads",
        str(threads),
        "--quiet",
        "--out",
        out,
    ]


def run_dlscale(a, model, batch, steps, warmup, extra=()):
    """One `dlscale train` run of the comparison (extra: more of its arguments, e.g. a backend)."""
    out = f"/tmp/dls_pytorch_compare_{os.getpid()}.jsonl"
    if os.path.exists(out):
        os.remove(out)
    cmd = [a.dlscale, *dlscale_train_args(model, batch, warmup + steps, warmup, a.threads, out), *extra]
    env = dict(os.environ)
    if a.device == "cuda":
        cmd += ["--backend", "cudnn"]
        env["DLS_GPU_MATH"] = a.math
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    with open(out) as f:
        rec = json.loads(f.readline())
    os.remove(out)
    m = rec["metrics"]
    return {
        "engine": "dlscale",
        "model": model,
        "batch": batch,
        "parameters": m["parameters"],
        "images_per_s": m["images_per_s"],
        "step_time_s": m["step_time_s"],
        "peak_rss_bytes": m["peak_rss_bytes"],
        "phase_s": m["phase_s"],
        "layer_s": m["layer_s"],
        "device": m.get("device", "cpu"),
        "cores": m.get("cores"),  # the placement it ran in (measure/core_latency.hpp)
    }


def run_torch(a, model, batch, steps, warmup):
    cmd = [
        sys.executable,
        __file__,
        "--worker",
        "--model",
        model,
        "--batch",
        str(batch),
        "--steps",
        str(steps),
        "--warmup",
        str(warmup),
        "--threads",
        str(a.threads),
        "--device",
        a.device,
        "--math",
        a.math,
    ]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:  # the worker's own words, not only its exit status
        tail = "\n".join(res.stderr.strip().splitlines()[-15:])
        sys.exit(f"pytorch_compare: the PyTorch run of {model} (batch {batch}) failed, exit {res.returncode}:\n{tail}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def top_layers(layer_s, n=5):
    tot = {k: v["forward_s"] + v["backward_s"] for k, v in layer_s.items()}
    return sorted(tot.items(), key=lambda kv: -kv[1])[:n]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dlscale", default=os.path.join(os.path.dirname(__file__), "../../build/dlscale"))
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--models", default="resnet50,vgg16,alexnet")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--rss-batch", type=int, default=64, help="VGG-16 batch for the memory comparison (0: skip)")
    p.add_argument("--out", default="results/scratch/pytorch_compare.jsonl")
    p.add_argument(
        "--device", choices=["cpu", "cuda"], default="cpu", help="cuda: dlscale --backend cudnn against PyTorch on CUDA"
    )
    p.add_argument("--math", choices=["fp32", "tf32"], default="fp32", help="GPU math mode of both engines")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--model", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return torch_worker(a)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    rows = []
    with open(a.out, "a") as out:

        def keep(r, what):
            r["what"] = what
            r["threads"] = a.threads
            out.write(json.dumps(r) + "\n")
            out.flush()
            return r

        for model in a.models.split(","):
            steps = max(2, a.steps // 2) if model == "vgg16" else a.steps
            ours, theirs = [], []
            for _ in range(a.repeats):
                ours.append(keep(run_dlscale(a, model, a.batch, steps, a.warmup), "throughput"))
                theirs.append(keep(run_torch(a, model, a.batch, steps, a.warmup), "throughput"))
            if ours[0]["parameters"] != theirs[0]["parameters"]:
                print(f"warning: {model}: {ours[0]['parameters']} parameters here, {theirs[0]['parameters']} in PyTorch")
            o = statistics.median(r["images_per_s"] for r in ours)
            t = statistics.median(r["images_per_s"] for r in theirs)
            rows.append((model, f"batch {a.batch}", o, t, o / t, "images/s (higher is better)"))
            ph = ours[-1]["phase_s"]
            print(
                f"{model}: dlscale {o:.2f} img/s, PyTorch {t:.2f} img/s, ratio {o / t:.2f}; dlscale phases "
                + ", ".join(f"{k} {v:.3f} s" for k, v in ph.items())
                + "; top layers "
                + ", ".join(f"{k} {v:.3f} s" for k, v in top_layers(ours[-1]["layer_s"])),
                flush=True,
            )
        if a.rss_batch > 0 and a.device == "cpu":
            ours = keep(run_dlscale(a, "vgg16", a.rss_batch, 1, 0), "peak_rss")
            theirs = keep(run_torch(a, "vgg16", a.rss_batch, 1, 0), "peak_rss")
            o, t = ours["peak_rss_bytes"] / 2**30, theirs["peak_rss_bytes"] / 2**30
            rows.append(("vgg16", f"batch {a.rss_batch}", o, t, o / t, "peak RSS GiB (lower is better)"))
    print(f"\n{'model':<10} {'case':<10} {'dlscale':>10} {'pytorch':>10} {'ratio':>7}  metric  ({a.threads} threads)")
    for r in rows:
        print(f"{r[0]:<10} {r[1]:<10} {r[2]:>10.2f} {r[3]:>10.2f} {r[4]:>7.2f}  {r[5]}")


if __name__ == "__main__":
    main()
