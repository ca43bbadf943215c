"""The hypercube's Algorithm 1 hardware on Amaranth's own simulator against the cycle-exact
model (:class:`fatnet.golden.hypercube.circuit.HypercubeCircuit`, its
:class:`~fatnet.golden.hypercube.bitserial.RouterChain`): every recv and send_ack wire at
every bit-time through the shared planner and comparator, the collision flags against the
model's collisions, and the reverse wires run backwards (Algorithm 2's rendezvous) with one
register per router. The cocotb runs are tests/hypercube/test_hc_cosim.py.

Replay a failure with ``python -m pytest tests/hypercube/test_hc_hardware.py -k <id>``;
the seed is in the test id and the message.
"""

import dataclasses

import numpy as np
import pytest
from amaranth.sim import Simulator

from fatnet.api.registry import family_of
from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import alg1
from fatnet.golden.hypercube.api import ALGORITHMS, circuit
from fatnet.golden.hypercube.circuit import (Alg1Spec, EcubeCircuit, EcubeSpec, ValiantCircuit,
                                             ValiantSpec, check_buildable)
from fatnet.golden.hypercube.cube import Hypercube
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern
from fatnet.golden.messages import MessageSet
from fatnet.hdl.hypercube import DimensionRouter, HypercubeNetworkHW
from fatnet.sim.amaranth_bench import run_cycles_amaranth, run_cycles_harness_amaranth


def check(results, why):
    bad = [f"cycle {i}: {mm}" for i, (_, mms) in enumerate(results) for mm in mms]
    assert not bad, "RTL differs from the model:\n  " + "\n  ".join(bad[:20]) + f"\n{why}"


def messages(net, src, dst, seed):
    return MessageSet.from_pairs(src, dst, net.payload_bits, seed)


def _order(k, seed):
    return tuple(int(d) for d in np.random.default_rng([seed, 7]).permutation(k))


CASES = [(k, seed) for k in (1, 2, 3, 4, 5) for seed in (0, 1)]


@pytest.mark.parametrize("k,seed", CASES, ids=[f"k{k}-seed{s}" for k, s in CASES])
def test_random_partial_permutations_with_collisions_and_retries(k, seed):
    """Random partial permutations, a random order and message length: the model's on-line
    run (collisions lose messages, which are sent again) replayed cycle after cycle."""
    rng = np.random.default_rng(seed)
    net = circuit(k, message_bits=k + 1 + int(rng.integers(0, 2 * k)),
                           order=_order(k, seed))
    src, dst = alg1.random_partial_permutation(k, int(rng.integers(1, (1 << k) + 1)), rng)
    ms = messages(net, src, dst, seed)
    rep = net.run(ms, keep_results=True)
    assert rep.delivered == len(ms) and not rep.lost
    check(run_cycles_amaranth(net, ms, rep.results, family=family_of(net)),
          f"k={k} order={net.order} M={net.M} seed {seed}")


@pytest.mark.parametrize("pattern", PATTERNS)
def test_patterns_on_the_4_cube(pattern, amaranth_runs):
    seed = 5
    net = circuit(4)  # one build for every pattern
    src, dst = make_pattern(4, pattern, seed)
    ms = messages(net, src, dst, seed)
    rep = net.run(ms, keep_results=True)
    check(amaranth_runs(net, ms, rep.results), f"{pattern} seed {seed}")


def test_packed_harness_replays_whole_cycles_as_modelled():
    net = circuit(3, message_bits=5)
    src, dst = make_pattern(3, "random-destinations", 2)
    ms = messages(net, src, dst, 2)
    rep = net.run(ms, keep_results=True)
    assert len(rep.results) > 1          # collisions, so retries
    check(run_cycles_harness_amaranth(net, ms, rep.results, family=family_of(net)),
          "harness, random destinations seed 2")


