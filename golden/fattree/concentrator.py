"""Concentrator switches: cascades of bipartite partial concentrators (paper, Section IV).

A fat-tree node's output port concentrates ``r`` input wires onto ``s`` output wires.
The switch is a cascade of bipartite stages ``r -> s_1 -> s_2 -> ... -> s``; a message
takes one edge of every stage, and the edge index (its position in
``Stage.adjacency[x]``) is the decision value the message carries for that stage.

Kinds of cascade
----------------
* ``identity``: ``r <= s``; no stage, input ``x`` is wired straight to output ``x``.
* ``crossbar``: one complete bipartite stage ``r -> s``; any ``k <= s`` inputs route.
* ``pippenger``: Pippenger's partial concentrators, pasted outputs to inputs. Each next
  size is ``max(s, ceil(2 r_i / 3))`` (and at least one smaller than ``r_i``, which only
  matters for ``r_i = 2``), so the last stage lands exactly on ``s``. A stage whose
  complete bipartite graph meets the degree bounds (``s_i <= 6`` and ``r_i <= 9``) is
  built complete; any other stage is random: every input has ``min(6, s_i)`` distinct
  outputs and output degrees are balanced (at most ``ceil(6 r_i / s_i) <= 9``). A random
  stage is accepted when the checker finds Hall's condition for every input subset of
  size ``<= floor(ALPHA * s_i)``; otherwise it is rebuilt from the next derived seed.

Guarantees
----------
``Stage.guarantee`` is the ``k`` such that any ``k`` inputs of the stage can be matched to
``k`` distinct outputs, as verified at construction: ``s_i`` for a complete stage and
``floor(ALPHA * s_i)`` for an accepted random stage. A cascade's guarantee is the
minimum over its stages (paths are vertex-disjoint because every stage matches into
distinct outputs, which are the next stage's distinct inputs).

For random stages with at most :data:`DEFAULT_EXACT_LIMIT` subsets on the smaller side
the check is exhaustive (``alpha_exact`` is True). Larger stages are checked by an
adversarial search (greedy growth of input sets and of output sets, peeling of output
sets, random subsets), whose result is an upper estimate of the true concentration (``alpha_exact``
is False): no violation was found, which is not a proof that none exists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Sequence

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from ..checks import check_int
from ..errors import ParameterError
from ..seeds import MAX_SEED, check_seed, generator, sequence

__all__ = [
    "ALPHA",
    "MAX_IN_DEGREE",
    "MAX_OUT_DEGREE",
    "CASCADE_KINDS",
    "DEFAULT_EXACT_LIMIT",
    "MAX_ATTEMPTS",
    "Stage",
    "Cascade",
    "build_stage_random",
    "build_stage_complete",
    "build_cascade",
    "pippenger_sizes",
    "stage_seed",
    "concentration_guarantee",
    "route_cascade",
    "follow",
    "cascade_summary",
]

#: Pippenger's partial concentration target: any k <= ALPHA * s inputs route.
ALPHA = Fraction(3, 4)
#: Degree bounds of Pippenger's partial concentrator graphs.
MAX_IN_DEGREE = 6
MAX_OUT_DEGREE = 9
#: Cascade kinds build_cascade accepts (``identity`` is chosen by itself when r <= s).
CASCADE_KINDS = ("pippenger", "crossbar")
#: Exhaustive Hall checking up to this many subsets (2^20: s <= 20, about 20 ms).
DEFAULT_EXACT_LIMIT = 1 << 20
#: Random stages tried per cascade stage before giving up.
MAX_ATTEMPTS = 32



# ---------------------------------------------------------------------------------------
# Data structures
# ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """One bipartite stage of a concentrator cascade.

    Attributes
    ----------
    inputs, outputs : int
        r_i and s_i.
    adjacency : tuple of tuple of int
        ``adjacency[x]`` lists the outputs of input ``x``'s edges in edge order (sorted,
        distinct); the edge index is the decision value a message carries.
    kind : str
        ``complete`` or ``random``.
    guarantee : int
        Any ``k <= guarantee`` inputs can be matched to ``k`` distinct outputs (as
        verified at construction; see the module notes for non-exhaustive checks).
    seed : int or None
        Seed the random stage was built from (after retries); None for complete.
    decision_width : int
        Bits to name an edge: ceil(log2(max input degree)), 0 when it is <= 1.
    achieved_alpha : float
        Largest k such that every input subset of size <= k has a matching into
        distinct outputs, divided by ``outputs``.
    alpha_exact : bool
        True if ``achieved_alpha`` comes from an exhaustive check; False if from an
        adversarial/random search (then it is an upper estimate).
    """

    inputs: int
    outputs: int
    adjacency: tuple[tuple[int, ...], ...]
    kind: str
    guarantee: int
    seed: int | None
    decision_width: int
    achieved_alpha: float
    alpha_exact: bool

    @property
    def edges(self) -> int:
        """Number of edges of the stage."""
        return sum(len(row) for row in self.adjacency)

    @property
    def max_in_degree(self) -> int:
        return max((len(row) for row in self.adjacency), default=0)

    @property
    def max_out_degree(self) -> int:
        return int(self.out_degrees().max(initial=0))

    def out_degrees(self) -> np.ndarray:
        """Degree of every output, as an integer array of length ``outputs``."""
        deg = np.zeros(self.outputs, dtype=np.int64)
        for row in self.adjacency:
            deg[list(row)] += 1
        return deg


@dataclass(frozen=True)
class Cascade:
    """A concentrator switch: ``inputs`` wires onto ``outputs`` wires through ``stages``.

    Attributes
    ----------
    inputs, outputs : int
        r and s.
    kind : str
        ``pippenger``, ``crossbar`` or ``identity``.
    stages : tuple of Stage
        Stage ``i`` maps the outputs of stage ``i - 1`` (the cascade inputs for ``i = 0``)
        to its own outputs; empty for identity, where input ``x`` is output ``x``.
    guarantee : int
        Any ``k <= guarantee`` inputs route to distinct outputs by vertex-disjoint paths:
        the minimum of the stage guarantees capped at ``outputs``; ``outputs`` for
        identity.
    decision_width : int
        Sum of the stage decision widths (bits a message carries for this switch).
    seed : int or None
        The cascade seed stage seeds were derived from (None unless built by
        :func:`build_cascade` with random stages possible).
    """

    inputs: int
    outputs: int
    kind: str
    stages: tuple[Stage, ...]
    guarantee: int
    decision_width: int
    seed: int | None = None

    def edges(self) -> int:
        """Total edge count over all stages (0 for identity: plain wires, no switch)."""
        return sum(stage.edges for stage in self.stages)

    @property
    def depth(self) -> int:
        return len(self.stages)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Wire counts ``(r, s_1, ..., s)`` (just ``(r,)`` for identity)."""
        return (self.inputs,) + tuple(stage.outputs for stage in self.stages)


