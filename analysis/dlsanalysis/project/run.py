"""One projection end to end: calibration campaign + target site + request -> rows and inputs.

Every input of the model is listed with its value and its source: a record ("records.jsonl:
LINE"), a site key, a manifest key, or "assumption: ...". The sensitivity to the carrying over
of compute (the weakest assumption) is the efficiency at half and at twice the carried compute
time, beside the projected one.
"""

import os
from dataclasses import dataclass, field, replace

from .calibration import Calibration, alpha_beta_bands, load_calibration, machine_rates, overlap_fraction, profiles
from .compute import carry_factors
from .model import EFFICIENCY_OVER, UNITS, Spec, SpecError, cores_a_rank, project_rows, reduction_bandwidth, step_at
from .request import spec_from
from .schemes import SCHEMES
from .site import load_site, site_path
from .sync_floor import fitted_seconds

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
    if spec.reduction_cores > cores_a_rank(site):
        raise SpecError(
            f"reduction_cores {spec.reduction_cores}: more than the {cores_a_rank(site):g} cores a rank has on site {site.name}"
        )
    profs = pick_profiles(profiles(cal, spec.model), spec.backend, spec.image, spec.image_w, spec.channels, spec.width)
    if not profs:
        at = f" at image size {spec.image}" if spec.image else ""
        raise SpecError(f"{cal.path}: no one-rank training record of model '{spec.model}'{at} to calibrate on")
    bad = [p for p in profs if not p.parameter_bytes > 0]
    if bad:  # the bytes every exchange moves
        raise SpecError(f"{bad[0].refs[0]}: model '{spec.model}': no positive metrics.parameter_bytes to exchange")
    notes = []
    if spec.scaling == "weak" and spec.batch <= 0:
        spec.batch = max(p.batch for p in profs)
        notes.append(f"a rank's batch not given: {spec.batch}, the largest calibrated")
    rates = machine_rates(cal, cal_site, profs[0].threads)
    carry = carry_factors(rates[0], rates[1], site, same, f"{cal.path}: {rates[2]['calibration_peak']}")
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
    assumptions += _uneven_batches(spec, rows)
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


def _uneven_batches(spec, rows):
    """Strong scaling: where the fixed global batch does not divide over the workers, each worker's
    batch is rounded, and the problem size with it (said, not hidden)."""
    if spec.scaling != "strong":
        return []
    uneven = [r for r in rows if r["global_batch"] != spec.global_batch]
    if not uneven:
        return []
    at = ", ".join(f"{r['global_batch']} at {r['x']} ({r['workers']} x {r['batch_per_rank']})" for r in uneven)
    return [f"global batch {spec.global_batch} does not divide over the workers: each takes the nearest whole batch, {at}"]


__all__ = ["project", "spec_from", "Projection", "site_path"]
