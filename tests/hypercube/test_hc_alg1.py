"""Algorithm 1 (Kuszmaul 1990, Theorem 1): collisions against a plain-Python brute-force
router, the classifiers against the definitions read literally, Theorem 1 exhaustively for
k <= 3 and at random to k = 12, and the pipelined version's bit-times against a
bit-by-bit simulation of the chained router registers."""

from __future__ import annotations

import itertools
from math import comb, factorial

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import alg1


# ---- independent references (plain Python, message by message)


def brute_route(k, src, dst, order=None):
    """Route message by message; return (set of collisions as tuples, final positions)."""
    order = list(range(k)) if order is None else list(order)
    pos = [int(x) for x in src]
    dst = [int(x) for x in dst]
    found = set()
    for step, d in enumerate(order):
        wanting = {}
        for m in range(len(pos)):
            if (pos[m] ^ dst[m]) >> d & 1:
                wanting.setdefault(pos[m], []).append(m)
        for node, ms in wanting.items():
            if len(ms) > 1:
                found.add(("link", step, node, d, tuple(sorted(ms))))
        for m in range(len(pos)):
            if (pos[m] ^ dst[m]) >> d & 1:
                pos[m] ^= 1 << d
        at = {}
        for m in range(len(pos)):
            at.setdefault(pos[m], []).append(m)
        for node, ms in at.items():
            if len(ms) > 1:
                found.add(("buffer", step, node, d, tuple(sorted(ms))))
    return found, pos


def packing_by_definition(src, dst):
    """Definition 2 as printed: some [i, j] is exactly the range and x < y iff f(x) < f(y)."""
    f = dict(zip(map(int, src), map(int, dst)))
    if not f:
        return True
    lo, hi = min(f.values()), max(f.values())
    if sorted(f.values()) != list(range(lo, hi + 1)):
        return False
    return all((x < y) == (f[x] < f[y]) for x in f for y in f if x != y)


def semi_by_definition(src, dst):
    f = dict(zip(map(int, src), map(int, dst)))
    return all(abs(x - y) >= abs(f[x] - f[y]) for x in f for y in f)


def _as_tuples(result):
    return {(c.kind, c.step, c.node, c.dimension, c.messages) for c in result.collisions}


# ---- route() against the brute-force router


@pytest.mark.parametrize("seed", range(30))
def test_route_matches_brute_force_on_random_partial_permutations(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    m = int(rng.integers(0, (1 << k) + 1))
    src, dst = alg1.random_partial_permutation(k, m, rng)
    order = None if seed % 3 else rng.permutation(k).tolist()
    res = alg1.route(k, src, dst, order=order)
    want, final = brute_route(k, src, dst, order)
    assert _as_tuples(res) == want, f"seed {seed}"
    assert res.final.tolist() == final == dst.tolist(), f"seed {seed}"
    collided = {m for c in want for m in c[4]}
    assert res.delivered.tolist() == [i not in collided for i in range(m)], f"seed {seed}"
    assert res.ok == (not want)


def test_collisions_worked_by_hand():
    """2-cube, 0 -> 1 and 1 -> 3: step 0 moves message 0 to node 1, where message 1 stays
    (its bit 0 is clear): one buffer collision; step 1 only message 1 crosses.
    3-cube, 0 -> 3 and 1 -> 7: the same meeting at node 1 after step 0; in step 1 both
    want dimension 1 out of node 1 (a link collision) and both land on node 3 (a buffer
    collision); in step 2 only message 1 crosses."""
    assert alg1.route(2, [0, 1], [1, 0]).ok
    res = alg1.route(2, [0, 1], [1, 3])
    assert [(c.kind, c.step, c.node, c.dimension, c.messages) for c in res.collisions] == \
        [("buffer", 0, 1, 0, (0, 1))]
    assert res.max_messages_per_node == 2 and not res.delivered.any()
    assert res.final.tolist() == [1, 3]
    res = alg1.route(3, [0, 1], [3, 7])
    assert _as_tuples(res) == {("buffer", 0, 1, 0, (0, 1)), ("link", 1, 1, 1, (0, 1)),
                               ("buffer", 1, 3, 1, (0, 1))}
    assert res.positions.tolist() == [[0, 1], [1, 1], [3, 3], [3, 7]]


# ---- classifiers


@pytest.mark.parametrize("seed", range(20))
def test_classifiers_match_the_definitions(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 5))
    for gen in (alg1.random_partial_permutation, alg1.random_packing,
                alg1.random_semi_contraction):
        m = int(rng.integers(0, (1 << k) + 1))
        src, dst = gen(k, m, rng)
        assert alg1.is_packing(k, src, dst) == packing_by_definition(src, dst), f"seed {seed}"
        assert alg1.is_semi_contraction(k, src, dst) == semi_by_definition(src, dst), \
            f"seed {seed}"
        f = alg1.routing_to_map(k, src, dst)[None, :]
        assert alg1.is_packing_batch(k, f)[0] == packing_by_definition(src, dst)
        assert alg1.is_semi_contraction_batch(k, f)[0] == semi_by_definition(src, dst)


