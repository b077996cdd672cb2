"""Loading records (JSON Lines, schema dlscale.record/1) into one tidy frame: a row per
record, nested keys flattened with dots (metrics.images_per_s, metrics.phase_s.sync,
params.model), and, for a campaign folder, the harness point's experiment and axis values from
its manifest (columns experiment and axis.<name>). Malformed input raises RecordError naming
the file and line."""
import json
import os

import pandas as pd

SCHEMA = "dlscale.record/1"
REQUIRED = ("schema", "kind", "benchmark", "params", "metrics", "status")


class RecordError(ValueError):
    """A record file that cannot be read as dlscale records; the message names file and line."""


def flatten(prefix, obj, out):
    for key, value in obj.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            flatten(name, value, out)
        else:
            out[name] = value


def load_records(path):
    """A frame with one row per record of a JSON Lines file."""
    rows = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                raise RecordError(f"{path}:{no}: not JSON ({e.msg})") from None
            if not isinstance(rec, dict):
                raise RecordError(f"{path}:{no}: a record must be a JSON object")
            missing = [k for k in REQUIRED if k not in rec]
            if missing:
                raise RecordError(f"{path}:{no}: not a dlscale record: missing {', '.join(missing)}")
            if rec["schema"] != SCHEMA:
                raise RecordError(f"{path}:{no}: schema '{rec['schema']}', expected '{SCHEMA}' (mixed schemas)")
            row = {"file": path, "line": no}
            for key in ("kind", "benchmark", "point_id", "status", "error", "harness_point"):
                row[key] = rec.get(key)
            flatten("params", rec["params"], row)
            flatten("metrics", rec["metrics"], row)
            rows.append(row)
    return pd.DataFrame(rows)


def ok_train(df):
    """The training records that completed (status ok); an empty frame stays empty."""
    return df[(df["kind"] == "train") & (df["status"] == "ok")].copy() if not df.empty else df


def load_campaign(folder):
    """The records of a campaign folder, with each harness point's experiment and axes."""
    records = os.path.join(folder, "records.jsonl")
    if not os.path.exists(records):
        raise RecordError(f"{folder}: no records.jsonl (not a campaign folder?)")
    df = load_records(records)
    manifest = os.path.join(folder, "manifest.json")
    if os.path.exists(manifest) and not df.empty:
        try:
            with open(manifest) as f:
                points = json.load(f)["points"]
        except (json.JSONDecodeError, KeyError) as e:
            raise RecordError(f"{manifest}: not a campaign manifest ({e})") from None
        info = {p["id"]: p for p in points}
        df["experiment"] = [info.get(h, {}).get("experiment") for h in df["harness_point"]]
        axes = sorted({a for p in points for a in p.get("assignment", {})})
        for a in axes:
            df[f"axis.{a}"] = [info.get(h, {}).get("assignment", {}).get(a) for h in df["harness_point"]]
        df["repeat"] = [info.get(h, {}).get("repeat", 0) for h in df["harness_point"]]
    return df
