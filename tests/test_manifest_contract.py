"""The manifest is a contract: testbenches written from it (and the README) alone are run
against every release. Every key it has is documented in its ``fields`` and every
documented key is there, for every kind; the splitter networks' wiring in it is the
golden network's; the terms and numbers its texts use are the hardware's."""

import json

import numpy as np
import pytest

from fatnet.golden import butterfly as bfc
from fatnet.golden.butterfly.api import spec_from_options
from fatnet.golden.butterfly.cyclemodel import CircuitNetwork, masked_network
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.spec import FatTreeSpec
from fatnet.golden.hypercube.api import circuit
import fatnet.hdl.checker as checker
from fatnet.hdl.gen import generate
from fatnet.api.registry import families, family_of, get_family
from manifest_checks import module_matches_entry

SEED = 7


def _butterfly(kind, n=8, faults=None):
    d = 1 if kind == "butterfly" else 2
    return bfc.build(spec_from_options(kind, n, d, faults=faults, seed=SEED), 4)


NETS = {
    "butterfly": lambda: _butterfly("butterfly"),
    "dilated-butterfly": lambda: _butterfly("dilated-butterfly"),
    "multibutterfly": lambda: _butterfly("multibutterfly", 16, faults=2),
    "fat-tree": lambda: FatTreeNetwork(FatTreeSpec.universal(8, 4)),
    "butterfly-start-tree": lambda: bfc.build(spec_from_options("butterfly", 8, 1,
                                                                seed=SEED), 4, 1, 2),
    "fat-tree-start-tree": lambda: FatTreeNetwork(FatTreeSpec.universal(8, 4,
                                                                       start_stages=3)),
    "hypercube": lambda: circuit(3, order=(2, 0, 1)),
    "hypercube-alg2": lambda: circuit(3, algorithm="alg2", message_bits=5),
    "hypercube-ecube": lambda: circuit(3, algorithm="ecube", buffer=2),
    "hypercube-valiant": lambda: circuit(2, algorithm="valiant", message_bits=3,
                                                  buffer=1, steps=6),
}
#: The splitter networks' kinds, as the butterfly family registers them.
SPLITTER_KINDS = sorted(get_family("butterfly").kinds)
_docs = {}


def test_every_kind_with_hardware_has_a_manifest_here():
    with_hardware = {k for f in families() if f.has_hardware for k in f.kinds}
    assert with_hardware <= set(NETS) and set(SPLITTER_KINDS) <= set(NETS)


def _doc(kind, tmp_path_factory):
    if kind not in _docs:
        net = NETS[kind]()
        out = tmp_path_factory.mktemp(kind)
        doc = generate(net, out, hardware=family_of(net).hardware)
        assert json.loads((out / f"{doc['top']}.json").read_text()) == doc
        _docs[kind] = (net, doc)
    return _docs[kind]


@pytest.mark.parametrize("kind", list(NETS))
def test_every_field_is_documented_and_every_documented_field_is_there(kind,
                                                                        tmp_path_factory):
    _, doc = _doc(kind, tmp_path_factory)
    present = set(doc) | {f"spec.{k}" for k in doc["spec"]}
    documented = set(doc["fields"])
    assert not present - documented, f"undocumented: {sorted(present - documented)}"
    assert not documented - present, f"documented but absent: {sorted(documented - present)}"
    assert all(isinstance(v, str) and v for v in doc["fields"].values())
    assert all(p["meaning"] for p in doc["ports"])


@pytest.mark.parametrize("kind", ["butterfly", "fat-tree", "hypercube",
                                  "butterfly-start-tree", "fat-tree-start-tree"])
