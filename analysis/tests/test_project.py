"""The projection's arithmetic against closed forms (Hockney's alpha-beta costs of each
allreduce, the bucket overlap, the batch interpolation, the carrying over), and its error on a
checked-in campaign that measured what it projects (data/projection_check)."""

import copy
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from dlsanalysis.project import comm, compute, schemes
from dlsanalysis.project.calibration import Profile, fit_band
from dlsanalysis.project.cli import requests
from dlsanalysis.project.model import SpecError, reduction_bandwidth
from dlsanalysis.project.run import project, spec_from
from dlsanalysis.project.site import Level, SiteError, load_site

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
CHECK = os.path.join(HERE, "data", "projection_check")


def flat(alpha=1e-6, bw=1e9, gamma=0.0):
    return comm.Fabric([Level("net", "x", 0, alpha, bw)], 1, gamma)


@pytest.mark.parametrize("p", [2, 4, 16, 64])
def test_flat_network_costs_are_hockneys(p):
    n, a, bw, g = 4e6, 1e-6, 1e9, 1e-10
    fab = flat(a, bw, g)
    lg = math.log2(p)
    assert comm.ring(fab, n, p) == pytest.approx(2 * (p - 1) * (a + n / p / bw) + (p - 1) / p * n * g)
    assert comm.recdbl(fab, n, p) == pytest.approx(lg * (a + n / bw + n * g))
    assert comm.rabenseifner(fab, n, p) == pytest.approx(2 * lg * a + 2 * (p - 1) / p * n / bw + (p - 1) / p * n * g)
    assert comm.tree(fab, n, p) == pytest.approx(2 * lg * (a + n / bw) + lg * n * g)


def test_a_rank_count_not_a_power_of_two_folds_in_and_out():
    fab, n = flat(), 1e6
    assert comm.recdbl(fab, n, 6) == pytest.approx(comm.recdbl(fab, n, 4) + 2 * (1e-6 + n / 1e9))


def two_levels(taper=1.0):
    return [Level("node", "nvlink", 1, 1e-7, 50e9), Level("net", "ib", 0, 1e-6, 10e9, taper)]


def test_levels_by_distance_and_taper_on_concurrent_senders():
    fab = comm.Fabric(two_levels(0.5), 4, 0.0)
    assert fab.level_for(3).name == "node" and fab.level_for(4).name == "net"
    n = 1e6
    assert fab.step(1, n, True) == pytest.approx(1e-7 + n / 50e9)
    # 4 ranks of a node send across at once: the node's 10 GB/s, halved by the taper, shared by 4
    assert fab.step(4, n, True) == pytest.approx(1e-6 + n / (10e9 * 0.5 / 4))
    assert fab.step(4, n, False) == pytest.approx(1e-6 + n / 10e9)
    # a ring's step is its slowest edge: the one leaving the node, untapered (one flow)
    assert comm.ring(fab, n, 8) == pytest.approx(14 * (1e-6 + n / 8 / 10e9))


def test_every_algorithm_beyond_one_node_needs_a_level_between_nodes():
    """A site with a node level alone (localhost): the ring refused, as the others are (it took
    max() of no levels)."""
    fab = comm.Fabric([Level("node", "shared_memory", 1, 5e-7, 10e9)], 1, 0.0)
    assert comm.ring(fab, 8e6, 1) == 0
    for algo in ("ring", "recdbl", "rabenseifner", "tree"):
        with pytest.raises(ValueError, match="no level between nodes"):
            getattr(comm, algo)(fab, 8e6, 4)


def test_hierarchical_is_intra_ring_then_inter_ring_on_a_share():
    fab, n, r, nodes = comm.Fabric(two_levels(), 4, 0.0), 8e6, 4, 16
    intra = 2 * (r - 1) * (1e-7 + n / r / 50e9)
    inter = 2 * (nodes - 1) * (1e-6 + n / r / nodes / (10e9 / r))
    assert comm.hier(fab, n, r * nodes) == pytest.approx(intra + inter)


def test_mpi_is_the_cheapest_classic_algorithm():
    fab = flat()
    for n in (8, 1e4, 1e8):
        t, how = comm.allreduce_time(fab, "mpi", n, 16)
        assert t == min(comm.ring(fab, n, 16), comm.recdbl(fab, n, 16), comm.rabenseifner(fab, n, 16))
        assert how.startswith("mpi (as ")
    with pytest.raises(ValueError, match="expected one of"):
        comm.allreduce_time(fab, "bogus", 8, 4)


