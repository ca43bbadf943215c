"""The hypercube's timing and arbitration rules as docs/hypercube.md ("Timing and
arbitration rules") and the manifest state them, each checked on the hardware (Amaranth's
simulator, small cubes) and, where the model has the rule, on the model: the collision
flags' router and clock, the outputs outside a delivery cycle, what ``--message-bits``
counts, step 0's injections, Valiant passing its destination in phase 1, the e-cube
admission rule, the bit order of ``q<j>_full``, a late ``recv_ack`` and which routings a
non-default ``--order`` routes without collision.

Replay a failure with ``python -m pytest tests/hypercube/test_hc_rules.py -k <name>``;
random cases give their seed in the test id and the message.
"""

import itertools
import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from amaranth.sim import Simulator

from fatnet.cli.main import main
from fatnet.api.registry import family_of
from fatnet.golden.bitstream import int_to_bits
from fatnet.golden.hypercube import alg1
from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.store_forward import route
from fatnet.golden.messages import MessageSet
from fatnet.hdl.gen import manifest


# ------------------------------------------------------------------ a recording bench
@dataclass
class Trace:
    """What :func:`record` saw: per watched name, its value at every clock; ``pre``
    clocks before the first start strobe, then per cycle its ``T + extra`` bit-times."""

    pre: dict = field(default_factory=dict)
    cycles: list = field(default_factory=list)


def record(net, cycles, watch, *, pre=0, pre_send=0, extra=0, ack="same"):
    """Run ``cycles`` (each ``{node: stream}``: the bits node x drives on send from
    bit-time 0; ``{node: (stream, first)}`` drives the stream from bit-time ``first``,
    which may lie after busy falls) on the top of ``net``, ``extra`` bit-times past each
    cycle's end, after ``pre`` clocks without a start strobe (every send driving
    ``pre_send``). ``watch(dut)`` -> {name: signal}. ``ack``:
    how destinations drive recv_ack: ``"same"`` from the bit-time recv first carries a 1
    (the model's rule), ``"late"`` one clock later (from a register), ``None`` never."""
    dut = family_of(net).hardware.top(net)
    sigs = watch(dut)
    T = net.cycle_length
    out = Trace()

    def sample(ctx, into):
        for name, s in sigs.items():
            into.setdefault(name, []).append(ctx.get(s))

    async def bench(ctx):
        for _ in range(pre):
            for x in range(net.nodes):
                ctx.set(dut.node[x].send, pre_send)
            sample(ctx, out.pre)
            await ctx.tick()
        for streams in cycles:
            ctx.set(dut.start, 1)
            for x in range(net.nodes):       # the strobe's clock is no bit-time
                ctx.set(dut.node[x].send, 0)
                ctx.set(dut.node[x].recv_ack, 0)
            await ctx.tick()
            ctx.set(dut.start, 0)
            seen, late, rows = [0] * net.nodes, [0] * net.nodes, {}
            for t in range(T + extra):
                for x in range(net.nodes):
                    bits, first = _stream_at(streams, x)
                    i = t - first
                    ctx.set(dut.node[x].send, bits[i] if 0 <= i < len(bits) else 0)
                    seen[x] |= ctx.get(dut.node[x].recv)
                    level = {"same": seen[x], "late": late[x], None: 0}[ack]
                    ctx.set(dut.node[x].recv_ack, level)
                    late[x] = seen[x]
                sample(ctx, rows)
                await ctx.tick()
            out.cycles.append({name: np.array(v) for name, v in rows.items()})
        out.pre = {name: np.array(v) for name, v in out.pre.items()}

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return out


def _stream_at(streams, x):
    """(bits, first bit-time) node x drives in a cycle of :func:`record`."""
    given = streams.get(x, [])
    return given if isinstance(given, tuple) else (given, 0)


def ports(dut):
    """The controller and every node's recv and send_ack."""
    sigs = {"bit_time": dut.bit_time, "busy": dut.busy}
    for x in range(len(dut.node)):
        sigs[f"recv{x}"] = dut.node[x].recv
        sigs[f"send_ack{x}"] = dut.node[x].send_ack
    return sigs