def test_the_start_latency_is_stated_wherever_a_testbench_needs_it(kind, tmp_path_factory):
    """A start tree delays bit-time 0 by its stages: the manifest says so in its own
    field, in the network's timing text, in the start port's meaning and in the
    harness's timing (the wait after the strobe); without one, bit-time 0 is the clock
    after the strobe, as before."""
    net, doc = _doc(kind, tmp_path_factory)
    D = getattr(net, "start_stages", 0)
    T = doc["cycle_length_bits"]
    assert doc["start_latency_clocks"] == D
    start = next(p["meaning"] for p in doc["ports"] if p["name"] == "start")
    harness_start = next(p["meaning"] for p in doc["harness"]["ports"]
                         if p["name"] == "start")
    if D:
        assert doc["spec"]["start_stages"] == D
        assert f"bit-time 0 is the clock start_latency_clocks + 1 = {D + 1} after" in \
            doc["timing"]
        assert f"the clock {D} after the start strobe (the clock before bit-time 0) " \
            f"clears every" in doc["timing"]
        assert f"the clock cycle {D + 1} after it" in start
        assert f"the clock D + 1 = {D + 1} after it" in harness_start
    else:
        assert "bit-time 0 is the clock after the start strobe" in doc["timing"]
        assert "the next clock cycle is bit-time 0" in start
        assert "the next clock is bit-time 0" in harness_start
    assert f"wait {T + D} more clocks" in doc["harness"]["timing"]


@pytest.mark.parametrize("kind", SPLITTER_KINDS)
def test_the_wiring_in_the_manifest_is_the_golden_networks_edges(kind, tmp_path_factory):
    c, doc = _doc(kind, tmp_path_factory)
    net = c.network
    n, N, d = c.depth, c.n_inputs, net.multiplicity
    edges = doc["edges"]
    assert len(edges) == n == doc["switch_levels"] == doc["levels"] - 1
    for i in range(n):
        assert len(edges[i]) == N
        wires = {}
        for row in range(N):
            assert len(edges[i][row]) == 2 * d
            for slot, (target, wire) in enumerate(edges[i][row]):
                # slot order: up edges 0 .. d - 1, then down 0 .. d - 1, as the golden heads
                assert target == int(net.heads[i, row, slot])
                # input wire `wire` of the target is this edge in the golden in-edge order
                assert net.in_edges(i + 1, target)[wire] == (row, slot)
                wires.setdefault(target, []).append(wire)
        for target, ws in wires.items():  # every input wire of every switch, once
            assert sorted(ws) == list(range(int(c.in_degree[i + 1, target])))


@pytest.mark.parametrize("kind", SPLITTER_KINDS)
def test_splitter_terms_are_used_consistently(kind, tmp_path_factory):
    c, doc = _doc(kind, tmp_path_factory)
    n, N = c.depth, c.n_inputs
    assert doc["spec"]["seed"] == SEED  # the seed given, for every kind
    assert doc["status_settle_clocks"] == n and doc["ack_latency"] == n
    assert doc["arrival_bit_time"] == 2 * n == c.arrival
    texts = [doc["timing"], doc["fault_rules"], *doc["fields"].values(),
             *doc["terms"].values(), *(p["meaning"] for p in doc["ports"])]
    for t in texts:
        assert "(row, level)" not in t and "depth" not in t.replace("calls depth", "")
    mask = next(p for p in doc["ports"] if p["name"] == "fault_mask")
    assert mask["width"] == (n - 1) * N
    assert "bit (level - 1) * N + row" in mask["meaning"] and "(level, row)" in mask["meaning"]
    assert f"settle in {n} clocks (status_settle_clocks)" in mask["meaning"]
    assert f"status_settle_clocks-th (= {n}th) rising edge" in doc["timing"]
    assert "not disabled" in doc["fault_rules"]
    faults = c.network.faults
    if faults is not None:
        assert doc["faulty"] == [[int(i), int(r)] for i, r in zip(*faults.faulty.nonzero())]


@pytest.mark.parametrize("link_stages", [0, 2])
def test_status_registers_settle_in_the_clocks_the_manifest_states(link_stages,
                                                                   tmp_path_factory):
    """After a fault_mask change every status register holds its final value from the
    status_settle_clocks-th rising edge on, and not before (the mask kills the last
    interior level, so the status of every level changes). With pipelined links the
    status comes back through their registers (lg N + s (lg N - 1)), and after reset
    the registers hold the settled status under the built-in faults at once."""
    from amaranth.sim import Simulator

    from fatnet.hdl.butterfly import manifest_fields, top
    from fatnet.sim.butterfly.ports import expected_status, mask_int, status_signals
    plain, _ = _doc("multibutterfly", tmp_path_factory)
    c = CircuitNetwork(plain.network, plain.payload_bits, link_stages=link_stages)
    k = manifest_fields(c, {})["status_settle_clocks"]
    n, N = c.depth, c.n_inputs
    assert k == n + link_stages * (n - 1)
    mask = np.zeros((n - 1, N), dtype=bool)
    mask[n - 2] = True
    want = expected_status(c, mask)
    at_reset = expected_status(c, None)
    assert (want != at_reset).any()
    dut = top(c)
    status = status_signals(c, dut)
    settled, first = [], []

    def now(ctx):
        return np.array([[ctx.get(status[i][r]) for r in range(N)] for i in range(n)])

    async def bench(ctx):
        if link_stages:
            first.append(bool((now(ctx) == at_reset).all()))
        await ctx.tick().repeat(k + 1)
        ctx.set(dut.fault_mask, mask_int(c, mask))
        for _ in range(k + 2):
            await ctx.tick()
            settled.append(bool((now(ctx) == want).all()))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert settled == [False] * (k - 1) + [True] * (len(settled) - k + 1)
    assert first in ([], [True])