def _drive(net, ms, result, extra=0, reverse=None):
    """Run one modelled cycle on the top, acknowledging from each M bit on, and then
    ``extra`` bit-times more; ``reverse``: node -> bits to drive on its recv_ack from
    bit-time ``T`` on instead of the level. Returns (collision flags [rank][node] at the
    end, per-node send_ack bits over every bit-time)."""
    dut = HypercubeNetworkHW(net)
    T = net.cycle_length
    streams = {int(ms.src[m]): stream for m, (_, stream) in result.injections.items()}
    out = {}

    async def bench(ctx):
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        acking = [0] * net.nodes
        acks = np.zeros((net.nodes, T + extra), dtype=np.uint8)
        for t in range(T + extra):
            for x in range(net.nodes):
                port = dut.node[x]
                s = streams.get(x, [])
                ctx.set(port.send, s[t] if t < len(s) else 0)
                if reverse is not None and t >= T and x in reverse:
                    bits = reverse[x]
                    ctx.set(port.recv_ack, bits[t - T] if t - T < len(bits) else 0)
                else:
                    acking[x] |= ctx.get(port.recv)
                    ctx.set(port.recv_ack, acking[x])
                acks[x, t] = ctx.get(port.send_ack)
            if t == T - 1:
                out["flags"] = [[ctx.get(f) for f in rank] for rank in dut.collision]
            await ctx.tick()
        out["acks"] = acks

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return out["flags"], out["acks"]


@pytest.mark.parametrize("seed", range(6))
def test_collision_flags_are_the_models_collisions(seed):
    """collision_<r>_<x> is set exactly at the routers whose register the model says was
    claimed by a message that lost there."""
    rng = np.random.default_rng(seed)
    k = 3
    net = circuit(k, order=_order(k, seed))
    src, dst = alg1.random_partial_permutation(k, int(rng.integers(2, 9)), rng)
    ms = messages(net, src, dst, seed)
    result = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    flags, _ = _drive(net, ms, result)
    want = {(c.rank, c.node) for c in net.chain.collisions(result)}
    got = {(r, x) for r in range(k) for x in range(net.nodes) if flags[r][x]}
    assert got == want, f"seed {seed}: order {net.order}, {list(zip(src, dst))}"
    # a routing with no collision in Algorithm 1's functional model sets no flag
    assert (not want) == alg1.route(k, src, dst, order=net.order).ok, seed


def test_a_collision_worked_by_hand():
    """2-cube: node 0 -> 1 crosses dimension 0 into node 1's register while node 1 -> 3
    stays there: a tie at rank 0, node 1. Node 0 has bit 0 = 0, so its message keeps the
    register; node 1's is lost there and retried alone in the next cycle."""
    net = circuit(2)
    ms = messages(net, [0, 1], [1, 3], 0)
    result = net.simulate_cycle(ms, net.injections(ms, [0, 1]))
    assert result.delivered == [0] and result.lost == [1]
    flags, acks = _drive(net, ms, result)
    assert flags == [[0, 1, 0, 0], [0, 0, 0, 0]]
    assert acks[0].any() and not acks[1].any()     # only the kept message is acknowledged
    rep = net.run(ms, keep_results=True)
    assert rep.cycles == 2 and rep.retries == 1 and rep.delivered == 2
    check(run_cycles_amaranth(net, ms, rep.results, family=family_of(net)), "by hand")


@pytest.mark.parametrize("k", [1, 3, 4])
def test_reverse_wires_run_the_circuit_backwards(k):
    """After a cycle the circuits stay; a stream driven on a destination's recv_ack comes
    out of its source's send_ack k bit-times later, bit for bit: the reverse wires are
    Algorithm 2's rendezvous (Step 6: Step 5's routing run backwards, one register per
    router; golden.hypercube.bitserial)."""
    seed = k
    net = circuit(k)
    src, dst = make_pattern(k, "complement", seed)   # collision-free: every circuit held
    ms = messages(net, src, dst, seed)
    result = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    assert not result.lost
    rng = np.random.default_rng(seed)
    back = {int(d): [1] + rng.integers(0, 2, size=2 * k).tolist() for d in dst}
    T, L = net.cycle_length, 2 * k + 1
    _, acks = _drive(net, ms, result, extra=L + k + 1, reverse=back)
    for s, d in zip(src, dst):
        seen = acks[int(s), T + k:T + k + L].tolist()
        assert seen == back[int(d)], f"k={k}: node {d} -> node {s}"
        assert not acks[int(s), T + k + L:].any(), (k, s)


