"""The projection: a step's time at each scale, split into compute, exposed communication and
input, and what follows from it (throughput, weak or strong scaling efficiency, per-epoch
speed-up, learning speed-up where epochs to the target are given).

    step = forward + backward + update + exposed communication + exposed input
        (each exchange across nodes at least the request's sync floor, where it gives one:
        sync_floor.py)
    throughput = workers x batch a rank / step
    efficiency(P) = throughput(P) / (throughput(base) x workers(P) / workers(base))
        (`efficiency_over: ranks`: x ranks(P) / ranks(base), every rank counted, a parameter
        server's too, where the published metric divides by processes, as seed 001's does)
    epoch time = ceil(images / global batch) x step;  per-epoch speed-up = epoch(base) / epoch(P)
    learning speed-up = per-epoch speed-up x epochs(base) / epochs(P)   (epochs from the spec)

Input: with `input: storage` every epoch reads its images from the site's fastest filesystem
(`storage:`): the read of a global batch takes global batch x sample bytes / read bandwidth and
runs behind the step (prefetch): only what is longer than the rest of the step is exposed.
With `input: cached` (the data held in memory after the first epoch, as DEEPEX does) only the
measured input phase (carried over as memory-bound) counts.
"""

import math
from dataclasses import dataclass, field

from .comm import Fabric
from .compute import rank_compute
from .schemes import Scheme, exchange
from .sync_floor import SyncFloor, apply

UNITS = ("ranks", "nodes", "gpus", "processes")
EFFICIENCY_OVER = ("workers", "ranks")


class SpecError(ValueError):
    """A projection request that cannot be projected; the message names the key."""


@dataclass
class Spec:
    model: str
    scales: list
    unit: str = "nodes"
    scaling: str = "weak"
    batch: int = 0  # a rank's batch (weak)
    global_batch: int = 0  # strong
    base: int = 0  # the scale efficiencies are relative to (default: the smallest)
    scheme: Scheme = field(default_factory=Scheme)
    images_per_epoch: int = 0
    sample_bytes: float = 0.0
    input: str = "storage"
    backend: str = ""
    image: int = 0  # the calibration records' image size (0: the largest calibrated)
    image_w: int = 0  # their image width (0: the height, a square image)
    channels: int = 0  # their input channels (0: any)
    width: float = 1.0  # their width multiplier (1: the network as published)
    epochs: dict = field(default_factory=dict)  # {scale: epochs to the target}
    epochs_source: str = ""
    efficiency_over: str = "workers"  # EFFICIENCY_OVER: what the ideal speed-up counts
    sync_floor: SyncFloor = field(default_factory=SyncFloor)  # sync_floor.py
    reduction_cores: int = 0  # cores of a rank that do the allreduce's sums (0: all of its share)
    reduction_source: str = ""  # where that count comes from (named in every output)

    def ranks(self, x, site):
        if self.unit == "nodes":
            return int(x) * site.ranks_per_node
        return int(x)


def _batch(spec, x, site):
    p = spec.scheme.workers(spec.ranks(x, site))
    if spec.scaling == "strong":
        if spec.global_batch <= 0:
            raise SpecError("strong scaling needs global_batch (the fixed problem size)")
        if spec.global_batch < p:
            raise SpecError(f"global_batch {spec.global_batch} cannot be split over {p} workers (at {spec.unit} {x})")
        return max(1, round(spec.global_batch / p))
    if spec.batch <= 0:
        raise SpecError("weak scaling needs batch (a rank's batch)")
    return spec.batch


def _input_exposed(spec, site, global_batch, rest_s, measured_input):
    if spec.input == "cached" or site.storage_bandwidth != site.storage_bandwidth or spec.sample_bytes <= 0:
        return measured_input, 0.0
    read = global_batch * spec.sample_bytes / site.storage_bandwidth
    return measured_input + max(0.0, read - rest_s), read


