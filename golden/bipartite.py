"""(alpha, beta)-expansion of bipartite graphs, for any network family.

A bipartite graph from ``M`` inputs to ``P`` outputs has *(alpha, beta)-expansion* when
every set ``S`` of at most ``alpha * M`` inputs has at least ``beta * |S|`` neighbours
(Leighton-Maggs 1992, Sec. I-C; sets are the non-empty ones with
``|S| <= floor(alpha * M)``, so a graph with ``alpha * M < 1`` expands vacuously).

:func:`measure_expansion` returns the largest ``beta`` that holds (the minimum of
``|N(S)| / |S|``) together with a worst set:

* **exactly**, by enumerating every set, when there are at most ``exact_limit`` of them
  (default ``2**20``): ``result.exact`` is True and ``beta`` is the true value;
* otherwise by an adversarial search: greedy growth (from many start inputs, add the input
  that adds the fewest new neighbours), growth from the pairs with the largest overlap,
  and random sets; ``result.exact`` is False and ``beta`` is an upper bound on the true
  value (the search found a set this bad; it cannot prove that no worse set exists).

Neighbourhoods are numpy bitmasks (``ceil(P / 64)`` words of ``uint64`` per input), so
unions are ``|`` and sizes are ``np.bitwise_count``; a whole layer of the enumeration (all
sets of one size) is one array operation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .errors import ParameterError
from .seeds import generator

__all__ = [
    "DEFAULT_EXACT_LIMIT",
    "DEFAULT_SEARCH_WORK",
    "ExpansionResult",
    "neighbour_masks",
    "count_sets",
    "measure_expansion",
    "verify_expansion",
    "brute_force_expansion",
]

DEFAULT_EXACT_LIMIT = 1 << 20
#: Word operations one adversarial search may spend (greedy growth and random sets).
DEFAULT_SEARCH_WORK = 1 << 24


@dataclass(frozen=True)
class ExpansionResult:
    """Measured expansion of one bipartite graph.

    Attributes
    ----------
    inputs, outputs : int
        ``M`` and ``P``.
    alpha : float
    max_set_size : int
        ``floor(alpha * M)``: the largest set the definition looks at.
    beta : float
        ``min |N(S)| / |S|`` over the sets examined (``inf`` when ``max_set_size = 0``).
    worst_set : tuple of int
        A set attaining ``beta`` (empty when vacuous).
    worst_neighbours : int
        ``|N(worst_set)|``.
    exact : bool
        True when every set was enumerated (``beta`` is then the true value).
    sets_examined : int
    """

    inputs: int
    outputs: int
    alpha: float
    max_set_size: int
    beta: float
    worst_set: tuple
    worst_neighbours: int
    exact: bool
    sets_examined: int

    def holds(self, beta: float) -> bool:
        """Whether the measured expansion reaches ``beta`` (exact or as far as searched)."""
        return self.beta >= beta


def neighbour_masks(adjacency: Sequence[Sequence[int]], outputs: int) -> np.ndarray:
    """``(M, W)`` uint64 bitmasks of every input's neighbours (parallel edges merge)."""
    m = len(adjacency)
    words = max(1, math.ceil(outputs / 64))
    masks = np.zeros((m, words), dtype=np.uint64)
    degree = np.fromiter((len(nbrs) for nbrs in adjacency), dtype=np.int64, count=m)
    rows = np.repeat(np.arange(m), degree)
    ys = np.fromiter((int(y) for nbrs in adjacency for y in nbrs), dtype=np.int64,
                     count=int(degree.sum()))
    bad = (ys < 0) | (ys >= outputs)
    if bad.any():
        raise ParameterError(f"adjacency entries must be in [0, {outputs - 1}], got "
                             f"{int(ys[np.argmax(bad)])}")
    np.bitwise_or.at(masks, (rows, ys >> 6), np.uint64(1) << (ys & 63).astype(np.uint64))
    return masks


def _sizes(masks: np.ndarray) -> np.ndarray:
    return np.bitwise_count(masks).sum(axis=-1, dtype=np.int64)