def streams_of(net, ms, idx=None):
    """{source: stream} of one cycle of messages ``idx`` (default all), as the model
    encodes them."""
    inj = net.injections(ms, range(len(ms)) if idx is None else idx)
    return {int(ms.src[m]): list(stream) for m, (_, stream) in inj.items()}


def doc_of(net):
    return manifest(net, "hypercube", hardware=family_of(net).hardware)


def _order(k, seed):
    return tuple(int(d) for d in np.random.default_rng([seed, 3]).permutation(k))


# ------------------------------------------------------------------ 1. collision flags
def _flags(dut):
    return {f"c{r}_{x}": dut.collision[r][x] for r in range(len(dut.collision))
            for x in range(len(dut.node))}


#: (k, order, src, dst) with one tie: rank 0 of node 1 (node 1's bit 0 is 1: the
#: neighbour's crossing message keeps it); rank 0 of node 2 in order 1,0; rank 1 of node 0
#: in the 3-cube (node 0's bit 1 is 0: its own staying message keeps it)
FLAG_CASES = [(2, (0, 1), [0, 1], [1, 3]), (2, (1, 0), [0, 2], [2, 3]),
              (3, (0, 1, 2), [0, 3], [4, 0])]


def _flag_timing_holds(net, ms, why):
    """Run one modelled cycle and the next strobe: every collision the model reports at
    (rank r, node x) sets collision_<r>_<x> from bit-time 2r + 2 to past busy's fall, no
    other flag rises, and the next start strobe's clock clears them all."""
    result = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    want = {(c.rank, c.node): c.bit_time for c in net.chain.collisions(result)}
    extra = 3
    tr = record(net, [streams_of(net, ms), {}], _flags, extra=extra)
    T = net.cycle_length
    for r in range(net.k):
        for x in range(net.nodes):
            got = tr.cycles[0][f"c{r}_{x}"].tolist()
            if (r, x) in want:
                assert want[(r, x)] == 2 * r + 1, why
                assert got == [0] * (2 * r + 2) + [1] * (T + extra - 2 * r - 2), \
                    f"{why}: collision_{r}_{x} {got}"
            else:
                assert not any(got), f"{why}: collision_{r}_{x} rose: {got}"
            assert tr.cycles[1][f"c{r}_{x}"][0] == 0, f"{why}: not cleared by the strobe"
    return want


@pytest.mark.parametrize("k,order,src,dst", FLAG_CASES)
def test_collision_flag_rises_at_the_contested_register_in_bit_time_2r_plus_2(k, order,
                                                                              src, dst):
    """Crafted ties at rank 0 and rank 1: the flag is the router of the node whose
    register both messages claimed (not the lost message's source), and the message from
    the node whose bit order[r] is 0 keeps it."""
    net = circuit(k, order=order)
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 0)
    want = _flag_timing_holds(net, ms, f"order {order}, {list(zip(src, dst))}")
    assert len(want) == 1
    (r, x), = want
    result = net.simulate_cycle(ms, net.injections(ms, range(len(ms))))
    kept, = result.delivered
    lost, = result.lost
    d = order[r]
    # both claimed node x's register at rank r, one staying and one crossing: the one
    # that came from the node whose bit d is 0 keeps it
    came_from = {m: x ^ ((int(ms.src[m]) ^ int(ms.dst[m])) & (1 << d)) for m in (kept, lost)}
    assert (came_from[kept] >> d) & 1 == 0 and (came_from[lost] >> d) & 1 == 1


@pytest.mark.parametrize("seed", range(4))
def test_collision_flags_timing_on_random_routings(seed):
    rng = np.random.default_rng([seed, 32])
    k = 3
    net = circuit(k, order=_order(k, seed))
    src, dst = alg1.random_partial_permutation(k, 8, rng)
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, seed)
    want = _flag_timing_holds(net, ms, f"seed {seed}, order {net.order}")
    assert want, f"seed {seed}: pick a seed with a collision"


