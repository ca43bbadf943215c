"""cocotb co-simulation of the hypercube's Algorithm 1 hardware (a router chain per node
of the k-cube) against the cycle-exact model, on Icarus and on Verilator, through the
generic runner (:func:`fatnet.sim.cocotb_runner.run`): every delivery (``recv``) and
acknowledgment (``send_ack``) wire equal to the model's at every bit-time.

One build per design and simulator, each design's whole workload in one simulation:

* every packing of the 3-cube, one delivery cycle each (Theorem 1: all delivered);
* k = 1, 2, 4, 5, 6: random semi-contractions, random partial permutations, a
  non-semi-contraction that must collide, and every traffic pattern, each run on-line by
  the model (a node sends one message per cycle, a lost one again in the next cycle);
  one design with a non-default dimension order and message length;
* a flipped expectation makes the comparison fail, naming the wire, bit-time and message;
* ``fatnet sim hypercube`` with a payload column and ``--waves``: the dump carries the
  file's payloads and every router's collision flag where the model puts the collision.

``SIM=icarus`` or ``SIM=verilator`` runs one simulator; by default both run.
"""

import json
import re
import shutil

import numpy as np
import pytest

from fatnet.cli.main import main
from fatnet.api.registry import family_of
from fatnet.golden.hypercube import alg1
from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern
from fatnet.golden.messages import MessageSet
from fatnet.sim import cocotb_runner
from simulators import SIMS, expected_bit_flipped, require as require_simulator
from test_waves_decode import _windows

HERE = "tests/hypercube/test_hc_cosim.py"

# name -> (k, message bits, order, simulators). Icarus builds in a second, Verilator in
# 15-30 s: Verilator builds the 3-cube (every packing) only. The largest cubes are
# co-simulated by the benchmarks (bench/cosim.py: the 6-cube's alg1 rows) and the
# soak, not in the regression.
DESIGNS = {
    "k1": (1, None, None, ["icarus"]),
    "k2": (2, None, None, ["icarus"]),
    "k4-order2031-m13": (4, 13, (2, 0, 3, 1), ["icarus"]),  # P = 9 > k
    "k5-m6": (5, 6, None, ["icarus"]),                      # P = 1 < k: the ack sets T
}


def _replay(keyword, sim, seed):
    return f"SIM={sim} python -m pytest {HERE} -k '{keyword}' (seed {seed})"


def _cases(designs=DESIGNS):
    for name, (*_, sims) in designs.items():
        for sim in sims:
            if sim in SIMS:
                yield pytest.param(sim, name, id=f"{sim}-{name}")


def _default_order(net):
    return tuple(net.order) == tuple(range(net.k))


def _failures(result):
    return "\n".join(result.failures)[:4000]


# ------------------------------------------------------------------ every packing, k = 3
def _packings(k):
    """Every packing of the k-cube (k <= 3) as a map array (B, 2^k)."""
    return np.concatenate([f[alg1.is_packing_batch(k, f)]
                           for f in alg1.all_partial_permutations(k)])


def _expected_packings(k):
    """How many packings the k-cube has, counted from the definition: m sources (any
    C(n, m) subsets) sent in order onto one of the n - m + 1 intervals of m nodes."""
    from math import comb
    n = 1 << k
    return sum(comb(n, m) * (n - m + 1) for m in range(1, n + 1)) + 1  # + the empty map


@pytest.mark.parametrize("sim", SIMS)
def test_every_packing_of_the_3_cube_in_one_cycle_each(sim):
    require_simulator(sim)
    k, seed = 3, 3
    why = _replay(f"packing and {sim}", sim, seed)
    net = circuit(k)
    maps = _packings(k)
    assert len(maps) == _expected_packings(k)
    src, dst, cycles = [], [], []
    for f in maps:
        s, d = alg1.maps_to_routing(f)
        cycles.append(list(range(len(src), len(src) + len(s))))
        src += s.tolist()
        dst += d.tolist()
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, seed)
    # Theorem 1, in the model the testbench is planned from: every message of every
    # packing delivered intact in its one cycle, at the arrival and ack bit-times
    for c, idx in enumerate(cycles):
        res = net.simulate_cycle(ms, net.injections(ms, idx))
        assert res.delivered == idx and not res.lost, (c, maps[c], res.lost, why)
        for m in idx:
            o = res.outcomes[m]
            assert o.delivered_payload == ms.payload[m], (c, m, why)
            assert o.path[-1].channel == net.chain.channel(k, ms.dst[m])
            assert (o.arrival, o.ack_time) == (net.arrival, net.arrival + net.ack_latency)
    result = cocotb_runner.run(net, ms, cycles, sim=sim, seed=seed, family=family_of(net),
                               replay=why)
    assert result.passed, _failures(result)
    assert result.cycles == len(maps)


