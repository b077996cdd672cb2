#!/usr/bin/env python3
"""The layering of docs/DESIGN.md, checked on the #include graph of the C++ and CUDA tree.

Every file (tests aside) belongs to one layer; an #include "..." may point to its own layer or a
lower one, never upward; and the folders (split by layer) include each other without a cycle.
Prints each upward edge, each cycle and each unclassified file, and exits 1 on any.

  python3 scripts/include_layers.py          # check (CTest: include_layers)
  python3 scripts/include_layers.py --edges  # also print the folder graph with edge counts
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

# lowest first; a file's layer is that of a file pattern (ending in $) it matches, else of the
# first folder pattern
LAYERS: list[tuple[str, list[str]]] = [
    # the measuring kit, the bottom library: errors, named enums, threads and the BLAS binding,
    # version probes, records, provenance, PAPI, timers, statistics, comparison bounds, peak
    ("measure", [r"measure/"]),
    ("kernels", [r"kernels/"]),  # kernels/common/ (backend, descriptors, RNG) and the maths
    ("kernel-bench", [r"kernels/bench/", r"kernels/[^/]+/[^/]+_bench\.cpp$"]),
    ("collectives", [r"collectives/"]),
    ("engine", [r"apps/net/", r"apps/layers/", r"apps/net_gpu/", r"apps/models/", r"apps/data/"]),
    ("training", [r"apps/train/"]),
    ("schemes", [r"apps/dist/"]),
    ("commands", [r"apps/cli/"]),
    ("reading", [r"harness/config/"]),  # sites and plans: parse, validate, expand
    ("running", [r"harness/run/"]),  # launchers, batch scripts, point processes, the campaign
    ("verdicts", [r"harness/verdict/"]),  # acceptance, summary, report
    ("main", [r"harness/cli/", r"harness/[^/]+\.cpp$"]),
]
TESTS = re.compile(r"(_test\.(cpp|hpp|cu)$|/fuzz/|test_util|test_require|mpi_test_main|gradcheck\.hpp$)")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: str) -> int | None:
    for files_first in (True, False):
        for i, (_, patterns) in enumerate(LAYERS):
            if any(p.endswith("$") == files_first and re.match(p, path) for p in patterns):
                return i
    return None


def node(path: str, layer: int) -> str:
    return f"{path.rsplit('/', 1)[0]}[{LAYERS[layer][0]}]"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if m not in state and (c := visit(m)):
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state and (c := visit(n)):
            return c
    return None


def main(argv: list[str]) -> int:
    root = Path(__file__).resolve().parent.parent
    listed = subprocess.run(
        ["git", "ls-files", "*.cpp", "*.hpp", "*.cu", "*.cuh", "*.inc", "*.def"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    problems: list[str] = []
    graph: dict[str, set[str]] = defaultdict(set)
    counts: Counter[tuple[str, str]] = Counter()
    for path in listed:
        if TESTS.search(path):
            continue
        src = layer_of(path)
        if src is None:
            problems.append(f"unclassified: {path} (add its folder to LAYERS in scripts/include_layers.py)")
            continue
        for inc in INCLUDE.findall((root / path).read_text(errors="replace")):
            if not (root / inc).exists():
                continue  # a system or generated header
            dst = layer_of(inc)
            if dst is None:
                continue  # reported as unclassified with its own path
            if dst > src:
                problems.append(f"upward: {path} [{LAYERS[src][0]}] includes {inc} [{LAYERS[dst][0]}]")
            a, b = node(path, src), node(inc, dst)
            if a != b:
                graph[a].add(b)
                counts[(a, b)] += 1
    if cycle := find_cycle(graph):
        problems.append("cycle: " + " -> ".join(cycle))
    if "--edges" in argv:
        for (a, b), n in sorted(counts.items()):
            print(f"{a:40s} -> {b:40s} {n}")
    for p in problems:
        print(p)
    names = " < ".join(name for name, _ in LAYERS)
    print(f"include layers ({names}): {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
