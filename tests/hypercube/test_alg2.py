"""Algorithm 2 (Kuszmaul 1990, Sec. III): the corrected reading delivers every partial
permutation with its invariants; the literal readings fail exactly where the argument in
golden/hypercube/alg2.py says they must.

Independent references here, not shared with the model: ranks by direct counting in
Python, Algorithm 1 simulated packet by packet with sets, and the permutations that
dimension-order crossing alone routes without two messages in a node.
"""

import itertools
import math

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.hypercube import alg1, alg2
from fatnet.golden.hypercube.alg2 import READINGS, failures, route, route_batch

PATTERNS = ("random-permutation", "transpose", "bit-reversal", "complement")


def _pattern(k, name, seed):
    try:
        from fatnet.golden.hypercube.patterns import make_pattern
    except ImportError:                                   # pragma: no cover
        make_pattern = None
    if make_pattern is not None:
        return make_pattern(k, name, seed=seed)
    x = np.arange(1 << k)
    if name == "random-permutation":
        return x, np.random.default_rng(seed).permutation(1 << k)
    if name == "complement":
        return x, x ^ ((1 << k) - 1)
    rev = np.array([int(format(int(v), f"0{k}b")[::-1], 2) for v in x])
    return x, rev                                          # pragma: no cover


def _random_partial(k, rng):
    n = 1 << k
    m = int(rng.integers(0, n + 1))
    return rng.choice(n, m, replace=False), rng.choice(n, m, replace=False)


# ------------------------------------------------------------------ independent checks

def _alg1_collision_free(k, sources, targets, dims):
    """Algorithm 1 packet by packet: at every dimension step no node holds two packets
    (so no two packets want one link)."""
    pos = [int(s) for s in sources]
    tgt = [int(t) for t in targets]
    if len(set(pos)) != len(pos):
        return False
    for d in dims:
        pos = [p ^ (1 << d) if (p ^ t) >> d & 1 else p for p, t in zip(pos, tgt)]
        if len(set(pos)) != len(pos):
            return False
    return pos == tgt


def _check_packing(k, i, sources, targets):
    """Within each subcube of nodes agreeing in bits 0..i, the map is monotone onto the
    subcube's lowest nodes in order (a packing of that subcube)."""
    low = (1 << (i + 1)) - 1
    groups = {}
    for s, t in zip(sources.tolist(), targets.tolist()):
        assert s & low == t & low, "a packet leaves its subcube"
        groups.setdefault(s & low, []).append((s, t))
    for c, pairs in groups.items():
        pairs.sort()
        assert [t >> (i + 1) for _, t in pairs] == list(range(len(pairs)))


def _direct_ranks(k, i, flagged_nodes):
    """node -> 0-based rank among the flagged nodes agreeing with it in bits 0..i."""
    low = (1 << (i + 1)) - 1
    return {x: sum(1 for y in flagged_nodes if y & low == x & low and y < x)
            for x in flagged_nodes}


def check_run(k, src, dst, res, *, independent=True):
    """Everything the corrected reading promises, checked against the trace."""
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    assert res.ok and res.delivered.all() and np.array_equal(res.final, dst)
    assert not any(res.violations.values())
    assert res.operations == {"cross": k, "enumerate": 2 * k, "pack": 2 * k,
                              "rendezvous": k}
    assert [(s.iteration, s.number) for s in res.steps] == [
        (i, n) for i in range(k) for n in range(1, 7)]
    assert all(s.kind == alg2.STEP_KINDS[s.number] for s in res.steps)
    M = res.message_bits
    assert res.max_messages <= 2 and res.max_bits <= 2 * M + 2 * k    # O(k) bits
    pos = src.copy()
    for s in res.steps:
        i = s.iteration
        moved = s.messages
        if s.number in (1, 3, 6):                 # conservation: only these move messages
            assert np.array_equal(pos[moved], s.sources)
            expect = pos.copy()
            expect[moved] = s.targets
            assert np.array_equal(s.positions, expect)
        else:
            assert np.array_equal(s.positions, pos)
        pos = s.positions
        held = np.bincount(pos, minlength=1 << k)
        if s.number == 1:
            assert held.max(initial=0) <= 2
            assert s.max_messages == s.held_after == held.max(initial=0)
            after1 = held
            # bits 0..i agree with the destination after crossing dimension i
            assert not ((pos ^ dst) & ((1 << (i + 1)) - 1)).any()
        assert s.held_after == held.max(initial=0) <= s.max_messages
        if s.number == 6:
            assert held.max(initial=0) <= 1
            assert not ((pos ^ dst) & ((1 << (i + 1)) - 1)).any()
        if s.number in (2, 4) and independent:
            flagged = np.flatnonzero(after1 == 2) if s.number == 2 else \
                np.flatnonzero(after1 == 0)
            assert s.sources.tolist() == flagged.tolist()
            ranks = _direct_ranks(k, i, flagged.tolist())
            assert s.targets.tolist() == [ranks[x] for x in flagged.tolist()]
        if s.number in (3, 5):
            _check_packing(k, i, s.sources, s.targets)
            if independent:
                assert _alg1_collision_free(k, s.sources, s.targets, range(k))
        if s.number == 3:
            assert np.array_equal(np.sort(s.sources), np.flatnonzero(after1 == 2))
        if s.number == 6:
            step5 = res.steps[6 * i + 4]
            assert (step5.iteration, step5.number) == (i, 5)
            # the rendezvous is Step 5 backwards: relay -> hole along the same links
            back = dict(zip(step5.targets.tolist(), step5.sources.tolist()))
            assert [back[r] for r in s.sources.tolist()] == s.targets.tolist()
            if independent:
                assert _alg1_collision_free(k, s.sources, s.targets, range(k - 1, -1, -1))
    assert np.array_equal(pos, dst)


