"""The cycle-exact bit-serial hypercube model (golden/hypercube/bitserial.py): Algorithm 2's
fixed schedule against the docstring's formulas, the router chain and Algorithm 1's pass
against bit-by-bit simulations of the router registers (test_hc_alg1's ``pipeline_sim``
and one written here that also takes any dimension order and arbitrates collisions),
Algorithm 2 against the functional model's trace and against wire-level expectations
derived step by step, and the batches in flight of Section IV.

Independent references here, not shared with the model: step lengths written from the
docstring, MSB-first bit lists, the router chain simulated register by register with
dicts, ranks by direct counting, relays and holes from those ranks, and the reverse
circuit's nodes from the hole's and relay's addresses.
"""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import alg1, alg2
from fatnet.golden.hypercube import bitserial as bs

from test_hc_alg1 import pipeline_sim


# ---------------------------------------------------------------- independent helpers


def msb_bits(value, width):
    """``width`` bits of ``value``, MSB first (written here, not the framing's)."""
    return [(int(value) >> (width - 1 - j)) & 1 for j in range(width)]


def as_int(bits):
    v = 0
    for b in bits:
        v = 2 * v + int(b)
    return v


def expected_step_lengths(f, M):
    """Module docstring, steps 1..6: cross M + 1; enumerate 2f + 1; pack 2f + M + 1;
    enumerate 2f + 1; pack the holes' addresses 3f + 1; rendezvous f + M + 1; with no
    free dimension Steps 2-6 take 0."""
    if f == 0:
        return [M + 1, 0, 0, 0, 0, 0]
    return [M + 1, 2 * f + 1, 2 * f + M + 1, 2 * f + 1, 3 * f + 1, f + M + 1]


def chain_reference(dims, src, dst, payload_bits, payloads, ids=None):
    """The router chain over ``dims``, register by register. Every node has a router per
    rank; input (x, r) is node x's router r. A source drives [1, address bit per rank in
    ``dims`` order, payload MSB first] into its (src, 0), index p during bit-time p.
    Router r, on the bit it gets: index r (the M bit) is dropped, index r + 1 (its address
    bit) sets its direction and is replaced by a fresh 1, later indices are kept; what it
    keeps is driven during the next bit-time into (x, r + 1) or (x ^ 2**dims[r], r + 1).
    The first message to reach an input owns it; two at once: the one coming from the node
    with bit dims[r] = 0 wins and the other is lost there (so its bits go no further).

    Returns (bits: {(x, r): {bit-time: value}}, owner: {(x, r): message},
    delivered: {message: (node, payload, arrival bit-time of the M bit)},
    collisions: [(rank, node, kept, lost)], last: the last bit-time with a bit anywhere).
    """
    f = len(dims)
    ids = list(range(len(src))) if ids is None else [int(m) for m in ids]
    streams, start = {}, {}
    for m, s, t, p in zip(ids, src, dst, payloads):
        s, t = int(s), int(t)
        streams[m] = [1] + [((s ^ t) >> d) & 1 for d in dims] + msb_bits(p, payload_bits)
        start[m] = s
    reg, cross, owner, bits = {}, {}, {}, {}
    lost, collisions, delivered, got_payload = set(), [], {}, {}
    last, tau = -1, 0
    while True:
        inputs = {}
        for m, stream in streams.items():
            if tau < len(stream):
                inputs.setdefault((start[m], 0), []).append((m, None, tau, stream[tau]))
        for (x, r), (m, b, v) in reg.items():
            y = x ^ (1 << dims[r]) if cross[(m, r)] else x
            inputs.setdefault((y, r + 1), []).append((m, x, b, v))
        if not inputs:
            break
        last = tau
        new = {}
        for (y, r), got in inputs.items():
            if (y, r) not in owner:
                if r:
                    got = sorted(got, key=lambda g: (g[1] >> dims[r - 1]) & 1)
                owner[(y, r)] = got[0][0]
            winners = [g for g in got if g[0] == owner[(y, r)]]
            for g in got:
                if g[0] != owner[(y, r)] and g[0] not in lost:
                    lost.add(g[0])
                    collisions.append((r - 1, y, owner[(y, r)], g[0]))
            assert len(winners) <= 1
            if not winners:
                continue
            m, _, b, v = winners[0]
            bits.setdefault((y, r), {})[tau] = v
            if r == f:
                if b == f:
                    delivered[m] = (y, None, tau)
                else:
                    got_payload.setdefault(m, []).append(v)
            elif b == r + 1:
                cross[(m, r)] = v == 1
                new[(y, r)] = (m, b, 1)
            elif b > r + 1:
                new[(y, r)] = (m, b, v)
        reg = new
        tau += 1
    delivered = {m: (y, as_int(got_payload.get(m, [])), t)
                 for m, (y, _, t) in delivered.items()}
    return bits, owner, delivered, sorted(collisions), last


