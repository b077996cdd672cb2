"""A time every exchange takes at least, beyond the model's alpha-beta exchange.

What a synchronisation waits for besides moving its bytes (the slowest rank, a framework's fixed
costs an exchange) has no term in the model and cannot be derived from a calibration campaign.
Where a seed states it, it enters as an input, never silently:

- `sync_floor_s: S`: each exchange takes at least S seconds;
- `sync_floor_at: X`: S is fitted so that at scale X an exchange period's communication equals
  its compute (a published crossover, e.g. seed 004's Fig. 6: "The computational load becomes
  comparable to the communication load at around 5,000 GPUs"). The fit uses the model's own
  compute at X, so S follows the calibration; it is refused where the model's exchange at X is
  already longer than the compute.

Either needs `sync_floor_source` (where the number comes from), which the projection's inputs,
assumptions and every reproduce note repeat: a term fitted to a figure is named, and that figure
is not judged with it. The floor applies to exchanges that leave a node: a one-node run's
synchronisation is not charged it (seed 004: a single-node run's "synchronization cost is
relatively low"). Under ssgd a step's buckets count as one exchange: the floor is a step's.
"""

import math
from dataclasses import dataclass


@dataclass
class SyncFloor:
    seconds: float = 0.0
    at: int = 0
    source: str = ""

    def given(self):
        return self.seconds > 0 or self.at > 0

    def describe(self, seconds):
        how = f"fitted: an exchange period's communication equals its compute at {self.at}" if self.at else "given"
        return (
            f"every exchange across nodes (a step's buckets together under ssgd) takes at least {seconds:.4g} s "
            f"({how}; {self.source})"
        )


def _positive(v, integer):
    """v as a positive finite number (an integer where asked), or None."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v <= 0:
        return None
    if integer and int(v) != v:
        return None
    return int(v) if integer else float(v)


def floor_from(d, where, error):
    """The SyncFloor of a request mapping; `error` is the exception class to raise."""
    s, at, src = d.get("sync_floor_s"), d.get("sync_floor_at"), d.get("sync_floor_source")
    if s is None and at is None:
        if src is not None:
            raise error(f"{where}: sync_floor_source without sync_floor_s or sync_floor_at")
        return SyncFloor()
    if s is not None and at is not None:
        raise error(f"{where}: give sync_floor_s or sync_floor_at, not both")
    key = "sync_floor_s" if s is not None else "sync_floor_at"
    if src is None or (isinstance(src, str) and not src.strip()):
        raise error(f"{where}: {key} needs sync_floor_source (where the number comes from)")
    if not isinstance(src, str):
        raise error(f"{where}: sync_floor_source must be text, got {src!r}")
    v = _positive(s if s is not None else at, integer=s is None)
    if v is None:
        want = "finite seconds > 0" if s is not None else "a positive integer scale"
        raise error(f"{where}: {key} must be {want}, got {s if s is not None else at!r}")
    return SyncFloor(seconds=v, source=src.strip()) if s is not None else SyncFloor(at=v, source=src.strip())


def apply(floor_s, ex, nodes):
    """`ex` (schemes.exchange's dict, with its period_steps) with each exchange across nodes
    taking at least floor_s, the difference exposed and spread over the period's steps."""
    if floor_s <= 0 or nodes <= 1 or ex["comm_s"] <= 0:
        return dict(ex, sync_floor_extra_s=0.0)
    k = ex["period_steps"]
    extra = max(0.0, floor_s - ex["comm_s"] * k) / k
    return dict(ex, comm_s=ex["comm_s"] + extra, exposed_s=ex["exposed_s"] + extra, sync_floor_extra_s=extra)


def fitted_seconds(row, error):
    """The floor at which a row's exchange period costs what its compute does: the period's
    steps x (forward + backward + update + input); `error` where the model's exchange there is
    already longer (no floor can make them equal)."""
    compute = row["period_steps"] * (row["forward_s"] + row["backward_s"] + row["update_s"] + row["input_s"])
    exchange = row["period_steps"] * row["comm_s"]
    if exchange > compute:
        raise error(
            f"sync_floor_at {row['x']}: the model's exchange there ({exchange:.4g} s a period) is already longer "
            f"than its compute ({compute:.4g} s): no floor makes them equal"
        )
    return compute
