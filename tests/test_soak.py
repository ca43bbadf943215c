"""The soak's machinery on a short run (``make soak`` runs 10^8 messages a family):
chunks of cycles checked by the checking harness on Verilator, deliveries counted once
each, a mismatch stops it with the harness's first difference (cycle, bit-time, wire),
the seed and the command to replay the chunk; on the bulk path (the batched engine's
waves) and on the reference path (every cycle planned)."""

import contextlib
import re

import pytest

from simulators import SIMS, expected_bit_flipped, require

from bench_scripts import bench_script

soak_module = bench_script("soak")
#: The narrow checking harness, which Verilator builds in a fraction of the wide one's
#: time: the soak's machinery does not depend on the shape (the wide harness under
#: cocotb: tests/test_harness_sizes.py).
SHAPE = "narrow"
#: A Verilator build, which both tests share.
pytestmark = pytest.mark.long


@pytest.fixture(scope="module")
def soak_builds(tmp_path_factory):
    """One build directory for the module: both tests soak the same network, so the
    second reuses the first's Verilator build (the runner keys builds by the network)."""
    return tmp_path_factory.mktemp("soak")


def _run_files(root) -> set:
    """The files of cocotb runs under ``root`` (plan, observed, results, log, rows)."""
    return {p for p in root.rglob("*") if p.name.split("_")[0] in
            ("plan", "observed", "results", "sim", "rows")}


@pytest.mark.skipif("verilator" not in SIMS, reason="SIM selects another simulator")
@pytest.mark.parametrize("reference", [False, True])
def test_a_short_soak_counts_every_delivery_once(soak_builds, reference):
    require("verilator")
    before = _run_files(soak_builds)
    r = soak_module.soak("butterfly", 300, 20, seed=3, build_root=soak_builds, shape=SHAPE,
                         reference=reference)
    assert r["messages"] >= 300 and r["chunks"] >= 2
    # a 16-input butterfly delivers at most 16 messages a cycle
    assert r["messages"] <= 16 * r["cycles"]
    assert r["clocks"] >= r["cycles"] * soak_module.soak_network("butterfly").cycle_length
    if not reference:  # a passing bulk chunk leaves no run files in the build directory
        assert _run_files(soak_builds) == before


@pytest.mark.skipif("verilator" not in SIMS, reason="SIM selects another simulator")
def test_a_mismatch_stops_the_soak_with_its_replay(soak_builds):
    require("verilator")
    # the harness must catch one wrong expected bit in the last cycle of the chunk, and
    # name its cycle, bit-time and wire; the runner's report names the same
    with expected_bit_flipped(-1, "recv", 5), \
            pytest.raises(RuntimeError, match=r"seed 3; replay: python bench/soak.py") as e:
        soak_module.soak("butterfly", 100, 20, seed=3, build_root=soak_builds, shape=SHAPE,
                         reference=True)
    assert re.search(r"harness: 1 differing bit-times in cycles 0 \.\. 19; the first at "
                     r"cycle 19, bit-time 5: term__0\.recv\[0\]\n  seed 3", str(e.value)), e.value
    assert re.search(r"cycle 19: term__0\.recv\[0\] .* at bit-time 5: expected", str(e.value))


@contextlib.contextmanager
def _bulk_bit_flipped(cycle: int, bit_time: int, column: int):
    """Within the block, the bulk path's expected recv words have one bit flipped: cycle
    ``cycle`` (negative: from the end), ``bit_time``, packed column ``column``."""
    from fatnet.sim import plan as planning
    real = planning.bulk_words

    def flipped(net, *args, **kwargs):
        words = real(net, *args, **kwargs)
        T = net.cycle_length
        row = (cycle % (len(words["expect_recv"]) // T)) * T + bit_time
        words["expect_recv"][row, column] ^= 1
        return words

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(planning, "bulk_words", flipped)
        yield


@pytest.mark.skipif("verilator" not in SIMS, reason="SIM selects another simulator")
def test_a_mismatch_on_the_bulk_path_stops_the_soak_with_its_replay(soak_builds):
    require("verilator")
    with _bulk_bit_flipped(-1, 5, 0), pytest.raises(RuntimeError) as e:
        soak_module.soak("butterfly", 100, 20, seed=3, build_root=soak_builds, shape=SHAPE)
    assert re.search(r"harness: 1 differing bit-times in cycles 0 \.\. 19; the first at "
                     r"cycle 19, bit-time 5: term__0\.recv\[0\]\n  seed 3; replay: python "
                     r"bench/soak.py --networks butterfly --seed 3 --messages 1 "
                     r"--chunk-cycles 20", str(e.value)), e.value
