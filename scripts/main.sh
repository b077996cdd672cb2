#!/usr/bin/env bash
# The main job on the default site (localhost): set up, build, then run the default kernel
# suite (every op on representative training shapes, OpenBLAS and oneDNN side by side),
# checked before timed, one record per case in results/localhost/<date>_kernels/records.jsonl.
# Extra arguments go to `dlscale kernels` (e.g. --threads 1,2 or --benchmark_min_time=1).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
OUT="$ROOT/results/localhost/$(date -u +%Y%m%dT%H%M%SZ)_kernels/records.jsonl"
"${DLS_BUILD_DIR:-$ROOT/build}/dlscale" kernels --shapes "$ROOT/kernels/shapes/default.txt" \
  --backend openblas,onednn --out "$OUT" "$@"
echo "records: $OUT"
