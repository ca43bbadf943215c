"""The soak's machinery on a short run (``make soak`` runs a million messages a family):
chunks of checked cycles on Verilator, deliveries counted once each, a mismatch stops
it with the seed and the command to replay the chunk."""

import pytest

from simulators import SIMS, expected_bit_flipped, require

from bench_scripts import bench_script

soak_module = bench_script("soak")
#: A Verilator build, which both tests share.
pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def soak_builds(tmp_path_factory):
    """One build directory for the module: both tests soak the same network, so the
    second reuses the first's Verilator build (the runner keys builds by the network)."""
    return tmp_path_factory.mktemp("soak")


@pytest.mark.skipif("verilator" not in SIMS, reason="SIM selects another simulator")
def test_a_short_soak_counts_every_delivery_once(soak_builds):
    require("verilator")
    r = soak_module.soak("butterfly", 300, 40, seed=3, build_root=soak_builds)
    assert r["messages"] >= 300 and r["chunks"] >= 2
    # a 16-input butterfly delivers at most 16 messages a cycle
    assert r["messages"] <= 16 * r["cycles"]
    assert r["clocks"] >= r["cycles"] * soak_module.soak_network("butterfly").cycle_length


@pytest.mark.skipif("verilator" not in SIMS, reason="SIM selects another simulator")
def test_a_mismatch_stops_the_soak_with_its_replay(soak_builds):
    require("verilator")
    # the comparison must catch one wrong expected bit
    with expected_bit_flipped(0, "recv", 5), \
            pytest.raises(RuntimeError, match=r"seed 3; replay: python bench/soak.py"):
        soak_module.soak("butterfly", 100, 20, seed=3, build_root=soak_builds)
