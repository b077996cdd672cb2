"""The allreduce's cost at scale from alpha-beta terms over the site's network levels.

Placement: ranks numbered node by node (ranks_per_node consecutive ranks a node), as the
launchers place them. Two ranks d apart talk inside a node when d < ranks_per_node (level 0,
the intra-node level), else across the first level whose groups span more than d /
ranks_per_node nodes. A step's cost is alpha + m beta + m gamma:
- alpha: the level's latency; beta: 1 / the bandwidth a sender gets there. When every rank
  sends at once to a partner on another node (recursive doubling and halving), the
  ranks_per_node senders of a node share the node's bandwidth at that level, times the level's
  taper; a ring has one flow crossing each group boundary, which the taper does not slow down.
- gamma: the local sum, 3 bytes of memory traffic per byte reduced (two reads, one write) at
  the rank's memory bandwidth.
The algorithms' message patterns are those of collectives/ (allreduce_*.cpp):
- ring: 2(p-1) steps of n/p bytes, each as slow as the slowest edge of the ring;
- recdbl: log2 p exchanges of n bytes at distances 1, 2, 4, ...;
- rabenseifner: recursive halving from distance p/2 (n/2, n/4, ...) then doubling back;
- tree: binomial reduce then broadcast, 2 log2 p steps of n bytes, one sender a node;
- hier (NCCL's and Horovod's hierarchical scheme): ring reduce-scatter inside the node, ring
  allreduce of n / ranks_per_node across the nodes with every rank of a node in its own ring,
  ring allgather inside the node; shm (allreduce_shm.cpp) is this scheme with the node's rings
  over shared memory, modelled alike;
- mpi: the cheapest of ring, recdbl and rabenseifner at that size (what a tuned MPI library
  chooses; an assumption, optimistic for an untuned one).
A rank count that is not a power of two folds its extra ranks in and out (two more exchanges
of n bytes at distance 1) for recdbl and rabenseifner, as allreduce_recdbl.cpp does.
"""

import math
from dataclasses import dataclass, replace

ALGORITHMS = ("ring", "recdbl", "rabenseifner", "tree", "hier", "shm", "mpi")
# what `mpi` (a tuned library) and `auto` (the suite's own, as dlscale train measures them) pick from
CHOICES = {"mpi": ("ring", "recdbl", "rabenseifner"), "auto": ("ring", "recdbl", "rabenseifner", "tree", "shm")}


