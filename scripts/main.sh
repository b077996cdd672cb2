#!/usr/bin/env bash
# The main job on the default site (localhost): set up, build, then run the `smoke` plan
# (harness/plans/smoke.yaml: kernels checked and timed on OpenBLAS and oneDNN, an allreduce sweep
# at 2 ranks, a 1- and 2-rank synchronous SGD training) through `dlscale run`, into a new
# campaign folder results/localhost/smoke-<UTC time>/ (records.jsonl, points.jsonl, manifest.json).
# Extra arguments go to `dlscale run` (e.g. --plan P, --site S, --dry-run, --campaign DIR to resume).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$ROOT/scripts/setup.sh"
CAMPAIGN="$ROOT/results/localhost/smoke-$(date -u +%Y%m%dT%H%M%SZ)"
"${DLS_BUILD_DIR:-$ROOT/build}/dlscale" run --site localhost --plan smoke --campaign "$CAMPAIGN" "$@"