# ---------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------

def _width(max_degree: int) -> int:
    """ceil(log2(max_degree)), 0 when max_degree <= 1."""
    return (max_degree - 1).bit_length() if max_degree > 1 else 0


def _as_adjacency(stage_or_adjacency, outputs: int | None) -> tuple[list[list[int]], int]:
    if isinstance(stage_or_adjacency, Stage):
        adj = [list(row) for row in stage_or_adjacency.adjacency]
        s = stage_or_adjacency.outputs if outputs is None else outputs
    else:
        adj = [[int(o) for o in row] for row in stage_or_adjacency]
        if outputs is None:
            s = 1 + max((max(row) for row in adj if row), default=-1)
        else:
            s = outputs
    s = check_int("outputs", s, 0)
    for x, row in enumerate(adj):
        for o in row:
            if not 0 <= o < s:
                raise ParameterError(
                    f"adjacency[{x}] must hold outputs in [0, {s - 1}], got {o}")
    # Duplicate edges do not change neighbourhoods.
    adj = [sorted(set(row)) for row in adj]
    return adj, s


# ---------------------------------------------------------------------------------------
# Hall's condition: exact (exhaustive) and adversarial checks
# ---------------------------------------------------------------------------------------

def _popcounts(bits: int) -> np.ndarray:
    """popcount(i) for i in [0, 2^bits), as uint8."""
    pc = np.zeros(1, dtype=np.uint8)
    for _ in range(bits):
        pc = np.concatenate([pc, pc + 1])
    return pc


def _exact_output_side(adj: list[list[int]], s: int) -> int:
    """min |S| over output sets S trapping more than |S| inputs; s if none.

    An input is trapped by S when all its outputs are in S. A smallest Hall violator Y
    has |N(Y)| = |Y| - 1 and is trapped by N(Y); conversely |S| + 1 inputs trapped by S
    violate. So the largest k with all k-subsets matchable is this minimum.
    """
    r = len(adj)
    n = 1 << s
    dtype = np.uint8 if r < 2 ** 8 else np.uint16 if r < 2 ** 16 else np.uint32
    g: np.ndarray = np.zeros(n, dtype=dtype)
    masks = np.array([sum(1 << o for o in row) for row in adj], dtype=np.int64)
    np.add.at(g, masks, 1)
    for i in range(s):  # subset-sum (zeta) transform: g[S] = #inputs with mask in S
        view = g.reshape(-1, 2, 1 << i)
        view[:, 1, :] += view[:, 0, :]
    pc = _popcounts(s)
    bad = g > pc
    if bad.any():
        return min(int(pc[bad].min()), s)
    return s