def test_each_algorithm_is_its_own_class_made_from_a_frozen_spec():
    assert list(ALGORITHMS) == ["alg1", "alg2", "ecube", "valiant"]
    for name, cls in ALGORITHMS.items():
        net = circuit(3, name)
        assert type(net) is cls.circuit and net.algorithm == name == net.spec.algorithm
        with pytest.raises(dataclasses.FrozenInstanceError):
            net.spec.message_bits = 7
    ecube, valiant = circuit(3, "ecube"), circuit(3, "valiant", seed=5)
    assert ecube.spec == EcubeSpec(3, 6, buffer=1, steps=3 * 8)
    assert valiant.spec == ValiantSpec(3, 6, buffer=1, steps=2 * 3 * 8, seed=5)
    assert (ecube.header_bits, valiant.header_bits) == (3, 6)
    # a spec made directly is checked as one made from the options
    with pytest.raises(ParameterError,
                       match=r"buffer must be an integer in \[1, 16\], got 17"):
        EcubeSpec(3, 6, buffer=17, steps=1)
    with pytest.raises(ParameterError, match="order must be a permutation"):
        Alg1Spec(3, 6, order=(0, 0, 1))
    with pytest.raises(TypeError, match="EcubeCircuit is made from a EcubeSpec"):
        EcubeCircuit(valiant.spec)
    assert ValiantCircuit(valiant.spec).params() == valiant.params()


@pytest.mark.parametrize("name, options, words", [
    ("alg1", {"buffer": 2}, r"buffer must be left out for alg1 \(an ecube and valiant option"),
    ("alg2", {"steps": 2}, "steps must be left out for alg2"),
    ("ecube", {"seed": 1}, "seed must be left out of the ecube hardware"),
    ("ecube", {"order": (1, 0, 2)}, "order must be left out for ecube"),
    ("valiant", {"steps": 0}, r"steps must be an integer in \[1, 65536\]"),
])
def test_an_option_the_algorithm_does_not_take_is_refused_in_one_line(name, options,
                                                                      words):
    with pytest.raises(ParameterError, match=words):
        circuit(3, name, **options)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="high must be a bool"):
        DimensionRouter(1)
    # refused when the circuit is made: there is no circuit with options it cannot build
    with pytest.raises(ParameterError, match="algorithm must be one of alg1, alg2, ecube, "
                                             "valiant for gen and sim, got 'bogus'"):
        circuit(3, algorithm="bogus")
    with pytest.raises(ParameterError, match=r"message_bits must be an integer in \[4, "):
        circuit(3, message_bits=3)
    with pytest.raises(ParameterError, match="order"):
        circuit(3, order=(0, 0, 1))
    with pytest.raises(ParameterError, match="hardware is built from a hypercube circuit"):
        check_buildable(Hypercube(3))
    with pytest.raises(ParameterError, match="algorithm must be alg1 for Algorithm 1"):
        HypercubeNetworkHW(circuit(3, algorithm="ecube"))
    from fatnet.hdl.hypercube import Alg2Node
    with pytest.raises(ValueError, match="message_bits >= k"):
        Alg2Node(3, 2, 10)


# --------------------------------------------------------------------------- Algorithm 2

from fatnet.golden.hypercube import bitserial  # noqa: E402
from fatnet.hdl.hypercube import Alg2NetworkHW  # noqa: E402

STEP_OF = {"cross": 1, "enum2": 2, "pack3": 3, "enum4": 4, "pack5": 5, "rdv": 6}


