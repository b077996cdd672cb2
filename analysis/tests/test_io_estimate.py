"""Seed 003's I/O estimate from its own numbers and Piz Daint's stated filesystems."""

import os

import pytest

from dlsanalysis import io_estimate as io

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_reproduces_seed_003_bandwidth():
    # k = 1,024, b = 32, S = 0.14 MB, t = 0.3 s: "BW_min = 14.9 GB/s" (binary units, see the module)
    bw = io.required_read_bandwidth(1024, 32, 0.14 * 2**20, 0.3)
    assert round(bw / 2**30, 1) == 14.9


def test_piz_daint_lustre_is_enough_and_two_datawarp_nodes_are_short():
    storage = io.site_storage(os.path.join(ROOT, "site_configs", "piz_daint.yaml"))
    t = io.io_table(storage, [1024], 32, 0.14 * 2**20, 0.3).set_index("storage")
    # seed 003: 16 OSTs x 2.5 GB/s "should provide enough"; an additional DataWarp node beyond
    # the 2 (6.5 GB/s each) is needed "to satisfy the global read bandwidth requirement"
    assert t.loc["scratch", "verdict"] == "enough"
    assert t.loc["datawarp", "verdict"] == "short"
    three = [{**s, "read_bandwidth": 3 * 6.5e9} for s in storage if s["name"] == "datawarp"]
    assert io.io_table(three, [1024], 32, 0.14 * 2**20, 0.3)["verdict"].tolist() == ["enough"]


def test_unknown_bandwidth_and_bad_text():
    t = io.io_table([{"name": "x", "read_bandwidth": None}], [1, 2], 32, 1e5, 0.5)
    assert t["verdict"].tolist() == ["unknown", "unknown"]
    assert t["required_bytes_per_s"].tolist() == [6.4e6, 12.8e6]
    assert io.parse_bandwidth("6.5 GB/s") == 6.5e9
    assert io.parse_bandwidth("1 GiB/s") == 2**30
    with pytest.raises(ValueError, match="read_bandwidth '40 GB'"):
        io.parse_bandwidth("40 GB")
    with pytest.raises(ValueError, match="step time"):
        io.required_read_bandwidth(1, 1, 1, 0)