def test_collision_flags_are_registers_of_the_top_module(tmp_path):
    """The Verilog names them collision_<r>_<x>, in the top (not ports)."""
    net = circuit(2)
    assert main(["gen", "hypercube", "--dimension", "2", "-o", str(tmp_path)]) == 0
    text = (tmp_path / "hypercube.v").read_text()
    doc = json.loads((tmp_path / "hypercube.json").read_text())
    for r in range(2):
        for x in range(4):
            assert f"reg collision_{r}_{x} = 1'h0;" in text
            assert all(p["name"] != f"collision_{r}_{x}" for p in doc["ports"])
    assert "collision_<r>_<x>" in doc["collision_flags"]
    assert "bit-time 2r + 2" in doc["collision_flags"]
    assert net.cycle_length == doc["cycle_length_bits"]


# ------------------------------------------------------------------ 2, 3. idle outputs
ALGORITHMS = ["alg1", "alg2", "ecube", "valiant"]


def _net(algorithm, k=2, **kw):
    return circuit(k, algorithm, **kw)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_before_the_first_start_bit_time_busy_recv_and_send_ack_are_0(algorithm):
    """alg1 with every send 0; the others with every send 1 (ignored: no cycle runs)."""
    net = _net(algorithm)
    tr = record(net, [], ports, pre=6, pre_send=int(algorithm != "alg1"))
    for name, values in tr.pre.items():
        assert not values.any(), f"{algorithm}: {name} {values.tolist()} before the start"
    assert "bit_time reads 0 (not T" in doc_of(net)["idle_outputs"]


@pytest.mark.parametrize("algorithm", ["alg2", "ecube", "valiant"])
def test_after_busy_falls_recv_is_0_and_send_ack_as_stated(algorithm):
    """alg2: recv and send_ack read 0 from bit-time T (send_ack falls with busy);
    e-cube and Valiant: recv reads 0 and send_ack holds its last value (1 at every node
    that injected, since the cycle delivered everything) until the next start strobe,
    whose clock clears it. Sends driven after busy falls are ignored."""
    net = _net(algorithm)
    ms = MessageSet.from_pairs([0, 1, 2, 3], [3, 2, 1, 0], net.payload_bits, 1)
    res = net.simulate_cycle(ms, net.injections(ms, range(4)))
    assert len(res.delivered) == 4
    streams = streams_of(net, ms)
    T, extra = net.cycle_length, 8
    late = {x: (s, T + 1) for x, s in streams.items()}     # ignored: after the cycle
    tr = record(net, [streams, late, {}], ports, extra=extra)
    first, second, third = tr.cycles
    assert list(first["busy"][:T]) == [1] * T and not first["busy"][T:].any()
    assert list(first["bit_time"]) == list(range(T)) + [T] * extra
    held = 0 if algorithm == "alg2" else 1
    for x in range(net.nodes):
        assert not first[f"recv{x}"][T:].any(), (algorithm, x)
        assert list(first[f"send_ack{x}"][T:]) == [held] * extra, (algorithm, x)
        assert first[f"send_ack{x}"][T - 1] == 1, (algorithm, x)
        assert not second[f"recv{x}"].any() and not second[f"send_ack{x}"].any(), (
            algorithm, x, "sends outside a cycle are ignored")
        assert third[f"send_ack{x}"][0] == 0, (algorithm, x, "cleared by the strobe")
    assert "after busy falls" in doc_of(net)["idle_outputs"]


def test_after_busy_falls_ecube_send_ack_stays_0_when_the_cycle_did_not_drain():
    net = circuit(3, "ecube", buffer=1, steps=1)
    ms = MessageSet.from_pairs(np.arange(8), 7 - np.arange(8), net.payload_bits, 2)
    res = net.simulate_cycle(ms, net.injections(ms, range(8)))
    assert res.lost
    tr = record(net, [streams_of(net, ms)], ports, extra=6)
    for x in range(net.nodes):
        assert not tr.cycles[0][f"send_ack{x}"].any(), x


