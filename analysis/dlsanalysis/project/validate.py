"""The projection against what the same campaign measured (plan projection_check): calibrate on
its one-rank records and its 2-rank allreduce sweep, project the 2-rank ssgd and local SGD step,
and set it beside the measured step of the same configuration."""

import pandas as pd

from .calibration import load_calibration
from .run import project, spec_from

CASES = (("ssgd", {}), ("localsgd", {"period": 4}))


def _measured(frame, scheme, ranks, batch):
    t = frame[(frame["kind"] == "train") & (frame["status"] == "ok")]
    t = t[(t["metrics.ranks"] == ranks) & (t["params.scheme"] == scheme) & (t["params.batch_per_rank"] == batch)]
    return t


def check(campaign, root, model="cifar10_quick", batch=32, ranks=2):
    """One row per scheme: measured and projected step (s) and images/s, the relative error."""
    cal = load_calibration(campaign)
    rows = []
    for scheme, extra in CASES:
        m = _measured(cal.frame, scheme, ranks, batch)
        if m.empty:
            raise ValueError(f"{campaign}: no {ranks}-rank {scheme} record at batch {batch} to check against")
        spec = spec_from(dict(model=model, scales=[1, ranks], unit="ranks", batch=batch, scheme=scheme, **extra), "check")
        p = project(spec, campaign, cal.site or "localhost", root)
        row = next(r for r in p.rows if r["ranks"] == ranks)
        measured = float(m["metrics.step_time_s"].mean())
        rows.append(
            dict(
                scheme=scheme,
                ranks=ranks,
                batch=batch,
                measured_step_s=measured,
                projected_step_s=row["step_s"],
                error=row["step_s"] / measured - 1,
                measured_sync_s=float(m["metrics.phase_s.sync"].mean()),
                projected_comm_exposed_s=row["comm_exposed_s"],
                runs=len(m),
                how=row["comm_how"],
            )
        )
    return pd.DataFrame(rows)