def test_auto_takes_shm_only_where_the_nodes_hold_alike():
    fab, n = comm.Fabric(two_levels(), 4, 0.0), 64e6
    t, how = comm.allreduce_time(fab, "auto", n, 16)  # 4 full nodes: hier is the cheapest here
    assert how == "shm" and t == pytest.approx(comm.hier(fab, n, 16))
    t, how = comm.allreduce_time(fab, "auto", n, 15)  # nodes of 4, 4, 4 and 3: the real shm refuses
    assert how != "shm"
    assert t == min(comm.FUNCS[a](fab, n, 15) for a in ("ring", "recdbl", "rabenseifner", "tree"))


def test_ssgd_hides_all_but_the_last_bucket_up_to_the_overlap_fraction():
    fab, n = flat(0.0, 1e9), 60 * 2**20
    s = schemes.Scheme("ssgd", algo="ring", bucket_mb=25, overlap=0.5)
    one = comm.ring(fab, 25 * 2**20, 4)
    last = comm.ring(fab, 10 * 2**20, 4)
    ex = schemes.exchange(s, fab, None, n, 4, backward_s=10.0, steps_per_epoch=0)
    assert ex["buckets"] == 3 and ex["comm_s"] == pytest.approx(2 * one + last)
    assert ex["exposed_s"] == pytest.approx(2 * one + last - 0.5 * 2 * one)
    short = schemes.exchange(s, fab, None, n, 4, backward_s=0.01, steps_per_epoch=0)
    assert short["exposed_s"] == pytest.approx(2 * one + last - 0.5 * 0.01)


def test_periodic_schemes_pay_per_period_and_per_server():
    fab, n = flat(0.0, 1e9), 1e8
    local = schemes.Scheme("localsgd", algo="ring", period=0, exchange_factor=2.0)
    ex = schemes.exchange(local, fab, None, n, 8, 1.0, steps_per_epoch=50)
    assert ex["exposed_s"] == pytest.approx(comm.ring(fab, 2 * n, 8) / 50)
    ps = schemes.Scheme("easgd", tau=4, servers=2)
    ex = schemes.exchange(ps, fab, None, n, 10, 1.0, 0)  # 8 workers to 2 server nodes: 8 n / 2 each
    assert ex["exposed_s"] == pytest.approx(max(2 * n / 1e9, 2 * 8 * n / (2 * 1e9)) / 4)
    assert ps.workers(10) == 8


def prof(batch, per_image, update=0.01):
    return Profile(
        "m",
        batch,
        1,
        "openblas",
        32,
        {"compute": per_image * batch, "memory": 0.0},
        {"compute": 0.0, "memory": 0.0},
        update,
        0.0,
        0.0,
    )


def test_batch_interpolates_per_image_time_in_log_batch_and_holds_outside():
    ps, carry = [prof(4, 0.4), prof(16, 0.2)], compute.Carry(1.0, 1.0, True)
    assert compute.rank_compute(ps, 8, carry)["forward"] == pytest.approx(8 * 0.3)
    low = compute.rank_compute(ps, 2, carry)
    assert low["forward"] == pytest.approx(2 * 0.4) and "below the smallest" in low["note"]
    assert compute.rank_compute(ps, 64, carry)["forward"] == pytest.approx(64 * 0.2)


def test_the_update_is_the_median_over_the_measured_batches_at_any_batch():
    """The update does not depend on the batch: one noisy record (the calibration's batch-128
    cifar10_full update was 8.7 ms against 0.04 to 0.07 at the others) does not set it for the
    batches near it."""
    ps, carry = [prof(4, 0.4, 0.02), prof(16, 0.2, 0.01), prof(128, 0.2, 0.9)], compute.Carry(1.0, 3.0, False)
    for batch in (2, 16, 100, 256):
        assert compute.rank_compute(ps, batch, carry)["update"] == pytest.approx(0.02 * 3.0)


