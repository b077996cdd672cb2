#!/usr/bin/env python3
"""No function over 60 lines of code (lizard's NLOC) in apps/, collectives/ and harness/, tests
aside, except those listed in scripts/function_length_allow.txt ("path function" per line), a
list that may only shrink: a listed function that is gone or now short enough must leave it.

  python3 scripts/function_length.py LIZARD   # CTest function_length (through scripts/lint.sh)
"""

from __future__ import annotations

import csv
import io
import re
import subprocess
import sys
from pathlib import Path

LIMIT = 60
FOLDERS = ["apps", "collectives", "harness"]
TESTS = re.compile(r"(_test\.(cpp|hpp|cu)$|/fuzz/|test_util|mpi_test_main|gradcheck\.hpp$)")


def measured(lizard: str, root: Path) -> dict[tuple[str, str], int]:
    files = subprocess.run(
        ["git", "ls-files", *(f"{d}/*.{e}" for d in FOLDERS for e in ("cpp", "hpp", "cu"))],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    files = [f for f in files if not TESTS.search(f)]
    out = subprocess.run([lizard, "--csv", "-l", "cpp", *files], cwd=root, capture_output=True, text=True)
    if out.returncode not in (0, 1) or not out.stdout:
        sys.exit(f"lizard failed ({out.returncode}): {out.stderr}")
    longest: dict[tuple[str, str], int] = {}
    for row in csv.reader(io.StringIO(out.stdout)):
        nloc, path, name = int(row[0]), row[6], row[7]
        longest[(path, name)] = max(nloc, longest.get((path, name), 0))
    return longest


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    allow_file = root / "scripts" / "function_length_allow.txt"
    allowed = {
        tuple(line.split(maxsplit=1)) for line in allow_file.read_text().splitlines() if line.strip() and not line.startswith("#")
    }
    nloc = measured(argv[0], root)
    problems = [
        f"too long: {path} {name}: {n} lines of code (limit {LIMIT}): split it"
        for (path, name), n in sorted(nloc.items())
        if n > LIMIT and (path, name) not in allowed
    ]
    problems += [
        f"listed but not over {LIMIT}: {path} {name}: take it out of {allow_file.name}"
        for path, name in sorted(allowed)
        if nloc.get((path, name), 0) <= LIMIT
    ]
    top = sorted(nloc.items(), key=lambda kv: -kv[1])[:5]
    print("longest: " + "; ".join(f"{p} {f} {n}" for (p, f), n in top))
    for p in problems:
        print(p)
    print(f"function length: {len(nloc)} functions, {len(allowed)} allowed over {LIMIT}, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
