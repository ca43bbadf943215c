"""The packed harness at every size: its stimulus and capture memories (rows of ``k``
bit-times) against the model on Amaranth's simulator and under cocotb, several processes
sharing one build directory, the largest networks a regression's time allows generated
and checked by Verilator's lint and Icarus, and the one-line refusal of a network too
large to convert.
"""

import multiprocessing
import re

import numpy as np
import pytest

import fatnet.hdl.harness as harness
from fatnet.golden.butterfly.cyclemodel import CircuitNetwork, run_circuit
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.route import run
from fatnet.golden.fattree.spec import FatTreeSpec, min_universal_root
from fatnet.golden.messages import MessageSet, make_pattern
from fatnet.sim.amaranth_bench import run_cycles_harness_amaranth
from fatnet.sim.rows import join_rows, split_rows
from fatnet.api.registry import family_of, get_family
from fatnet.sim import cocotb_runner
from simulators import SIMS, expected_bit_flipped, require as require_simulator


def _fattree_case():
    net = FatTreeNetwork(FatTreeSpec.universal(8, 4, mode="online", payload_bits=4))
    ms = make_pattern(net.n, "hot-spot", 2, 4, hot_fraction=0.5)
    return net, ms, run(net, ms, keep_results=True, max_cycles=8).results


def _butterfly_case():
    c = CircuitNetwork(make_network("multibutterfly", 8, 2, seed=1), 4)
    rng = np.random.default_rng(3)
    ms = MessageSet.from_pairs(np.tile(np.arange(8), 2), rng.integers(0, 8, size=16), 4, 3)
    return c, ms, run_circuit(c, ms, keep_results=True, max_cycles=6).results


def _no_mismatch(results, why):
    assert results
    for i, (_, mismatches) in enumerate(results):
        assert not mismatches, f"cycle {i}: {mismatches[0]} ({why})"


#: ROW_BITS giving one word per row, rows whose words do not divide the cycle, the default
ROW_BITS = [1, 60, harness.ROW_BITS]


@pytest.mark.parametrize("row_bits", ROW_BITS)
@pytest.mark.parametrize("case", [_fattree_case, _butterfly_case], ids=["fattree", "bfly"])
def test_harness_rows_replay_cycles_as_modelled(case, row_bits, monkeypatch):
    """Every geometry of the memories (k = 1, k not dividing T, two rows) replays and
    captures every wire at every bit-time exactly as the model says."""
    monkeypatch.setattr(harness, "ROW_BITS", row_bits)
    net, ms, results = case()
    geo = harness.harness_geometry(net, hardware=family_of(net).hardware)
    assert geo["rows"] >= 2 and geo["rows"] * geo["k"] >= geo["T"] > (geo["rows"] - 1) * geo["k"]
    if row_bits == 1:
        assert geo["k"] == 1 and geo["rows"] == geo["T"]
    _no_mismatch(run_cycles_harness_amaranth(net, ms, results, family=family_of(net)),
                 f"ROW_BITS {row_bits}")


