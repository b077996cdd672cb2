#!/usr/bin/env python3
"""Convolution efficiency from `dlscale kernels` records (one run, side by side).

For every conv layer (records named '<model>:<layer>*<count>') and backend:
  conv GFLOP/s  = (flop_fwd + flop_bwd_data + flop_bwd_filter) / (t_fwd + t_bwd_data + t_bwd_filter)
  vs sgemm      = conv GFLOP/s / GFLOP/s of the square sgemm in the same file (OpenBLAS backend)
  openblas/onednn = OpenBLAS conv GFLOP/s / oneDNN conv GFLOP/s (> 1: OpenBLAS path is faster)
and per model the same ratios over the whole network, each layer weighted by its count.
Times are medians. Records whose check failed are refused.

usage: kernel_efficiency.py RECORDS.jsonl [--gemm-shape 2048x2048x2048]
"""

import argparse
import collections
import json
import sys

DIRS = ("conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_filter")


def load(path):
    with open(path) as f:
        for no, line in enumerate(f, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{path}:{no}: not JSON: {e}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records")
    ap.add_argument("--gemm-shape", default="2048x2048x2048", help="prefix of the sgemm shape used as the reference")
    args = ap.parse_args()

    sgemm = {}
    layers = collections.defaultdict(dict)  # (model, layer, count, shape) -> {(backend, dir): (flop, t)}
    for r in load(args.records):
        if r.get("status") != "ok" or "time_s" not in r["metrics"]:
            continue
        if r["check"]["status"] == "failed":
            sys.exit(f"refusing a failed check: {r['params']}")
        m = r["metrics"]
        if m["op"] == "gemm" and m["shape"].startswith(args.gemm_shape):
            sgemm[m["backend"]] = m["gflop_per_s"]
        elif m["op"] in DIRS:
            name = r["params"]["shape_params"].get("name", "")
            model, _, rest = name.partition(":")
            layer, _, count = rest.partition("*")
            key = (model, layer, int(count or 1), m["shape"])
            layers[key][(m["backend"], m["op"])] = (m["flop"], m["time_s"])
    if "openblas" not in sgemm:
        sys.exit(f"no OpenBLAS sgemm record with shape {args.gemm_shape}* in {args.records}")
    ref = sgemm["openblas"]
    print(
        f"sgemm {args.gemm_shape}: openblas {ref:.1f} GFLOP/s"
        + (f", onednn {sgemm['onednn']:.1f} GFLOP/s" if "onednn" in sgemm else "")
    )

    def rate(d, backend):
        if not all((backend, op) in d for op in DIRS):
            return None, None
        flop = sum(d[(backend, op)][0] for op in DIRS)
        t = sum(d[(backend, op)][1] for op in DIRS)
        return flop, t

    totals = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])  # model -> ob flop, ob t, dn flop, dn t
    print(f"\n{'layer':<34} {'n':>2} {'openblas':>9} {'onednn':>9} {'ob/sgemm':>8} {'dn/sgemm':>8} {'ob/dn':>6}")
    for (model, layer, count, _shape), d in layers.items():
        fo, to = rate(d, "openblas")
        fd, td = rate(d, "onednn")
        go = fo / to * 1e-9 if fo else None
        gd = fd / td * 1e-9 if fd else None

        def fmt(v, f="{:.2f}"):
            return f.format(v) if v is not None else "-"

        print(
            f"{model + ':' + layer:<34} {count:>2} {fmt(go, '{:.1f}'):>9} {fmt(gd, '{:.1f}'):>9} "
            f"{fmt(go / ref if go else None):>8} {fmt(gd / ref if gd else None):>8} "
            f"{fmt(go / gd if go and gd else None):>6}"
        )
        t = totals[model]
        if fo:
            t[0] += fo * count
            t[1] += to * count
        if fd:
            t[2] += fd * count
            t[3] += td * count
    print(f"\n{'network (count-weighted)':<26} {'openblas':>9} {'onednn':>9} {'ob/sgemm':>8} {'ob/dn':>6}")
    for model, (fo, to, fd, td) in totals.items():
        go = fo / to * 1e-9 if to else 0
        gd = fd / td * 1e-9 if td else 0
        print(f"{model:<26} {go:>9.1f} {gd:>9.1f} {go / ref:>8.2f} {(go / gd if gd else float('nan')):>6.2f}")


if __name__ == "__main__":
    main()