def _exact_input_side(adj: list[list[int]], s: int) -> int:
    """(size of the smallest input set Y with |N(Y)| < |Y|) - 1; s if none (capped at s)."""
    r = len(adj)
    words = max(1, (s + 63) // 64)
    nb = np.zeros((r, words), dtype=np.uint64)
    for x, row in enumerate(adj):
        for o in row:
            nb[x, o // 64] |= np.uint64(1 << (o % 64))
    masks = np.zeros((1, words), dtype=np.uint64)
    for x in range(r):  # masks[Y] = N(Y), Y as a bitmask of inputs
        masks = np.concatenate([masks, masks | nb[x]])
    counts = np.bitwise_count(masks).sum(axis=1, dtype=np.int64)
    sizes = _popcounts(r).astype(np.int64)
    bad = counts < sizes
    if bad.any():
        return min(int(sizes[bad].min()) - 1, s)
    return s


def _matching_size(adj: list[list[int]], rows: Sequence[int], s: int) -> int:
    """Maximum matching size between the inputs ``rows`` and the outputs."""
    if len(rows) == 0:
        return 0
    indptr = [0]
    indices: list[int] = []
    for x in rows:
        indices.extend(adj[x])
        indptr.append(len(indices))
    m = csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr),
                   shape=(len(rows), s))
    match = maximum_bipartite_matching(m, perm_type="column")
    return int((match >= 0).sum())