# ------------------------------------------------------------------ k = 1, 2, 4, 5, 6
def _circuit(name):
    k, M, order, _ = DESIGNS[name]
    return circuit(k, message_bits=M, order=order)


def _forced_collision(net):
    """Two messages for one register at rank 0: node 0 stays on dimension order[0] and
    node 2^order[0] crosses it into node 0. For k >= 2 a partial permutation (node 0
    goes on across order[1]); for k = 1 both go to node 0 (a map, not injective)."""
    a = 1 << net.order[0]
    if net.k == 1:
        return np.array([0, a]), np.array([0, 0])
    return np.array([0, a]), np.array([1 << net.order[1], 0])


def _problems(net, rng):
    """(what, src, dst) per problem: semi-contractions, partial permutations, the forced
    collision and every pattern."""
    n, k = net.nodes, net.k
    out = []
    for m in (n, n, n - 1, max(1, n // 2), int(rng.integers(1, n + 1)), 1):
        s, d = alg1.random_semi_contraction(k, m, rng)
        assert alg1.is_semi_contraction(k, s, d), (s, d)
        out.append(("semi-contraction", s, d))
    for m in (n, n, max(2, n // 2), int(rng.integers(2, n + 1))):
        s, d = alg1.random_partial_permutation(k, m, rng)
        out.append(("partial permutation", s, d))
    s, d = _forced_collision(net)
    out.append(("forced collision", s, d))
    for p in PATTERNS:
        s, d = make_pattern(k, p, int(rng.integers(0, 2**31)))
        out.append((p, s, d))
    return out


def _workload(net, seed, why):
    """One MessageSet holding every problem; each problem run on-line by the model on its
    own, its cycles re-run on the whole set (a delivery cycle starts from nothing, so the
    outcome must be the same). Returns the set, the cycles and per problem (what, its
    message range, its cycles' results)."""
    rng = np.random.default_rng(seed)
    problems = _problems(net, rng)
    src = np.concatenate([s for _, s, _ in problems])
    dst = np.concatenate([d for _, _, d in problems])
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, seed)
    cycles, parts, lo = [], [], 0
    for what, s, _ in problems:
        hi = lo + len(s)
        sub = MessageSet(ms.src[lo:hi], ms.dst[lo:hi], ms.payload[lo:hi])
        rep = net.run(sub, keep_results=True, max_cycles=len(sub) + 1)
        assert not rep.lost and rep.delivered == len(sub), (what, rep.lost, why)
        mine = []
        for r in rep.results:
            idx = [lo + m for m in sorted(r.outcomes)]
            g = net.simulate_cycle(ms, net.injections(ms, idx))
            assert g.lost == [lo + m for m in r.lost], (what, why)
            assert g.delivered == [lo + m for m in r.delivered], (what, why)
            mine.append(g)
        parts.append((what, (lo, hi), mine))
        cycles += mine
        lo = hi
    return ms, cycles, parts


def _check_model(net, ms, parts, why):
    """What the workload must exercise, from the model's cycles: Theorem 1 for the
    semi-contractions (default order), the functional model's collisions for the partial
    permutations, the forced collision and its retry, and a loss somewhere."""
    for what, (lo, hi), res in parts:
        if what == "semi-contraction" and _default_order(net):
            assert len(res) == 1 and not res[0].lost, (what, lo, why)
        if what in ("semi-contraction", "partial permutation"):
            # every message is sent in the first cycle: it loses one exactly when
            # Algorithm 1's functional model finds a collision, and only collided ones
            func = alg1.route(net.k, ms.src[lo:hi], ms.dst[lo:hi], order=net.order)
            assert bool(res[0].lost) == (not func.ok), (what, lo, why)
            collided = set(np.flatnonzero(func.collided) + lo)
            assert set(res[0].lost) <= collided, (what, lo, why)
        if what == "forced collision":
            (c,) = net.chain.collisions(res[0])
            assert (c.rank, c.node, c.dimension, c.bit_time) == (0, 0, net.order[0], 1), \
                (c, why)
            assert (c.kept, c.lost) == (lo, (lo + 1,)), why  # node 0's bit is 0: it wins
            assert len(res) == 2 and res[1].delivered == [lo + 1], why  # the retry
    lossy = [r for _, _, res in parts for r in res if r.lost]
    assert lossy, f"no cycle of the workload lost a message ({why})"


@pytest.mark.parametrize("sim,name", list(_cases()))
def test_semi_contractions_collisions_and_patterns_as_the_model_predicts(sim, name):
    require_simulator(sim)
    net = _circuit(name)
    seed = 1000 + net.k
    why = _replay(f"{sim}-{name}", sim, seed)
    ms, cycles, parts = _workload(net, seed, why)
    _check_model(net, ms, parts, why)
    result = cocotb_runner.run(net, ms, cycles, sim=sim, seed=seed, family=family_of(net),
                               replay=why)
    assert result.passed, _failures(result)
    assert result.cycles == len(cycles)
    assert result.bit_times == len(cycles) * (net.cycle_length + 1)


# ------------------------------------------------------------------ a stuck link
#: name -> (k, stuck_links, simulators): a link inside the network held at 0 (what is
#: routed onto it is lost, never acknowledged) or at 1 (a phantom of ones from bit-time
#: 0, delivered somewhere; what is lost on the link comes back acknowledged through it;
#: two links at 1, the second on the first phantom's way).
STUCK_DESIGNS = {
    "k4-stuck0": (4, {(2, 5, 0): 0}, ["icarus"]),
    "k4-stuck1": (4, {(1, 6, 0): 1, (2, 4, 0): 1, (3, 9, 0): 0}, ["icarus"]),
    "k3-stuck1": (3, {(1, 2, 0): 1}, ["verilator"]),
}


def _stuck_workload(net, seed):
    """Random permutations and every pattern, each problem on-line for 3 cycles (what
    is routed onto the stuck link is sent again and lost again), its cycles re-run on
    the whole set."""
    rng = np.random.default_rng(seed)
    n = net.nodes
    problems = [(np.arange(n), rng.permutation(n)) for _ in range(4)]
    problems += [make_pattern(net.k, p, int(rng.integers(0, 2**31))) for p in PATTERNS]
    ms = MessageSet.from_pairs(np.concatenate([s for s, _ in problems]),
                               np.concatenate([d for _, d in problems]), net.payload_bits,
                               seed)
    cycles, lo = [], 0
    for s, _ in problems:
        sub = MessageSet(ms.src[lo:lo + len(s)], ms.dst[lo:lo + len(s)],
                         ms.payload[lo:lo + len(s)])
        for r in net.run(sub, keep_results=True, max_cycles=3).results:
            idx = [lo + m for m in sorted(r.outcomes)]
            cycles.append(net.simulate_cycle(ms, net.injections(ms, idx)))
        lo += len(s)
    return ms, cycles


@pytest.mark.parametrize("sim,name", list(_cases(STUCK_DESIGNS)))
def test_a_stuck_link_at_0_and_at_1_as_the_model_predicts(sim, name):
    """--stuck-link: every recv and send_ack wire the model's, phantoms included; the
    workload loses messages on every stuck link, and at 1 delivers its phantom and
    acknowledges what was lost on it."""
    require_simulator(sim)
    k, links, _ = STUCK_DESIGNS[name]
    net = circuit(k, stuck_links=links)
    seed = 77 + k
    why = _replay(f"{sim}-{name}", sim, seed)
    ms, cycles = _stuck_workload(net, seed)
    on_link = {}
    for res in cycles:
        for o in res.outcomes.values():
            if o.status == "lost" and o.lost_at[3].startswith("its wire is stuck"):
                key = o.path[-1].key
                on_link.setdefault(key, set()).add(o.ack_time is not None)
    # lost at 1: acknowledged through the phantom; at 0: never; links of both values met
    for key, acked in on_link.items():
        assert acked == {bool(links[key[1:]])}, (key, acked, why)
    assert {links[key[1:]] for key in on_link} == set(links.values()), (on_link, why)
    phantoms = [p for res in cycles for p in res.phantoms.values()]
    assert (any(p.status == "delivered" for p in phantoms)
            == (1 in links.values())), why
    if name == "k4-stuck1":   # node 6's phantom is lost on (2, 4), the second's way
        assert any(p.status == "lost" and p.ack_time is not None for p in phantoms), why
    result = cocotb_runner.run(net, ms, cycles, sim=sim, seed=seed, family=family_of(net),
                               replay=why)
    assert result.passed, _failures(result)
    assert result.cycles == len(cycles)


# ------------------------------------------------------------------ the comparison
# recv on every simulator; send_ack once (the comparison is the runner's, in Python)
FLIPS = [(sim, "recv") for sim in SIMS] + ([(SIMS[0], "send_ack")] if SIMS else [])


@pytest.mark.parametrize("sim,kind", FLIPS, ids=lambda x: x)
def test_a_flipped_expectation_names_the_wire_bit_time_and_message(sim, kind):
    """On the 3-cube (built for the packings): one expected bit flipped, where a message
    arrives (recv) or its acknowledgment reaches its source (send_ack)."""
    require_simulator(sim)
    net = circuit(3)
    fam = family_of(net)
    s, d = alg1.random_packing(3, 5, 5)
    ms = MessageSet.from_pairs(s, d, net.payload_bits, 5)
    [res] = net.run(ms, keep_results=True, max_cycles=1).results
    m = max(res.delivered, key=lambda m: bin(int(ms.src[m] ^ ms.dst[m])).count("1"))
    o = res.outcomes[m]
    node, t = (int(ms.dst[m]), o.arrival) if kind == "recv" else (int(ms.src[m]),
                                                                  o.ack_time)
    port = fam.testbench.port_name(net, node)
    with expected_bit_flipped(0, kind, t, port, 0):
        result = cocotb_runner.run(net, ms, [res], sim=sim, seed=5, replay="REPLAY-ME",
                                   family=fam)
    assert not result.passed
    text = "\n".join(result.failures)
    assert f"{port}.{kind}[0]" in text and f"bit-time {t}" in text, text[:3000]
    assert f"message {m}" in text and "REPLAY-ME" in text and "seed 5" in text
    rt = f"rt_{net.k - 1}_{node}" if kind == "recv" else f"rt_0_{node}"
    assert rt in text, text[:3000]
    # the one flipped wire, nothing else (the runner's line and the harness's own name it)
    named = set(re.findall(r"node__\d+\.(?:recv|send_ack)\[\d+\]", text))
    assert named == {f"{port}.{kind}[0]"}, text[:3000]


# ------------------------------------------------------------------ fatnet sim
def test_fatnet_sim_with_payloads_and_waves(tmp_path, capsys):
    """A message file with a payload column (a collision at rank 0, then a retry): PASS;
    the dump shows the file's payloads on the destinations' recv wires and every
    router's collision flag set exactly where the model has the collision."""
    if shutil.which("iverilog") is None:
        pytest.skip("icarus is not installed (apt-get install iverilog)")
    pytest.importorskip("cocotb_tools")
    from fatnet.sim.wavedecode import read_vcd
    k, M = 3, 7
    net = circuit(k, message_bits=M)
    P = net.payload_bits
    why = f"seed 7; replay: python -m pytest {HERE} -k waves"
    rng = np.random.default_rng(7)
    s, d = alg1.random_partial_permutation(k, net.nodes, rng)
    fs, fd = _forced_collision(net)     # node 0 and node 1: replace their messages
    keep = ~np.isin(s, fs) & ~np.isin(d, fd)
    src = np.r_[fs, s[keep]]
    dst = np.r_[fd, d[keep]]
    payload = [int(p) for p in rng.integers(0, 1 << P, size=src.size)]
    f = tmp_path / "messages.json"
    f.write_text(json.dumps({"messages": [[int(a), int(b), p]
                                          for a, b, p in zip(src, dst, payload)]}))
    ms = MessageSet.from_pairs(src, dst, P, payload=payload)
    rep = net.run(ms, keep_results=True)
    flags = [{(c.rank, c.node) for c in net.chain.collisions(r)} for r in rep.results]
    assert (0, 0) in flags[0] and not rep.lost, why  # forced collision, then delivered
    waves = tmp_path / "waves"
    assert main(["sim", "hypercube", "--dimension", str(k), "--message-bits", str(M),
                 "--messages", str(f), "--sim", "icarus", "--waves", str(waves),
                 "--build-dir", str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert "icarus: PASS" in out, (out, why)
    assert (f"model: {rep.delivered} delivered (+0 local), 0 lost, {rep.cycles} delivery "
            f"cycles of {net.cycle_length} bit-times") in out, out
    (vcd,) = waves.glob("*.vcd")
    (gtkw,) = waves.glob("*.gtkw")
    root = "hypercube_harness.hypercube"
    dump = read_vcd(vcd)
    shown = [ln for ln in gtkw.read_text().splitlines() if ln.startswith(root)]
    for path in shown:  # every signal the save file shows is in the dump
        assert path.split("[")[0] in dump.vars, path
    assert {f"{root}.collision_{r}_{x}" for r in range(k) for x in range(net.nodes)} <= \
        set(shown)
    windows = _windows(dump, root, net.cycle_length)
    assert len(windows) == rep.cycles
    for c, (r, when) in enumerate(zip(rep.results, windows)):
        for m in r.delivered:  # the file's payload, MSB first, after the M bit
            wire = f"{root}.node__{int(ms.dst[m])}__recv"
            got = [int(dump.value_at(wire, when[net.arrival + 1 + j])) for j in range(P)]
            assert got == [(payload[m] >> (P - 1 - j)) & 1 for j in range(P)], (c, m, why)
        for t in (0, net.cycle_length - 1):  # cleared by the start, set by a loss
            got = {(rr, x) for rr in range(k) for x in range(net.nodes)
                   if dump.value_at(f"{root}.collision_{rr}_{x}", when[t]) == "1"}
            assert got == (flags[c] if t else set()), (c, t, got, flags[c], why)
