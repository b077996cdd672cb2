"""`dlscale project`: the command line of the projection (docs/projection.md)."""

import os
import re
import sys

import yaml

from ..outputs import FileSet
from . import output
from .calibration import load_calibration
from .model import SpecError
from .run import project, spec_from
from .schemes import SCHEMES

NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DEFAULT_CALIBRATION = os.path.join(ROOT, "results", "calibration", "localhost")
HELP = """Projects a model's training step to a site's scale from a calibration campaign: compute from
its one-rank training records (layer times carried by the ratio of peaks and memory bandwidths),
communication from alpha-beta terms over the site's network levels, input from its storage.
Prints the table and writes projection.{json,jsonl,csv,md,png} and alpha_beta.csv into --out.
Exit 0, or 2 on bad input (the message names the option, file or key)."""


def add_parser(sub):
    p = sub.add_parser("project", help="project a training run to a site's scale", description=HELP)
    p.add_argument("--site", help="site name (site_configs/NAME.yaml) or a site file")
    p.add_argument("--model", help="model (dlscale train --list-models); needs a one-rank record in the campaign")
    p.add_argument("--scheme", default="ssgd", choices=SCHEMES)
    for u in ("nodes", "gpus", "ranks", "processes"):
        p.add_argument(f"--{u}", metavar="N,N,...", help=f"the scales, in {u}")
    p.add_argument(
        "--campaign", default=DEFAULT_CALIBRATION, help="the calibration campaign (default: the shipped one, %(default)s)"
    )
    p.add_argument("--scaling", default="weak", choices=("weak", "strong"))
    p.add_argument("--batch", type=int, default=0, help="a rank's batch (weak scaling; default: the largest calibrated)")
    p.add_argument("--global-batch", type=int, default=0, help="the fixed global batch (strong scaling)")
    p.add_argument("--base", type=int, default=0, help="the scale efficiencies are relative to (default: the smallest)")
    p.add_argument("--algo", default="auto", help="allreduce: auto, mpi, ring, recdbl, rabenseifner, tree, hier, shm")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="ssgd's bucket size (default 25)")
    p.add_argument("--overlap", type=float, help="fraction of communication hidden (default: the campaign's measured)")
    p.add_argument("--period", type=int, default=0, help="localsgd: steps between averagings (0: once an epoch)")
    p.add_argument("--tau", type=int, default=1, help="easgd: steps between exchanges")
    p.add_argument("--servers", type=int, default=1, help="easgd/ps-sync: parameter-server ranks")
    p.add_argument(
        "--efficiency-over",
        default="workers",
        choices=("workers", "ranks"),
        help="what the ideal speed-up counts: the workers (default), or every rank, the servers too",
    )
    p.add_argument("--images-per-epoch", type=int, default=0, help="for per-epoch speed-up (default: none)")
    p.add_argument("--sample-bytes", type=float, default=0, help="bytes a sample as read (default: decoded pixels)")
    p.add_argument("--input", default="storage", choices=("storage", "cached"))
    p.add_argument("--backend", default="", help="the calibration records' backend (default: openblas, else any)")
    p.add_argument(
        "--sync-floor-s", type=float, help="seconds every exchange across nodes takes at least (with --sync-floor-source)"
    )
    p.add_argument(
        "--sync-floor-at", type=int, help="fit that floor: an exchange period's communication equals its compute at this scale"
    )
    p.add_argument("--sync-floor-source", help="where the floor's number comes from (named in every output)")
    p.add_argument(
        "--reduction-cores",
        type=int,
        help="cores a rank that do the allreduce's sums, at their share of its memory bandwidth "
        "(default: all of the rank's; with --reduction-cores-source)",
    )
    p.add_argument("--reduction-cores-source", help="where that count comes from (named in every output)")
    p.add_argument("--spec", help="a projection file (YAML: projections: [{name, site, model, ...}]) instead")
    p.add_argument("--out", help="output folder (default results/projections/SITE_MODEL_SCHEME)")