def test_generators_give_their_class():
    for seed in range(50):
        rng = np.random.default_rng(seed)
        k = int(rng.integers(1, 9))
        m = int(rng.integers(0, (1 << k) + 1))
        assert packing_by_definition(*alg1.random_packing(k, m, rng)), seed
        src, dst = alg1.random_semi_contraction(k, m, rng)
        assert semi_by_definition(src, dst) and len(set(dst.tolist())) == m, seed
        assert ((dst >= 0) & (dst < 1 << k)).all(), seed


# ---- Theorem 1


def _partial_permutations(k):
    n = 1 << k
    return sum(comb(n, m) ** 2 * factorial(m) for m in range(n + 1))


def _packings(k):
    n = 1 << k
    return 1 + sum(comb(n, m) * (n - m + 1) for m in range(1, n + 1))


@pytest.mark.parametrize("k", [1, 2])
def test_census_small_by_brute_force(k):
    """Every partial permutation routed by the brute-force router and classified by the
    definitions: the census's counts."""
    n = 1 << k
    counts = dict.fromkeys(("all", "pack", "semi", "free", "other_free", "perm_free"), 0)
    for m in range(n + 1):
        for srcs in itertools.combinations(range(n), m):
            for dsts in itertools.permutations(range(n), m):
                free = not brute_route(k, srcs, dsts)[0]
                semi = semi_by_definition(srcs, dsts)
                counts["all"] += 1
                counts["pack"] += packing_by_definition(srcs, dsts)
                counts["semi"] += semi
                counts["free"] += free
                counts["other_free"] += free and not semi
                counts["perm_free"] += free and m == n
                assert free or not semi, (srcs, dsts)          # Theorem 1
    c = alg1.census(k)
    assert (c["partial_permutations"], c["packings"], c["semi_contractions"],
            c["collision_free"], c["other_collision_free"],
            c["permutations_collision_free"]) == (
        counts["all"], counts["pack"], counts["semi"], counts["free"], counts["other_free"],
        counts["perm_free"])


def test_census_3_cube_theorem_1():
    c = alg1.census(3)
    assert c["partial_permutations"] == _partial_permutations(3)
    assert c["packings"] == _packings(3)
    assert c["packings_collision_free"] == c["packings"]                  # Theorem 1
    assert c["semi_contractions_collision_free"] == c["semi_contractions"]  # Theorem 1
    assert c["collision_free"] == c["semi_contractions"] + c["other_collision_free"]
    # collision-free full permutations = the settings of a k-stage butterfly of 2x2
    # switches, each stage fixing one bit: 2**(k 2**(k-1)) distinct permutations
    assert c["permutations"] == factorial(8)
    assert c["permutations_collision_free"] == 2 ** (3 * 4)


@pytest.mark.parametrize("k", [1, 2])
def test_census_counts_by_formula(k):
    c = alg1.census(k)
    assert c["partial_permutations"] == _partial_permutations(k)
    assert c["packings"] == _packings(k)
    assert c["permutations_collision_free"] == 2 ** (k * 2 ** (k - 1))


def test_collision_free_batch_matches_brute_force_on_3_cube_sample():
    rng = np.random.default_rng(seed := 1515)
    maps = [f for f in alg1.all_partial_permutations(3)]
    maps = np.concatenate(maps)
    pick = maps[rng.choice(maps.shape[0], size=1500, replace=False)]
    got = alg1.collision_free_batch(3, pick)
    for f, g in zip(pick, got):
        src, dst = alg1.maps_to_routing(f)
        assert g == (not brute_route(3, src, dst)[0]), (seed, f.tolist())
    assert got.any() and not got.all()


@pytest.mark.parametrize("seed", range(6))
def test_theorem_1_random_to_k12(seed):
    rng = np.random.default_rng(seed)
    for k in range(1, 13):
        n = 1 << k
        for gen in (alg1.random_packing, alg1.random_semi_contraction):
            m = int(rng.integers(0, n + 1))
            src, dst = gen(k, m, rng)
            assert alg1.is_semi_contraction(k, src, dst), (seed, k, gen.__name__)
            res = alg1.route(k, src, dst)
            assert res.ok and res.delivered.all(), (seed, k, gen.__name__, res.collisions[:3])
            assert res.max_messages_per_node == (1 if m else 0)
            f = alg1.routing_to_map(k, src, dst)[None, :]
            assert alg1.collision_free_batch(k, f)[0], (seed, k)