class _Hall:
    """Incremental neighbourhood bookkeeping for the adversarial search."""

    def __init__(self, adj: list[list[int]], s: int):
        self.adj = adj
        self.r = len(adj)
        self.s = s
        self.deg = np.array([len(row) for row in adj], dtype=np.int64)
        out_nbrs: list[list[int]] = [[] for _ in range(s)]
        for x, row in enumerate(adj):
            for o in row:
                out_nbrs[o].append(x)
        self.out_nbrs = [np.array(v, dtype=np.int64) for v in out_nbrs]
        self.adj_arr = [np.array(row, dtype=np.int64) for row in adj]
        # Output-greedy weight of an input by how many of its outputs are still missing:
        # about to be trapped (1 missing) dominates, then nearly trapped ones.
        top = int(self.deg.max(initial=0))
        self.score_table = np.array(
            [0.0, 1e6] + [1.0 / m ** 2 for m in range(2, top + 1)], dtype=np.float64)
        weights = self.score_table[self.deg]
        self.score0 = np.array([weights[v].sum() for v in self.out_nbrs], dtype=np.float64)
        # the lists padded for the batched growths: an input's outputs (padding s),
        # an output's inputs (padding r); the last row of each is all padding
        self.adj_pad = _padded(adj + [[]], s)
        self.out_pad = _padded(out_nbrs + [[]], self.r)

    def greedy_inputs_batch(self, starts: Sequence[int], limit: int) -> list[list[int] | None]:
        """:meth:`greedy_inputs` from every start at once (one numpy row per start).

        Returns, per start, the first Y with |N(Y)| < |Y| of its growth if one of size
        <= ``limit`` is met, else None. A growth does not depend on ``limit`` (only where
        it stops does): the violator it returns is the scalar method's for any smaller
        limit it fits (:func:`_heuristic_bound`).
        """
        r, s = self.r, self.s
        big = 1 << 40
        rows = np.arange(len(starts))[:, None]
        newcnt = np.tile(np.append(self.deg, 4 * big), (len(starts), 1))
        covered = np.zeros((len(starts), s + 1), dtype=bool)
        covered[:, s] = True                      # the padding output: never new
        n_out = np.zeros(len(starts), dtype=np.int64)
        x = np.asarray(starts, dtype=np.int64)
        order = []
        found = np.zeros(len(starts), dtype=np.int64)   # size of the first violator
        for size in range(1, min(limit, r) + 1):
            order.append(x)
            newcnt[rows[:, 0], x] = big
            outs = self.adj_pad[x]
            new = ~covered[rows, outs]            # an input's outputs are distinct
            covered[rows, outs] = True
            n_out += new.sum(1)
            # flat 1-D indices: numpy's fast path of ufunc.at
            flat = (rows[:, :, None] * (r + 1) + self.out_pad[outs]).ravel()
            np.subtract.at(newcnt.reshape(-1), flat,
                           np.broadcast_to(new[:, :, None], outs.shape + (self.out_pad.shape[1],))
                           .ravel().astype(np.int64))
            found[(found == 0) & (n_out < size)] = size
            if found.all():
                break
            x = np.argmin(newcnt[:, :r], axis=1)
        grown = np.stack(order, 1)
        return [grown[i, :k].tolist() if k else None for i, k in enumerate(found.tolist())]

    def greedy_outputs_batch(self, starts: Sequence[int], limit: int
                             ) -> list[list[int] | None]:
        """:meth:`greedy_outputs` from every start at once (one numpy row per start);
        per start its violator if one is met within ``limit``, else None (scores summed
        in the scalar method's order: the same floats, the same choices)."""
        r, s = self.r, self.s
        n = len(starts)
        rows = np.arange(n)[:, None]
        table = self.score_table
        missing = np.tile(np.append(self.deg, 0), (n, 1))
        score = np.tile(np.append(self.score0, 0.0), (n, 1))
        n_trapped = np.zeros(n, dtype=np.int64)
        o = np.asarray(starts, dtype=np.int64)
        out: list[list[int] | None] = [None] * n
        open_ = np.ones(n, dtype=bool)
        size = 0
        while True:
            score[rows[:, 0], o] = -np.inf
            size += 1
            nbrs = self.out_pad[o]
            valid = nbrs < r
            old = missing[rows, nbrs]
            missing[rows, nbrs] = old - 1
            missing[:, r] = 0                     # the padding input
            n_trapped += ((old == 1) & valid).sum(1)
            for i in np.flatnonzero(open_ & (n_trapped > size)).tolist():
                out[i] = np.flatnonzero(missing[i, :r] == 0)[: size + 1].tolist()
                open_[i] = False
            if size + 1 >= limit or size >= s or not open_.any():
                return out
            delta = np.where(valid, table[np.maximum(old - 1, 0)] - table[old], 0.0)
            # every input's outputs in the scalar order: x by x, then its outputs
            flat = (rows[:, :, None] * (s + 1) + self.adj_pad[nbrs]).ravel()
            np.add.at(score.reshape(-1), flat,
                      np.broadcast_to(delta[:, :, None], nbrs.shape + (self.adj_pad.shape[1],))
                      .ravel())
            o = np.argmax(score[:, :s], axis=1)

    def greedy_inputs(self, start: int, limit: int) -> list[int] | None:
        """Grow Y from ``start`` adding the input with fewest new outputs.

        Returns the first Y with |N(Y)| < |Y| if one of size <= limit is met, else None.
        The specification of :meth:`greedy_inputs_batch` (the search runs that one).
        """
        big = 1 << 40
        newcnt = self.deg.copy()
        covered = np.zeros(self.s, dtype=bool)
        order: list[int] = []
        n_out = 0
        x = start
        while True:
            order.append(x)
            newcnt[x] = big
            for o in self.adj[x]:
                if not covered[o]:
                    covered[o] = True
                    n_out += 1
                    newcnt[self.out_nbrs[o]] -= 1
            if n_out < len(order):
                return order
            if len(order) >= limit or len(order) >= self.r:
                return None
            x = int(np.argmin(newcnt))

    def greedy_outputs(self, start: int, limit: int) -> list[int] | None:
        """Grow an output set S from ``start``, adding the output that traps most inputs.

        Trapped inputs have all their outputs in S; returns |S| + 1 trapped inputs (a
        violator) as soon as more than |S| are trapped with |S| + 1 <= limit, else None.
        The specification of :meth:`greedy_outputs_batch` (the search runs that one).
        """
        table = self.score_table
        missing = self.deg.copy()
        score = self.score0.copy()  # score[o] = sum of table[missing[x]] over x -> o
        n_trapped = 0
        o = start
        size = 0
        while True:
            score[o] = -np.inf  # o joins S
            size += 1
            nbrs = self.out_nbrs[o]
            old = missing[nbrs]
            missing[nbrs] = old - 1
            n_trapped += int((old == 1).sum())
            if n_trapped > size:
                return [int(v) for v in np.flatnonzero(missing == 0)[: size + 1]]
            if size + 1 >= limit or size >= self.s:
                return None
            delta = table[old - 1] - table[old]
            for x, dx in zip(nbrs, delta):
                score[self.adj_arr[x]] += dx  # -inf stays -inf
            o = int(np.argmax(score))

    def peel(self, noise: float, rng: np.random.Generator | None, limit: int
             ) -> list[int] | None:
        """Shrink S from all outputs, dropping the output that frees fewest trapped inputs.

        Returns the smallest violator met (|S| + 1 inputs trapped by S, |S| + 1 <= limit),
        or None. ``noise`` in [0, 1) breaks ties at random.
        """
        r, s = self.r, self.s
        # trapped inputs adjacent to each output in S; inf once the output leaves S
        # (inf - 1 and inf + noise stay inf: it is never the minimum again)
        cnt = np.array([len(v) for v in self.out_nbrs], dtype=np.float64)
        out_lists = [v.tolist() for v in self.out_nbrs]
        trapped = [True] * r
        n_trapped, size = r, s
        best = None
        while size > 0:
            if n_trapped > size and size + 1 <= limit:
                best = [x for x in range(r) if trapped[x]][: size + 1]
                limit = size
            key = cnt + rng.random(s) * noise if noise and rng is not None else cnt
            o = int(np.argmin(key))
            cnt[o] = np.inf
            size -= 1
            for x in out_lists[o]:
                if trapped[x]:
                    trapped[x] = False
                    n_trapped -= 1
                    cnt[self.adj_arr[x]] -= 1
        return best

    def hall_violator(self, rows: Sequence[int]) -> list[int] | None:
        """A Hall violator inside ``rows`` (None if they all match), via alternating BFS."""
        rows = list(rows)
        indptr = [0]
        indices: list[int] = []
        for x in rows:
            indices.extend(self.adj[x])
            indptr.append(len(indices))
        m = csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr),
                       shape=(len(rows), self.s))
        match = maximum_bipartite_matching(m, perm_type="column")
        unmatched = np.flatnonzero(match < 0)
        if len(unmatched) == 0:
            return None
        owner = {int(match[i]): i for i in range(len(rows)) if match[i] >= 0}
        seen_rows = {int(unmatched[0])}
        seen_cols: set[int] = set()
        frontier = [int(unmatched[0])]
        while frontier:
            nxt = []
            for i in frontier:
                for o in self.adj[rows[i]]:
                    if o not in seen_cols:
                        seen_cols.add(o)
                        j = owner[o]  # every reached column is matched (max matching)
                        if j not in seen_rows:
                            seen_rows.add(j)
                            nxt.append(j)
            frontier = nxt
        return sorted(rows[i] for i in seen_rows)

    def shrink(self, ys: list[int]) -> list[int]:
        """Drop inputs from a violator while it stays a violator (local minimisation)."""
        # plain lists: a violator has a few dozen inputs of a few outputs each, where
        # numpy's per-call cost is most of the work
        adj = self.adj
        left = set(ys)
        cover = [0] * self.s
        for y in left:
            for o in adj[y]:
                cover[o] += 1
        n_out = sum(1 for c in cover if c > 0)
        changed = True
        while changed and len(left) > 1:
            changed = False
            for y in sorted(left, key=lambda v: (-len(adj[v]), v)):
                lost = sum(1 for o in adj[y] if cover[o] == 1)
                if n_out - lost < len(left) - 1:
                    left.discard(y)
                    for o in adj[y]:
                        cover[o] -= 1
                    n_out -= lost
                    changed = True
        return sorted(left)