def reference_waves(bits, length):
    """The reference's bits as the engine's waveform dict."""
    out = {}
    for (x, r), at in bits.items():
        wave = np.zeros(length, dtype=np.uint8)
        for t, v in at.items():
            wave[t] = v
        out[("rank", r, x, 0)] = wave
    return out


def assert_same_waves(got, want, what):
    assert sorted(got) == sorted(want), what
    for key in want:
        assert np.array_equal(got[key], want[key]), (what, key, got[key], want[key])


def position_after(src, dst, dims):
    """Where a message is after its chain has handled ``dims``: the destination's bits
    there, the source's elsewhere."""
    mask = sum(1 << d for d in dims)
    return (int(dst) & mask) | (int(src) & ~mask)


def direct_offsets(flagged, i):
    """node -> number of flagged nodes below it that agree with it in bits 0..i."""
    low = (1 << (i + 1)) - 1
    return {x: sum(1 for y in flagged if (y & low) == (x & low) and y < x) for x in flagged}


# ---------------------------------------------------------------- schedule


@pytest.mark.parametrize("k", range(1, 11))
def test_schedule_step_lengths_and_total(k):
    for M in sorted({k, k + 1, 2 * k, 3 * k + 2, 5 * k}):
        s = bs.schedule(k, M)
        assert s.k == k and s.message_bits == M
        assert len(s.steps) == 6 * k, (k, M)
        t = 0
        for n, st in enumerate(s.steps):
            i, number = divmod(n, 6)
            number += 1
            f = k - 1 - i
            assert (st.iteration, st.number, st.free) == (i, number, f), (k, M, n)
            assert st.kind == bs.STEP_KINDS[number]
            assert st.length == expected_step_lengths(f, M)[number - 1], (k, M, i, number)
            assert st.start == t, (k, M, i, number)          # contiguous from 0
            assert s.step(i, number) == st
            t += st.length
        assert s.total == t == 5 * k * k + (3 * M + 1) * k - 2 * M - 5, (k, M)
        lengths = [3 * M + 10 * (k - 1 - i) + 6 for i in range(k - 1)] + [M + 1]
        assert s.iteration_lengths() == lengths, (k, M)
        assert s.iteration_lengths()[0] == max(s.iteration_lengths())


@pytest.mark.parametrize("M", [1, 2, 7])
def test_schedule_of_the_1_cube(M):
    """k = 1: only iteration 0, no free dimension: Step 1's M + 1 bit-times, the other
    steps empty; the closed form gives 5 + 3M + 1 - 2M - 5 = M + 1 too."""
    s = bs.schedule(1, M)
    assert [st.length for st in s.steps] == [M + 1, 0, 0, 0, 0, 0]
    assert s.total == M + 1 == 5 + (3 * M + 1) - 2 * M - 5
    assert s.iteration_lengths() == [M + 1]


def test_schedule_default_message_bits():
    for k in (1, 4, 9):
        assert bs.schedule(k).message_bits == 2 * k
        assert bs.schedule(k).total == bs.schedule(k, 2 * k).total


@pytest.mark.parametrize("bad", [2, 0, -1, True, 2.5, "6", (1 << 20) + 1])
def test_schedule_refuses_bad_message_bits(bad):
    with pytest.raises(ParameterError, match="message_bits"):
        bs.schedule(3, bad)
    with pytest.raises(ParameterError, match="message_bits"):
        bs.run_alg2(3, [0], [1], message_bits=bad)
    with pytest.raises(ParameterError, match="message_bits"):
        bs.pipelined_batches(3, [([0], [1])], message_bits=bad)


# ---------------------------------------------------------------- router chain, Algorithm 1


