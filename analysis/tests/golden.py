"""A campaign against a stored one, apart from provenance and times.

What a refactoring must not change: the points run and their outcome, every record's kind,
benchmark, parameters, check and status, the key structure of its metrics, and every metric that
is not measured on the clock (parameter and MAC counts, steps, bytes, losses within a relative
1e-3); and every table's columns and row keys. What may change: provenance, what the clock
measured (keys named like times, rates, shares of peak, resident sizes, fits of times), choices
made by timing (the allreduce "auto" picks), where ranks ran, what the host lets PAPI count, what
its CPU decides (the peak's instruction set, the convolution workspace), and what its kernel gives
(huge pages).

  python3 golden.py store CAMPAIGN GOLDEN    # keep CAMPAIGN (its tables made) as GOLDEN
  python3 golden.py compare GOLDEN CAMPAIGN  # exit 1 listing every difference
"""

from __future__ import annotations

import csv
import json
import math
import re
import shutil
import sys
from pathlib import Path

# keys whose values the clock or the host decide: their presence is compared, their values not.
# The host's CPU decides peak_method (the FMA loop's instruction set) and the convolution
# workspace (the direct convolution's panels are as wide as two of its vectors: 16 floats under
# AVX2, 32 under AVX-512), and with it model_bytes; the kernel, the arena's huge pages (its THP
# mode, and where calloc put the arena: the whole pages advised).
MEASURED = re.compile(
    r"(_s$|_s_|_vs_|per_s|_share$|pct_of_peak|rss_bytes|^(r2|seconds|samples|mean|stddev|std|ci_low|ci_high|vs_gemm|"
    r"efficiency|per_epoch_speedup|max_err_over_bound|max_rel_err|max_rel_residual|n|peak_method|workspace_bytes|"
    r"model_bytes|huge_page_bytes|huge_pages_advised_bytes)$)"
)
# subtrees decided by timing or by the host: presence only
# (harness_host, a point's host: the load beside it on the host that ran it; direct_tile_orders:
# the direct convolution's tile order each problem measured, keyed by the thread count;
# copy_path: how shm moved a node's elements, cma where the kernel lets the ranks read each other)
OPAQUE = {
    "allreduce",
    "allreduce_auto_times_s",
    "allreduce_bands",
    "placement",
    "token",
    "merge",
    "harness_host",
    "host",
    "direct_tile_orders",
    "copy_path",
}
# where and with what the campaign ran, and what the host lets PAPI or Linux count: not stored
DROPPED = {
    "provenance",
    "counters",
    "counters_unavailable",
    "counters_by_phase",
    "counter_rates",
    "counters_paths",
    "counters_fallback",
    "counters_scope",  # names the threads counted: the host's
    "cores",  # the cores' round trip: the host's placement, and absent where one CPU is allowed
}
REL_TOL = 1e-3
TABLE_KEY_COLUMNS = {"ranks", "bytes", "threads", "sizes", "base_ranks"}


def _same_number(a: float, b: float) -> bool:
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= REL_TOL * max(abs(a), abs(b), 1e-12)


def diff(a, b, where: str, out: list[str], measured: bool = False) -> None:
    """Appends to `out` every difference between the stored value a and the new value b."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in DROPPED:
                continue
            if k not in a or k not in b:
                out.append(f"{where}.{k}: {'added' if k not in a else 'missing'}")
            elif k in OPAQUE:
                continue
            else:
                diff(a[k], b[k], f"{where}.{k}", out, measured or bool(MEASURED.search(k)))
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b) and not measured:
            out.append(f"{where}: {len(a)} items stored, {len(b)} now")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            diff(x, y, f"{where}[{i}]", out, measured)
        return
    num = (int, float)
    if isinstance(a, num) and isinstance(b, num) and not isinstance(a, bool) and not isinstance(b, bool):
        if not measured and not _same_number(a, b):
            out.append(f"{where}: {a!r} stored, {b!r} now")
        return
    if type(a) is not type(b) or (not measured and a != b):
        out.append(f"{where}: {a!r} stored, {b!r} now")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _record_key(r: dict) -> str:
    # the harness point (its id holds the repeat) tells a plan's repeats of one case apart
    return f"{r.get('kind')}/{r.get('benchmark')}/{r.get('point_id')}/{r.get('harness_point', '')}"


def _point_key(p: dict) -> str:
    return f"{p.get('experiment')}/{p.get('id')}/{p.get('repeat', 0)}"


def _keyed(rows: list[dict], key, what: str, out: list[str]) -> dict:
    by: dict[str, dict] = {}
    for r in rows:
        k = key(r)
        if k in by:
            out.append(f"{what}: {k} appears twice")
        by[k] = r
    return by


def compare_lists(stored: list[dict], new: list[dict], key, what: str) -> list[str]:
    out: list[str] = []
    a, b = _keyed(stored, key, what, out), _keyed(new, key, what, out)
    for k in sorted(set(a) | set(b)):
        if k not in b:
            out.append(f"{what} {k}: missing")
        elif k not in a:
            out.append(f"{what} {k}: added")
        else:
            diff(a[k], b[k], f"{what} {k}", out)
    return out


def _table(path: Path) -> tuple[list[str], list[tuple]]:
    with path.open(newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    header = rows[0]

    def is_key(col: int) -> bool:
        name = header[col]
        if name in TABLE_KEY_COLUMNS:
            return True
        for r in rows[1:]:
            try:
                float(r[col])
            except ValueError:
                if r[col] != "":
                    return True
        return False

    keys = [i for i in range(len(header)) if is_key(i)]
    return header, sorted(tuple(r[i] for i in keys) for r in rows[1:])


def compare_tables(stored: Path, new: Path) -> list[str]:
    out: list[str] = []
    names = {p.name for p in stored.glob("*.csv")} | {p.name for p in new.glob("*.csv")}
    for name in sorted(names):
        if not (stored / name).exists() or not (new / name).exists():
            out.append(f"table {name}: {'added' if not (stored / name).exists() else 'missing'}")
            continue
        (ha, ra), (hb, rb) = _table(stored / name), _table(new / name)
        if ha != hb:
            out.append(f"table {name}: columns {ha} stored, {hb} now")
        elif ra != rb:
            out.append(f"table {name}: row keys differ: {sorted(set(ra) ^ set(rb))[:5]}")
    return out


def compare(golden: Path, campaign: Path) -> list[str]:
    out = compare_lists(_jsonl(golden / "records.jsonl"), _jsonl(campaign / "records.jsonl"), _record_key, "record")
    out += compare_lists(_jsonl(golden / "points.jsonl"), _jsonl(campaign / "points.jsonl"), _point_key, "point")
    out += compare_tables(golden / "analysis", campaign / "analysis")
    return out


def store(campaign: Path, golden: Path) -> None:
    (golden / "analysis").mkdir(parents=True, exist_ok=True)
    with (golden / "records.jsonl").open("w") as f:
        for r in _jsonl(campaign / "records.jsonl"):
            for k in DROPPED:
                r.pop(k, None)
            f.write(json.dumps(r, sort_keys=True) + "\n")
    shutil.copy(campaign / "points.jsonl", golden / "points.jsonl")
    for p in (campaign / "analysis").glob("*.csv"):
        shutil.copy(p, golden / "analysis" / p.name)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("store", "compare"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "store":
        store(Path(argv[1]), Path(argv[2]))
        return 0
    found = compare(Path(argv[1]), Path(argv[2]))
    for line in found:
        print(line)
    print(f"{len(found)} differences from the stored campaign {argv[1]}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
