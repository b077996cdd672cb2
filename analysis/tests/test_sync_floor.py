"""The projection's sync floor (dlsanalysis/project/sync_floor.py): a time every exchange across
nodes takes at least, given in seconds or fitted to a published crossover, always named."""

import os
import subprocess
import sys

import pytest

from dlsanalysis.project import comm, schemes
from dlsanalysis.project.model import SpecError
from dlsanalysis.project.run import project, spec_from
from dlsanalysis.project.site import Level
from dlsanalysis.project.sync_floor import apply

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CHECK = os.path.join(HERE, "data", "projection_check")
REQ = {"model": "cifar10_quick", "scheme": "localsgd", "period": 4, "scales": [1, 2, 8], "unit": "nodes", "batch": 16}
SRC = "a test's number"


def test_the_floor_is_spread_over_the_period_and_charged_only_across_nodes():
    ex = {"comm_s": 0.01, "exposed_s": 0.01, "period_steps": 4}  # an exchange of 0.04 s every 4 steps
    low = apply(0.1, ex, nodes=2)
    assert low["exposed_s"] == pytest.approx(0.1 / 4) and low["comm_s"] == pytest.approx(0.1 / 4)
    assert low["sync_floor_extra_s"] == pytest.approx((0.1 - 0.04) / 4)
    assert apply(0.02, ex, nodes=2)["exposed_s"] == 0.01  # the exchange is longer than the floor
    assert apply(0.1, ex, nodes=1)["exposed_s"] == 0.01  # inside a node
    ssgd = apply(0.1, {"comm_s": 0.03, "exposed_s": 0.01, "period_steps": 1}, nodes=4)
    assert ssgd["exposed_s"] == pytest.approx(0.01 + 0.07)  # every step, on top of what overlap left


def test_every_scheme_says_its_period():
    fab = comm.Fabric([Level("net", "x", 0, 1e-6, 1e9)], 1, 0.0)
    for sch, p, period in [
        (schemes.Scheme("ssgd", algo="ring"), 8, 1),
        (schemes.Scheme("localsgd", algo="ring", period=0), 8, 50),
        (schemes.Scheme("localsgd", algo="ring", period=0), 1, 50),
        (schemes.Scheme("easgd", tau=4), 8, 4),
        (schemes.Scheme("ps-sync"), 8, 1),
    ]:
        assert schemes.exchange(sch, fab, None, 1e6, p, 1.0, 50)["period_steps"] == period, sch.name


def test_a_floor_fitted_at_a_scale_makes_its_communication_equal_its_compute_there():
    p = project(spec_from({**REQ, "sync_floor_at": 8, "sync_floor_source": SRC}, "t"), CHECK, "stampede2_knl", ROOT)
    at = next(r for r in p.rows if r["x"] == 8)
    compute = at["forward_s"] + at["backward_s"] + at["update_s"] + at["input_s"]
    assert at["comm_exposed_s"] == pytest.approx(compute)
    assert p.sync_floor_s == pytest.approx(4 * compute)
    one = next(r for r in p.rows if r["x"] == 1)  # one node: not charged
    assert one["sync_floor_extra_s"] == 0
    bare = project(spec_from(REQ, "t"), CHECK, "stampede2_knl", ROOT)
    assert one["step_s"] == next(r for r in bare.rows if r["x"] == 1)["step_s"]
    assert p.rows[-1]["efficiency"] < bare.rows[-1]["efficiency"]
    named = [i for i in p.inputs if i["name"] == "sync_floor_s"]
    assert named and SRC in named[0]["source"] and "fitted" in named[0]["source"]
    assert any(SRC in a for a in p.assumptions)