def inputs_violator_within(found: list[int] | None, limit: int) -> list[int] | None:
    """The violator :meth:`_Hall.greedy_inputs` returns with ``limit``, from the one
    its growth met first (:meth:`_Hall.greedy_inputs_batch`): Y of size k is met
    when k <= limit."""
    return found if found is not None and len(found) <= limit else None


def outputs_violator_within(found: list[int] | None, limit: int) -> list[int] | None:
    """The violator :meth:`_Hall.greedy_outputs` returns with ``limit``, from the one
    its growth met first: the |S| + 1 inputs trapped by S are met when |S| < limit
    or |S| = 1 (the check for a violator comes before the limit's)."""
    if found is None:
        return None
    size = len(found) - 1
    return found if size < limit or size == 1 else None


def _padded(lists: Sequence[Sequence[int]], pad: int) -> np.ndarray:
    """The lists as the rows of one int array, short ones padded with ``pad``."""
    width = max((len(v) for v in lists), default=0)
    out = np.full((len(lists), max(width, 1)), pad, dtype=np.int64)
    for i, v in enumerate(lists):
        out[i, :len(v)] = v
    return out


def _heuristic_bound(adj: list[list[int]], s: int, seed: int, trials: int,
                     max_starts: int, batched: bool = True) -> int:
    """Upper estimate of the largest good k by adversarial and random search.

    Every candidate violator is minimised and then confirmed with a maximum matching
    before it lowers the estimate. ``batched`` grows the greedy sets from every start at
    once (:meth:`_Hall.greedy_inputs_batch`, :meth:`_Hall.greedy_outputs_batch`), else
    one start after the other (the specification: the same estimate).
    """
    r = len(adj)
    hall = _Hall(adj, s)
    best = s  # the convention when no violator of size <= min(r, s) exists
    rng = generator(seed, "stage-wiring")

    def record(violator: list[int] | None) -> None:
        nonlocal best
        if violator is None:
            return
        violator = hall.shrink(violator)
        size = len(violator)
        if size - 1 < best and _matching_size(adj, violator, s) < size:
            best = size - 1

    def sample(n: int, m: int) -> list[int]:
        if n <= m:
            return list(range(n))
        return sorted(int(v) for v in rng.choice(n, size=m, replace=False))

    # Grow input sets adding the input with the fewest new outputs, then output sets
    # adding the output that traps the most inputs, from many starts; batched: all
    # growths at once, then each start's result as the one-by-one search, whose limit
    # best + 1 shrinks as violators are found, has it.
    growths = ((r, 2 * max_starts, hall.greedy_inputs, hall.greedy_inputs_batch,
                inputs_violator_within),
               (s, max_starts, hall.greedy_outputs, hall.greedy_outputs_batch,
                outputs_violator_within))
    for n, count, one_start, every_start, within in growths:
        starts = sample(n, count)
        if batched:
            for found in every_start(starts, best + 1):
                record(within(found, best + 1))
        else:
            for start in starts:
                record(one_start(start, best + 1))
    # Peel outputs from the full set, deterministic first, then with random tie-breaks.
    record(hall.peel(0.0, None, best + 1))
    for _ in range(max_starts // 2):
        record(hall.peel(0.9, rng, best + 1))
    # Random input subsets up to the current estimate, Hall violator from the matching.
    for _ in range(trials):
        if best <= 1:
            break
        size = min(int(rng.integers(max(1, best // 2), best + 1)), r)
        rows = sorted(int(v) for v in rng.choice(r, size=size, replace=False))
        record(hall.hall_violator(rows))
    return best


def concentration_guarantee(stage_or_adjacency, outputs: int | None = None,
                            exact_limit: int = DEFAULT_EXACT_LIMIT, *, seed: int = 0,
                            trials: int = 50, max_starts: int = 64) -> tuple[int, bool]:
    """(largest k such that every input subset of size <= k matches into distinct
    outputs, exact?).

    By Hall's theorem a set X matches iff every Y within X has |N(Y)| >= |Y|, so k is
    (size of the smallest violating Y) - 1, or ``outputs`` when no set of size up to
    min(r, s) violates. Exhaustive when the subsets of the smaller side fit in
    ``exact_limit``: 2^s <= exact_limit for trapped-input counts over every output subset
    (when s <= r), 4 * 2^r * ceil(s / 64) <= exact_limit for neighbourhood bitmasks over
    every input subset (when r < s). Beyond, an adversarial search gives an upper
    estimate and ``exact`` is False: greedy growth of input sets (fewest new outputs
    first, from up to ``2 * max_starts`` start inputs), greedy growth of output sets
    (most trapped inputs first, from up to ``max_starts`` start outputs), peeling outputs
    from the full set (``max_starts // 2`` randomised passes) and ``trials`` random input
    subsets; every violator found is confirmed with scipy's maximum_bipartite_matching.

    ``stage_or_adjacency`` is a :class:`Stage` or a sequence of output-index sequences;
    ``outputs`` defaults to the stage's outputs (or 1 + the largest index used).
    """
    adj, s = _as_adjacency(stage_or_adjacency, outputs)
    exact_limit = check_int("exact_limit", exact_limit, 0)
    r = len(adj)
    if r == 0 or s == 0:
        return (s if r == 0 else 0), True
    if any(not row for row in adj):
        return 0, True
    words = (s + 63) // 64
    if s <= r and s < 63 and (1 << s) <= exact_limit:
        return _exact_output_side(adj, s), True
    if r < s and r < 63 and (1 << r) * 4 * words <= exact_limit:  # 8-byte words: dearer
        return _exact_input_side(adj, s), True
    return _heuristic_bound(adj, s, seed, trials, max_starts), False


# ---------------------------------------------------------------------------------------
# Construction
# ---------------------------------------------------------------------------------------

def stage_seed(cascade_seed: int, stage: int, attempt: int) -> int:
    """Seed of attempt ``attempt`` at stage ``stage`` of a cascade built from ``cascade_seed``."""
    state = sequence(cascade_seed, "stage", stage, attempt).generate_state(2, dtype=np.uint32)
    return int((int(state[0]) << 32 | int(state[1])) & MAX_SEED)


def build_stage_complete(r: int, s: int) -> Stage:
    """Complete bipartite stage r -> s: input x has edges to outputs 0..s-1 in order."""
    r = check_int("r", r, 1)
    s = check_int("s", s, 1)
    row = tuple(range(s))
    return Stage(inputs=r, outputs=s, adjacency=tuple(row for _ in range(r)),
                 kind="complete", guarantee=s, seed=None, decision_width=_width(s),
                 achieved_alpha=1.0, alpha_exact=True)


def _random_adjacency(r: int, s: int, d: int, rng: np.random.Generator
                      ) -> tuple[tuple[int, ...], ...] | None:
    """Each input gets d distinct outputs; output degrees floor/ceil(r d / s)."""
    if d == s:
        row = tuple(range(s))
        return tuple(row for _ in range(r))
    base, extra = divmod(r * d, s)
    deg = np.full(s, base, dtype=np.int64)
    deg[rng.permutation(s)[:extra]] += 1
    stubs = np.repeat(np.arange(s), deg)
    rng.shuffle(stubs)
    rows = [list(map(int, stubs[x * d:(x + 1) * d])) for x in range(r)]
    sets = [set(row) for row in rows]
    for x in range(r):
        while len(sets[x]) < d:
            seen: set[int] = set()
            for j, v in enumerate(rows[x]):  # first repeated output in row x
                if v in seen:
                    break
                seen.add(v)
            # swap it with an output w of another row y, keeping both rows distinct
            swap = None
            for y in rng.permutation(r):
                y = int(y)
                if y == x or v in sets[y]:
                    continue
                for k in rng.permutation(d):
                    if rows[y][int(k)] not in sets[x]:
                        swap = (y, int(k))
                        break
                if swap is not None:
                    break
            if swap is None:
                return None
            y, k = swap
            rows[x][j], rows[y][k] = rows[y][k], v
            sets[x] = set(rows[x])
            sets[y] = set(rows[y])
    return tuple(tuple(sorted(row)) for row in rows)


def build_stage_random(r: int, s: int, seed: int,
                       exact_limit: int = DEFAULT_EXACT_LIMIT) -> Stage:
    """One random bipartite stage r -> s from the ``stage-wiring`` stream of ``seed``.

    Every input has min(6, s) distinct outputs, sorted; output degrees are balanced
    (floor or ceil of r * min(6, s) / s, so at most 9 when r <= 3 s / 2). The stage
    may fail the partial-concentrator property. ``guarantee`` is k, what
    :func:`concentration_guarantee` measured, where that measurement is exact (every
    input subset checked: a proof); where it came from a search (an upper estimate), it
    is min(floor(ALPHA * s), k): the search found no violation up to Pippenger's bound.
    """
    r = check_int("r", r, 1)
    s = check_int("s", s, 1)
    seed = check_seed(seed)
    exact_limit = check_int("exact_limit", exact_limit, 0)
    return _build_stage_random(r, s, seed, exact_limit)


@lru_cache(maxsize=4096)
def _build_stage_random(r: int, s: int, seed: int, exact_limit: int) -> Stage:
    d = min(MAX_IN_DEGREE, s)
    rng = generator(seed, "stage-wiring")
    adjacency = _random_adjacency(r, s, d, rng)
    if adjacency is None:
        raise RuntimeError(f"random stage r={r}, s={s}, seed={seed}: cannot give every "
                           f"input {d} distinct outputs")
    k, exact = concentration_guarantee(adjacency, s, exact_limit, seed=seed)
    target = math.floor(ALPHA * s)
    return Stage(inputs=r, outputs=s, adjacency=adjacency, kind="random",
                 guarantee=k if exact else min(target, k), seed=seed, decision_width=_width(d),
                 achieved_alpha=k / s, alpha_exact=exact)


def pippenger_sizes(r: int, s: int) -> tuple[int, ...]:
    """Wire counts (r, s_1, ..., s) of a Pippenger cascade: s_{i+1} = max(s, ceil(2 r_i / 3)).

    Where a complete stage from r_i straight to s meets the degree bounds, the cascade
    ends with it (one stage, a full concentrator, fewer decision bits than a chain of
    small stages). For r_i = 2 the rule would not shrink, so the next size is also at
    most r_i - 1. Just (r,) when r <= s.
    """
    sizes = [r]
    while sizes[-1] > s:
        ri = sizes[-1]
        if _is_small_complete(ri, s):
            sizes.append(s)
        else:
            sizes.append(max(s, min(ri - 1, -(-2 * ri // 3))))
    return tuple(sizes)


def _is_small_complete(r: int, s: int) -> bool:
    return s <= MAX_IN_DEGREE and r <= MAX_OUT_DEGREE


def build_cascade(r: int, s: int, kind: str, seed: int) -> Cascade:
    """Concentrator switch r -> s of the given kind (``pippenger`` or ``crossbar``).

    r <= s gives the identity cascade. Random stages of a Pippenger cascade are built
    from seeds derived from ``seed`` (see :func:`stage_seed`) and retried up to
    :data:`MAX_ATTEMPTS` times; RuntimeError names r, s and the seed if none passes.
    Results are cached: the same arguments return the same (immutable) cascade.
    """
    r = check_int("r", r, 1)
    s = check_int("s", s, 1)
    if not isinstance(kind, str) or kind not in CASCADE_KINDS:
        raise ParameterError(
            f"kind must be one of {', '.join(CASCADE_KINDS)}, got {kind!r}")
    seed = check_seed(seed)
    return _build_cascade(r, s, kind, seed)


@lru_cache(maxsize=4096)
def _build_cascade(r: int, s: int, kind: str, seed: int) -> Cascade:
    if r <= s:
        return Cascade(inputs=r, outputs=s, kind="identity", stages=(), guarantee=s,
                       decision_width=0, seed=None)
    if kind == "crossbar":
        stage = build_stage_complete(r, s)
        return Cascade(inputs=r, outputs=s, kind="crossbar", stages=(stage,),
                       guarantee=s, decision_width=stage.decision_width, seed=None)
    sizes = pippenger_sizes(r, s)
    stages = []
    for i, (ri, si) in enumerate(zip(sizes, sizes[1:])):
        if _is_small_complete(ri, si):
            stages.append(build_stage_complete(ri, si))
            continue
        target = math.floor(ALPHA * si)
        tried = []
        for attempt in range(MAX_ATTEMPTS):
            sd = stage_seed(seed, i, attempt)
            tried.append(sd)
            try:
                stage = build_stage_random(ri, si, sd)
            except RuntimeError:
                continue
            if stage.guarantee >= target:
                stages.append(stage)
                break
        else:
            raise RuntimeError(
                f"no random stage {ri} -> {si} (stage {i} of cascade r={r}, s={s}, "
                f"seed={seed}) met the partial-concentrator guarantee {target} in "
                f"{MAX_ATTEMPTS} attempts (stage seeds {tried[0]}..{tried[-1]})")
    guarantee = min(min(st.guarantee for st in stages), s)
    return Cascade(inputs=r, outputs=s, kind="pippenger", stages=tuple(stages),
                   guarantee=guarantee,
                   decision_width=sum(st.decision_width for st in stages), seed=seed)


# ---------------------------------------------------------------------------------------
# Routing (off-line switch setting)
# ---------------------------------------------------------------------------------------

def follow(cascade: Cascade, input: int, edges: Sequence[int]) -> int:
    """Output reached from ``input`` by taking edge ``edges[i]`` at stage ``i``."""
    input = check_int("input", input, 0, cascade.inputs - 1)
    if len(edges) != len(cascade.stages):
        raise ParameterError(
            f"edges must list {len(cascade.stages)} edge indices (one per stage), "
            f"got {len(edges)}")
    pos = input
    for i, (stage, e) in enumerate(zip(cascade.stages, edges)):
        row = stage.adjacency[pos]
        e = check_int(f"edges[{i}]", e, 0, len(row) - 1)
        pos = row[e]
    return pos


def _stage_matching(stage: Stage, nodes: Sequence[int]) -> np.ndarray:
    indptr = [0]
    indices: list[int] = []
    for x in nodes:
        indices.extend(stage.adjacency[x])
        indptr.append(len(indices))
    m = csr_matrix((np.ones(len(indices), dtype=np.int8), indices, indptr),
                   shape=(len(nodes), stage.outputs))
    return maximum_bipartite_matching(m, perm_type="column")


def _route_flow(cascade: Cascade, occupied: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """Maximum number of vertex-disjoint paths from ``occupied`` through the cascade."""
    import networkx as nx

    stages = cascade.stages
    depth = len(stages)
    g = nx.DiGraph()
    src, dst = ("src",), ("dst",)
    layer = sorted(set(occupied))
    for x in layer:
        g.add_edge(src, (0, x, 0), capacity=1)
    for i in range(depth + 1):
        nxt: set[int] = set()
        for x in layer:
            g.add_edge((i, x, 0), (i, x, 1), capacity=1)  # vertex capacity 1
            if i < depth:
                for y in stages[i].adjacency[x]:
                    g.add_edge((i, x, 1), (i + 1, y, 0), capacity=1)
                    nxt.add(y)
            else:
                g.add_edge((i, x, 1), dst, capacity=1)
        layer = sorted(nxt)
    _, flow = nx.maximum_flow(g, src, dst)
    result: dict[int, tuple[int, ...]] = {}
    for x in occupied:
        if flow[src].get((0, x, 0), 0) < 0.5:
            continue
        pos, path = x, []
        for i, stage in enumerate(stages):
            out = flow[(i, pos, 1)]
            e = next(e for e, y in enumerate(stage.adjacency[pos])
                     if out.get((i + 1, y, 0), 0) > 0.5)
            path.append(e)
            pos = stage.adjacency[pos][e]
        result[x] = tuple(path)
    return result


def route_cascade(cascade: Cascade, occupied: Sequence[int]) -> dict[int, tuple[int, ...]]:
    """Off-line switch setting: {input: edge index per stage} for every routed input.

    ``occupied`` is a sorted sequence of distinct input indices carrying messages.
    Paths are vertex-disjoint and end at distinct outputs (see :func:`follow`). Stage by
    stage maximum bipartite matching (scipy, deterministic); if a stage cannot match all
    its messages, a maximum flow through the whole cascade (networkx, vertex capacity 1)
    routes as many as possible. Inputs that cannot be routed are left out; any
    ``k <= cascade.guarantee`` inputs always route.
    """
    occupied = [check_int("occupied input", x, 0, cascade.inputs - 1) for x in occupied]
    if any(a >= b for a, b in zip(occupied, occupied[1:])):
        raise ParameterError(
            f"occupied must be sorted distinct input indices in [0, {cascade.inputs - 1}]")
    if not cascade.stages:
        return {x: () for x in occupied}
    positions = list(occupied)
    paths: list[list[int]] = [[] for _ in occupied]
    for stage in cascade.stages:
        if len(positions) > stage.outputs:
            return _route_flow(cascade, occupied)
        match = _stage_matching(stage, positions)
        if (match < 0).any():
            return _route_flow(cascade, occupied)
        for j, (pos, o) in enumerate(zip(positions, match)):
            o = int(o)
            paths[j].append(stage.adjacency[pos].index(o))
            positions[j] = o
    return {x: tuple(p) for x, p in zip(occupied, paths)}


def cascade_summary(cascade: Cascade) -> dict:
    """Plain-data description of a cascade for the command line ``info`` command."""
    return {
        "inputs": cascade.inputs,
        "outputs": cascade.outputs,
        "kind": cascade.kind,
        "seed": cascade.seed,
        "sizes": list(cascade.sizes),
        "depth": cascade.depth,
        "guarantee": cascade.guarantee,
        "decision_width": cascade.decision_width,
        "edges": cascade.edges(),
        "stages": [
            {
                "inputs": st.inputs,
                "outputs": st.outputs,
                "kind": st.kind,
                "seed": st.seed,
                "guarantee": st.guarantee,
                "achieved_alpha": st.achieved_alpha,
                "alpha_exact": st.alpha_exact,
                "max_in_degree": st.max_in_degree,
                "max_out_degree": st.max_out_degree,
                "edges": st.edges,
                "decision_width": st.decision_width,
            }
            for st in cascade.stages
        ],
    }
