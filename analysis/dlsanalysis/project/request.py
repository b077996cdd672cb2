"""A projection request (a projection file's entry, or the command line's options) read into a
Spec, every value checked: a wrong type, range or name is a SpecError naming where it came from
and the key."""

import math

from .model import EFFICIENCY_OVER, UNITS, Spec, SpecError
from .schemes import SCHEMES, Scheme
from .sync_floor import floor_from


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
    if len(set(scales)) != len(scales):
        raise SpecError(f"{where}: scales {raw}: a scale is given twice")
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
    scales = _scales(d, where)
    base = _whole(d, "base", 0, 0, where)
    if base and base not in scales:
        raise SpecError(f"{where}: base {base} is not one of the scales {scales}")
    red = _whole(d, "reduction_cores", 0, 0, where)
    if red and not str(d.get("reduction_cores_source", "")).strip():
        raise SpecError(f"{where}: reduction_cores needs reduction_cores_source (where the count comes from)")
    return Spec(
        model=str(d["model"]),
        scales=scales,
        unit=_choice(d, "unit", "nodes", UNITS, where),
        scaling=_choice(d, "scaling", "weak", ("weak", "strong"), where),
        batch=_whole(d, "batch", 0, 0, where),
        global_batch=_whole(d, "global_batch", 0, 0, where),
        base=base,
        scheme=_scheme(d, where),
        images_per_epoch=_whole(d, "images_per_epoch", 0, 0, where),
        sample_bytes=_real(d, "sample_bytes", 0, where, 0),
        input=_choice(d, "input", "storage", ("storage", "cached"), where),
        backend=str(d.get("backend", "")),
        image=_whole(d, "image", 0, 0, where),
        image_w=_whole(d, "image_w", 0, 0, where),
        channels=_whole(d, "channels", 0, 0, where),
        width=_real(d, "width", 1.0, where, 1e-3, 64),
        epochs=_epochs(d, where),
        epochs_source=str(d.get("epochs_source", "")),
        efficiency_over=_choice(d, "efficiency_over", "workers", EFFICIENCY_OVER, where),
        sync_floor=floor_from(d, where, SpecError),
        reduction_cores=red,
        reduction_source=str(d.get("reduction_cores_source", "")),
    )


def _scheme(d, where):
    momentum = d.get("momentum_average", False)
    if not isinstance(momentum, bool):
        raise SpecError(f"{where}: momentum_average must be true or false, got {momentum!r}")
    sch = Scheme(
        name=_choice(d, "scheme", "ssgd", SCHEMES, where),
        algo=str(d.get("algo", "auto")),
        bucket_mb=_real(d, "bucket_mb", 25, where, 1e-3, 1e6),  # 1 KB .. 1 TB: a bucket count that ends
        period=_whole(d, "period", 0, 0, where),
        exchange_factor=2.0 if momentum else 1.0,
        tau=_whole(d, "tau", 1, 1, where),
        servers=_whole(d, "servers", 1, 1, where),
    )
    if "overlap" in d:
        sch.overlap, sch.overlap_source = _real(d, "overlap", 0, where, 0, 1), f"{where}: overlap"
    return sch


def _choice(d, key, default, allowed, where):
    v = d.get(key, default)
    if v not in allowed:
        raise SpecError(f"{where}: {key} {v!r}: expected one of {', '.join(allowed)}")
    return v


def _epochs(d, where):
    """{scale: epochs to the target}: whole scales, positive finite epochs."""
    raw = d.get("epochs") or {}
    out = {}
    for k, v in raw.items() if isinstance(raw, dict) else [(None, None)]:
        scale = _whole_or_none(k, 1)
        x = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else math.nan
        if scale is None or not (math.isfinite(x) and x > 0):
            raise SpecError(f"{where}: epochs must map scales to epochs to the target (positive numbers), got {raw!r}")
        out[scale] = x
    return out