@dataclass
class Fabric:
    levels: list  # site.Level, innermost first
    ranks_per_node: int
    gamma: float  # s per byte reduced

    def _intra(self):
        return self.levels[0] if self.levels and self.levels[0].nodes == 1 else None

    def _inter_levels(self):
        return [lv for lv in self.levels if lv.nodes != 1]

    def level_for(self, distance):
        """The level two ranks `distance` apart talk across."""
        intra = self._intra()
        if distance < self.ranks_per_node and intra is not None:
            return intra
        nd = max(1, distance // self.ranks_per_node)
        inter = self._inter_levels()
        if not inter:
            raise self._no_level_between_nodes(f"ranks {distance} apart are")
        for lv in inter:
            if lv.nodes == 0 or lv.nodes > nd:
                return lv
        return inter[-1]

    def _no_level_between_nodes(self, who):
        return ValueError(
            f"{who} on different nodes ({self.ranks_per_node} a node), but the site's network.levels have no "
            "level between nodes: a projection beyond one node needs one"
        )

    def spanned(self, ranks):
        """The levels a set of `ranks` consecutive ranks spans."""
        nodes = math.ceil(ranks / self.ranks_per_node)
        if nodes > 1 and not self._inter_levels():
            raise self._no_level_between_nodes(f"{ranks} ranks are")
        out = [self._intra()] if self._intra() is not None and min(ranks, self.ranks_per_node) > 1 else []
        prev_span = 1
        for lv in self._inter_levels():
            if nodes > prev_span:
                out.append(lv)
            if lv.nodes == 0:
                break
            prev_span = lv.nodes
        return out

    def bandwidth(self, lv, concurrent):
        """What a sender gets at level lv: across nodes with every rank sending at once, its
        share of the node's bandwidth, tapered; else the level's own."""
        if lv.nodes != 1 and concurrent:
            return lv.bandwidth * lv.taper / self.ranks_per_node
        return lv.bandwidth

    def step(self, distance, nbytes, concurrent):
        """(seconds) of one exchange of nbytes between ranks `distance` apart."""
        lv = self.level_for(distance)
        return lv.latency + nbytes / self.bandwidth(lv, concurrent)


def _pof2(p):
    return 1 << (p.bit_length() - 1)


def ring(fab, n, p):
    m = n / p
    edges = [lv.latency + m / lv.bandwidth for lv in fab.spanned(p)]
    return 2 * (p - 1) * max(edges, default=0.0) + (p - 1) * m * fab.gamma  # none at one rank


def _fold(fab, n, p):
    return 0.0 if _pof2(p) == p else 2 * fab.step(1, n, True) + n * fab.gamma


def recdbl(fab, n, p):
    q = _pof2(p)
    steps = sum(fab.step(d, n, True) for d in (2**k for k in range(int(math.log2(q)))))
    return steps + math.log2(q) * n * fab.gamma + _fold(fab, n, p)


def rabenseifner(fab, n, p):
    q = _pof2(p)
    t, d, m = 0.0, q // 2, n / 2
    while d >= 1:
        t += 2 * fab.step(d, m, True) + m * fab.gamma  # halving then the doubling step back
        d, m = d // 2, m / 2
    return t + _fold(fab, n, p)


def tree(fab, n, p):
    k = math.ceil(math.log2(p))
    steps = sum(fab.step(2**i, n, False) for i in range(k))
    return 2 * steps + k * n * fab.gamma


def hier(fab, n, p):
    r = min(fab.ranks_per_node, p)
    nodes = math.ceil(p / r)
    intra = fab._intra()
    t = 0.0
    if r > 1 and intra is not None:
        t += 2 * (r - 1) * (intra.latency + n / r / intra.bandwidth) + (r - 1) * n / r * fab.gamma
    if nodes > 1:  # r rings, one a rank of the node, share its bandwidth
        shared = [replace(lv, bandwidth=lv.bandwidth / r) for lv in fab._inter_levels()]
        t += ring(Fabric(shared, 1, fab.gamma), n / r, nodes)
    return t


def _even_nodes(fab, p):
    """Whether p ranks fill their nodes alike (shm's cross-node rings need that; auto skips it)."""
    r = max(1, fab.ranks_per_node)
    return p <= r or p % r == 0


def allreduce_time(fab, algo, n, p):
    """(seconds, the algorithm used) of an allreduce of n bytes a rank over p ranks."""
    if p <= 1 or n <= 0:
        return 0.0, algo
    if algo in CHOICES:
        choices = [a for a in CHOICES[algo] if a != "shm" or _even_nodes(fab, p)]
        best = min(choices, key=lambda a: FUNCS[a](fab, n, p))
        return FUNCS[best](fab, n, p), f"mpi (as {best})" if algo == "mpi" else best
    if algo not in FUNCS:
        raise ValueError(f"allreduce algorithm '{algo}': expected one of {', '.join(ALGORITHMS)}, auto")
    return FUNCS[algo](fab, n, p), algo


FUNCS = {"ring": ring, "recdbl": recdbl, "rabenseifner": rabenseifner, "tree": tree, "hier": hier, "shm": hier}


def fitted_time(fits, algo, n, p):
    """The campaign's own alpha-beta fit of algo at p ranks for n bytes, or None."""
    if fits is None or fits.empty:
        return None
    f = fits[(fits["algo"] == algo) & (fits["ranks"] == p)]
    if f.empty:
        return None
    inside = f[(f["bytes_min"] <= n) & (n <= f["bytes_max"])]
    row = inside.iloc[0] if not inside.empty else f.iloc[(f["bytes_max"] - n).abs().argmin()]
    return float(row["alpha_s"] + row["beta_s_per_byte"] * n), f"{row['source']} ({algo}, {p} ranks, {row['band']} band)"