def test_efficiency_over_ranks_counts_the_servers_in_the_ideal_speedup():
    """Seed 001 gives the parallel efficiency of P processes, its parameter server among them: with
    efficiency_over ranks the ideal speed-up is ranks(P) / ranks(base), not workers(P) / workers(base);
    the throughputs are the same."""
    req = {"model": "cifar10_quick", "scheme": "easgd", "tau": 4, "scales": [2, 8], "unit": "ranks", "batch": 16}
    by_workers = project(spec_from(req, "t"), CHECK, "stampede2_knl", ROOT).rows
    by_ranks = project(spec_from({**req, "efficiency_over": "ranks"}, "t"), CHECK, "stampede2_knl", ROOT)
    assert [r["images_per_s"] for r in by_ranks.rows] == [r["images_per_s"] for r in by_workers]
    w, r = by_workers[-1], by_ranks.rows[-1]
    assert (w["workers"], r["ranks"]) == (7, 8)
    assert r["efficiency"] == pytest.approx(w["efficiency"] * (7 / 1) / (8 / 2))
    assert any("efficiency over ranks" in a for a in by_ranks.assumptions)
    with pytest.raises(SpecError, match="efficiency_over 'servers': expected one of workers, ranks"):
        project(spec_from({**req, "efficiency_over": "servers"}, "t"), CHECK, "stampede2_knl", ROOT)
    # localhost is one node: its levels cannot carry a parameter server's round to 4 nodes
    with pytest.raises(ValueError, match="no level between nodes"):
        project(spec_from(req, "t"), CHECK, "localhost", ROOT)


def test_carrying_over_divides_by_the_site_rates():
    class S:
        name, rank_peak, rank_memory_bandwidth = "s", 4e12, 4e11

    c = compute.carry_factors(1e12, 2e11, S, same_site=False)
    assert (c.compute, c.memory) == (0.25, 0.5)
    same = compute.carry_factors(1e12, 2e11, S, same_site=True)
    assert (same.compute, same.memory) == (1.0, 1.0)


def test_reduction_cores_sum_at_their_share_of_the_ranks_bandwidth():
    """An allreduce's local sums on the cores a library gives them (MLSL's endpoint servers): those
    cores' share of the rank's memory bandwidth, at most all of it; the exchange's gamma term grows
    by the inverse, and every output names where the count comes from."""

    class S:
        cores, ranks_per_node, rank_memory_bandwidth = 68, 1, 450e9

    def spec(cores):
        extra = {"reduction_cores": cores, "reduction_cores_source": "a test"} if cores else {}
        return spec_from({"model": "m", "scales": [1], **extra}, "t")

    assert reduction_bandwidth(spec(0), S) == 450e9
    assert reduction_bandwidth(spec(4), S) == pytest.approx(450e9 * 4 / 68)
    S.ranks_per_node, S.rank_memory_bandwidth = 4, 450e9 / 4  # 17 cores a rank
    assert reduction_bandwidth(spec(4), S) == pytest.approx(450e9 / 4 * 4 / 17)
    assert reduction_bandwidth(spec(40), S) == 450e9 / 4  # not above the rank's own
    req = {"model": "cifar10_quick", "scales": [1, 8], "unit": "nodes", "batch": 16, "algo": "ring"}
    whole = project(spec_from(req, "t"), CHECK, "stampede2_knl", ROOT)
    few = project(spec_from({**req, "reduction_cores": 4, "reduction_cores_source": "MLSL"}, "t"), CHECK, "stampede2_knl", ROOT)
    ins = {i["name"]: i for i in few.inputs}
    # a ring of 8 sums (p-1)/p of the gradients' bytes, 3 bytes of memory traffic each
    summed = 7 / 8 * ins["parameter_bytes"]["value"] * 3
    extra = summed * (68 / (4 * 450e9) - 1 / 450e9)
    assert few.rows[-1]["comm_s"] - whole.rows[-1]["comm_s"] == pytest.approx(extra)
    bw = ins["reduction_bandwidth"]
    assert bw["value"] == pytest.approx(450e9 * 4 / 68) and "MLSL" in bw["source"]
    assert any("4 core(s)" in a for a in few.assumptions)
    with pytest.raises(SpecError, match="reduction_cores needs reduction_cores_source"):
        spec_from({**req, "reduction_cores": 4}, "t")
    with pytest.raises(SpecError, match="reduction_cores must be a whole number"):
        spec_from({**req, "reduction_cores": -1, "reduction_cores_source": "x"}, "t")


