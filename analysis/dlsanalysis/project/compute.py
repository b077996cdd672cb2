"""A rank's compute a step at the target site, from the calibration's one-rank profiles.

Batch: per-image times of each part (forward and backward, compute- and memory-bound) are
taken at the measured batch, interpolated linearly in log2(batch) between two measured
batches, and held at the nearest measured one outside them (stated in the note: a batch
smaller than any measured may run slower per image than this says). The update does not
depend on the batch: it is the median over the measured batches (one noisy record does not set
it); the input phase does depend on it.

Carrying over (the weakest assumption of the model, most of all for GPUs): a compute-bound
time is multiplied by (calibration peak a rank) / (site peak a rank), a memory-bound time by
(calibration memory bandwidth a rank) / (site memory bandwidth a rank): the site is assumed
to reach the same fraction of its peak and of its bandwidth as the calibration machine did.
A campaign run on the site itself is not carried (both factors 1). `sensitivity` scales the
compute factor (0.5: the site reaches twice the calibration's fraction of peak).
"""

import math
import statistics
from dataclasses import dataclass, field

PARTS = ("forward", "backward")


@dataclass
class Carry:
    compute: float
    memory: float
    same_site: bool
    sources: dict = field(default_factory=dict)

    def describe(self):
        if self.same_site:
            return "calibrated on the site itself: times not carried over"
        return (
            f"compute-bound layers x{self.compute:.4g} (peak a rank, calibration / site), memory-bound layers "
            f"and update x{self.memory:.4g} (memory bandwidth a rank): the site assumed to reach the calibration's "
            "fraction of peak and of bandwidth"
        )


def carry_factors(cal_peak, cal_bw, site, same_site, cal_peak_source="the calibration campaign's site"):
    src = {}
    if same_site:
        return Carry(1.0, 1.0, True, {"carry": "none: the campaign ran on the site"})
    if not cal_peak > 0:
        raise ValueError(
            f"the calibration's machine has no positive peak FLOP/s ({cal_peak_source}: {cal_peak:g}) to carry compute times with"
        )
    if not site.rank_peak > 0:
        raise ValueError(f"site {site.name}: no peak FLOP/s (node.peak_flops_sp) to carry compute times with")
    compute = cal_peak / site.rank_peak
    if cal_bw > 0 and site.rank_memory_bandwidth > 0:
        memory = cal_bw / site.rank_memory_bandwidth
        src["memory_carry"] = "calibration memory bandwidth / site memory bandwidth a rank"
    else:
        memory = compute
        src["memory_carry"] = "assumption: no memory bandwidth on one side, memory-bound layers carried as compute-bound"
    src["compute_carry"] = "calibration peak / site peak a rank"
    return Carry(compute, memory, False, src)


def _per_image(profiles, batch, getter):
    """Per-image seconds at `batch`, interpolated in log2(batch) (module doc); and a note."""
    pts = sorted((p.batch, getter(p) / p.batch) for p in profiles)
    if batch <= pts[0][0]:
        note = "" if batch == pts[0][0] else f"batch {batch} below the smallest measured ({pts[0][0]}): its per-image time"
        return pts[0][1], note
    if batch >= pts[-1][0]:
        note = "" if batch == pts[-1][0] else f"batch {batch} above the largest measured ({pts[-1][0]}): its per-image time"
        return pts[-1][1], note
    for (b0, v0), (b1, v1) in zip(pts, pts[1:], strict=False):
        if b0 <= batch <= b1:
            if batch in (b0, b1):
                return (v0 if batch == b0 else v1), ""
            w = (math.log2(batch) - math.log2(b0)) / (math.log2(b1) - math.log2(b0))
            return v0 + w * (v1 - v0), f"batch {batch} interpolated between {b0} and {b1}"
    raise AssertionError("unreachable")


def rank_compute(profiles, batch, carry, sensitivity=1.0):
    """{forward, backward, update, input, compute_bound, memory_bound, note} in seconds a step."""
    out = {"compute_bound": 0.0, "memory_bound": 0.0}
    notes = set()
    for part in PARTS:
        total = 0.0
        for kind, factor in (("compute", carry.compute * sensitivity), ("memory", carry.memory)):
            v, note = _per_image(profiles, batch, lambda p, part=part, kind=kind: getattr(p, part)[kind])
            notes.add(note)
            total += v * batch * factor
            out[f"{kind}_bound"] += v * batch * factor
        out[part] = total
    inp, note = _per_image(profiles, batch, lambda p: p.input)
    out["input"] = inp * batch * carry.memory
    out["update"] = statistics.median(p.update for p in profiles) * carry.memory
    out["memory_bound"] += out["update"]
    out["note"] = "; ".join(sorted(n for n in notes if n))
    return out
