"""The generic (alpha, beta)-expansion checker (golden/bipartite.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fatnet.golden.bipartite import (
    brute_force_expansion,
    count_sets,
    measure_expansion,
    neighbour_masks,
)
from fatnet.golden.errors import ParameterError


def _random_graph(rng, inputs, outputs, degree):
    return [list(rng.integers(0, outputs, size=degree)) for _ in range(inputs)]


@pytest.mark.parametrize("seed", range(40))
def test_exact_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    inputs, outputs = int(rng.integers(1, 13)), int(rng.integers(1, 70))
    adj = _random_graph(rng, inputs, outputs, int(rng.integers(1, 4)))
    alpha = float(rng.choice([0.2, 0.5, 1.0]))
    result = measure_expansion(adj, outputs, alpha)
    assert result.exact
    assert result.beta == brute_force_expansion(adj, outputs, alpha)
    assert result.sets_examined == count_sets(inputs, result.max_set_size)
    if result.max_set_size:
        # The reported worst set really has that many neighbours.
        nbrs = set().union(*(set(adj[x]) for x in result.worst_set))
        assert len(nbrs) == result.worst_neighbours
        assert math.isclose(result.worst_neighbours / len(result.worst_set), result.beta)


def test_vacuous_when_alpha_m_below_one():
    result = measure_expansion([[0], [0], [0]], 1, 0.25)
    assert result.max_set_size == 0 and result.beta == math.inf and result.exact


def test_bitmasks_span_several_words():
    masks = neighbour_masks([[0, 63, 64, 130], [129]], 131)
    assert masks.shape == (2, 3)
    assert int(np.bitwise_count(masks).sum()) == 5


def test_search_beyond_exact_limit_finds_planted_bad_set():
    # 200 inputs with 4 distinct random neighbours among 400 outputs, except inputs
    # 7, 50, 123 which all share the same 4 neighbours: beta <= 4/3 at |S| = 3.
    rng = np.random.default_rng(1)
    adj = [list(rng.choice(400, size=4, replace=False)) for _ in range(200)]
    for x in (7, 50, 123):
        adj[x] = [1, 2, 3, 4]
    result = measure_expansion(adj, 400, 0.05, exact_limit=1000)
    assert not result.exact
    assert result.beta <= 4 / 3
    nbrs = set().union(*(set(adj[x]) for x in result.worst_set))
    assert len(nbrs) / len(result.worst_set) == result.beta


def test_search_never_reports_better_than_exact():
    rng = np.random.default_rng(5)
    adj = _random_graph(rng, 40, 30, 3)
    exact = measure_expansion(adj, 30, 0.1)
    searched = measure_expansion(adj, 30, 0.1, exact_limit=0)
    assert exact.exact and not searched.exact
    assert searched.beta >= exact.beta


@pytest.mark.parametrize("alpha", [0, -0.1, 1.5])
def test_bad_alpha(alpha):
    with pytest.raises(ParameterError, match="alpha"):
        measure_expansion([[0]], 1, alpha)


def test_out_of_range_neighbour():
    with pytest.raises(ParameterError, match="adjacency"):
        measure_expansion([[0, 5]], 3, 1.0)


def test_the_search_on_a_huge_splitter_stays_within_its_memory_bound():
    """Issue 18: `info butterfly --inputs 65536` asked for GiBs: the level-0 splitter's
    search built (starts x M x words) candidates, grown to alpha M, and 2,000 random
    orders of M inputs. Both are bounded now (2^26 words in all, 2^24 draws): on this
    16,384-input splitter the peak stays below 512 MiB (it was 646 MiB, and 200 s)."""
    import tracemalloc

    import numpy as np

    from fatnet.golden.bipartite import measure_expansion
    m = 1 << 14
    rng = np.random.default_rng(0)
    adjacency = [list(rng.integers(0, m // 2, size=2)) for _ in range(m)]
    tracemalloc.start()
    try:
        res = measure_expansion(adjacency, m // 2, 1 / 16, seed=0)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not res.exact and 0 < res.beta <= 2 and len(res.worst_set) >= 1
    assert peak < 512 << 20, f"peak {peak / 2 ** 20:.0f} MiB"


@pytest.mark.parametrize("inputs, size", [(12, 4), (64, 4), (300, 9), (65536, 4096)])
def test_count_sets_with_a_cap_stops_past_it_and_is_exact_below(inputs, size):
    total = sum(math.comb(inputs, k) for k in range(1, size + 1))
    assert count_sets(inputs, size) == total
    cap = 1 << 20
    capped = count_sets(inputs, size, cap=cap)
    assert capped == total if total <= cap else capped > cap


def test_neighbour_masks_merge_parallel_edges_and_refuse_outputs_out_of_range():
    masks = neighbour_masks([[0, 0, 65], [], [127, 1]], 128)
    assert masks.tolist() == [[1, 2], [0, 0], [2, 1 << 63]]
    with pytest.raises(ParameterError, match=r"in \[0, 127\], got 128"):
        neighbour_masks([[3], [128]], 128)


def test_a_smaller_search_budget_examines_fewer_sets_and_still_finds_a_true_ratio():
    """The report over a hop's many distinct half-splitters shares one budget: a search
    with less work looks at fewer sets, and its worst set is still a real one."""
    rng = np.random.default_rng(3)
    m = 512
    adj = _random_graph(rng, m, m // 2, 2)
    full = measure_expansion(adj, m // 2, 1 / 16, exact_limit=0)
    small = measure_expansion(adj, m // 2, 1 / 16, exact_limit=0, work=1 << 16)
    assert small.sets_examined < full.sets_examined
    for res in (full, small):
        nbrs = set().union(*(set(int(y) for y in adj[x]) for x in res.worst_set))
        assert len(nbrs) == res.worst_neighbours
        assert math.isclose(res.beta, len(nbrs) / len(res.worst_set))
    assert small.beta >= full.beta or small.beta > 0
    with pytest.raises(ParameterError, match="work must be >= 1, got 0"):
        measure_expansion(adj, m // 2, 1 / 16, exact_limit=0, work=0)