@pytest.mark.parametrize("seed", range(12))
def test_alg1_waveforms_against_pipeline_sim(seed):
    """Collision-free routings in the default order: every forward wire of the pass
    carries what test_hc_alg1's bit-by-bit simulation puts on router r's input at the
    message's node after r steps, per bit-time."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 7))
    M = k + int(rng.integers(1, 2 * k + 3))
    gen = (alg1.random_packing, alg1.random_semi_contraction)[seed % 2]
    src, dst = gen(k, int(rng.integers(1, (1 << k) + 1)), rng)
    msgs, arrivals, delivered, conflicts = pipeline_sim(k, src, dst, M, seed)
    assert not conflicts, seed
    payloads = [as_int(s[k + 1:]) for s in msgs]
    run = bs.run_alg1(k, src, dst, message_bits=M, payloads=payloads)
    total = alg1.pipeline_timing(k, M).total
    assert run.bit_times == total == M + k + 1, seed
    want = {}
    for m in range(len(src)):
        for r in range(k + 1):
            node = position_after(src[m], dst[m], range(r))
            wave = want.setdefault(("rank", r, node, 0), np.zeros(total, dtype=np.uint8))
            for b in range(r, M + 1):
                wave[arrivals[(m, r, b)]] = 1 if b == r else msgs[m][b]
    assert_same_waves(run.cycle.waveforms(), want, f"seed {seed}")
    assert run.delivered.all() and not run.collisions, seed
    for m in range(len(src)):
        o = run.cycle.outcomes[m]
        assert o.status == "delivered" and o.arrival == 2 * k, (seed, m)
        assert o.delivered_payload == as_int(delivered[m][1]) == payloads[m], (seed, m)
        assert delivered[m][0] == dst[m]


@pytest.mark.parametrize("seed", range(30))
def test_alg1_collisions_against_functional_route(seed):
    """Random partial permutations in a random order: waveforms, collisions and
    deliveries equal the register-level reference; collision-free iff alg1.route is ok;
    every cycle collision is a functional buffer collision at the same step and node
    holding both messages; the earliest ones coincide; the kept message is the one whose
    node before the step has bit dims[r] = 0."""
    rng = np.random.default_rng(1000 + seed)
    k = int(rng.integers(1, 7))
    m = int(rng.integers(0, (1 << k) + 1))
    src, dst = alg1.random_partial_permutation(k, m, rng)
    order = tuple(int(d) for d in rng.permutation(k)) if seed % 3 else tuple(range(k))
    M = k + int(rng.integers(1, k + 3))
    payloads = [int(p) for p in rng.integers(0, 1 << (M - k), size=m)]
    run = bs.run_alg1(k, src, dst, order=order, message_bits=M, payloads=payloads)
    bits, _, delivered, ref_coll, last = chain_reference(order, src, dst, M - k,
                                                         payloads)
    what = f"seed {seed}"
    assert run.bit_times == M + k + 1 and last < run.bit_times, what
    assert_same_waves(run.cycle.waveforms(), reference_waves(bits, run.bit_times), what)
    got = sorted((c.rank, c.node, c.kept, c.lost) for c in run.collisions)
    ref = {}
    for r, node, kept, lost in ref_coll:
        ref.setdefault((r, node, kept), []).append(lost)
    assert got == sorted((r, n, kp, tuple(sorted(ls))) for (r, n, kp), ls in ref.items()), \
        what
    assert run.delivered.tolist() == [j in delivered for j in range(m)], what
    for j, (node, payload, arrival) in delivered.items():
        assert node == dst[j] and payload == payloads[j] and arrival == 2 * k, what
    func = alg1.route(k, src, dst, order=order)
    assert func.ok == (not run.collisions), what
    assert run.delivered.all() == func.ok, what
    buffer = {(c.step, c.node): set(c.messages) for c in func.collisions
              if c.kind == "buffer"}
    for c in run.collisions:
        assert c.dimension == order[c.rank] and c.bit_time == 2 * c.rank + 1, what
        assert {c.kept, *c.lost} <= buffer.get((c.rank, c.node), set()), (what, c)
        d = order[c.rank]
        before = {j: position_after(src[j], dst[j], order[:c.rank]) for j in (c.kept, *c.lost)}
        assert (before[c.kept] >> d) & 1 == 0, (what, c)
        assert all((before[j] >> d) & 1 == 1 for j in c.lost), (what, c)
    if run.collisions:
        first = min(c.rank for c in run.collisions)
        assert first == min(s for s, _ in buffer), what
        assert {(c.node, frozenset({c.kept, *c.lost})) for c in run.collisions
                if c.rank == first} == \
            {(n, frozenset(ms)) for (s, n), ms in buffer.items() if s == first}, what


def test_alg1_collision_worked_by_hand():
    """2-cube, 0 -> 1 and 1 -> 3 (test_hc_alg1's example): after rank 0 both are for node
    1's rank-1 router; message 1 comes from node 1 (bit 0 set), message 0 from node 0:
    message 0 keeps it, message 1 is lost there during bit-time 1."""
    run = bs.run_alg1(2, [0, 1], [1, 3])
    assert [(c.rank, c.dimension, c.node, c.bit_time, c.kept, c.lost)
            for c in run.collisions] == [(0, 0, 1, 1, 0, (1,))]
    assert run.delivered.tolist() == [True, False]
    assert run.cycle.outcomes[1].status == "lost"


@pytest.mark.parametrize("seed", range(16))
def test_router_chain_over_any_dims(seed):
    """RouterChain over a random subset of the dimensions in a random order, with message
    labels: length 2f + P + 1, every wire and every delivery as the reference."""
    rng = np.random.default_rng(2000 + seed)
    k = int(rng.integers(1, 7))
    f = int(rng.integers(0, k + 1))
    dims = tuple(int(d) for d in rng.permutation(k)[:f])
    P = int(rng.integers(0, 2 * k + 2))
    m = int(rng.integers(0, (1 << k) + 1))
    src = rng.choice(1 << k, m, replace=False)
    # destinations differ from their sources only in dims (what a pass over dims can do)
    mask = sum(1 << d for d in dims)
    dst = (src & ~mask) | (rng.integers(0, 1 << k, size=m) & mask)
    payloads = [int(p) for p in rng.integers(0, 1 << P, size=m)] if P else [0] * m
    ids = [int(v) for v in rng.choice(1000, m, replace=False)]
    chain = bs.RouterChain(k, dims)
    assert chain.ranks == f and chain.length(P) == 2 * f + P + 1
    res = chain.run(src, dst, payloads, P, ids)
    what = f"seed {seed}"
    assert res.length == 2 * f + P + 1, what
    bits, _, delivered, ref_coll, last = chain_reference(dims, src, dst, P, payloads,
                                                         ids)
    assert last < res.length and (not delivered or last == res.length - 1), what
    assert_same_waves(res.waveforms(), reference_waves(bits, res.length), what)
    assert sorted(res.delivered) == sorted(delivered), what
    for j, (node, payload, arrival) in delivered.items():
        o = res.outcomes[j]
        assert o.path[-1].channel == ("rank", f, node) and o.arrival == arrival == 2 * f
        assert o.delivered_payload == payload, what
    got = sorted((c.rank, c.node, c.kept, lost) for c in chain.collisions(res)
                 for lost in c.lost)
    assert got == ref_coll, what


# ---------------------------------------------------------------- Algorithm 2


def check_alg2(k, src, dst, M, data, what):
    """Everything run_alg2 promises for one routing, derived step by step."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    n, N = src.size, 1 << k
    res = bs.run_alg2(k, src, dst, message_bits=M, data=data)
    sched = bs.schedule(k, M)
    assert res.ok and not res.lost, what
    assert np.array_equal(res.final, dst) and res.intact.all() and res.delivered.all(), what
    assert res.bit_times == sched.total, what
    # step for step the functional model's trace
    func = alg2.route(k, src, dst, message_bits=M)
    assert func.ok, what
    mine, theirs = res.trace(), func.trace()
    assert len(mine) == len(theirs) == 6 * k, what
    for a, b in zip(mine, theirs):
        assert a[:2] == b[:2] and a[2] == bs.STEP_KINDS[a[1]], (what, a[:2], b[:2])
        assert np.array_equal(a[3], b[3]), (what, a[:2], a[3], b[3])
    message = {j: [1] + msb_bits(dst[j], k) + msb_bits(data[j], M - k) for j in range(n)}
    pos = src.copy()
    for i in range(k):
        f = k - 1 - i
        low = (1 << (i + 1)) - 1
        free = tuple(range(i + 1, k))
        steps = res.steps[6 * i:6 * i + 6]
        assert [s.number for s in steps] == [1, 2, 3, 4, 5, 6], what
        for s in steps:
            assert s.iteration == i and s.timing == sched.step(i, s.number), what
            assert not s.collisions, (what, i, s.number)
            assert s.positions.min(initial=0) >= 0, (what, i, s.number)   # nothing lost

        # Step 1: exactly the messages whose destination differs in bit i cross.
        s1 = steps[0]
        crossers = [j for j in range(n) if ((pos[j] ^ dst[j]) >> i) & 1]
        want = {}
        for j in crossers:
            wave = np.zeros(M + 1, dtype=np.uint8)
            wave[:] = message[j]
            want[("dim", i, int(pos[j]))] = wave
        assert_same_waves(s1.waves, want, (what, i, 1))
        assert_same_waves(s1.wire_waves(), want, (what, i, 1))
        after1 = pos ^ np.array([(1 << i) if j in crossers else 0 for j in range(n)],
                                dtype=np.int64)
        assert np.array_equal(s1.positions, after1), (what, i)
        assert sorted(s1.moved) == sorted((j, int(pos[j]), int(pos[j]) ^ (1 << i))
                                          for j in crossers), (what, i)
        held1 = np.bincount(after1, minlength=N)
        assert held1.max(initial=0) <= 2, (what, i)
        pos = after1
        if f == 0:
            for s in steps[1:]:
                assert s.timing.length == 0 and s.cycle is None and s.enumeration is None
                assert not s.waves and not s.moved, (what, i)
                assert np.array_equal(s.positions, pos), (what, i)
            continue

        doubles = [int(x) for x in np.flatnonzero(held1 == 2)]
        holes = [int(x) for x in np.flatnonzero(held1 == 0)]
        assert len(doubles) == len(holes) or n < N, what

        def check_enumeration(s, flagged):
            """Steps 2 and 4: the adders' run; offsets by direct count; nothing moves."""
            en = s.enumeration
            assert en["total"] == s.timing.length == 2 * f + 1, (what, i, s.number)
            # f + 1 ranks of f + 1 bits, bit l of rank j during bit-time j + l
            assert np.array_equal(en["bit_times"], np.add.outer(np.arange(f + 1),
                                                                np.arange(f + 1)))
            offsets = direct_offsets(flagged, i)
            for x in flagged:
                assert en["o"][-1][x] == offsets[x], (what, i, s.number, x)
            assert sorted(np.flatnonzero(en["E"]).tolist()) == flagged, (what, i)
            assert np.array_equal(s.positions, pos), (what, i, s.number)
            assert not s.moved and not s.waves and s.cycle is None, (what, i, s.number)

        check_enumeration(steps[1], doubles)
        rank_d, rank_h = direct_offsets(doubles, i), direct_offsets(holes, i)

        def node_of_rank(x, r):
            return (x & low) | (r << (i + 1))

        # Step 3: the message that arrived at each double goes to its rank's relay.
        s3 = steps[2]
        senders = sorted(j for j in crossers if held1[pos[j]] == 2)
        relay = {j: node_of_rank(int(pos[j]), rank_d[int(pos[j])]) for j in senders}
        c3 = s3.cycle
        assert c3.length == s3.timing.length == 2 * f + M + 1, (what, i)
        assert sorted(c3.outcomes) == senders, (what, i)
        for j in senders:
            o = c3.outcomes[j]
            assert o.status == "delivered" and o.arrival == 2 * f, (what, i, j)
            assert o.path[-1].channel == ("rank", f, relay[j]), (what, i, j)
            assert o.delivered_payload == as_int(message[j][1:]), (what, i, j)
        bits, _, delivered, coll, _ = chain_reference(
            free, [pos[j] for j in senders], [relay[j] for j in senders], M,
            [as_int(message[j][1:]) for j in senders], senders)
        assert not coll and sorted(delivered) == senders, (what, i)
        assert_same_waves(c3.waveforms(), reference_waves(bits, c3.length), (what, i, 3))
        after3 = pos.copy()
        for j in senders:
            after3[j] = relay[j]
        assert np.array_equal(s3.positions, after3), (what, i)
        relays = sorted(relay.values())
        assert len(set(relays)) == len(relays), (what, i)
        pos = after3

        check_enumeration(steps[3], holes)

        # Step 5: each hole sends its index in its subcube to its rank's relay.
        s5 = steps[4]
        c5 = s5.cycle
        hole_relay = {h: node_of_rank(h, rank_h[h]) for h in holes}
        assert c5.length == s5.timing.length == 3 * f + 1, (what, i)
        assert sorted(c5.outcomes) == holes, (what, i)
        for h in holes:
            o = c5.outcomes[h]
            assert o.status == "delivered" and o.arrival == 2 * f, (what, i, h)
            assert o.path[-1].channel == ("rank", f, hole_relay[h]), (what, i, h)
            assert o.delivered_payload == h >> (i + 1), (what, i, h)
        bits, _, delivered, coll, _ = chain_reference(
            free, holes, [hole_relay[h] for h in holes], f, [h >> (i + 1) for h in holes],
            holes)
        assert not coll and sorted(delivered) == holes, (what, i)
        assert_same_waves(c5.waveforms(), reference_waves(bits, c5.length), (what, i, 5))
        assert np.array_equal(s5.positions, pos), (what, i)

        # Step 6: each relay's message goes to the hole of the same subcube and rank,
        # back along the hole's Step-5 circuit, one register per router.
        s6 = steps[5]
        L = s6.timing.length
        assert L == f + M + 1, (what, i)
        hole_of = {(h & low, rank_h[h]): h for h in holes}
        want, transfers, after6 = {}, [], pos.copy()
        for j in senders:
            x = int(s1.positions[j])              # the double it left
            h = hole_of[((x & low), rank_d[x])]
            assert hole_relay[h] == relay[j], (what, i, j)
            transfers.append((j, relay[j], h))
            after6[j] = h
            for q in range(f + 1):
                node = position_after(h, relay[j], free[:q])
                wave = np.zeros(L, dtype=np.uint8)
                wave[f - q:f - q + M + 1] = message[j]
                want[("reverse", "rank", q, node)] = wave
        assert sorted(s6.moved) == sorted(transfers), (what, i)
        assert_same_waves(s6.waves, want, (what, i, 6))
        assert np.array_equal(s6.positions, after6), (what, i)
        assert np.bincount(after6, minlength=N).max(initial=0) <= 1, (what, i)
        assert not ((after6 ^ dst) & low).any(), (what, i)
        pos = after6
    assert np.array_equal(pos, dst), what
    return res


def _data(rng, n, M, k):
    return [int(v) for v in rng.integers(0, 1 << (M - k), size=n)] if M > k else [0] * n


def test_every_partial_permutation_of_the_2_cube():
    seen = 0
    for m in range(5):
        for s in itertools.combinations(range(4), m):
            for d in itertools.permutations(range(4), m):
                seed = seen
                rng = np.random.default_rng(seed)
                M = (2, 4, 5)[seen % 3]
                check_alg2(2, s, d, M, _data(rng, m, M, 2), f"seed {seed}, {s} -> {d}")
                seen += 1
    assert seen == sum(comb(4, m) ** 2 * factorial(m) for m in range(5)) == 209


def test_every_permutation_of_the_2_cube_default_data():
    """Default message_bits (2k) and data (each source's low M - k bits)."""
    for d in itertools.permutations(range(4)):
        res = bs.run_alg2(2, range(4), d)
        assert res.message_bits == 4 and res.data == [0, 1, 2, 3], d
        assert res.ok and res.final.tolist() == list(d), d


def test_sample_of_the_3_cube_permutations():
    seed = 40320
    rng = np.random.default_rng(seed)
    for t in range(300):
        d = rng.permutation(8)
        M = int(rng.integers(3, 10))
        check_alg2(3, np.arange(8), d, M, _data(rng, 8, M, 3), f"seed {seed}, draw {t}")


@pytest.mark.parametrize("k", range(1, 9))
def test_random_permutations_and_partial_permutations(k):
    seed = 500 + k
    rng = np.random.default_rng(seed)
    N = 1 << k
    for t in range(4 if k <= 6 else 2):
        M = int(rng.integers(k, 3 * k + 2))
        if t % 2 == 0:
            src, dst = np.arange(N), rng.permutation(N)
        else:
            m = int(rng.integers(0, N + 1))
            src, dst = alg1.random_partial_permutation(k, m, rng)
        data = _data(rng, src.size, M, k)
        if t % 2:
            data = np.array(data, dtype=np.int64)       # numpy integers are accepted
        check_alg2(k, src, dst, M, data, f"seed {seed}, draw {t}")


def test_empty_routing():
    res = check_alg2(3, [], [], 6, [], "empty")
    assert res.final.size == 0 and len(res.trace()) == 18


# ---------------------------------------------------------------- Section IV


@pytest.mark.parametrize("k", range(1, 6))
def test_pipelined_batches(k):
    seed = 700 + k
    rng = np.random.default_rng(seed)
    N = 1 << k
    for B in (1, 2, 3, 5):
        M = int(rng.integers(k, 3 * k + 1))
        routings = []
        for b in range(B):
            m = int(rng.integers(0, N + 1))
            routings.append(alg1.random_partial_permutation(k, m, rng))
        L = bs.schedule(k, M).iteration_lengths()
        runs = [bs.pipelined_batches(k, routings, message_bits=M, cycle_exact=c)
                for c in (True, False)]
        what = f"seed {seed}, B {B}"
        for p in runs:
            assert p.batches == B and p.starts.shape == (B, k), what
            assert p.latency == bs.schedule(k, M).total, what
            assert p.delivered.all(), what
            ends = p.starts + np.array(L)
            for b in range(B):
                for i in range(k):
                    # a batch's iteration after its previous one, a stage one batch at a
                    # time; both as early as that allows
                    ready = ends[b, i - 1] if i else 0
                    free = ends[b - 1, i] if b else 0
                    assert p.starts[b, i] == max(ready, free), (what, b, i)
                    # stage 0 (iteration 0, the longest) paces: b * L0 + the iterations
                    # before
                    assert p.starts[b, i] == b * L[0] + sum(L[:i]), (what, b, i)
                assert p.finish[b] == ends[b, k - 1] == b * L[0] + p.latency, (what, b)
            if B >= 2:
                assert p.period == L[0] == max(L), what
            assert p.buffer_bits == 2 * M * k and p.wires_per_node == sum(
                d + 1 for d in range(k)), what
        exact, functional = runs
        assert np.array_equal(exact.starts, functional.starts), what
        assert np.array_equal(exact.finish, functional.finish), what
        assert (exact.period, exact.latency) == (functional.period, functional.latency)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("src, dst, word", [
    ([0, 1], [1, 1], "destination 1 repeats"),
    ([0, 0], [1, 2], "source"),
    ([0], [8], "destination"),
    ([0, 1], [1], "destination per source"),
])
def test_alg2_refuses_non_partial_permutations(src, dst, word):
    with pytest.raises(ParameterError, match=word):
        bs.run_alg2(3, src, dst)
    with pytest.raises(ParameterError, match=word):
        bs.pipelined_batches(3, [([0], [1]), (src, dst)])


@pytest.mark.parametrize("data", [[0, 8], [-1, 0], [0], [0, 1, 2], [True, 0], [0.5, 1]])
def test_alg2_refuses_bad_data(data):
    """k = 3, M = 6: 3 data bits, so values in [0, 7], one per message."""
    with pytest.raises(ParameterError, match="^data "):
        bs.run_alg2(3, [0, 1], [1, 0], message_bits=6, data=data)


@pytest.mark.parametrize("payloads", [[0, 8], [-1, 0], [0], [False, 1]])
def test_alg1_refuses_bad_payloads(payloads):
    """k = 3, M = 6: 3 payload bits."""
    with pytest.raises(ParameterError, match="payloads"):
        bs.run_alg1(3, [0, 1], [1, 0], message_bits=6, payloads=payloads)


@pytest.mark.parametrize("kw, word", [
    (dict(message_bits=3), "message_bits"),          # no payload bit
    (dict(order=(0, 0, 1)), "order"),
    (dict(dst=[1, 1]), "destination 1 repeats"),
])
def test_alg1_bad_input(kw, word):
    args = dict(src=[0, 1], dst=[1, 0])
    args.update(kw)
    with pytest.raises(ParameterError, match=word):
        bs.run_alg1(3, args.pop("src"), args.pop("dst"), **args)


@pytest.mark.parametrize("dims", [(0, 0), (3,), (-1,)])
def test_router_chain_refuses_bad_dims(dims):
    with pytest.raises(ParameterError, match="dims"):
        bs.RouterChain(3, dims)


def test_other_bad_input():
    with pytest.raises(ParameterError, match="dimension"):
        bs.schedule(0)
    with pytest.raises(ParameterError, match="routings"):
        bs.pipelined_batches(3, [])
