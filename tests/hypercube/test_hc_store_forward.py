"""Store-and-forward e-cube and Valiant on the k-cube against a plain reference simulator
written from the module's documented rules, and against properties derived directly
(Hamming distances, link loads, queue bounds)."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube.patterns import PATTERNS, make_pattern
from fatnet.golden.hypercube.store_forward import ecube, next_dimension, route, valiant
from fatnet.golden.runner import ENGINES


def popcount(x: int) -> int:
    return bin(x).count("1")


def ecube_dims(a: int, b: int, k: int) -> list[int]:
    """The dimensions e-cube crosses from a to b: the differing ones, lowest first."""
    return [i for i in range(k) if (a ^ b) >> i & 1]


def reference(k, src, dst, inter=None, buffer=None, barrier=False, inter_buffer=True):
    """One link queue, one node buffer and one message at a time (the docstring's rules).

    Returns (delivery step per message (-1 lost), final node per message, the links each
    crossed, the largest queue, completion, deadlocked, the most undelivered messages at
    one node)."""
    M = len(src)
    cap = float("inf") if buffer is None else buffer
    queues = {(x, i): deque() for x in range(2 ** k) for i in range(k)}
    buffers = {(x, i): deque() for x in range(2 ** k) for i in range(k)}
    held = []
    pos = list(src)
    target, phase1 = [], []
    delivered = {}
    links = [[] for _ in range(M)]

    def first_dim(x, t):
        return ecube_dims(x, t, k)[0]

    for m in range(M):
        p1 = inter is not None and inter[m] != src[m]
        phase1.append(p1)
        target.append(inter[m] if p1 else dst[m])
        if not p1 and src[m] == dst[m]:
            delivered[m] = 0
        elif barrier and not p1:
            held.append(m)
        else:
            buffers[(src[m], first_dim(src[m], target[m]))].append(m)
    released = [not barrier]

    def release():
        if released[0] or any(phase1[m] for m in range(M) if m not in delivered):
            return False
        released[0] = True
        for m in sorted(held):
            buffers[(pos[m], first_dim(pos[m], dst[m]))].append(m)
        held.clear()
        return True

    def refill():
        for key, buf in buffers.items():
            while buf and len(queues[key]) < cap:
                queues[key].append(buf.popleft())

    release()
    def most_at_a_node():
        count = {}
        for m in range(M):
            if m not in delivered:
                count[pos[m]] = count.get(pos[m], 0) + 1
        return max(count.values(), default=0)

    refill()
    largest = max(len(q) for q in queues.values())
    crowd = most_at_a_node()
    step, deadlock = 0, False
    while len(delivered) < M:
        step += 1
        at_start = {key: len(q) for key, q in queues.items()}
        moves, wants = [], {}
        for (x, i), q in queues.items():
            if not q:
                continue
            m = q[0]
            y = x ^ (1 << i)
            if y == target[m] and target[m] == dst[m]:
                moves.append((i, m, (x, i), "done", None))
            elif y == target[m] and (barrier or inter_buffer):
                moves.append((i, m, (x, i), "buffer", None))
            else:
                t = dst[m] if y == target[m] else target[m]
                wants.setdefault((y, first_dim(y, t)), []).append((i, m, (x, i)))
        for tq, cands in wants.items():
            for rank, (i, m, link) in enumerate(sorted(cands)):
                if rank < cap - at_start[tq]:
                    moves.append((i, m, link, "queue", tq))
        moves.sort()
        for i, m, link, what, tq in moves:
            assert queues[link].popleft() == m
            links[m].append(link)
            pos[m] ^= 1 << i
            if pos[m] == target[m]:
                phase1[m] = False
                target[m] = dst[m]
            if what == "done":
                delivered[m] = step
            elif what == "buffer":
                if barrier:
                    held.append(m)
                else:
                    buffers[(pos[m], first_dim(pos[m], dst[m]))].append(m)
            else:
                queues[tq].append(m)
        rel = release()
        if not moves and not rel:
            deadlock, step = True, step - 1
            break
        refill()
        largest = max(largest, max(len(q) for q in queues.values()))
        crowd = max(crowd, most_at_a_node())
        assert largest <= cap
    delivery = [delivered.get(m, -1) for m in range(M)]
    return (delivery, pos, links, largest, max(delivered.values(), default=0), deadlock,
            crowd)


def random_map(k, seed, per_source):
    rng = np.random.default_rng(seed)
    src = np.repeat(np.arange(2 ** k), per_source)
    rng.shuffle(src)
    return src, rng.integers(0, 2 ** k, size=src.size)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_matches_the_reference(k, hc_baseline, hc_baselines, engine):
    kw = hc_baselines[hc_baseline]
    for seed in range(6 if k < 4 else 3):
        per_source = 1 + seed % 3
        print("seed", seed, "messages per source", per_source)
        src, dst = random_map(k, seed, per_source)
        run = route(k, src, dst, seed=seed, engine=engine, **kw)
        ref = reference(k, src.tolist(), dst.tolist(),
                        None if run.intermediate is None else run.intermediate.tolist(),
                        kw.get("buffer"), kw.get("barrier", False),
                        kw.get("intermediate_buffer", True))
        delivery, final, links, largest, completion, deadlock, crowd = ref
        assert run.delivery_step.tolist() == delivery
        assert run.final.tolist() == final
        assert run.max_queue == largest
        assert run.steps == completion
        assert run.deadlock == deadlock
        assert run.max_messages_per_node == crowd
        got = [[] for _ in range(len(src))]
        for m, link in zip(run.crossings["message"], run.crossings["link"]):
            got[m].append((int(link) // k, int(link) % k))
        assert got == links
        assert run.hops.tolist() == [len(x) for x in links]


@pytest.mark.parametrize("k", [2, 3, 4, 6])
def test_ecube_paths_lowest_differing_dimension_first(k):
    for seed in range(3):
        print("seed", seed)
        src, dst = random_map(k, seed, 2)
        run = ecube(k, src, dst, buffer=1 + seed % 2)
        walk = {m: [int(s)] for m, s in enumerate(src)}
        for m, link in zip(run.crossings["message"], run.crossings["link"]):
            node, dim = divmod(int(link), k)
            assert node == walk[m][-1]
            walk[m].append(node ^ (1 << dim))
        for m, (s, d) in enumerate(zip(src.tolist(), dst.tolist())):
            nodes = [s]
            for i in ecube_dims(s, d, k):
                nodes.append(nodes[-1] ^ (1 << i))
            assert walk[m] == nodes


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_a_message_alone_takes_its_hamming_distance(k):
    n = 2 ** k
    rng = np.random.default_rng(k)
    print("seed", k)
    for s in range(n):
        for d in range(n):
            for buffer in (None, 1):
                run = ecube(k, [s], [d], buffer=buffer)
                assert run.steps == run.delivery_step[0] == popcount(s ^ d)
                assert run.final[0] == d and run.hops[0] == popcount(s ^ d)
            # Valiant alone: both e-cube legs (every intermediate for k <= 3; a sample
            # at k = 4); the barrier costs nothing when phase 1 ends with this message.
            for i in (range(n) if k < 4 else rng.integers(0, n, size=2).tolist()):
                for barrier, through in ((False, False), (True, False), (False, True)):
                    run = valiant(k, [s], [d], intermediate=[i], barrier=barrier,
                                  buffer=1, intermediate_buffer=not through)
                    assert run.delivery_step[0] == popcount(s ^ i) + popcount(i ^ d)


def test_next_dimension_is_the_lowest_differing_one():
    k = 6
    a = np.repeat(np.arange(2 ** k), 2 ** k)
    b = np.tile(np.arange(2 ** k), 2 ** k)
    diff = a != b
    got = next_dimension(a[diff], b[diff])
    assert got.tolist() == [ecube_dims(x, y, k)[0] for x, y in zip(a[diff].tolist(),
                                                                     b[diff].tolist())]
    assert next_dimension(12, 4) == 3


def test_lone_message_bit_times():
    k = 5
    for d in range(0, 32, 5):
        run = ecube(k, [0], [d])
        hops = popcount(d)
        for M, r in ((10, 1), (16, 3), (8, 13)):
            bt = run.bit_times(M, hop_delay=r)
            L = M + k
            assert bt.store_forward == hops * L
            assert bt.cut_through == ((hops - 1) * r + L if hops else 0)
            assert bt.per_message_cut_through[0] == bt.cut_through


@pytest.mark.parametrize("name", PATTERNS)
@pytest.mark.parametrize("k", [3, 6, 8])
def test_everything_delivered_and_consistent(name, k, hc_safe_baseline, hc_baselines):
    kw = hc_baselines[hc_safe_baseline]
    seed = 3 * k
    print("seed", seed)
    src, dst = make_pattern(k, name, seed=seed, problems=2 if k < 8 else 1)
    run = route(k, src, dst, seed=seed + 1, **kw)
    assert run.stopped == "delivered" and not run.deadlock
    assert run.delivered == run.messages == src.size and run.lost.size == 0
    assert (run.final == dst).all()
    # Completion is the last delivery; the distribution counts every message.
    assert run.steps == run.delivery_step.max() == run.latency_summary()["max"]
    hist = run.latency_histogram()
    assert hist.sum() == run.messages and hist[-1] > 0
    dist = np.array([popcount(int(a) ^ int(b)) for a, b in zip(src, dst)])
    if kw["algorithm"] == "ecube":
        assert (run.hops == dist).all()
    else:
        inter = run.intermediate
        d1 = np.array([popcount(int(a) ^ int(b)) for a, b in zip(src, inter)])
        d2 = np.array([popcount(int(a) ^ int(b)) for a, b in zip(inter, dst)])
        assert (run.hops == np.where(inter == dst, d1, d1 + d2)).all()
    assert (run.delivery_step >= run.hops).all()
    if kw.get("buffer") is not None:
        assert run.max_queue <= kw["buffer"]
    assert run.max_messages_per_node >= run.max_queue
    # Cut-through never costs more than store-and-forward.
    bt = run.bit_times(2 * k)
    assert bt.cut_through <= bt.store_forward
    assert (bt.per_message_cut_through <= bt.per_message_store_forward).all()


@pytest.mark.parametrize("k", [4, 6, 8])
def test_ecube_completion_is_at_least_the_busiest_link(k):
    for name in ("transpose", "bit-reversal", "hot-spot", "random-destinations"):
        src, dst = make_pattern(k, name, seed=k)
        load = {}
        for s, d in zip(src.tolist(), dst.tolist()):
            x = s
            for i in ecube_dims(s, d, k):
                load[(x, i)] = load.get((x, i), 0) + 1
                x ^= 1 << i
        run = ecube(k, src, dst)
        assert run.steps >= max(load.values(), default=0)
        assert run.steps >= max(popcount(s ^ d) for s, d in zip(src.tolist(), dst.tolist()))


def test_complement_runs_without_contention():
    # Every message crosses dimension s - 1 in step s: each link once per step.
    for k in range(1, 9):
        src, dst = make_pattern(k, "complement")
        for buffer in (None, 1):
            run = ecube(k, src, dst, buffer=buffer)
            assert (run.delivery_step == k).all() and run.max_queue == 1
            bt = run.bit_times(8, hop_delay=2)
            assert (bt.per_message_cut_through == (k - 1) * 2 + 8 + k).all()


def test_barrier_separates_the_phases():
    for seed in range(4):
        print("seed", seed)
        src, dst = make_pattern(6, "random-permutation", seed=seed)
        run = valiant(6, src, dst, seed=seed, barrier=True, buffer=2)
        c = run.crossings
        last1 = c["step"][c["phase"] == 1].max()
        assert run.phase1_steps == last1
        assert (c["step"][c["phase"] == 2] > last1).all()
        free = valiant(6, src, dst, seed=seed, barrier=False, buffer=2)
        assert (free.intermediate == run.intermediate).all()
        c2 = free.crossings
        assert (c2["step"][c2["phase"] == 2] <= last1).any()   # phases overlap


def test_deadlock_is_detected_and_reported():
    # k = 2, B = 1: four messages whose phase-1 queues (0,1) (2,0) (3,1) (1,0) each want
    # the next one's; each is full, so nothing can ever move.
    src, inter, dst = [0, 2, 3, 1], [2, 3, 1, 0], [3, 1, 0, 2]
    run = valiant(2, src, dst, intermediate=inter, buffer=1, intermediate_buffer=False)
    assert run.deadlock and run.stopped == "deadlock"
    assert run.delivered == 0 and run.lost.tolist() == [0, 1, 2, 3]
    assert run.final.tolist() == src and run.steps == 0 and run.steps_run == 0
    assert (run.delivery_step == -1).all()
    assert (run.bit_times(4).per_message_store_forward == -1).all()
    # The node buffer at the intermediate (the default) breaks the cycle.
    ok = valiant(2, src, dst, intermediate=inter, buffer=1)
    assert ok.delivered == 4 and not ok.deadlock
    assert ok.delivery_step.tolist() == [2, 2, 2, 2]   # two single hops each, no contention


def test_max_steps_reports_the_rest_lost():
    src, dst = make_pattern(5, "transpose")
    full = ecube(5, src, dst, buffer=1)
    part = ecube(5, src, dst, buffer=1, max_steps=2)
    assert part.stopped == "max_steps" and part.steps_run == 2
    assert part.delivered + part.lost.size == part.messages
    assert part.delivered == int(((full.delivery_step >= 0) & (full.delivery_step <= 2)).sum())
    assert (part.final[part.lost] != dst[part.lost]).all()


def test_summary_and_a_larger_cube():
    src, dst = make_pattern(12, "random-permutation", seed=5)
    run = ecube(12, src, dst)
    out = run.summary()
    assert out["kind"] == "hypercube" and out["dimension"] == 12
    assert out["algorithm"] == "ecube" and out["messages"] == out["delivered"] == 4096
    assert out["final"] == [[int(a), int(b)] for a, b in zip(src, dst)]
    assert out["steps"] == run.steps >= 12 and out["lost"] == []


def test_no_messages():
    run = ecube(3, [], [])
    assert run.steps == 0 and run.delivered == 0 and run.messages == 0
    assert run.bit_times(8).store_forward == 0


@pytest.mark.parametrize("call, word", [
    (lambda: ecube(0, [0], [0]), "dimension"),
    (lambda: ecube(3, [0, 1], [0]), "destination"),
    (lambda: ecube(3, [0], [8]), "destination"),
    (lambda: ecube(3, [-1], [0]), "source"),
    (lambda: ecube(3, [0], [1], buffer=0), "buffer"),
    (lambda: ecube(3, [0], [1], buffer=1.5), "buffer"),
    (lambda: ecube(3, [0], [1], max_steps=-1), "max_steps"),
    (lambda: route(3, [0], [1], algorithm="dor"), "algorithm"),
    (lambda: route(3, [0], [1], intermediate=[2]), "intermediate"),
    (lambda: valiant(3, [0], [1], intermediate=[9]), "intermediate"),
    (lambda: valiant(3, [0], [1], intermediate=[1, 2]), "intermediate"),
    (lambda: valiant(3, [0], [1], seed=-2), "seed"),
    (lambda: ecube(3, [0], [1]).bit_times(0), "message_bits"),
    (lambda: ecube(3, [0], [1]).bit_times(8, header_bits=-1), "header_bits"),
    (lambda: ecube(3, [0], [1]).bit_times(8, hop_delay=0), "hop_delay"),
    (lambda: ecube(3, [0], [1]).bit_times(8, hop_delay=12), "hop_delay"),
])
def test_bad_input_is_one_line(call, word):
    with pytest.raises(ParameterError) as err:
        call()
    text = str(err.value)
    assert "\n" not in text and word in text