def test_after_busy_falls_alg1_keeps_its_circuits_both_ways():
    """A stream a source drives after busy falls comes out of its destination's recv k
    clocks later; recv_ack (held) keeps coming back on send_ack."""
    k = 3
    net = circuit(k)
    src = np.arange(8)
    dst = 7 - src                                           # complement: no collision
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 3)
    streams = streams_of(net, ms)
    T, tail = net.cycle_length, [1, 0, 1, 1, 0, 1]
    drive = {x: (s + [0] * (T + 2 - len(s)) + tail, 0) for x, s in streams.items()}
    tr = record(net, [drive], ports, extra=2 + len(tail) + k)
    c = tr.cycles[0]
    for s, d in zip(src, dst):
        got = c[f"recv{d}"][T + 2 + k:T + 2 + k + len(tail)].tolist()
        assert got == tail, (s, d, got)
        assert c[f"send_ack{s}"][T:].all(), (s, "recv_ack held: send_ack stays")


# ------------------------------------------------------------------ 4. message bits
def test_message_bits_count_the_destination_in_the_hardware_and_not_in_route(capsys):
    """gen and sim: M is the k-bit destination and the data (e-cube's stored word is M
    bits, Valiant's M + k with the intermediate node); route's bit-times add a k- or
    2k-bit header to M. The manifest, the help and these numbers agree."""
    k, M = 3, 7
    for algorithm, word in (("ecube", M), ("valiant", M + k)):
        net = circuit(k, algorithm, message_bits=M)
        assert net.payload_bits == M - k and net.word_bits == word
        stream = (net.encode_valiant(5, 2, 1) if algorithm == "valiant"
                  else net.encode(0, 2, 1))
        assert len(stream) == 1 + word
        doc = doc_of(net)
        assert f"Wd = {'M + k' if algorithm == 'valiant' else 'M'}" in doc["terms"]["Wd"]
        assert "the k-bit destination and the data" in doc["fields"]["spec.message_bits"]
        assert main(["route", "hypercube", "--dimension", str(k), "--algorithm", algorithm,
                     "--pattern", "complement", "--message-bits", str(M), "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        h = out["header_bits"]
        assert h == (2 if algorithm == "valiant" else 1) * k
        assert out["store_forward_bit_times"] == out["steps"] * (M + h)
    for verb, phrase in (("gen", "the destination (k bits) and the data"),
                         ("sim", "the destination (k bits) and the data"),
                         ("route", "add a header of k or 2k bits to M")):
        try:
            assert main([verb, "hypercube", "--help"]) in (0, None)
        except SystemExit as e:
            assert e.code in (0, None)
        assert phrase in " ".join(capsys.readouterr().out.split()), verb


# ------------------------------------------------------------------ 5. step 0
def _queues(dut):
    sigs = {}
    for x, rt in enumerate(dut.routers):
        for j in range(len(rt.full)):
            sigs[f"full{x}_{j}"] = rt.full[j]
            for p, slot in enumerate(rt.slots[j]):
                sigs[f"slot{x}_{j}_{p}"] = slot
            sigs[f"xo{x}_{j}"] = rt.xo[j].data
    return sigs


@pytest.mark.parametrize("algorithm", ["ecube", "valiant"])
def test_step_0_puts_each_injection_at_the_head_of_one_queue(algorithm):
    """Step 0 carries nothing on any link; at bit-time Wd + 1 each injected message is
    delivered (it is at its target) or written into slot 0 of the queue of the lowest
    dimension in which its node and its target differ, the first link the model's run
    crosses for it."""
    k, seed = 3, 6
    net = circuit(k, algorithm, buffer=2, seed=seed if algorithm == "valiant"
                           else None)
    src = np.arange(8)
    dst = np.random.default_rng(seed).permutation(8)
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, seed)
    inter = net.intermediates(ms) if algorithm == "valiant" else dst
    S, Wd = net.step_length, net.word_bits
    tr = record(net, [streams_of(net, ms)], _queues)
    c = tr.cycles[0]
    kw = {"intermediate": inter, "intermediate_buffer": False} \
        if algorithm == "valiant" else {}
    run = route(k, src, dst, algorithm=algorithm, buffer=2, **kw)
    first_link = {}
    for m, link in zip(run.crossings["message"], run.crossings["link"]):
        first_link.setdefault(int(m), int(link))
    for x in range(8):
        for j in range(k):
            assert not c[f"xo{x}_{j}"][:S].any(), (x, j, "a link carried data in step 0")
            assert c[f"full{x}_{j}"][Wd + 1] == 0, (x, j)
    for m in range(8):
        x = int(src[m])
        target = int(dst[m]) if int(inter[m]) == x else int(inter[m])
        if target == x:
            assert run.delivery_step[m] == 0
            assert all(c[f"full{x}_{j}"][S - 1] == 0 for j in range(k))
            continue
        j = (x ^ target) & -(x ^ target)
        j = j.bit_length() - 1
        assert first_link[m] == x * k + j, m
        assert [c[f"full{x}_{i}"][S - 1] for i in range(k)] == \
            [1 if i == j else 0 for i in range(k)], m
        word = int(c[f"slot{x}_{j}_0"][S - 1])
        assert word >> (Wd - k) == target, m
        assert word & ((1 << net.payload_bits) - 1) == int(ms.payload[m]), m


# ------------------------------------------------------------------ 6. Valiant
def test_valiant_passing_its_destination_in_phase_1_is_not_delivered_there():
    """2-cube, 0 -> 1 through intermediate 3: phase 1 crosses 0 -> 1 -> 3 and passes
    node 1 in step 1; it is delivered at node 1 in step 3, after phase 2 (3 -> 1)."""
    k = 2
    net = circuit(k, "valiant")
    run = route(k, [0], [1], algorithm="valiant", intermediate=[3],
                intermediate_buffer=False)
    assert run.delivery_step.tolist() == [3] and run.hops.tolist() == [3]
    stream = net.encode_valiant(3, 1, 2)
    tr = record(net, [{0: stream}], ports)
    recv = tr.cycles[0]["recv1"].tolist()
    at = net.arrival_of_step(3)
    assert recv.index(1) == at, recv
    assert recv[at:at + 1 + net.M] == [1] + int_to_bits(1, k) + int_to_bits(2, k)
    assert "passes its destination in phase 1" in doc_of(net)["arbitration"]


# ------------------------------------------------------------------ 7, 8. admission
@pytest.mark.parametrize("B", [1, 2])
def test_admission_ranks_arrivals_by_dimension_lowest_first(B):
    """4-cube: in step 1, message 0 (1 -> 4) arrives at node 0 across dimension 0 and
    message 1 (2 -> 12) across dimension 1; both want node 0's dimension-2 queue. B = 1:
    message 0 is admitted, message 1 stays at the head of node 2's dimension-1 queue and
    crosses in step 2. B = 2: both, message 0 in slot 0 (q2_full = 0b11)."""
    k = 4
    net = circuit(k, "ecube", buffer=B, steps=5)   # both are delivered by step 4
    src, dst = [1, 2], [4, 12]
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 4)
    run = route(k, src, dst, algorithm="ecube", buffer=B)
    step1 = {int(m) for m, s in zip(run.crossings["message"], run.crossings["step"])
             if s == 1}
    assert step1 == ({0} if B == 1 else {0, 1}) and run.steps <= net.steps
    S, Wd = net.step_length, net.word_bits
    tr = record(net, [streams_of(net, ms)], _queues)
    c = tr.cycles[0]
    after = 2 * S                  # step 2's first bit-time: step 1's decide and pop done
    assert c["full0_2"][after] == (0b1 if B == 1 else 0b11)
    assert int(c["slot0_2_0"][after]) >> (Wd - k) == 4
    if B == 1:
        assert c["full2_1"][after] == 1 and int(c["slot2_1_0"][after]) >> (Wd - k) == 12
    else:
        assert int(c["slot0_2_1"][after]) >> (Wd - k) == 12
        assert c["full2_1"][after] == 0
    assert "lowest arrival dimension first" in doc_of(net)["arbitration"]