def test_band_fit_recovers_alpha_and_beta_and_keeps_alpha_non_negative():
    n = [1e3, 4e3, 16e3, 64e3]
    alpha, beta, err = fit_band(n, [2e-6 + x * 1e-10 for x in n])
    assert alpha == pytest.approx(2e-6) and beta == pytest.approx(1e-10) and err < 1e-9
    alpha, beta, _ = fit_band(n, [x * 1e-10 - 5e-8 for x in n])
    assert alpha == 0.0 and beta > 0


def test_bands_fit_host_memory_alone():
    """A sweep on the node's shared memory (shm reads in place) is not what the model's ranks do."""
    import pandas as pd

    from dlsanalysis.project.calibration import alpha_beta_bands

    rows = []
    for memory, per_byte in (("host", 1e-10), ("shared", 1e-11), (None, 1e-10)):
        for n in (1e3, 4e3, 16e3, 64e3):
            rows.append(
                {
                    "kind": "collective",
                    "status": "ok",
                    "benchmark": "allreduce",
                    "params.memory": memory,
                    "metrics.algo": "shm",
                    "metrics.ranks": 2,
                    "metrics.bytes": n,
                    "metrics.time_s": 2e-6 + n * per_byte,
                    "file": "f",
                    "line": 1,
                }
            )
    cal = type("Cal", (), {"frame": pd.DataFrame(rows), "path": "here"})()
    bands = alpha_beta_bands(cal)
    assert len(bands) >= 1
    assert all(b == pytest.approx(1e-10) for b in bands["beta_s_per_byte"]), bands


