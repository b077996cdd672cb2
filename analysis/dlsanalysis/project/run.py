"""One projection end to end: calibration campaign + target site + request -> rows and inputs.

Every input of the model is listed with its value and its source: a record ("records.jsonl:
LINE"), a site key, a manifest key, or "assumption: ...". The sensitivity to the carrying over
of compute (the weakest assumption) is the efficiency at half and at twice the carried compute
time, beside the projected one.
"""

import math
import os
from dataclasses import dataclass, field, replace

from .calibration import Calibration, alpha_beta_bands, load_calibration, machine_rates, overlap_fraction, profiles
from .compute import carry_factors
from .model import EFFICIENCY_OVER, UNITS, Spec, SpecError, cores_a_rank, project_rows, reduction_bandwidth, step_at
from .schemes import SCHEMES, Scheme
from .site import load_site, site_path
from .sync_floor import fitted_seconds, floor_from

SENSITIVITY = (0.5, 2.0)


@dataclass
class Projection:
    spec: Spec
    site: object
    calibration: str
    rows: list
    inputs: list = field(default_factory=list)
    assumptions: list = field(default_factory=list)
    alpha_beta: object = None
    sync_floor_s: float = 0.0  # sync_floor.py: as given or fitted, 0 without one


def pick_profiles(all_profiles, backend, image, image_w=0, channels=0, width=1.0):
    """The profiles of the network as asked: its width multiplier (1: as published), image
    (height x width; the largest square one measured where not given) and input channels (any
    where not given); then the most threads, and openblas before other backends."""
    if backend:
        all_profiles = [p for p in all_profiles if p.backend == backend]
    all_profiles = [p for p in all_profiles if p.width == width and (not channels or p.channels == channels)]
    if not image:
        image = max((p.image for p in all_profiles if p.image_w in (0, p.image)), default=0)
    image_w = image_w or image
    all_profiles = [p for p in all_profiles if p.image == image and (p.image_w or p.image) == image_w]
    if not all_profiles:
        return []
    threads = max(p.threads for p in all_profiles)
    picked = [p for p in all_profiles if p.threads == threads]
    backends = sorted({p.backend for p in picked}, key=lambda b: (b != "openblas", b))
    return [p for p in picked if p.backend == backends[0]]


def _same_site(site, cal):
    return bool(cal.site) and site.name == cal.site


def _inputs(spec, site, profs, carry, cal_rates, floor_s):
    ins = [
        dict(
            name="profiles",
            value=", ".join(f"batch {p.batch}: {p.step:.4g} s/step" for p in profs),
            source=", ".join(r for p in profs for r in p.refs),
        ),
        dict(name="parameter_bytes", value=profs[0].parameter_bytes, source=profs[0].refs[0]),
        dict(name="threads_a_rank (calibration)", value=profs[0].threads, source=profs[0].refs[0]),
        dict(name="site_peak_a_rank", value=site.rank_peak, source=site.sources.get("peak_flops_sp", "")),
        dict(
            name="site_memory_bandwidth_a_rank", value=site.rank_memory_bandwidth, source=site.sources.get("memory_bandwidth", "")
        ),
        dict(name="calibration_peak_a_rank", value=cal_rates[0], source=cal_rates[2]["calibration_peak"]),
        dict(name="calibration_memory_bandwidth_a_rank", value=cal_rates[1], source=cal_rates[2]["calibration_memory_bandwidth"]),
        dict(
            name="carry_compute", value=carry.compute, source=carry.sources.get("compute_carry", carry.sources.get("carry", ""))
        ),
        dict(name="carry_memory", value=carry.memory, source=carry.sources.get("memory_carry", carry.sources.get("carry", ""))),
        dict(
            name="ranks_per_node",
            value=site.ranks_per_node,
            source=f"site {os.path.basename(site.path)}: launcher.ranks_per_node",
        ),
        dict(name="overlap_fraction", value=spec.scheme.overlap, source=spec.scheme.overlap_source),
        dict(
            name="storage_read_bandwidth",
            value=site.storage_bandwidth,
            source=f"site {os.path.basename(site.path)}: storage (fastest read_bandwidth)",
        ),
    ]
    for lv in site.levels:
        ins.append(
            dict(
                name=f"level {lv.name}",
                value=f"{lv.latency:.3g} s, {lv.bandwidth:.4g} B/s, taper {lv.taper:g}, span {lv.nodes or 'all'} nodes",
                source=lv.source,
            )
        )
    if spec.epochs:
        ins.append(dict(name="epochs_to_target", value=dict(spec.epochs), source=spec.epochs_source or "the request"))
    if spec.sample_bytes:
        ins.append(dict(name="sample_bytes", value=spec.sample_bytes, source="the request"))
    if spec.sync_floor.given():
        ins.append(dict(name="sync_floor_s", value=floor_s, source=spec.sync_floor.describe(floor_s)))
    ins.append(dict(name="reduction_bandwidth", value=reduction_bandwidth(spec, site), source=_reduction_source(spec, site)))
    return ins


