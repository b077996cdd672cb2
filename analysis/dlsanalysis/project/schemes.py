"""What a distributed scheme exchanges, and what it costs a step (apps/dist, README's table).

- ssgd: the gradients every step, in buckets of `bucket_mb` (the last one smaller), each an
  allreduce. Every bucket but the last can run behind backward: the hidden time is the
  measured overlap fraction times the lesser of that communication and backward; the last
  bucket is always exposed.
- localsgd: the weights (twice the bytes with `--local-momentum average`) every `period`
  steps, or once an epoch (period 0): one allreduce a period, spread over its steps, exposed.
- easgd / ps-sync: the parameter-server exchange (collectives/param_server.hpp): every
  worker pushes n bytes to the `servers` last ranks (each holds a shard) and pulls n back,
  every tau steps (ps-sync: every step, gradients up and weights down). A round takes the
  longer of a worker's 2n bytes at its share of the node's bandwidth and a server node's
  2 W n / servers bytes at its full bandwidth (many-to-few), plus the level's latency; the
  workers wait for it (synchronous rounds). Only the workers' images count.
"""

import math
from dataclasses import dataclass

from .comm import allreduce_time, fitted_time

SCHEMES = ("ssgd", "localsgd", "easgd", "ps-sync")


@dataclass
class Scheme:
    name: str = "ssgd"
    algo: str = "auto"
    bucket_mb: float = 25.0
    overlap: float = 0.0  # measured fraction of overlappable communication hidden
    overlap_source: str = "assumption: no overlap"
    period: int = 0  # localsgd: steps between averagings, 0: once an epoch
    exchange_factor: float = 1.0  # localsgd: 2 with momentum averaged
    tau: int = 1
    servers: int = 1

    def workers(self, ranks):
        """The ranks that train: all but the servers of a parameter-server scheme (one rank alone
        trains without them); a scale with no rank left beside the servers is refused."""
        if self.name not in ("easgd", "ps-sync") or ranks <= 1:
            return ranks
        if ranks <= self.servers:
            raise ValueError(f"{self.name} with {self.servers} server(s) at {ranks} ranks: no rank is left to train")
        return ranks - self.servers


def allreduce(fab, fits, algo, n, p):
    """(seconds, how): the campaign's fit where it measured algo at p ranks, else the levels."""
    if algo == "auto" and fits is not None and not fits.empty:
        cands = [fitted_time(fits, a, n, p) for a in set(fits["algo"])]
        cands = [c for c in cands if c is not None]
        if cands:
            return min(cands, key=lambda c: c[0])
    fitted = fitted_time(fits, algo, n, p)
    if fitted is not None:
        return fitted
    t, used = allreduce_time(fab, algo, n, p)
    return t, f"alpha-beta over the site's levels ({used})"


def _buckets(nbytes, bucket_mb):
    size = max(1.0, bucket_mb * 2**20)
    full = int(nbytes // size)
    rest = nbytes - full * size
    return [size] * full + ([rest] if rest > 0 else [])


def ssgd(s, fab, fits, n, p, backward_s):
    if p <= 1:
        return dict(comm_s=0.0, exposed_s=0.0, period_steps=1, how="one rank: no exchange")
    times, how = [], ""
    for b in _buckets(n, s.bucket_mb):
        t, how = allreduce(fab, fits, s.algo, b, p)
        times.append(t)
    total, last = sum(times), times[-1]
    hidden = s.overlap * min(total - last, backward_s)
    return dict(comm_s=total, exposed_s=total - hidden, buckets=len(times), period_steps=1, how=how)


def localsgd(s, fab, fits, n, p, steps_per_epoch):
    period = s.period if s.period > 0 else max(1, steps_per_epoch)
    if p <= 1:
        return dict(comm_s=0.0, exposed_s=0.0, period_steps=period, how="one rank: no exchange")
    t, how = allreduce(fab, fits, s.algo, n * s.exchange_factor, p)
    return dict(comm_s=t / period, exposed_s=t / period, period_steps=period, exchange_s=t, how=how)


def ps_round(s, fab, n, p):
    """(seconds) of one parameter-server round of n bytes a worker over p ranks."""
    w = s.workers(p)
    lv = fab.level_for(p - 1)  # the farthest pair: workers to the last ranks
    worker_bw = fab.bandwidth(lv, concurrent=True)
    server_nodes = max(1, math.ceil(s.servers / fab.ranks_per_node))
    server_bw = lv.bandwidth * server_nodes
    return lv.latency + max(2 * n / worker_bw, 2 * w * n / server_bw)


def parameter_server(s, fab, n, p):
    every = s.tau if s.name == "easgd" else 1
    if p <= 1:
        return dict(comm_s=0.0, exposed_s=0.0, period_steps=every, how="one rank: no exchange")
    t = ps_round(s, fab, n, p)
    how = f"{s.servers} server(s), {s.workers(p)} workers, round every {every} step(s), many-to-few"
    return dict(comm_s=t / every, exposed_s=t / every, exchange_s=t, period_steps=every, how=how)


def exchange(s, fab, fits, n, p, backward_s, steps_per_epoch):
    """The scheme's communication a step: comm_s (all of it), exposed_s (what the step waits),
    period_steps (steps between two exchanges)."""
    if s.name == "ssgd":
        return ssgd(s, fab, fits, n, p, backward_s)
    if s.name == "localsgd":
        return localsgd(s, fab, fits, n, p, steps_per_epoch)
    if s.name in ("easgd", "ps-sync"):
        return parameter_server(s, fab, n, p)
    raise ValueError(f"scheme '{s.name}': expected one of {', '.join(SCHEMES)}")