# ------------------------------------------------------------------ exhaustive

def test_every_permutation_of_the_3_cube_corrected_both_picks():
    perms = alg2.all_permutations(3)
    assert perms.shape == (math.factorial(8), 8)
    src = np.broadcast_to(np.arange(8), perms.shape)
    for pick in ("arrived", "stayed"):
        res = route_batch(3, src, perms, reading="corrected", pick=pick)
        assert res.ok.all() and res.delivered.all()
        assert not any(v.any() for v in res.violations.values())
        assert (res.held_after[:, :, 0] <= 2).all()        # after Step 1
        assert (res.held_after[:, :, 5] <= 1).all()        # after Step 6
        assert (res.max_messages <= 2).all()               # at any time
        assert (res.max_bits <= 2 * 6 + 2 * 3).all()       # M = 2k


def test_every_permutation_of_the_3_cube_with_the_recurrences():
    """The same census with Steps 2 and 4 computed by the t/o recurrences."""
    assert failures(3, "corrected", enumerator="recurrences")["failed"] == 0


def test_every_partial_permutation_of_the_2_cube():
    seen = 0
    for m in range(5):
        for s in itertools.combinations(range(4), m):
            for d in itertools.permutations(range(4), m):
                check_run(2, s, d, route(2, s, d))
                seen += 1
    assert seen == sum(math.comb(4, m) ** 2 * math.factorial(m) for m in range(5)) == 209


def test_every_partial_permutation_of_the_2_cube_literal_fails_some():
    bad = {r: 0 for r in READINGS}
    for m in range(5):
        for s in itertools.combinations(range(4), m):
            for d in itertools.permutations(range(4), m):
                for r in READINGS:
                    bad[r] += not route(2, s, d, reading=r).ok
    assert bad["corrected"] == 0
    assert all(bad[r] > 0 for r in READINGS if r != "corrected")


# ------------------------------------------------------------------ literal readings

def _needs_packing(k, perm):
    """Independent: does crossing dimensions 0..k-1 in order ever put two messages in a
    node (positions after dimension i: destination bits 0..i, source bits above)?"""
    n = 1 << k
    for i in range(k - 1):
        low = (1 << (i + 1)) - 1
        at = {(perm[x] & low) | (x & ~low) for x in range(n)}
        if len(at) < n:
            return True
    return False