def _alg2_positions(net, ms, idx):
    """Run one cycle of messages ``idx`` on Algorithm 2's top and read every node's two
    buffers at the end of every phase: [(kind, iteration, {message: node})], messages
    named by the destination field their buffer holds (a partial permutation's
    destinations are distinct) and checked intact (the data bits are the payload's)."""
    dut = Alg2NetworkHW(net)
    inj = net.injections(ms, idx)
    streams = {int(ms.src[m]): s for m, (_, s) in inj.items()}
    by_dst = {int(ms.dst[m]): m for m in idx}
    k, M = net.k, net.M
    ends, b = {}, 0
    for n, (kind, i, length) in enumerate(net.phases):
        b += length
        ends[b - 1] = (kind, i)
    seen = []

    async def bench(ctx):
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        for t in range(net.cycle_length):
            for x in range(net.nodes):
                s = streams.get(x, [])
                ctx.set(dut.node[x].send, s[t] if t < len(s) else 0)
            await ctx.tick()
            if t in ends:
                where = {}
                for x, nd in enumerate(dut.nodes):
                    for buf, valid in ((nd.buf_a, nd.valid_a), (nd.buf_b, nd.valid_b)):
                        if ctx.get(valid):
                            word = ctx.get(buf)
                            d, data = word >> (M - k), word & ((1 << (M - k)) - 1)
                            m = by_dst[d]
                            assert data == ms.payload[m], (t, x, m)
                            assert m not in where, f"message {m} twice, bit-time {t}"
                            where[m] = x
                seen.append((*ends[t], where))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


# k = 5 and 6 on Verilator (test_hc_cosim.py): Amaranth's simulator takes half a minute
A2_CASES = [(k, s) for k in (1, 2, 3) for s in (0, 1)] + [(4, 0)]


@pytest.mark.parametrize("k,seed", A2_CASES, ids=[f"k{k}-seed{s}" for k, s in A2_CASES])
def test_alg2_every_message_is_where_the_model_puts_it_after_every_step(k, seed):
    """Random partial permutations: after every step of every iteration the two buffers
    of every node hold exactly the messages the cycle-exact model
    (bitserial.run_alg2) has there, intact; the ports equal the model's at every
    bit-time."""
    rng = np.random.default_rng([seed, k])
    M = k + int(rng.integers(0, k + 2))
    net = circuit(k, algorithm="alg2", message_bits=M)
    n = 1 << k
    src, dst = alg1.random_partial_permutation(k, int(rng.integers(1, n + 1)), rng)
    ms = messages(net, src, dst, seed)
    model = bitserial.run_alg2(k, src, dst, message_bits=M, data=ms.payload)
    want = {(s.iteration, s.number): s.positions for s in model.steps}
    seen = _alg2_positions(net, ms, range(len(ms)))
    assert [p for p, *_ in seen] == [kind for kind, *_ in net.phases]
    for kind, i, where in seen:
        if kind in STEP_OF:
            pos = want[(i, STEP_OF[kind])]
            assert where == {m: int(pos[m]) for m in range(len(ms))}, (k, seed, kind, i)
    assert seen[-2][2] == {m: int(dst[m]) for m in range(len(ms))}   # after the last step
    assert seen[-1][2] == {}                    # delivered: the buffers are empty
    rep = net.run(ms, keep_results=True)
    assert rep.cycles == 1 and rep.delivered == len(ms)
    check(run_cycles_amaranth(net, ms, rep.results, family=family_of(net)),
          f"alg2 k={k} M={M} seed {seed}")


def test_alg2_patterns_on_the_4_cube():
    """Every permutation pattern, one delivery cycle each, in one simulation."""
    net = circuit(4, algorithm="alg2")
    pairs = [make_pattern(4, p, 3) for p in ("transpose", "bit-reversal", "complement",
                                             "random-permutation")]
    ms = messages(net, np.concatenate([s for s, _ in pairs]),
                  np.concatenate([d for _, d in pairs]), 3)
    cycles = [range(16 * j, 16 * (j + 1)) for j in range(len(pairs))]
    check(run_cycles_amaranth(net, ms, cycles, family=family_of(net)), "patterns")


def test_alg2_cycle_is_the_schedule_between_injection_and_delivery():
    k, M = 3, 7
    net = circuit(k, algorithm="alg2", message_bits=M)
    sched = bitserial.schedule(k, M)
    assert net.arrival == M + 1 + sched.total
    assert net.cycle_length == net.arrival + M + 1
    assert sum(length for *_, length in net.phases) == net.cycle_length
    with pytest.raises(ParameterError, match="order must be left out for alg2"):
        circuit(3, algorithm="alg2", order=(1, 0, 2))
    with pytest.raises(ParameterError, match=r"message_bits must be an integer in \[3, "):
        circuit(3, algorithm="alg2", message_bits=2)