def test_bad_requests_name_what_is_wrong():
    with pytest.raises(SpecError, match="unknown key"):
        spec_from({"model": "m", "scales": [1], "bogus": 1}, "here")
    with pytest.raises(SpecError, match="positive"):
        spec_from({"model": "m", "scales": [0, 2]}, "here")
    with pytest.raises(SpecError, match="here: scales must be positive whole numbers, got 1,x"):
        spec_from({"model": "m", "scales": "1,x"}, "here")
    strong = spec_from({"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "scaling": "strong"}, "here")
    with pytest.raises(SpecError, match="global_batch"):
        project(strong, CHECK, "localhost", ROOT)


@pytest.mark.parametrize(
    "key, value, says",
    [
        ("scales", [1.5], "scales must be positive whole numbers"),  # not truncated to 1
        ("scales", [True], "scales must be positive whole numbers"),
        ("bucket_mb", 0, "bucket_mb must be a number in [0.001, 1e+06]"),  # 10^8 buckets: a hang
        ("bucket_mb", float("nan"), "bucket_mb must be a number"),
        ("tau", 0, "tau must be a whole number >= 1"),  # a division by zero
        ("servers", -1, "servers must be a whole number >= 1"),
        ("overlap", 2, "overlap must be a number in [0, 1]"),  # a negative exposed time
        ("batch", -1, "batch must be a whole number >= 0"),
        ("period", 2.5, "period must be a whole number >= 0"),
        ("images_per_epoch", -100, "images_per_epoch must be a whole number >= 0"),
        ("base", 3, "base 3 is not one of the scales"),
    ],
)
def test_out_of_range_requests_are_refused_not_clamped(key, value, says):
    with pytest.raises(SpecError, match=re.escape(f"here: {says}")):
        spec_from({"model": "m", "scales": [1, 2], key: value}, "here")


def test_a_fixed_global_batch_smaller_than_the_workers_is_refused():
    strong = spec_from(
        {"model": "cifar10_quick", "scales": [1, 4], "unit": "ranks", "scaling": "strong", "global_batch": 3}, "here"
    )
    with pytest.raises(SpecError, match="global_batch 3 cannot be split over 4 workers"):
        project(strong, CHECK, "localhost", ROOT)


def test_a_fixed_global_batch_that_does_not_divide_is_said_where_it_is_rounded():
    # 9 images over 1 and 2 workers: 9, then 2 x round(4.5) = 2 x 4 = 8
    strong = spec_from(
        {"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "scaling": "strong", "global_batch": 9}, "here"
    )
    p = project(strong, CHECK, "localhost", ROOT)
    assert [r["global_batch"] for r in p.rows] == [9, 8]
    said = [a for a in p.assumptions if "does not divide" in a]
    assert said == ["global batch 9 does not divide over the workers: each takes the nearest whole batch, 8 at 2 (2 x 4)"]
    even = spec_from(
        {"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "scaling": "strong", "global_batch": 10}, "here"
    )
    assert not [a for a in project(even, CHECK, "localhost", ROOT).assumptions if "does not divide" in a]


def test_projection_names_are_plain_folder_names_given_once():
    entry = {"site": "summit", "model": "m", "scales": [1]}
    for bad in ("../../escape", "/tmp/abs", "a b", "..", "$(touch x)", ""):
        with pytest.raises(SpecError, match="expected 1 to 64 letters"):
            requests({"projections": [{**entry, "name": bad}]}, "f.yaml")
    with pytest.raises(SpecError, match="name 'a' given twice"):
        requests({"projections": [{**entry, "name": "a"}, {**entry, "name": "a"}]}, "f.yaml")


def test_site_files_are_refused_with_the_file_and_key(tmp_path):
    text = (pathlib.Path(ROOT) / "site_configs" / "summit.yaml").read_text()
    cases = {
        "string.yaml": ("just a string\n", "not a site configuration"),
        "syntax.yaml": ("{unclosed: [1,2\n", "not YAML"),
        "flat0.yaml": (
            "name: flat\nnode: {peak_flops_sp: '1 TFLOP/s', memory_bandwidth: '100 GB/s'}\nnetwork: {bandwidth: '0 GB/s'}\n",
            "network.bandwidth: the projection needs a bandwidth above 0",
        ),
    }
    for name, (body, says) in cases.items():
        (tmp_path / name).write_text(body)
        with pytest.raises(SiteError, match=re.escape(says)):
            load_site(str(tmp_path / name), ROOT)
    # through `dlscale project`: the harness's own checks of the site, as `dlscale sites` makes them
    exe = os.environ.get("DLSCALE_TEST_BIN") or os.path.join(ROOT, "build", "dlscale")
    assert os.access(exe, os.X_OK), f"no dlscale executable at {exe} (DLSCALE_TEST_BIN)"
    (tmp_path / "unknown.yaml").write_text(text + "frobnicate: 1\n")
    (tmp_path / "rpn0.yaml").write_text(text.replace("ranks_per_node: 6", "ranks_per_node: 0"))
    for name, says in (("unknown.yaml", "unknown key 'frobnicate'"), ("rpn0.yaml", "ranks_per_node: 0 is out of range")):
        r = subprocess.run(
            [
                exe,
                "project",
                "--site",
                str(tmp_path / name),
                "--model",
                "cifar10_quick",
                "--nodes",
                "1,2",
                "--campaign",
                CHECK,
                "--out",
                str(tmp_path / "o"),
            ],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 2 and says in r.stderr and name in r.stderr, (name, r.returncode, r.stderr)
    assert not (tmp_path / "o").exists()


def cli(*args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "analysis"))
    return subprocess.run([sys.executable, "-m", "dlsanalysis", "project", *args], capture_output=True, text=True, env=env)


def test_command_line_errors_exit_2_with_the_option(tmp_path):
    r = cli("--site", "summit", "--model", "cifar10_quick", "--campaign", CHECK)
    assert r.returncode == 2 and "exactly one of --nodes" in r.stderr
    r = cli("--site", "nowhere", "--model", "cifar10_quick", "--nodes", "1,2", "--campaign", CHECK)
    assert r.returncode == 2 and "nowhere.yaml" in r.stderr
    r = cli("--site", "summit", "--model", "vgg16", "--nodes", "1,2", "--campaign", CHECK)
    assert r.returncode == 2 and "no one-rank training record of model 'vgg16'" in r.stderr
    r = cli("--site", "localhost", "--model", "cifar10_quick", "--scheme", "easgd", "--ranks", "2,8", "--campaign", CHECK)
    assert r.returncode == 2 and "network.levels have no level between nodes" in r.stderr, r.stderr
    r = cli("--site", "summit", "--model", "cifar10_quick", "--nodes", "1,2", "--efficiency-over", "servers")
    assert r.returncode == 2 and "--efficiency-over" in r.stderr, r.stderr
    r = cli("--site", "summit", "--model", "cifar10_quick", "--nodes", "1,16", "--campaign", CHECK, "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert {"projection.json", "projection.jsonl", "projection.csv", "projection.md", "projection.png", "alpha_beta.csv"} <= set(
        os.listdir(tmp_path)
    )


def test_checked_in_campaign_projects_its_own_two_rank_steps():
    """Calibrated on the campaign's one-rank records and allreduce sweep, the 2-rank ssgd and
    local SGD steps it measured are projected within 15 % (fixed data: this is the model's
    error on it, not a timing). What the model lacks here, two ranks sharing the node's memory
    and caches (the one-rank calibration had the other core idle), is most of the error."""
    from dlsanalysis.project.validate import check

    t = check(CHECK, ROOT)
    print("\n" + t.to_string(index=False))
    assert list(t["scheme"]) == ["ssgd", "localsgd"]
    assert (t["runs"] == 3).all()
    for _, r in t.iterrows():
        assert abs(r["error"]) <= 0.15, (r["scheme"], r["projected_step_s"], r["measured_step_s"])
        assert r["projected_comm_exposed_s"] > 0
    # local SGD averages every 4 steps: a quarter of ssgd's one bucket a step, less the overlap
    ss, ls = t.iloc[0], t.iloc[1]
    assert ls["projected_comm_exposed_s"] < ss["projected_comm_exposed_s"]


def test_projecting_leaves_the_callers_request_as_given():
    spec = spec_from({"model": "cifar10_quick", "scheme": "ssgd", "scales": [1, 2], "unit": "ranks"}, "test")
    before = copy.deepcopy(spec)
    p = project(spec, CHECK, "localhost", ROOT)
    assert spec == before and p.spec.batch > 0 and p.spec.sample_bytes > 0


def test_profiles_of_another_shape_or_width_are_kept_apart():
    """A run of the same network at another width multiplier, image width or channel count (seed
    004's AtomAI: ResNet-50 at 1/8 width on 1x120x85) is its own profile: a request for the
    network as published never calibrates on it, and one that names the variant gets it alone."""
    from dlsanalysis.project.calibration import load_calibration, profiles
    from dlsanalysis.project.run import pick_profiles

    cal = load_calibration(CHECK)
    one = cal.frame[(cal.frame["kind"] == "train") & (cal.frame["params.model"] == "cifar10_quick")]
    assert not one.empty
    variant = one.copy()
    variant["params.width"], variant["params.channels"], variant["params.image_w"] = 0.125, 1, 24
    variant["metrics.step_time_s"] = one["metrics.step_time_s"] * 100  # unmistakable
    cal.frame = cal.frame._append(variant, ignore_index=True)
    ps = profiles(cal, "cifar10_quick")
    full = pick_profiles(ps, "", 0)
    assert full and all(p.width == 1.0 and p.channels == 3 and p.image_w == p.image for p in full)
    image = full[0].image
    narrow = pick_profiles(ps, "", image, image_w=24, channels=1, width=0.125)
    assert narrow and all(p.width == 0.125 and p.image_w == 24 and p.channels == 1 for p in narrow)
    steps = {p.batch: p.step for p in full}
    assert sorted(steps) == sorted(p.batch for p in narrow)
    assert all(p.step == pytest.approx(100 * steps[p.batch]) for p in narrow)
    assert not pick_profiles(ps, "", image, width=0.5)  # a width never run: nothing to carry
    spec = spec_from({"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks"}, "test")
    assert project(spec, cal, "localhost", ROOT).rows[0]["step_s"] < 2 * max(steps.values())


@pytest.mark.parametrize(
    "extra, says",
    [
        ({"epochs": {16: 0}}, "epochs must map scales to epochs to the target"),
        ({"epochs": [1, 2]}, "epochs must map scales"),
        ({"image": [1]}, "image must be a whole number >= 0, got [1]"),
        ({"image": 224.7}, "image must be a whole number >= 0, got 224.7"),
        ({"width": "wide"}, "width must be a number in [0.001, 64]"),
        ({"input": "tape"}, "input 'tape': expected one of storage, cached"),
        ({"scaling": "sideways"}, "scaling 'sideways': expected one of weak, strong"),
        ({"momentum_average": "maybe"}, "momentum_average must be true or false"),
        ({"scales": [1, 1]}, "scales [1, 1]: a scale is given twice"),
        ({"scheme": "x"}, "scheme 'x': expected one of ssgd"),
    ],
)
def test_a_request_value_of_the_wrong_type_or_choice_is_refused_naming_the_key(extra, says):
    with pytest.raises(SpecError, match=re.escape(f"f.yaml: e: {says}")):
        spec_from({"model": "cifar10_quick", "scales": [1, 2], **extra}, "f.yaml: e")


def test_servers_that_leave_no_worker_and_sums_on_more_cores_than_a_rank_has_are_refused():
    req = {"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "batch": 32}
    with pytest.raises(ValueError, match="easgd with 2 server\\(s\\) at 2 ranks: no rank is left to train"):
        project(spec_from({**req, "scheme": "easgd", "servers": 2}, "t"), CHECK, "localhost", ROOT)
    with pytest.raises(SpecError, match="reduction_cores 5: more than the 2 cores a rank has"):
        project(spec_from({**req, "reduction_cores": 5, "reduction_cores_source": "t"}, "t"), CHECK, "localhost", ROOT)


def test_a_projection_file_writes_nothing_when_one_entry_fails_and_names_it(tmp_path, capsys):
    from dlsanalysis.__main__ import main

    spec = tmp_path / "s.yaml"
    spec.write_text(
        "projections:\n"
        "  - {name: a, site: localhost, model: cifar10_quick, unit: ranks, scales: [1, 2], batch: 32}\n"
        "  - {name: b, site: localhost, model: nosuch, unit: ranks, scales: [1, 2], batch: 32}\n"
    )
    out = tmp_path / "out"
    assert main(["project", "--spec", str(spec), "--campaign", CHECK, "--out", str(out)]) == 2
    assert f"{spec}: b: " in capsys.readouterr().err and not out.exists()
    assert main(["project", "--spec", str(spec), "--site", "summit", "--out", str(out)]) == 2
    assert "leave out --site" in capsys.readouterr().err


def test_a_calibration_without_the_weights_bytes_or_with_an_overlap_past_its_bounds(tmp_path):
    """parameter_bytes absent: refused naming the record (an IndexError in the buckets before);
    a measured mean overlap above 1 (noise) is taken as 1, and the source says so."""
    import json
    import shutil

    from dlsanalysis.project.calibration import load_calibration, overlap_fraction

    camp = shutil.copytree(CHECK, str(tmp_path / "c"))
    path = os.path.join(camp, "records.jsonl")
    recs = [json.loads(line) for line in pathlib.Path(path).read_text().splitlines()]
    for r in recs:
        r["metrics"].pop("parameter_bytes", None)
        if r["benchmark"] == "allreduce_overlap":
            r["metrics"]["overlap_fraction"] = 7.0
    with open(path, "w") as f:
        f.writelines(json.dumps(r) + "\n" for r in recs)
    req = {"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "batch": 32}
    with pytest.raises(SpecError, match=r"records.jsonl:\d+: model 'cifar10_quick': no positive metrics.parameter_bytes"):
        project(spec_from(req, "t"), camp, "localhost", ROOT)
    f, src = overlap_fraction(load_calibration(camp))
    assert f == 1.0 and src.endswith("mean 7, taken as 1")


def test_an_allreduce_time_of_zero_in_the_calibration_is_refused_naming_its_record(tmp_path):
    import json
    import shutil

    camp = shutil.copytree(CHECK, str(tmp_path / "c"))
    path = pathlib.Path(camp) / "records.jsonl"
    recs = [json.loads(line) for line in path.read_text().splitlines()]
    for r in recs:
        if r["kind"] == "collective" and r["benchmark"] == "allreduce":
            r["metrics"]["time_s"] = 0.0
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    req = {"model": "cifar10_quick", "scales": [1, 2], "unit": "ranks", "batch": 32}
    with pytest.raises(ValueError, match=r"records.jsonl:\d+: metrics.time_s 0.0 \(expected a time above 0\)"):
        project(spec_from(req, "t"), camp, "localhost", ROOT)


def test_a_calibration_without_its_peak_is_blamed_on_the_calibration_not_the_site(tmp_path):
    camp = shutil.copytree(CHECK, str(tmp_path / "cal"))
    manifest = json.loads((tmp_path / "cal" / "manifest.json").read_text())
    del manifest["measured_node_peak"]
    (tmp_path / "cal" / "manifest.json").write_text(json.dumps(manifest))
    r = cli("--site", "summit", "--model", "cifar10_quick", "--nodes", "1,2", "--campaign", camp, "--out", str(tmp_path / "o"))
    assert r.returncode == 2, r.stderr
    assert "the calibration's machine has no positive peak FLOP/s" in r.stderr and "measured_node_peak" in r.stderr, r.stderr
    assert "site summit" not in r.stderr and not (tmp_path / "o").exists()