def count_sets(inputs: int, max_size: int, cap: int | None = None) -> int:
    """Number of non-empty input sets of size at most ``max_size``; with ``cap``, any
    number above ``cap`` once the count passes it (a 65,536-input splitter's count
    has thousands of digits and takes long to make only to be compared)."""
    total, term = 0, 1
    for k in range(1, max_size + 1):
        term = term * (inputs - k + 1) // k     # C(inputs, k), exactly
        total += term
        if cap is not None and total > cap:
            break
    return total


def _check(inputs: int, outputs: int, alpha: float) -> int:
    if inputs < 1 or outputs < 1:
        raise ParameterError(f"a bipartite graph needs inputs and outputs >= 1, got "
                             f"{inputs} and {outputs}")
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1], got {alpha}")
    return int(math.floor(alpha * inputs + 1e-12))


def _exact(masks: np.ndarray, kmax: int):
    """Enumerate every set of size 1..kmax, one size per array operation."""
    m = masks.shape[0]
    best: tuple[float, tuple[int, ...], int] = (math.inf, (), 0)
    examined = 0
    last = np.arange(m)
    union = masks.copy()
    parents: list[np.ndarray] = []   # per size k >= 2: index of the (k-1)-set extended
    lasts: list[np.ndarray] = [last]
    for k in range(1, kmax + 1):
        if k > 1:
            counts = m - 1 - last
            parent = np.repeat(np.arange(last.size), counts)
            # New element: last[parent] + 1, + 2, ... for each parent.
            offsets = np.arange(parent.size) - np.repeat(np.cumsum(counts) - counts, counts)
            new_last = last[parent] + 1 + offsets
            union = union[parent] | masks[new_last]
            last = new_last
            parents.append(parent)
            lasts.append(last)
        if last.size == 0:
            break
        sizes = _sizes(union)
        examined += sizes.size
        idx = int(np.argmin(sizes))
        ratio = sizes[idx] / k
        if ratio < best[0]:
            # Rebuild the set by walking the parent pointers back.
            members, j = [], idx
            for level in range(k - 1, -1, -1):
                members.append(int(lasts[level][j]))
                if level:
                    j = int(parents[level - 1][j])
            best = (ratio, tuple(sorted(members)), int(sizes[idx]))
    return best, examined


