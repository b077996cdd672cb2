#!/usr/bin/env python3
"""The projection's live check (docs/projection.md): run plan projection_check on localhost now
(one-rank training at batches 16-64, a 2-rank allreduce sweep with overlap, 2-rank ssgd and local
SGD), project the 2-rank step times from its calibration part, and print projected / measured.
A benchmark, not a test: the ratio moves with this shared machine's load.

    /usr/bin/python3 apps/bench/projection_check.py [--campaign DIR] [--keep]
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "analysis"))

from dlsanalysis.project.validate import check  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--campaign", help="a projection_check campaign already run (default: run one now)")
    ap.add_argument("--keep", action="store_true", help="keep the campaign folder it ran")
    a = ap.parse_args()
    camp = a.campaign
    if camp is None:
        camp = tempfile.mkdtemp(prefix="projection_check-")
        shutil.rmtree(camp)
        cmd = [
            os.path.join(ROOT, "build", "dlscale"),
            "run",
            "--site",
            "localhost",
            "--plan",
            "projection_check",
            "--campaign",
            camp,
            "--no-progress",
        ]
        if subprocess.run(cmd, cwd=ROOT).returncode != 0:
            print(f"projection_check: the campaign did not run cleanly ({camp})", file=sys.stderr)
            return 1
    t = check(camp, ROOT)
    print(t.drop(columns=["how"]).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for _, r in t.iterrows():
        print(f"{r['scheme']}: projected / measured step {r['projected_step_s'] / r['measured_step_s']:.3f} ({r['how']})")
    if a.campaign is None and not a.keep:
        shutil.rmtree(camp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