def test_rows_split_and_join_are_inverse():
    rng = np.random.default_rng(0)
    for W, k, T in ((5, 1, 7), (5, 3, 7), (5, 4, 8), (1, 3, 2)):
        rows = -(-T // k)
        v = int.from_bytes(rng.bytes(8 * T), "little") & ((1 << (T * W)) - 1)
        parts = split_rows(v, W, k, rows)
        assert len(parts) == rows and all(p >> (k * W) == 0 for p in parts)
        assert join_rows(parts, W, k, T) == v
        if T % k:  # words past T - 1 in the last row are not part of the cycle
            parts[-1] |= 1 << (k * W - 1)
            assert join_rows(parts, W, k, T) == v


def _manifest_harness_matches_verilog(doc, text):
    """The manifest's harness ports are the harness module's header, and its memories
    are declared with the manifest's rows and row width."""
    h = doc["harness"]
    header = re.search(rf"^module {h['top']}\((.*?)\);", text, re.S | re.M).group(1)
    assert {p.strip() for p in header.split(",")} == {p["name"] for p in h["ports"]}
    for p in h["ports"]:
        decl = re.search(rf"^\s*(input|output)\s*(\[(\d+):0\])?\s*{p['name']};", text, re.M)
        assert decl and (int(decl.group(3)) + 1 if decl.group(2) else 1) == p["width"], p
    for mem in h["memories"]:
        assert re.search(rf"^\s*reg \[{mem['row_bits'] - 1}:0\] {mem['name']} "
                         rf"\[{mem['rows'] - 1}:0\];", text, re.M), mem
    assert sum(p["width"] for p in h["packed"]) == h["memories"][0]["word_bits"]
    assert sum(p["width"] for p in h["recv_packed"]) == h["memories"][1]["word_bits"]
    assert h["rows"] == -(-doc["cycle_length_bits"] // h["bit_times_per_row"])


#: The largest network of each family whose generation and checks fit a regression
#: (tens of seconds each): (family, golden network factory).
#: (256 leaves or inputs take minutes: Icarus alone needs 50 s to 4 min to read them.)
LARGEST = {
    "fattree-128": lambda: FatTreeNetwork(FatTreeSpec.universal(128, min_universal_root(128))),
    "multibutterfly-64": lambda: CircuitNetwork(make_network("multibutterfly", 64, 2), 8),
}


@pytest.mark.parametrize("name", sorted(LARGEST))
def test_largest_network_generates_with_harness_and_lints(name, tmp_path, verilator_lint,
                                                          icarus_clean):
    from fatnet.hdl.gen import generate
    net = LARGEST[name]()
    doc = generate(net, tmp_path, hardware=family_of(net).hardware)
    top = doc["top"]
    assert doc["files"] == [f"{top}.v", f"{top}_harness.v", "lint.vlt"]
    files = [tmp_path / "lint.vlt"] + [tmp_path / f for f in doc["harness"]["sources"]]
    _manifest_harness_matches_verilog(doc, (tmp_path / f"{top}_harness.v").read_text())
    verilator_lint(files)
    icarus_clean(doc["harness"]["top"], files[1:])


def test_a_network_too_large_to_convert_is_one_line(tmp_path, capsys):
    """Past Amaranth's 65534 input bits per module: exit 2, one line naming the size,
    the bit count and the limit; nothing written."""
    from fatnet.cli.main import main
    out = tmp_path / "out"
    rc = main(["gen", "multibutterfly", "--inputs", "4096", "--multiplicity", "2",
               "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1, err
    assert "inputs 4096 (multiplicity 2)" in err and "65539 input bits" in err
    assert "65534" in err and "Traceback" not in err
    assert not out.exists()


def test_size_limits():
    """The limit is the top's input bits: the largest butterflies that fit, and the
    smallest that do not."""
    from fatnet.golden.errors import ParameterError
    from fatnet.hdl.gen import check_size
    hw = get_family("butterfly").hardware
    check_size(CircuitNetwork(make_network("multibutterfly", 2048, 2), 8), hardware=hw)
    check_size(CircuitNetwork(make_network("butterfly", 4096, 1), 8), hardware=hw)
    with pytest.raises(ParameterError, match="inputs 8192 .* 122883 input bits"):
        check_size(CircuitNetwork(make_network("butterfly", 8192, 1), 8), hardware=hw)


# ------------------------------------------------------------------------ cocotb


@pytest.mark.parametrize("sim", SIMS)
def test_cocotb_one_word_per_row(sim, tmp_path, monkeypatch):
    """k = 1 (a row per bit-time, as the largest networks have): the testbench writes
    and reads every row through the simulator's handles, and a flipped expected bit in
    the last row is caught."""
    require_simulator(sim)
    monkeypatch.setattr(harness, "ROW_BITS", 1)
    net, ms, results = _fattree_case()
    T = net.cycle_length
    res = cocotb_runner.run(net, ms, results, sim=sim, build_root=tmp_path, family=family_of(net))
    assert res.passed, "\n".join(res.failures)
    assert res.cycles == len(results)
    with expected_bit_flipped(-1, "recv", T - 1):
        res = cocotb_runner.run(net, ms, results, sim=sim, build_root=tmp_path,
                                family=family_of(net))
    assert not res.passed and f"at bit-time {T - 1}" in res.failures[0]


def _run_in_child(build_root, queue):
    net, ms, results = _fattree_case()
    res = cocotb_runner.run(net, ms, results, sim="icarus", build_root=build_root,
                            family=family_of(net))
    queue.put((res.passed, res.failures))


def test_two_processes_share_a_build_directory(tmp_path):
    """Two runs at once on one build directory (pytest-xdist workers): the file lock
    lets one generate and build while the other waits; both pass."""
    require_simulator("icarus")
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_run_in_child, args=(str(tmp_path), queue)) for _ in range(2)]
    for p in procs:
        p.start()
    got = [queue.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    assert all(passed for passed, _ in got), got