def _reduction_source(spec, site):
    mine = f"site {os.path.basename(site.path)}: node.memory_bandwidth / ranks a node"
    if not spec.reduction_cores:
        return mine
    return f"{mine} x {spec.reduction_cores} of a rank's {cores_a_rank(site):g} cores ({spec.reduction_source})"


def _floor_seconds(spec, site, profs, carry, fits):
    """The sync floor's seconds: as given, or fitted at its scale (sync_floor.py); 0 without one."""
    f = spec.sync_floor
    if not f.at:
        return f.seconds
    row = step_at(spec, f.at, site, profs, carry, fits)
    if row["nodes"] <= 1 or row["ranks"] <= 1:
        raise SpecError(f"sync_floor_at {f.at}: one node at that scale, where the floor does not apply")
    return fitted_seconds(row, SpecError)


def project(spec, calibration, site_name, root):
    """The Projection of `spec` on site `site_name` from `calibration`: a campaign folder, or a
    Calibration already loaded (a caller projecting many requests reads the campaign once). The
    caller's spec is left as given: what the calibration fills in goes into the Projection's copy."""
    spec = replace(spec, scheme=replace(spec.scheme))
    if spec.unit not in UNITS:
        raise SpecError(f"unit '{spec.unit}': expected one of {', '.join(UNITS)}")
    if spec.scheme.name not in SCHEMES:
        raise SpecError(f"scheme '{spec.scheme.name}': expected one of {', '.join(SCHEMES)}")
    if spec.efficiency_over not in EFFICIENCY_OVER:
        raise SpecError(f"efficiency_over '{spec.efficiency_over}': expected one of {', '.join(EFFICIENCY_OVER)}")
    cal = calibration if isinstance(calibration, Calibration) else load_calibration(calibration)
    cal_site = load_site(cal.site or "localhost", root, cal.manifest)
    target = load_site(site_name, root)
    same = _same_site(target, cal)
    site = load_site(site_name, root, cal.manifest) if same else target
    profs = pick_profiles(profiles(cal, spec.model), spec.backend, spec.image, spec.image_w, spec.channels, spec.width)
    if not profs:
        at = f" at image size {spec.image}" if spec.image else ""
        raise SpecError(f"{cal.path}: no one-rank training record of model '{spec.model}'{at} to calibrate on")
    notes = []
    if spec.scaling == "weak" and spec.batch <= 0:
        spec.batch = max(p.batch for p in profs)
        notes.append(f"a rank's batch not given: {spec.batch}, the largest calibrated")
    rates = machine_rates(cal, cal_site, profs[0].threads)
    carry = carry_factors(rates[0], rates[1], site, same)
    if spec.scheme.overlap_source == "assumption: no overlap":
        f, src = overlap_fraction(cal, None if spec.scheme.algo in ("auto", "mpi") else spec.scheme.algo)
        if f is not None:
            spec.scheme.overlap, spec.scheme.overlap_source = f, src
    bands = alpha_beta_bands(cal)
    fits = bands if same else None
    if not spec.sample_bytes:
        spec.sample_bytes = profs[0].sample_bytes
    floor_s = _floor_seconds(spec, site, profs, carry, fits)
    rows = project_rows(spec, site, profs, carry, fits, floor_s=floor_s)
    for k in SENSITIVITY:  # the floor stays as fitted: a fixed cost, not the compute's
        alt = project_rows(spec, site, profs, carry, fits, sensitivity=k, floor_s=floor_s)
        for r, a in zip(rows, alt, strict=True):
            r[f"efficiency_compute_x{k:g}"] = a["efficiency"]
    assumptions = notes + [carry.describe(), f"communication: {rows[-1]['comm_how']}"]
    assumptions += sorted({r["compute_note"] for r in rows if r["compute_note"]})
    if spec.efficiency_over == "ranks" and rows[-1]["ranks"] != rows[-1]["workers"]:
        assumptions.append("efficiency over ranks: the ideal speed-up counts every rank, the servers' too")
    if not same:
        assumptions.append("the calibration's allreduce fits are not used: the site's levels give every exchange")
    if spec.sync_floor.given():
        assumptions.append(spec.sync_floor.describe(floor_s))
    if spec.reduction_cores:
        assumptions.append(
            f"the allreduce's sums run on {spec.reduction_cores} core(s) a rank at their share of its memory bandwidth, "
            f"{reduction_bandwidth(spec, site) / 1e9:.3g} GB/s ({spec.reduction_source})"
        )
    ins = _inputs(spec, site, profs, carry, rates, floor_s)
    return Projection(spec, site, cal.path, rows, ins, assumptions, bands, floor_s)