def test_a_random_permutation_of_a_big_cube_collides():
    src = np.arange(1 << 10)
    dst = np.random.default_rng(seed := 7).permutation(1 << 10)
    res = alg1.route(10, src, dst)
    assert not res.ok, seed
    want, _ = brute_route(10, src, dst)
    assert _as_tuples(res) == want, seed


# ---- the pipelined version: bit-by-bit simulation of the router chain


def pipeline_sim(k, src, dst, M, seed):
    """Every node has routers 0..k-1 (dimension s; default order), one register each.
    Stream: index 0 the M bit (1), indices 1..k the relative address (index s + 1 for
    dimension s), then a random payload. Router r gets index r (the M bit the router
    before put in its address bit's slot), then its address bit (index r + 1), which it
    replaces by a fresh M bit. Returns (streams, arrivals {(msg, router, index):
    bit-time}, delivered {msg: [node, bits after the M bit, their bit-times]},
    conflicts: bit-times at which one router input got two bits)."""
    rng = np.random.default_rng(seed)
    msgs = []
    for s, d in zip(src, dst):
        rel = int(s) ^ int(d)
        msgs.append([1] + [rel >> i & 1 for i in range(k)]
                    + rng.integers(0, 2, M - k).tolist())
    reg = {}           # (node, router) -> (msg, stream index, value)
    crossing = {}      # (msg, router) -> bool, set when the router reads its address bit
    arrivals, delivered, conflicts = {}, {}, []
    for tau in range(M + k + 3):
        inputs = {}    # (node, router) -> list of (msg, index, value)
        for m, s in enumerate(src):
            if tau <= M:
                inputs.setdefault((int(s), 0), []).append((m, tau, msgs[m][tau]))
        for (node, r), (m, b, v) in reg.items():
            nxt = node ^ (1 << r) if crossing[(m, r)] else node
            inputs.setdefault((nxt, r + 1), []).append((m, b, v))
        new = {}
        for (node, r), got in inputs.items():
            if len(got) > 1:
                conflicts.append(tau)
            for m, b, v in got:
                arrivals[(m, r, b)] = tau
                if r == k:
                    delivered.setdefault(m, [node, [], []])
                    if b > k:
                        delivered[m][1].append(v)
                        delivered[m][2].append(tau)
                elif b == r + 1:
                    crossing[(m, r)] = v == 1
                    new[(node, r)] = (m, b, 1)
                elif b > r + 1:
                    new[(node, r)] = (m, b, v)
        reg = new
    return msgs, arrivals, delivered, conflicts


@pytest.mark.parametrize("seed", range(8))
def test_pipeline_bit_times_by_simulation(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 6))
    M = k + int(rng.integers(1, 3 * k + 2))
    src, dst = alg1.random_packing(k, int(rng.integers(1, (1 << k) + 1)), rng)
    msgs, arrivals, delivered, conflicts = pipeline_sim(k, src, dst, M, seed)
    tm = alg1.pipeline_timing(k, M)
    assert not conflicts, seed
    for m in range(len(src)):
        for r in range(k + 1):
            for b in range(r, M + 1):
                assert arrivals[(m, r, b)] == tm.bit_time(r, b) == b + r, (seed, m, r, b)
        node, payload, times = delivered[m]
        assert node == dst[m] and payload == msgs[m][k + 1:], seed
        assert arrivals[(m, k, k)] == tm.delivery_first == 2 * k, seed
        assert times[-1] == tm.delivery_last, seed
    assert tm.total == M + k + 1 == tm.delivery_last + 1
    assert tm.router_reads == tuple(arrivals[(0, r, r + 1)] for r in range(k))
    assert tm.payload_bits == M - k


@pytest.mark.parametrize("seed", range(10))
def test_pipeline_conflicts_iff_collisions(seed):
    rng = np.random.default_rng(seed)
    k = 3
    src, dst = alg1.random_partial_permutation(k, int(rng.integers(2, 9)), rng)
    _, _, delivered, conflicts = pipeline_sim(k, src, dst, 2 * k, seed)
    assert bool(conflicts) == (not alg1.route(k, src, dst).ok), seed


def test_bad_input():
    with pytest.raises(ParameterError, match="destination 1 repeats"):
        alg1.route(2, [0, 1], [1, 1])
    with pytest.raises(ParameterError, match="order"):
        alg1.route(2, [0], [1], order=(0, 0))
    with pytest.raises(ParameterError, match="message_bits"):
        alg1.pipeline_timing(3, 3)
    with pytest.raises(ParameterError, match="dimension"):
        alg1.census(4)
    with pytest.raises(ParameterError, match="messages"):
        alg1.random_packing(2, 5, 0)