def _request(a):
    units = [u for u in ("nodes", "gpus", "ranks", "processes") if getattr(a, u)]
    if len(units) != 1:
        raise SpecError("give the scales with exactly one of --nodes, --gpus, --ranks, --processes")
    if not a.model:
        raise SpecError("--model is required (or --spec FILE)")
    d = dict(
        model=a.model,
        scales=getattr(a, units[0]),
        unit=units[0],
        scaling=a.scaling,
        batch=a.batch,
        global_batch=a.global_batch,
        base=a.base,
        scheme=a.scheme,
        algo=a.algo,
        bucket_mb=a.bucket_mb,
        period=a.period,
        tau=a.tau,
        servers=a.servers,
        efficiency_over=a.efficiency_over,
        images_per_epoch=a.images_per_epoch,
        sample_bytes=a.sample_bytes,
        input=a.input,
        backend=a.backend,
    )
    if a.overlap is not None:
        d["overlap"] = a.overlap
    for k in ("sync_floor_s", "sync_floor_at", "sync_floor_source", "reduction_cores", "reduction_cores_source"):
        if getattr(a, k) is not None:
            d[k] = getattr(a, k)
    return d


# the keys of a projection file's entry that are not part of the request (run.spec_from)
ENTRY_KEYS = ("name", "site", "figure", "metric", "condition", "why", "lacks")


def load_specs(path):
    """requests() of a projection file."""
    with open(path) as f:
        return requests(yaml.safe_load(f) or {}, path)


def requests(doc, path):
    """[(name, site, request mapping, the entry)] of a parsed projection file."""
    items = doc.get("projections") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise SpecError(f"{path}: expected a non-empty list under projections:")
    out, names = [], set()
    for i, it in enumerate(items):
        if not isinstance(it, dict) or "site" not in it or "name" not in it:
            raise SpecError(f"{path}: projections[{i}]: needs name and site")
        name = str(it["name"])
        if not NAME.fullmatch(name) or name in (".", ".."):
            why = "expected 1 to 64 letters, digits, '_', '-' or '.' (a folder under --out)"
            raise SpecError(f"{path}: projections[{i}]: name {name!r}: {why}")
        if name in names:
            raise SpecError(f"{path}: projections[{i}]: name {name!r} given twice (each entry writes its own folder)")
        names.add(name)
        req = {k: v for k, v in it.items() if k not in ENTRY_KEYS}
        out.append((name, str(it["site"]), req, it))
    return out


def show(p):
    print(f"## {p.spec.model} {p.spec.scheme.name} on {p.site.name}, {p.spec.scaling} scaling, calibrated on {p.calibration}")
    print(output.table(p).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for a in p.assumptions:
        print(f"  assumption: {a}")


# what a projection file gives per entry: beside --spec these options would be ignored
SPEC_GIVES = ("site", "model", "nodes", "gpus", "ranks", "processes", "batch", "global_batch", "base")


def project_main(a):
    todo = []
    clash = [f"--{k.replace('_', '-')}" for k in SPEC_GIVES if a.spec and getattr(a, k)]
    if clash:
        raise SpecError(f"--spec gives each entry's site, model and scales: leave out {', '.join(clash)}")
    if a.scaling == "strong" and a.batch:
        raise SpecError("--batch is a rank's batch under weak scaling; strong scaling takes --global-batch")
    if a.spec:
        for name, site, req, _ in load_specs(a.spec):
            todo.append((name, site, spec_from(req, f"{a.spec}: {name}")))
    else:
        if not a.site:
            raise SpecError("--site is required")
        todo.append(
            (
                f"{os.path.basename(a.site).removesuffix('.yaml')}_{a.model}_{a.scheme}",
                a.site,
                spec_from(_request(a), "the command line"),
            )
        )
    cal = load_calibration(a.campaign)
    done = []
    for name, site, spec in todo:  # every entry projected before any is written
        try:
            done.append((name, project(spec, cal, site, ROOT)))
        except ValueError as e:
            raise SpecError(f"{a.spec}: {name}: {e}" if a.spec else str(e)) from None
    out = a.out or os.path.join(ROOT, "results", "projections")
    with FileSet(out) as files:  # every entry's files together, or none
        folders = []
        for name, p in done:
            show(p)
            paths = output.stage(p, files, name if (a.spec or not a.out) else "")
            folders.append(os.path.dirname(paths[0]))
    for folder in folders:
        print(f"results: {folder}/projection.{{json,jsonl,csv,md,png}}, alpha_beta.csv")
    return 0


def main_guarded(a):
    try:
        return project_main(a)
    except (ValueError, OSError, yaml.YAMLError) as e:  # SpecError, SiteError, CalibrationError, RecordError
        print(f"dlscale project: {e}", file=sys.stderr)
        return 2
