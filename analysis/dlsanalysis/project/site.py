"""The target site's facts, as the projection needs them (site_configs/*.yaml, docs/harness_formats.md).

Per rank: the FLOP/s peak (node peak / ranks a node) and the memory bandwidth (node bandwidth /
ranks a node). The network as levels, innermost first (`network.levels`): a level's bandwidth is
what one endpoint sends there (a rank inside a node, a node above it), `taper` the share of it
left to traffic that leaves a group of the level below, `nodes` a group's span (0: the whole
machine). A site without `levels` gets them from `network.latency`/`bandwidth` (one inter-node
level) and, with several ranks a node, an intra-node level at the node's memory bandwidth per
rank: both stated as assumptions in `sources`. A site whose peak or memory bandwidth is `auto`
takes the values its calibration campaign measured (manifest.json), which is right only when the
campaign ran there.
"""

import functools
import math
import os
import subprocess
from dataclasses import dataclass, field

import yaml

from ..derived import node_cores, quantity
from ..io_estimate import storage_of

DEFAULT_INTRA_LATENCY = 0.5e-6  # assumption for a site that does not state its intra-node level


class SiteError(ValueError):
    """A site file the projection cannot use; the message names the file and key."""


@dataclass
class Level:
    name: str
    kind: str
    nodes: int  # a group's span in nodes; 0: the whole machine
    latency: float
    bandwidth: float
    taper: float = 1.0
    source: str = ""


@dataclass
class Site:
    name: str
    path: str
    ranks_per_node: int
    threads_per_rank: int
    gpus_per_rank: int
    cores: int
    node_peak: float  # FLOP/s
    node_memory_bandwidth: float  # B/s
    levels: list
    storage_bandwidth: float  # B/s, the fastest filesystem's read bandwidth (nan: unknown)
    max_nodes: int
    sources: dict = field(default_factory=dict)

    @property
    def rank_peak(self):
        return self.node_peak / self.ranks_per_node

    @property
    def rank_memory_bandwidth(self):
        return self.node_memory_bandwidth / self.ranks_per_node


def site_path(name_or_path, root):
    if "/" in name_or_path or name_or_path.endswith(".yaml"):
        return name_or_path
    return os.path.join(root, "site_configs", f"{name_or_path}.yaml")


def _quantity(section, key, unit, where):
    try:
        return quantity(section[key], unit)
    except (ValueError, TypeError) as e:
        raise SiteError(f"{where}.{key}: {e}") from None


def _measured(manifest, key, field_name):
    v = (manifest or {}).get(key) or {}
    return float(v.get(field_name, 0) or 0)


def _node_rates(node, path, manifest, sources):
    """(peak FLOP/s, memory B/s) a node: declared, or measured by the campaign where `auto`."""
    rates = []
    for key, unit, mkey, mfield in (
        ("peak_flops_sp", "FLOP/s", "measured_node_peak", "flop_per_s"),
        ("memory_bandwidth", "B/s", "measured_node_memory_bandwidth", "bytes_per_s"),
    ):
        if node.get(key) in (None, "auto"):
            v = _measured(manifest, mkey, mfield)
            sources[key] = f"manifest.json: {mkey} (the site says {node.get(key) or 'nothing'})"
        else:
            v = _quantity(node, key, unit, f"{path}: node")
            sources[key] = f"site {os.path.basename(path)}: node.{key}"
        rates.append(v)
    return rates


def _levels(net, path, node_bw, ranks_per_node, sources):
    given = net.get("levels") or []
    out = []
    for i, lv in enumerate(given):
        where = f"{path}: network.levels[{i}]"
        nodes = lv.get("nodes", 0)
        out.append(
            Level(
                name=str(lv.get("name", f"level{i}")),
                kind=str(lv.get("kind", "")),
                nodes=0 if nodes == "all" else int(nodes),
                latency=_quantity(lv, "latency", "s", where),
                bandwidth=_quantity(lv, "bandwidth", "B/s", where),
                taper=float(lv.get("taper", 1.0)),
                source=f"site {os.path.basename(path)}: network.levels.{lv.get('name', i)}",
            )
        )
    if out:
        return out
    if "bandwidth" not in net:
        raise SiteError(f"{path}: network: neither levels nor bandwidth; the projection needs one of them")
    lat = _quantity(net, "latency", "s", f"{path}: network") if "latency" in net else 1e-6
    sources["network"] = "network.latency/bandwidth as one inter-node level" + (
        "" if "latency" in net else " (latency not stated: 1 us assumed)"
    )
    top = Level("network", str(net.get("kind", "")), 0, lat, _quantity(net, "bandwidth", "B/s", f"{path}: network"))
    if not top.bandwidth > 0:
        raise SiteError(f"{path}: network.bandwidth: the projection needs a bandwidth above 0 (or network.levels)")
    top.source = f"site {os.path.basename(path)}: network.bandwidth"
    if ranks_per_node > 1:
        bw = node_bw / ranks_per_node if node_bw > 0 else top.bandwidth
        intra = Level("node", "assumed", 1, DEFAULT_INTRA_LATENCY, bw, 1.0, "assumption: node memory bandwidth a rank")
        return [intra, top]
    return [top]


def _storage(site):
    """The fastest stated read bandwidth of the site's filesystems (nan: none stated)."""
    stated = [s["read_bandwidth"] for s in storage_of(site) if s["read_bandwidth"] is not None]
    return max(stated, default=math.nan)


@functools.cache  # a projection loads its sites up to three times
def _check_with_harness(path):
    """The checks `dlscale sites` and `dlscale run` make of a site file (types, ranges, units,
    unknown or repeated keys), by the harness's own parser, where `dlscale project` started this
    (DLSCALE_BIN: the executable); its message, naming the file and key, on a refusal."""
    exe = os.environ.get("DLSCALE_BIN", "")
    if not exe:
        return
    r = subprocess.run([exe, "sites", path], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SiteError((r.stderr.strip() or r.stdout.strip()).removeprefix("dlscale sites: "))


def load_site(name_or_path, root, manifest=None):
    path = site_path(name_or_path, root)
    if not os.path.exists(path):
        raise SiteError(f"{path}: no such site configuration")
    _check_with_harness(path)
    try:
        with open(path) as f:
            site = yaml.safe_load(f) or {}
    except yaml.YAMLError as e:
        raise SiteError(f"{path}: not YAML ({e})") from None
    if not isinstance(site, dict):
        raise SiteError(f"{path}: not a site configuration (expected a mapping of keys)")
    node, launch, net = site.get("node") or {}, site.get("launcher") or {}, site.get("network") or {}
    sources = {}
    peak, membw = _node_rates(node, path, manifest, sources)
    rpn = int(launch.get("ranks_per_node", 1))
    cores = node_cores(site, manifest or {})
    return Site(
        name=str(site.get("name", os.path.basename(path))),
        path=path,
        ranks_per_node=rpn,
        threads_per_rank=int(launch.get("threads_per_rank", 1)),
        gpus_per_rank=int(launch.get("gpus_per_rank", 0)),
        cores=cores,
        node_peak=peak,
        node_memory_bandwidth=membw,
        levels=_levels(net, path, membw, rpn, sources),
        storage_bandwidth=_storage(site),
        max_nodes=int(site.get("max_nodes", 0) or 0),
        sources=sources,
    )
