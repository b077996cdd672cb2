"""Seed 003's I/O estimate: the read bandwidth a data-parallel run needs to keep its step time,

    BW_min = k b S / t

k processes, b samples a process and step, S bytes a sample as stored, t the step time measured
on one node. Seed 003 (Piz Daint, ResNet-50 at 1,024 nodes, b = 32, S = 0.14 MB, t = 0.3 s)
states 14.9 GB/s: that number comes out with S = 0.14 MiB and the result in GiB/s, so both are
read in binary units here when reproducing it. Against it stand the site's filesystems
(`storage:` in the site config: name, filesystem, read_bandwidth as "40 GB/s"): a filesystem is
"enough" when its read bandwidth covers BW_min, "short" when not, "unknown" when the site does
not state its bandwidth.
"""

import pandas as pd
import yaml

from .derived import quantity


def parse_bandwidth(text):
    """'40 GB/s' -> 4e10 (B/s); a plain number is B/s (derived.quantity, the site reader's
    rules). ValueError names the key and the text."""
    try:
        return quantity(text, "B/s")
    except ValueError as e:
        raise ValueError(f"read_bandwidth {e}") from None


def required_read_bandwidth(ranks, batch_per_rank, sample_bytes, step_s):
    """BW_min = k b S / t in bytes per second."""
    if step_s <= 0:
        raise ValueError(f"step time {step_s}: must be positive")
    return ranks * batch_per_rank * sample_bytes / step_s


def site_storage(site_yaml):
    """The `storage:` entries of a site config file, read_bandwidth in B/s (None: unknown)."""
    with open(site_yaml) as f:
        return storage_of(yaml.safe_load(f))


def storage_of(site):
    """The `storage:` entries of a parsed site config, read_bandwidth in B/s (None: unknown)."""
    out = []
    for s in site.get("storage", []) or []:
        bw = s.get("read_bandwidth")
        out.append({**s, "read_bandwidth": None if bw in (None, 0, "0") else parse_bandwidth(bw)})
    return out


def io_table(storage, ranks, batch_per_rank, sample_bytes, step_s):
    """One row per (filesystem, rank count): the bandwidth needed, the one stated, the verdict."""
    rows = []
    for k in ranks:
        need = required_read_bandwidth(k, batch_per_rank, sample_bytes, step_s)
        for s in storage:
            have = s["read_bandwidth"]
            verdict = "unknown" if have is None else ("enough" if have >= need else "short")
            rows.append(
                {
                    "storage": s["name"],
                    "filesystem": s.get("filesystem", ""),
                    "ranks": k,
                    "required_bytes_per_s": need,
                    "read_bytes_per_s": have,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(rows)