def _whole_or_none(v, lo):
    """v as a whole number >= lo, or None: no bool, no fraction truncated."""
    ok = not isinstance(v, bool) and isinstance(v, (int, float, str))
    try:
        n = float(v.strip() if isinstance(v, str) else v) if ok else math.nan
    except ValueError:
        n = math.nan
    return int(n) if math.isfinite(n) and n == int(n) and n >= lo else None


def _whole(d, key, default, lo, where):
    """d[key] as a whole number >= lo (default where absent)."""
    n = _whole_or_none(d.get(key, default), lo)
    if n is None:
        raise SpecError(f"{where}: {key} must be a whole number >= {lo}, got {d.get(key, default)!r}")
    return n


def _real(d, key, default, where, lo, hi=math.inf):
    """d[key] as a finite number in [lo, hi] (default where absent)."""
    v = d.get(key, default)
    try:
        x = float(v) if not isinstance(v, bool) else math.nan
    except (TypeError, ValueError):
        x = math.nan
    if not (math.isfinite(x) and lo <= x <= hi):
        raise SpecError(f"{where}: {key} must be a number in [{lo:g}, {hi:g}], got {v!r}")
    return x


def _scales(d, where):
    raw = d["scales"]
    items = raw.split(",") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    scales = [_whole_or_none(s, 1) for s in items]
    if not scales or None in scales or max(scales) > 1 << 40:
        raise SpecError(f"{where}: scales must be positive whole numbers, got {raw}")
    return scales


def spec_from(d, where):
    """A Spec from a mapping (a projection file's entry or the command line's options)."""
    known = {
        "model",
        "scales",
        "unit",
        "scaling",
        "batch",
        "global_batch",
        "base",
        "scheme",
        "algo",
        "bucket_mb",
        "overlap",
        "period",
        "momentum_average",
        "tau",
        "servers",
        "images_per_epoch",
        "sample_bytes",
        "input",
        "backend",
        "epochs",
        "epochs_source",
        "image",
        "image_w",
        "channels",
        "width",
        "efficiency_over",
        "sync_floor_s",
        "sync_floor_at",
        "sync_floor_source",
        "reduction_cores",
        "reduction_cores_source",
    }
    extra = set(d) - known
    if extra:
        raise SpecError(f"{where}: unknown key(s) {', '.join(sorted(extra))}; expected {', '.join(sorted(known))}")
    if "model" not in d or "scales" not in d:
        raise SpecError(f"{where}: needs model and scales")
    sch = Scheme(
        name=str(d.get("scheme", "ssgd")),
        algo=str(d.get("algo", "auto")),
        bucket_mb=_real(d, "bucket_mb", 25, where, 1e-3, 1e6),  # 1 KB .. 1 TB: a bucket count that ends
        period=_whole(d, "period", 0, 0, where),
        exchange_factor=2.0 if d.get("momentum_average") else 1.0,
        tau=_whole(d, "tau", 1, 1, where),
        servers=_whole(d, "servers", 1, 1, where),
    )
    if "overlap" in d:
        sch.overlap, sch.overlap_source = _real(d, "overlap", 0, where, 0, 1), f"{where}: overlap"
    red = _whole(d, "reduction_cores", 0, 0, where)
    if red and not str(d.get("reduction_cores_source", "")).strip():
        raise SpecError(f"{where}: reduction_cores needs reduction_cores_source (where the count comes from)")
    scales = _scales(d, where)
    base = _whole(d, "base", 0, 0, where)
    if base and base not in scales:
        raise SpecError(f"{where}: base {base} is not one of the scales {scales}")
    return Spec(
        model=str(d["model"]),
        scales=scales,
        unit=str(d.get("unit", "nodes")),
        scaling=str(d.get("scaling", "weak")),
        batch=_whole(d, "batch", 0, 0, where),
        global_batch=_whole(d, "global_batch", 0, 0, where),
        base=base,
        scheme=sch,
        images_per_epoch=_whole(d, "images_per_epoch", 0, 0, where),
        sample_bytes=_real(d, "sample_bytes", 0, where, 0),
        input=str(d.get("input", "storage")),
        backend=str(d.get("backend", "")),
        image=int(d.get("image", 0)),
        image_w=int(d.get("image_w", 0)),
        channels=int(d.get("channels", 0)),
        width=float(d.get("width", 1.0)),
        epochs=dict(d.get("epochs") or {}),
        epochs_source=str(d.get("epochs_source", "")),
        efficiency_over=str(d.get("efficiency_over", "workers")),
        sync_floor=floor_from(d, where, SpecError),
        reduction_cores=red,
        reduction_source=str(d.get("reduction_cores_source", "")),
    )


__all__ = ["project", "spec_from", "Projection", "site_path"]
