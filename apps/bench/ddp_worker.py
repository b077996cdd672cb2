#!/usr/bin/python3
"""PyTorch DistributedDataParallel (gloo, CPU) training of one model: the peer of
`dlscale train --scheme ssgd` in apps/bench/peers.py.

Launched once per rank by peers.py with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (as
torchrun would); each rank trains the same network as pytorch_compare.py builds it (torchvision,
or BVLC AlexNet) on its own synthetic batch with SGD + momentum, at --threads threads, DDP's
default 25 MiB gradient buckets overlapping backward. Each rank times its steps by the wall
clock; rank 0 prints one JSON line with every rank's mean steady step (warm-up excluded), and
the throughput is all ranks' images over the slowest rank's mean step, as dlscale's
images_per_s over the slowest rank.

  RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \\
      /usr/bin/python3 apps/bench/ddp_worker.py --model resnet50 --batch 16 --threads 1
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pytorch_compare import bvlc_alexnet  # noqa: E402


def build(torch, model):
    import torchvision

    return bvlc_alexnet(torch) if model == "alexnet" else getattr(torchvision.models, model)()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50")
    p.add_argument("--batch", type=int, default=16, help="images per rank")
    p.add_argument("--image", type=int, default=224)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="threads per rank")
    a = p.parse_args()
    import torch
    import torch.distributed as dist

    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(1)  # the same initial weights on every rank, as DDP broadcasts anyway
    net = torch.nn.parallel.DistributedDataParallel(build(torch, a.model).train())
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    loss_fn = torch.nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(a.batch, 3, a.image, a.image, generator=g)
    y = torch.randint(0, 1000, (a.batch,), generator=g)
    times = []
    for _ in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()  # DDP's allreduce of the buckets happens inside backward
        opt.step()
        times.append(time.perf_counter() - t0)
    step = torch.tensor([statistics.fmean(times[a.warmup :])], dtype=torch.float64)
    steps = [torch.zeros(1, dtype=torch.float64) for _ in range(size)]
    dist.all_gather(steps, step)
    if rank == 0:
        slowest = max(float(s) for s in steps)
        print(
            json.dumps(
                {
                    "engine": "pytorch_ddp",
                    "model": a.model,
                    "ranks": size,
                    "batch_per_rank": a.batch,
                    "threads_per_rank": a.threads,
                    "parameters": sum(q.numel() for q in net.parameters()),
                    "step_time_s": slowest,
                    "rank_step_time_s": [float(s) for s in steps],
                    "images_per_s": size * a.batch / slowest,
                    "torch": torch.__version__,
                    "backend": "gloo",
                }
            ),
            flush=True,
        )
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