def test_q_full_is_a_thermometer_from_bit_0():
    """Every clock, every queue's full bits are 2^n - 1 (n messages, slot 0 the head,
    bit p = slot p), on a busy routing with B = 4."""
    k, B = 3, 4
    net = circuit(k, "ecube", buffer=B)
    src = np.arange(8)
    dst = np.array([int(f"{x:03b}"[::-1], 2) for x in src])        # bit-reversal
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 8)
    tr = record(net, [streams_of(net, ms)], _queues)
    seen = set()
    for name, values in tr.cycles[0].items():
        if name.startswith("full"):
            seen.update(int(v) for v in values)
    assert seen <= {(1 << n) - 1 for n in range(B + 1)}, seen
    assert len(seen) > 1
    assert "bit p is slot p" in doc_of(net)["queue_registers"]


# ------------------------------------------------------------------ 9. late recv_ack
@pytest.mark.parametrize("k,M", [(2, 4), (3, 8)])
def test_send_ack_is_recv_ack_delayed_k_clocks_a_late_one_arrives_after_busy(k, M):
    """The model's destination raises recv_ack with the M bit (2k): send_ack at 3k. One
    clock late: 3k + 1, which is T (after busy falls) when P <= k."""
    net = circuit(k, message_bits=M)
    ms = MessageSet.from_pairs([0], [(1 << k) - 1], net.payload_bits, 9)
    T = net.cycle_length
    for ack, at in (("same", 3 * k), ("late", 3 * k + 1)):
        tr = record(net, [streams_of(net, ms)], ports, extra=3, ack=ack)
        got = tr.cycles[0]["send_ack0"].tolist()
        assert got.index(1) == at and all(got[at:]), (ack, got)
        assert net.arrival + net.ack_latency == 3 * k
    assert (3 * k + 1 >= T) == (net.payload_bits <= k)
    assert f"3k + 1 = {3 * k + 1}" in doc_of(net)["acknowledgment"]