def cores_a_rank(site):
    """A rank's share of the node's cores (at least one)."""
    return max(1.0, site.cores / site.ranks_per_node)


def reduction_bandwidth(spec, site):
    """The memory bandwidth the allreduce's local sums run at (B/s): a rank's share of the node's,
    or, where the request names the cores that do the sums (an MLSL endpoint server's, or a
    library's progress thread), those cores' share of it (0: no bandwidth declared)."""
    bw = site.rank_memory_bandwidth
    if bw > 0 and spec.reduction_cores > 0:
        bw *= min(1.0, spec.reduction_cores / cores_a_rank(site))
    return bw


def step_at(spec, x, site, profiles, carry, fits, sensitivity=1.0, floor_s=0.0):
    """One scale's row: every term of the step (seconds) and the rates; each exchange across
    nodes takes at least floor_s (sync_floor.py)."""
    p = spec.ranks(x, site)
    w, b = spec.scheme.workers(p), _batch(spec, x, site)
    c = rank_compute(profiles, b, carry, sensitivity)
    n = profiles[0].parameter_bytes
    gb = w * b
    steps = math.ceil(spec.images_per_epoch / gb) if spec.images_per_epoch else 0
    red = reduction_bandwidth(spec, site)
    fab = Fabric(site.levels, min(site.ranks_per_node, p), 3.0 / red if red > 0 else 0.0)
    nodes = math.ceil(p / site.ranks_per_node)
    ex = apply(floor_s, exchange(spec.scheme, fab, fits, n, p, c["backward"], steps), nodes)
    compute = c["forward"] + c["backward"] + c["update"]
    inp, read = _input_exposed(spec, site, gb, compute + ex["exposed_s"], c["input"])
    step = compute + ex["exposed_s"] + inp
    row = dict(x=x, ranks=p, workers=w, nodes=nodes, batch_per_rank=b, global_batch=gb)
    row.update(forward_s=c["forward"], backward_s=c["backward"], update_s=c["update"], compute_bound_s=c["compute_bound"])
    row.update(memory_bound_s=c["memory_bound"], comm_s=ex["comm_s"], comm_exposed_s=ex["exposed_s"], input_s=inp)
    row.update(storage_read_s=read, step_s=step, images_per_s=gb / step, steps_per_epoch=steps, comm_how=ex["how"])
    row.update(compute_note=c["note"], epoch_time_s=steps * step if steps else 0.0)
    row.update(period_steps=ex["period_steps"], sync_floor_extra_s=ex["sync_floor_extra_s"])
    return row


def _relative(rows, base_x, over="workers"):
    base = next(r for r in rows if r["x"] == base_x)
    for r in rows:
        ideal = r[over] / base[over]
        r["speedup"] = r["images_per_s"] / base["images_per_s"]
        r["efficiency"] = r["speedup"] / ideal
        if r["epoch_time_s"]:
            r["per_epoch_speedup"] = base["epoch_time_s"] / r["epoch_time_s"]
            r["per_epoch_efficiency"] = r["per_epoch_speedup"] / ideal
    return rows


def _learning(rows, spec, base_x):
    e = {int(k): float(v) for k, v in spec.epochs.items()}
    base = next(r for r in rows if r["x"] == base_x)
    for r in rows:
        if e and int(r["x"]) in e and int(base["x"]) in e and "per_epoch_speedup" in r:
            r["learning_speedup"] = r["per_epoch_speedup"] * e[int(base["x"])] / e[int(r["x"])]
    return rows


def project_rows(spec, site, profiles, carry, fits, sensitivity=1.0, floor_s=0.0):
    if not profiles:
        raise SpecError(f"model {spec.model}: the calibration campaign has no one-rank training record of it")
    base = int(spec.base or min(spec.scales))
    scales = sorted({int(x) for x in spec.scales} | {base})
    rows = [step_at(spec, x, site, profiles, carry, fits, sensitivity, floor_s) for x in scales]
    return _learning(_relative(rows, base, spec.efficiency_over), spec, base)