def test_a_declared_faulty_input_keeps_routing_on_its_good_direction():
    """The manifest's fault_rules: an input switch all of whose up edges lead to bad
    switches is declared faulty but still delivers the messages that go down."""
    from fatnet.golden.butterfly.cyclemodel import run_circuit
    from fatnet.golden.messages import MessageSet
    c = _butterfly("butterfly", 8)
    mask = np.zeros((c.depth - 1, c.n_inputs), dtype=bool)
    up = int(c.network.heads[0, 0, 0])
    mask[0, up] = True
    m = masked_network(c, mask)
    assert m.blocked[0, 0]  # input 0 is declared faulty
    down = [dst for dst in range(8) if int(c.network.group_of(0, dst)) == 1]
    ups = [dst for dst in range(8) if int(c.network.group_of(0, dst)) == 0]
    ms = MessageSet.from_pairs([0, 0], [down[0], ups[0]], c.payload_bits, 1)
    rep = run_circuit(m, ms, max_cycles=3)
    assert rep.delivered == 1 and [mm for mm, _ in rep.lost] == [1]


#: Every kind in the narrow shape, one in the wide. The wide shape's rows at a batch of
#: 2^16 bits, not 2^20: the same rows (as many words as 4096 bits hold, checked below),
#: fewer of them; memories of 2^20 bits take Amaranth some 10 s to convert (their every
#: bit of initial value is a net) and the manifest's statements do not depend on the
#: count of rows.
@pytest.mark.parametrize("kind, shape", [("butterfly", "narrow"), ("fat-tree", "narrow"),
                                         ("hypercube", "narrow"),
                                         ("butterfly-start-tree", "narrow"),
                                         ("butterfly", "wide")])
def test_the_checking_harness_is_what_its_manifest_entry_states(kind, shape, tmp_path,
                                                                monkeypatch):
    """generate(..., checker=True) writes the checking harness of either shape and
    documents it: every port the manifest lists is the module's, with its width; every
    memory is declared with the stated rows and row width (one word a row in the narrow
    shape, a full row of words in the wide); the batch's clocks are the timing's."""
    row_bits = checker.SHAPES[shape].row_bits
    monkeypatch.setitem(checker.SHAPES, "wide", checker.SHAPES["wide"]._replace(
        batch_bits=1 << 16))
    net = NETS[kind]()
    doc = generate(net, tmp_path, hardware=family_of(net).hardware, checker=True,
                   checker_shape=shape)
    c = doc["checker"]
    assert c["shape"] == shape and (c["bit_times_per_row"] == 1) == (shape == "narrow")
    widest = max(mem["word_bits"] for mem in c["memories"])
    assert c["bit_times_per_row"] == max(1, row_bits // widest)
    assert doc["fields"]["checker"] and f"{doc['top']}_checker.v" in doc["files"]
    module_matches_entry(c, (tmp_path / f"{doc['top']}_checker.v").read_text())
    for mem in c["memories"]:
        width = sum(p["width"] for p in doc["harness"]["packed" if mem["words"] == "send"
                                                          else "recv_packed"])
        assert mem["row_bits"] == c["bit_times_per_row"] * width == \
            c["bit_times_per_row"] * mem["word_bits"]
    T, D = doc["cycle_length_bits"], doc["start_latency_clocks"]
    assert c["rows"] * c["bit_times_per_row"] >= c["batch_cycles"] * T
    assert f"n*{T + 1 + D} - 1 more clocks" in c["timing"]
