"""Loading records (JSON Lines, schema dlscale.record/1) into one tidy frame: a row per
record, nested keys flattened with dots (metrics.images_per_s, metrics.phase_s.sync,
params.model, check.status), and, for a campaign folder, the harness point's experiment and
axis values from its manifest (columns experiment and axis.<name>).

The file policy is the C++ one (measure/jsonl.hpp, harness/run/campaign.hpp):
- a line that is not a JSON object is torn or unreadable: it is skipped and named
  ("FILE:LINE: torn or unreadable line (N bytes) skipped") on stderr;
- in a campaign's records.jsonl a point's records count only when one merge of it is whole
  (every line with its harness_merge token is there); a merge cut short is ignored and named;
- a JSON object that is not a dlscale record (missing keys, another schema) is an error:
  RecordError naming the file and line.
The warnings are also kept in the frame's attrs["warnings"]."""

import collections
import json
import math
import os
import sys

import pandas as pd

SCHEMA = "dlscale.record/1"
REQUIRED = ("schema", "kind", "benchmark", "params", "metrics", "status")


# metrics the analysis computes with: a number (or null, what the C++ writer makes of a NaN) where
# present; phase_s a mapping of them
NUMERIC_METRICS = (
    "images_per_s",
    "step_time_s",
    "time_s",
    "time_s_min",
    "gflop_per_s",
    "pct_of_peak",
    "busbw_bytes_per_s",
    "algbw_bytes_per_s",
    "busbw_factor",
    "bytes",
    "ranks",
    "threads",
    "flop",
    "forward_macs",
    "epoch_time_s",
    "peak_rss_bytes",
    "batch_per_rank",
    "epochs_to_target",
    "time_to_target_s",
    "bytes_per_s",
    "parameter_bytes",
    "parameters",
    "overlap_fraction",
)
# the times among them: not negative
TIMES = ("step_time_s", "time_s", "time_s_min", "epoch_time_s", "time_to_target_s")
# keys the analysis groups and labels by: a single value (a string, number, bool or null) where
# present, never a list or a mapping
SCALAR_KEYS = {
    "record": ("point_id", "harness_point", "error"),
    "params": (
        "model",
        "target",
        "threads",
        "width",
        "image",
        "image_w",
        "channels",
        "backend",
        "scheme",
        "ranks",
        "memory",
        "batch_per_rank",
    ),
    "metrics": ("op", "algo", "shape", "backend", "target_reached"),
}


def _short(v):
    """A value as a message shows it: its repr, cut to 60 characters."""
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


def _is_number(v):
    """A number the analysis can compute with (or null): finite, and an integer within what a
    double holds (1e400 reads as infinity, 10**400 as an int too large for one)."""
    if v is None:
        return True
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return abs(v) < 2**63 if isinstance(v, int) else math.isfinite(v)


def _nonnegative(v):
    return _is_number(v) and (v or 0) >= 0


def _check_record(path, no, rec):
    """Refuses, naming file, line and key, the values the analysis would trip over."""
    metrics = rec["metrics"]
    for key in NUMERIC_METRICS:
        if key in metrics and not _is_number(metrics[key]):
            raise RecordError(f"{path}:{no}: metrics.{key}: expected a finite number, got {_short(metrics[key])}")
    for key in TIMES:
        if (metrics.get(key) or 0) < 0:
            raise RecordError(f"{path}:{no}: metrics.{key}: a time cannot be negative, got {metrics[key]!r}")
    phases = metrics.get("phase_s")
    if phases is not None and not (isinstance(phases, dict) and all(map(_nonnegative, phases.values()))):
        raise RecordError(f"{path}:{no}: metrics.phase_s: expected seconds by phase, got {_short(phases)}")
    layers = metrics.get("layer_s")
    if layers is not None and not (
        isinstance(layers, dict)
        and all(
            isinstance(v, dict) and _nonnegative(v.get("forward_s")) and _nonnegative(v.get("backward_s"))
            for v in layers.values()
        )
    ):
        raise RecordError(f"{path}:{no}: metrics.layer_s: expected {{layer: {{type, forward_s, backward_s}}}}")
    for where, keys in SCALAR_KEYS.items():
        section = rec if where == "record" else rec[where]
        for key in keys:
            if isinstance(section.get(key), (list, dict)):
                name = key if where == "record" else f"{where}.{key}"
                raise RecordError(f"{path}:{no}: {name}: expected a single value, got {_short(section[key])}")
    for key in ("provenance", "check", "harness_host"):
        if key in rec and not isinstance(rec[key], dict):
            raise RecordError(f"{path}:{no}: {key}: expected a mapping, got {_short(rec[key])}")