@pytest.mark.parametrize("k", [2, 3])
def test_literal_readings_fail_exactly_the_permutations_that_need_packing(k):
    """Derived (alg2 docstring, docs/hypercube.md): a full permutation never makes a
    double until some iteration i; there the doubles and holes come in dimension-i pairs,
    and Definition 5's i-subcube (free bits i..k-1, bit i the lowest) ranks the r-th
    double and the r-th hole in the same pair, so the rendezvous sends the message back
    across dimension i: it fails. For k <= 3 Theorem 2's intervals cannot preserve bits
    0..i either. The permutations with no double are those dimension-order crossing
    routes conflict-free: 2 choices per pair per dimension, 2**(k 2**(k-1)) of them."""
    n = 1 << k
    expect = math.factorial(n) - 2 ** (k * n // 2)
    perms = alg2.all_permutations(k)
    needs = np.array([_needs_packing(k, p.tolist()) for p in perms])
    assert needs.sum() == expect
    src = np.broadcast_to(np.arange(n), perms.shape)
    for reading in ("literal", "strided", "interval"):
        res = route_batch(k, src, perms, reading=reading)
        assert np.array_equal(~res.ok, needs), reading
    assert failures(k, "literal")["failed"] == expect


def test_strided_reading_sends_the_collided_message_back():
    """The mechanism: at the first iteration with a double, Definition 5's subcube pairs
    the arrived message with the hole it came from."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        k = int(rng.integers(2, 7))
        d = rng.permutation(1 << k)
        res = route(k, np.arange(1 << k), d, reading="strided")
        by = {(s.iteration, s.number): s for s in res.steps}
        first = next((i for i in range(k) if by[(i, 3)].messages.size), None)
        if first is None:
            assert res.ok
            continue
        assert not res.ok and res.violations["misrouted"]
        s1, s6 = by[(first, 1)], by[(first, 6)]
        came_from = dict(zip(s1.messages.tolist(), s1.sources.tolist()))
        assert [came_from[m] for m in s6.messages.tolist()] == s6.targets.tolist()


# ------------------------------------------------------------------ random and patterns

@pytest.mark.parametrize("k", range(1, 13))
@pytest.mark.parametrize("name", PATTERNS)
def test_patterns(k, name):
    src, dst = _pattern(k, name, seed=100 + k)
    check_run(k, src, dst, route(k, src, dst), independent=k <= 8)


@pytest.mark.parametrize("k", range(1, 13))
def test_random_partial_maps(k):
    rng = np.random.default_rng(1000 + k)
    for _ in range(6 if k <= 8 else 2):
        s, d = _random_partial(k, rng)
        check_run(k, s, d, route(k, s, d), independent=k <= 7)


def test_random_permutations_batch_to_k_10():
    rng = np.random.default_rng(5)
    for k in range(1, 11):
        B = 64
        perms = np.array([rng.permutation(1 << k) for _ in range(B)])
        res = route_batch(k, np.broadcast_to(np.arange(1 << k), perms.shape), perms)
        assert res.ok.all()
        assert (res.held_after[:, :, 5] <= 1).all() and (res.max_messages <= 2).all()


def test_enumerators_agree():
    """The t/o recurrences and direct counting give the same run, step for step."""
    rng = np.random.default_rng(11)
    for k in (3, 6, 9):
        for _ in range(3):
            s, d = _random_partial(k, rng)
            a = route(k, s, d, enumerator="recurrences")
            b = route(k, s, d, enumerator="direct")
            for x, y in zip(a.steps, b.steps):
                assert np.array_equal(x.targets, y.targets)
                assert np.array_equal(x.positions, y.positions)


def test_alg1_agrees():
    """Steps 3 and 5 are collision-free under the Algorithm 1 model."""
    rng = np.random.default_rng(3)
    checked = 0
    for k in (3, 5, 8):
        res = route(k, np.arange(1 << k), rng.permutation(1 << k))
        for s in res.steps:
            if s.number in (3, 5) and s.sources.size:
                r = alg1.route(k, s.sources, s.targets)
                assert not r.collisions, (k, s.number, r.collisions)
                checked += 1
    assert checked  # the permutations moved messages in steps 3 and 5


def test_storage_is_linear_in_k():
    for k in (4, 8, 12):
        src, dst = _pattern(k, "random-permutation", seed=k)
        for M in (2 * k, 4 * k):
            res = route(k, src, dst, message_bits=M)
            assert res.max_messages == 2
            assert res.max_bits <= 2 * M + 2 * k


def test_trace_and_empty_routing():
    res = route(3, [], [])
    assert res.ok and res.final.size == 0 and len(res.trace()) == 18
    res = route(1, [0, 1], [1, 0])
    assert res.ok and res.final.tolist() == [1, 0]


@pytest.mark.parametrize("bad, word", [
    (dict(k=0), "dimension"), (dict(k=21), "dimension"),
    (dict(reading="definition5"), "reading"), (dict(pick="first"), "pick"),
    (dict(message_bits=1), "message_bits"), (dict(enumerator="x"), "enumerator"),
    (dict(dst=[1, 1]), "destination 1 repeats"), (dict(dst=[0, 9]), "destination"),
])
def test_bad_input_one_line(bad, word):
    kw = dict(k=3, src=[0, 1], dst=[1, 0])
    kw.update(bad)
    with pytest.raises(ParameterError) as e:
        route(kw.pop("k"), kw.pop("src"), kw.pop("dst"), **kw)
    assert word in str(e.value) and "\n" not in str(e.value)