# ------------------------------------------------------------------ 10. --order
def relabel(k, order, x):
    """sigma(x): bit r is bit order[r] of x."""
    x = np.asarray(x)
    return sum(((x >> d) & 1) << r for r, d in enumerate(order))


@pytest.mark.parametrize("k", [2, 3])
def test_order_routes_exactly_the_relabelled_collision_free_routings(k):
    """Every partial permutation of the k-cube, every order: collision-free in the order
    exactly when its relabelling is in 0 .. k - 1 (the 2-cube also by routing each one)."""
    n = 1 << k
    for order in itertools.permutations(range(k)):
        sigma = relabel(k, order, np.arange(n))
        for maps in alg1.all_partial_permutations(k):
            relabelled = np.full_like(maps, -1)
            relabelled[:, sigma] = np.where(maps >= 0, sigma[np.maximum(maps, 0)], -1)
            free = alg1.collision_free_batch(k, maps, order=order)
            assert (free == alg1.collision_free_batch(k, relabelled)).all(), order
            if k == 2:
                for f, ok in zip(maps, free):
                    s, d = alg1.maps_to_routing(f)
                    assert alg1.route(k, s, d, order=order).ok == ok, (order, f)


def test_a_semi_contraction_can_collide_in_another_order_on_the_hardware():
    """The 2-cube's semi-contraction 0 -> 0, 2 -> 1 is collision-free in order 0,1 and
    collides in order 1,0 (its relabelling 0 -> 0, 1 -> 2 is not a semi-contraction); the
    RTL raises the flag there, and a relabelled semi-contraction routes cleanly."""
    k, src, dst = 2, [0, 2], [0, 1]
    assert alg1.is_semi_contraction(k, src, dst)
    assert alg1.route(k, src, dst).ok and not alg1.route(k, src, dst, order=(1, 0)).ok
    assert not alg1.is_semi_contraction(k, relabel(k, (1, 0), src), relabel(k, (1, 0), dst))
    for order, collide in (((0, 1), False), ((1, 0), True)):
        net = circuit(k, order=order)
        ms = MessageSet.from_pairs(src, dst, net.payload_bits, 0)
        tr = record(net, [streams_of(net, ms)], _flags)
        raised = sorted(name for name, v in tr.cycles[0].items() if v.any())
        assert raised == (["c0_0"] if collide else []), order   # node 0's rank-0 router
    order = (2, 0, 1)
    net = circuit(3, order=order)
    inverse = np.argsort(relabel(3, order, np.arange(8)))
    s, d = alg1.random_semi_contraction(3, 6, 12)
    ms = MessageSet.from_pairs(inverse[s], inverse[d], net.payload_bits, 12)
    tr = record(net, [streams_of(net, ms)], _flags)
    assert not any(v.any() for v in tr.cycles[0].values())
    assert "sigma" in doc_of(net)["order_rule"]