class RecordError(ValueError):
    """A record file that cannot be read as dlscale records; the message names file and line."""


def flatten(prefix, obj, out):
    for key, value in obj.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            flatten(name, value, out)
        else:
            out[name] = value


def _warn(warnings, message):
    warnings.append(message)
    print(f"dlsanalysis: {message}", file=sys.stderr)


def _no_constant(name):
    raise ValueError(f"{name} is not JSON")  # NaN, Infinity: the C++ reader refuses them too


def _parse(line):
    """The JSON object of a line, or None when it is not one (as nlohmann's parser would say)."""
    try:
        obj = json.loads(line, parse_constant=_no_constant)
        json.dumps(obj, ensure_ascii=False).encode("utf-8")  # lone surrogates ("\ud800") are not text
    except (ValueError, UnicodeError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def _text(value):
    """A key's string, or its JSON text when it is something else (campaign.cpp's json_text)."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _count(value):
    """An integer, or -1 when it is not one (campaign.cpp's json_count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def read_jsonl(path, warnings):
    """(line number, object) of each JSON object line of a JSON Lines file; the rest is named in warnings."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as f:
        for no, raw in enumerate(f, 1):
            line = raw.rstrip(b"\n")
            if not line.strip(b" \t\r"):
                continue
            obj = _parse(line)
            if obj is None:
                _warn(warnings, f"{path}:{no}: torn or unreadable line ({len(line)} bytes) skipped")
                continue
            out.append((no, obj))
    return out


def _complete_merges(path, lines, warnings):
    """The lines of whole merges (the first whole one of each point), file order; see the module doc."""
    count, expected, point_of = collections.Counter(), {}, {}
    for _, rec in lines:
        m = rec.get("harness_merge")
        if isinstance(m, dict):
            t = _text(m["token"]) if "token" in m else ""
            count[t] += 1
            expected[t], point_of[t] = _count(m.get("lines")), _text(rec["harness_point"]) if "harness_point" in rec else ""
    taken, kept = {}, []
    for no, rec in lines:
        m = rec.get("harness_merge")
        if not isinstance(m, dict):  # written before merges were tagged
            kept.append((no, rec))
            continue
        t = _text(m["token"]) if "token" in m else ""
        pt = _text(rec["harness_point"]) if "harness_point" in rec else ""
        if count[t] != expected[t] or taken.setdefault(pt, t) != t:
            continue
        kept.append((no, rec))
    folder = os.path.dirname(path)
    said = set()
    for t, n in count.items():
        pt = point_of[t]
        if n != expected[t]:
            _warn(warnings, f"{folder}/records.jsonl: point {pt}: a merge cut short ({n} of {expected[t]} lines) is ignored")
        elif taken.get(pt) != t and pt not in said:
            said.add(pt)
            _warn(warnings, f"{folder}/records.jsonl: point {pt} was merged more than once; the first copy counts")
    return kept


def _row(path, no, rec):
    missing = [
        k for k in REQUIRED if not isinstance(rec.get(k), dict if k in ("params", "metrics") else str)
    ]  # absent or of another type
    if missing:
        raise RecordError(f"{path}:{no}: not a dlscale record: missing {', '.join(missing)}")
    if rec["schema"] != SCHEMA:
        raise RecordError(f"{path}:{no}: schema '{rec['schema']}', expected '{SCHEMA}' (mixed schemas)")
    _check_record(path, no, rec)
    row = {"file": path, "line": no}
    for key in ("kind", "benchmark", "point_id", "status", "error", "harness_point"):
        row[key] = rec.get(key)
    flatten("params", rec["params"], row)
    flatten("metrics", rec["metrics"], row)
    if isinstance(rec.get("check"), dict):
        flatten("check", rec["check"], row)
    if isinstance(rec.get("harness_host"), dict):  # the load beside its point (docs/harness_formats.md)
        flatten("harness_host", rec["harness_host"], row)
    return row


def _frame(path, lines, warnings):
    df = pd.DataFrame([_row(path, no, rec) for no, rec in lines])
    df.attrs["warnings"] = list(warnings)
    return df


def load_records(path):
    """A frame with one row per record of a JSON Lines file."""
    warnings = []
    return _frame(path, read_jsonl(path, warnings), warnings)


def ok_train(df):
    """The training records that completed (status ok); an empty frame stays empty."""
    return df[(df["kind"] == "train") & (df["status"] == "ok")].copy() if not df.empty else df


def load_attempts(folder, warnings=None):
    """The last attempt of every point (points.jsonl), as {point id: entry}, in first-attempt order."""
    last = {}
    for _, p in read_jsonl(os.path.join(folder, "points.jsonl"), [] if warnings is None else warnings):
        last[p.get("id")] = p
    return last


def read_manifest(folder):
    """A campaign folder's manifest.json as a mapping ({} where it has none)."""
    path = os.path.join(folder, "manifest.json")
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            manifest = json.load(f)
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a campaign manifest ({e})") from None
    if not isinstance(manifest, dict):
        raise RecordError(f"{path}: not a campaign manifest (expected a JSON object)")
    for key in ("provenance", "measured_node_peak", "measured_node_memory_bandwidth", "site_setup"):
        if key in manifest and not isinstance(manifest[key], dict):
            raise RecordError(f"{path}: not a campaign manifest ({key}: expected a mapping, got {_short(manifest[key])})")
    points = manifest.get("points")
    for i, p in enumerate(points if isinstance(points, list) else []):
        a = p.get("assignment", {}) if isinstance(p, dict) else None
        if not (isinstance(p, dict) and isinstance(p.get("id"), str) and isinstance(a, dict)) or any(
            isinstance(v, (list, dict)) for v in a.values()
        ):
            raise RecordError(
                f"{path}: not a campaign manifest (points[{i}]: expected {{id: a string, assignment: {{axis: value}}, ...}})"
            )
    return manifest


def read_named_yaml(path, named_by):
    """The YAML mapping at `path`, which `named_by` (a manifest's key) names: a file that does not
    parse or is not a mapping is refused naming both."""
    import yaml

    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise RecordError(f"{path} (named by {named_by}): cannot be read as YAML ({e})") from None
    if not isinstance(doc, dict):
        raise RecordError(f"{path} (named by {named_by}): expected a mapping of keys")
    return doc


def manifest_file(manifest, key, folder):
    """The path the manifest's `key` gives (plan_file, site_file), or None where it gives none or
    the file is gone (a campaign copied from another machine)."""
    path = manifest.get(key)
    if path is None:
        return None
    if not isinstance(path, str):
        raise RecordError(f"{os.path.join(folder, 'manifest.json')}: {key}: expected a path")
    return path if os.path.exists(path) else None


def load_campaign(folder):
    """The records of a campaign folder (whole merges only), with each harness point's experiment and axes."""
    records = os.path.join(folder, "records.jsonl")
    if not os.path.exists(records):
        raise RecordError(f"{folder}: no records.jsonl (not a campaign folder?)")
    warnings = []
    df = _frame(records, _complete_merges(records, read_jsonl(records, warnings), warnings), warnings)
    df.attrs["folder"] = folder  # derived metrics read its manifest and site
    manifest = os.path.join(folder, "manifest.json")
    if os.path.exists(manifest) and not df.empty:
        points = read_manifest(folder).get("points")
        if not isinstance(points, list) or not all(isinstance(p, dict) and "id" in p for p in points):
            raise RecordError(f"{manifest}: not a campaign manifest (points: expected a list of points, each with its id)")
        info = {p["id"]: p for p in points}
        df["experiment"] = [info.get(h, {}).get("experiment") for h in df["harness_point"]]
        axes = sorted({a for p in points for a in p.get("assignment", {})})
        for a in axes:
            df[f"axis.{a}"] = [info.get(h, {}).get("assignment", {}).get(a) for h in df["harness_point"]]
        df["repeat"] = [info.get(h, {}).get("repeat", 0) for h in df["harness_point"]]
    return df