def test_a_given_floor_is_used_as_given():
    p = project(spec_from({**REQ, "sync_floor_s": 2.0, "sync_floor_source": SRC}, "t"), CHECK, "stampede2_knl", ROOT)
    top = p.rows[-1]
    assert p.sync_floor_s == 2.0 and top["comm_exposed_s"] == pytest.approx(2.0 / 4)


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"sync_floor_at": 8}, "needs sync_floor_source"),
        ({"sync_floor_s": 1.0, "sync_floor_source": " "}, "needs sync_floor_source"),
        ({"sync_floor_source": SRC}, "sync_floor_source without"),
        ({"sync_floor_s": 1.0, "sync_floor_at": 8, "sync_floor_source": SRC}, "not both"),
        ({"sync_floor_s": -1, "sync_floor_source": SRC}, "sync_floor_s must be finite seconds > 0, got -1"),
        ({"sync_floor_s": "x", "sync_floor_source": SRC}, "sync_floor_s must be finite seconds > 0"),
        ({"sync_floor_s": True, "sync_floor_source": SRC}, "sync_floor_s must be finite seconds > 0, got True"),
        ({"sync_floor_s": float("inf"), "sync_floor_source": SRC}, "sync_floor_s must be finite seconds > 0, got inf"),
        ({"sync_floor_s": 1.0, "sync_floor_source": 2019}, "sync_floor_source must be text, got 2019"),
        ({"sync_floor_at": 8, "sync_floor_source": None}, "sync_floor_at needs sync_floor_source"),
        ({"sync_floor_at": 2.5, "sync_floor_source": SRC}, "sync_floor_at must be a positive integer scale, got 2.5"),
        ({"sync_floor_at": True, "sync_floor_source": SRC}, "sync_floor_at must be a positive integer"),
    ],
)
def test_bad_floors_name_the_key(extra, message):
    with pytest.raises(SpecError, match=message):
        spec_from({**REQ, **extra}, "here")


def test_ssgd_and_easgd_floors_are_fitted_per_step_and_per_tau():
    """ssgd exchanges every step (its buckets as one), easgd every tau steps: the fit's equality
    holds on the exposed time of the step at the fitted scale."""
    for extra in ({"scheme": "ssgd", "overlap": 0.0}, {"scheme": "easgd", "tau": 4, "servers": 1}):
        req = {**REQ, **extra, "sync_floor_at": 8, "sync_floor_source": SRC}
        req.pop("period")
        p = project(spec_from(req, "t"), CHECK, "stampede2_knl", ROOT)
        at = next(r for r in p.rows if r["x"] == 8)
        compute = at["forward_s"] + at["backward_s"] + at["update_s"] + at["input_s"]
        assert at["comm_exposed_s"] == pytest.approx(compute), extra
        assert p.sync_floor_s == pytest.approx(at["period_steps"] * compute), extra
        assert at["period_steps"] == (4 if extra["scheme"] == "easgd" else 1)


def test_a_floor_cannot_be_fitted_where_the_exchange_is_already_longer():
    """At a scale where the model's exchange is longer than the compute no floor makes them equal:
    refused, not a floor that silently adds nothing."""
    req = {**REQ, "scheme": "ssgd", "overlap": 0.0, "sync_floor_s": 50.0, "sync_floor_source": SRC}
    req.pop("period")
    slow = project(spec_from(req, "t"), CHECK, "stampede2_knl", ROOT)  # a 50 s exchange a step at 2 and 8 nodes
    assert slow.rows[-1]["comm_exposed_s"] == pytest.approx(50.0)
    from dlsanalysis.project.sync_floor import fitted_seconds

    with pytest.raises(SpecError, match="sync_floor_at 8: the model's exchange there .* is already longer"):
        fitted_seconds(slow.rows[-1], SpecError)


def test_a_floor_fitted_inside_one_node_is_refused():
    spec = spec_from({**REQ, "sync_floor_at": 1, "sync_floor_source": SRC}, "t")
    with pytest.raises(SpecError, match="sync_floor_at 1: one node"):
        project(spec, CHECK, "stampede2_knl", ROOT)


def test_the_command_line_takes_a_floor_and_refuses_one_without_its_source(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "analysis"))
    base = [sys.executable, "-m", "dlsanalysis", "project", "--site", "stampede2_knl", "--model", "cifar10_quick"]
    base += ["--scheme", "localsgd", "--period", "4", "--nodes", "1,8", "--campaign", CHECK, "--out", str(tmp_path)]
    r = subprocess.run([*base, "--sync-floor-at", "8"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and "needs sync_floor_source" in r.stderr, r.stderr
    r = subprocess.run([*base, "--sync-floor-at", "8", "--sync-floor-source", SRC], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "sync_floor_extra_s" in r.stdout and SRC in r.stdout
