"""The adversarial search of a concentrator stage's guarantee: the batched growths
equal the scalar ones start by start and limit by limit, peel and shrink equal their
first numpy versions, and the whole search equals the one that grows one start after
the other (the construction picks a stage's wiring by it, so the same search builds
the same network)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fatnet.golden.fattree import concentrator as cc
from fatnet.golden.seeds import generator


def _adjacency(seed: int) -> tuple[list[list[int]], int]:
    """A random stage from ``seed``: r inputs of 1..6 distinct outputs among s."""
    rng = np.random.default_rng(seed)
    r = int(rng.integers(2, 60))
    s = int(rng.integers(2, r + 8))
    adj = [sorted(rng.choice(s, size=int(rng.integers(1, min(6, s) + 1)),
                             replace=False).tolist()) for _ in range(r)]
    return adj, s


def _replay(seed: int) -> str:
    return f"replay: _adjacency({seed}) in tests/fattree/test_concentrator_search.py"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_batched_growths_equal_the_scalar_ones(seed):
    adj, s = _adjacency(seed)
    hall = cc._Hall(adj, s)
    top = min(len(adj), s) + 1
    inputs = hall.greedy_inputs_batch(range(len(adj)), top)
    outputs = hall.greedy_outputs_batch(range(s), top)
    for limit in sorted({1, 2, top // 2, top}):
        assert [cc.inputs_violator_within(f, limit) for f in inputs] == \
            [hall.greedy_inputs(x, limit) for x in range(len(adj))], _replay(seed)
        assert [cc.outputs_violator_within(f, limit) for f in outputs] == \
            [hall.greedy_outputs(o, limit) for o in range(s)], _replay(seed)


def _peel_reference(hall, noise, rng, limit):
    """The peel as first written (numpy per output), the reference of :meth:`peel`."""
    r, s = hall.r, hall.s
    cnt = np.array([len(v) for v in hall.out_nbrs], dtype=np.float64)
    trapped, in_s = np.ones(r, dtype=bool), np.ones(s, dtype=bool)
    n_trapped, size, best = r, s, None
    while size > 0:
        if n_trapped > size and size + 1 <= limit:
            best, limit = np.flatnonzero(trapped)[: size + 1].tolist(), size
        key = cnt + rng.random(s) * noise if noise and rng is not None else cnt.copy()
        key[~in_s] = np.inf
        o = int(np.argmin(key))
        in_s[o] = False
        size -= 1
        for x in hall.out_nbrs[o]:
            if trapped[x]:
                trapped[x] = False
                n_trapped -= 1
                cnt[hall.adj[x]] -= 1
    return best


def _shrink_reference(hall, ys):
    """The shrink as first written (numpy cover counts), the reference of :meth:`shrink`."""
    left = set(ys)
    cover = np.zeros(hall.s, dtype=np.int64)
    for y in left:
        cover[hall.adj[y]] += 1
    n_out, changed = int((cover > 0).sum()), True
    while changed and len(left) > 1:
        changed = False
        for y in sorted(left, key=lambda v: (-len(hall.adj[v]), v)):
            lost = int((cover[hall.adj[y]] == 1).sum())
            if n_out - lost < len(left) - 1:
                left.discard(y)
                cover[hall.adj[y]] -= 1
                n_out -= lost
                changed = True
    return sorted(left)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_peel_and_shrink_equal_their_references(seed):
    adj, s = _adjacency(seed)
    hall = cc._Hall(adj, s)
    for noise, limit in ((0.0, s + 1), (0.9, s + 1), (0.9, 3)):
        a = hall.peel(noise, generator(seed, "stage-wiring"), limit)
        b = _peel_reference(hall, noise, generator(seed, "stage-wiring"), limit)
        assert a == b, _replay(seed)
        if a is not None:
            assert hall.shrink(a) == _shrink_reference(hall, a), _replay(seed)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2 ** 32 - 1))
def test_search_equals_the_scalar_search(seed):
    adj, s = _adjacency(seed)
    if any(not row for row in adj):
        return
    assert cc._heuristic_bound(adj, s, seed, 10, 8) == \
        cc._heuristic_bound(adj, s, seed, 10, 8, batched=False), _replay(seed)


def test_stage_of_the_1024_leaf_tree_equals_the_scalar_search():
    """One of the 1024-leaf tree's largest random stages (r = 153 -> s = 102 there)."""
    rng = generator(7, "stage-wiring")
    adj = cc._random_adjacency(153, 102, 6, rng)
    adj = [list(row) for row in adj]
    assert cc._heuristic_bound(adj, 102, 7, 50, 64) == \
        cc._heuristic_bound(adj, 102, 7, 50, 64, batched=False)