def _search(masks: np.ndarray, kmax: int, rng: np.random.Generator, starts: int,
            random_sets: int, work: int = DEFAULT_SEARCH_WORK):
    """Adversarial search: greedy growth from many starts, then random sets."""
    m = masks.shape[0]
    best = [math.inf, (), 0]
    examined = 0

    def consider(sizes: np.ndarray, sets_k: np.ndarray, k: int):
        nonlocal examined
        examined += sizes.size
        i = int(np.argmin(sizes))
        if sizes[i] / k < best[0]:
            best[:] = [sizes[i] / k, tuple(sorted(int(x) for x in sets_k[i])), int(sizes[i])]

    # Greedy growth: every start grows by the input adding the fewest new neighbours.
    # Starts: single inputs, and the pairs of inputs with the largest overlap.
    # Bound the work (starts x M x words x kmax) so that big splitters stay quick: at
    # least 8 starts (fewer, down to 1, with a smaller budget) while that fits ``work``
    # word operations (2^24 by default); past it (splitters of 2048 inputs and more)
    # fewer starts, and growth stops at the size the budget reaches, so a step's
    # candidates (starts x M x words) never pass 2^26 words (512 MiB).
    step = m * masks.shape[1]
    least = max(1, 8 * work // DEFAULT_SEARCH_WORK)
    starts = int(min(starts, max(least, work // max(1, step * kmax))))
    starts = max(1, min(starts, (1 << 26) // max(1, step)))
    kmax_grow = int(min(kmax, max(1, (1 << 26) // max(1, starts * step))))
    start_inputs = np.arange(m) if m <= starts else rng.choice(m, size=starts, replace=False)
    members = start_inputs[:, None]
    union = masks[start_inputs]
    consider(_sizes(union), members, 1)
    all_sizes = _sizes(masks)
    for k in range(2, kmax_grow + 1):
        cand = union[:, None, :] | masks[None, :, :]              # (starts, M, W)
        grow = _sizes(cand)
        taken = np.zeros(grow.shape, dtype=bool)
        np.put_along_axis(taken, members, True, axis=1)
        # Ties go to the input with the fewest neighbours of its own (harder to cover).
        score = np.where(taken, np.iinfo(np.int64).max, grow * (m + 1) + all_sizes[None, :])
        pick = np.argmin(score, axis=1)
        members = np.concatenate([members, pick[:, None]], axis=1)
        union = cand[np.arange(cand.shape[0]), pick]
        consider(_sizes(union), members, k)
    # Random sets of every size: the prefixes of random orders (a prefix of a uniformly
    # random order is a uniformly random set), grown one input at a time.
    # (at most ``work`` draws for the orders: 2,000 orders of 65,536 inputs would be 1 GiB)
    random_sets = min(random_sets, max(16, work // m))
    if random_sets > 0:
        # the kmax smallest of m random keys, in key order: a random order's prefix,
        # without sorting all m keys
        keys = rng.random((random_sets, m))
        first = np.argpartition(keys, kmax - 1, axis=1)[:, :kmax] if kmax < m else \
            np.tile(np.arange(m), (random_sets, 1))
        orders = np.take_along_axis(
            first, np.argsort(np.take_along_axis(keys, first, axis=1), axis=1), axis=1)
        u = np.zeros((random_sets, masks.shape[1]), dtype=np.uint64)
        for k in range(1, kmax + 1):
            u |= masks[orders[:, k - 1]]
            consider(_sizes(u), orders[:, :k], k)
    return (best[0], best[1], best[2]), examined


def measure_expansion(adjacency: Sequence[Sequence[int]], outputs: int, alpha: float, *,
                      exact_limit: int = DEFAULT_EXACT_LIMIT, seed: int = 0,
                      starts: int = 256, random_sets: int = 2000,
                      work: int = DEFAULT_SEARCH_WORK) -> ExpansionResult:
    """The expansion ``beta`` of a bipartite graph for sets of at most ``alpha * M`` inputs.

    Parameters
    ----------
    adjacency : sequence of sequences of int
        ``adjacency[x]``: the outputs input ``x`` is joined to (repeats allowed).
    outputs : int
        ``P``.
    alpha : float in (0, 1]
    exact_limit : int
        Enumerate every set when there are at most this many.
    seed : int
        Seeds the search (only used when not exact).
    starts, random_sets : int
        Effort of the search: greedy starts (at most; fewer on big graphs so that a
        search costs about ``work`` word operations), random sets per size.
    work : int
        The search's budget of word operations (default ``DEFAULT_SEARCH_WORK``, 2**24);
        a report over thousands of distinct graphs shares one budget among them.
    """
    if work < 1:
        raise ParameterError(f"work must be >= 1, got {work}")
    m = len(adjacency)
    kmax = _check(m, outputs, alpha)
    if kmax == 0:
        return ExpansionResult(m, outputs, alpha, 0, math.inf, (), 0, True, 0)
    masks = neighbour_masks(adjacency, outputs)
    if count_sets(m, kmax, cap=exact_limit) <= exact_limit:
        (beta, worst, nbrs), examined = _exact(masks, kmax)
        return ExpansionResult(m, outputs, alpha, kmax, float(beta), worst, nbrs, True, examined)
    rng = generator(seed, "expansion")
    (beta, worst, nbrs), examined = _search(masks, kmax, rng, starts, random_sets, work)
    return ExpansionResult(m, outputs, alpha, kmax, float(beta), worst, nbrs, False, examined)


def verify_expansion(adjacency: Sequence[Sequence[int]], outputs: int, alpha: float,
                     beta: float, **kwargs) -> ExpansionResult:
    """:func:`measure_expansion`; check ``result.holds(beta)`` (and ``result.exact``)."""
    if beta <= 0:
        raise ParameterError(f"beta must be > 0, got {beta}")
    return measure_expansion(adjacency, outputs, alpha, **kwargs)


def brute_force_expansion(adjacency: Sequence[Sequence[int]], outputs: int,
                          alpha: float) -> float:
    """Reference: min ``|N(S)| / |S|`` by plain Python over every set (tiny graphs only)."""
    from itertools import combinations
    m = len(adjacency)
    kmax = _check(m, outputs, alpha)
    best = math.inf
    for k in range(1, kmax + 1):
        for s in combinations(range(m), k):
            best = min(best, len(set().union(*(set(adjacency[x]) for x in s))) / k)
    return best
