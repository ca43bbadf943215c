"""Splitter networks: butterflies, dilated butterflies, randomly-wired multibutterflies.

Numbering (the paper's Sec. I)
------------------------------
``N = 2**n`` inputs. A switch is ``(row, level)``; rows are ``n``-bit numbers, bit 0 the
most significant. In the plain networks levels run ``0..n``: level 0 holds the inputs,
level ``n`` the outputs. A level-``l`` switch belongs to the ``M = 2**(n-l)``-row splitter
(block) ``row >> (n - l)``; its *up* edges (direction 0) lead to the upper half of the
block's rows at level ``l + 1`` and its *down* edges (direction 1) to the lower half. A
message for output ``D`` goes up at level ``l`` when bit ``l`` of ``D`` is 0, so after
level ``n - 1`` it sits in row ``D``.

The modified network "*" (Sec. IV)
----------------------------------
The last two splitter levels (the 4-input splitters of level ``n - 2`` and the 2-input
ones of level ``n - 1``) are replaced by one ``4 x 4`` complete bipartite graph per
4-row block, from level ``n - 2`` straight to the outputs, and a level ``-1`` is added
in front, joined to level 0 by 4 random perfect matchings. Its levels are therefore
``-1, 0, ..., n - 2`` and the outputs (labelled level ``n - 1``); it has ``n`` hops like
the plain network. We read "removed the last 2 levels" as removing the two levels of
splitters (so one level of switches disappears); this is our reading, see docs/papers.md.

Representation (consumed by the hardware)
-----------------------------------------
Internally levels are indexed ``i = 0..depth`` (``label = i + first_level``). For every
hop ``i -> i + 1`` the array ``heads[i]`` has shape ``(N, K)``: ``heads[i, row, k]`` is the
row at level ``i + 1`` that out-edge *slot* ``k`` of switch ``(row, i)`` leads to, or
``-1`` for padding. Slots are grouped by the choice a message makes there:
``slot_group[i, k]`` is the group of slot ``k``; a message for output ``D`` at level ``i``
must take a slot of group ``(D >> group_shift[i]) & group_mask[i]``; every group has
``edges_per_group[i]`` slots, contiguous: slot ``g * edges_per_group[i] + j``.

* splitter level: 2 groups (0 = up, 1 = down), ``d`` slots each: slot ``dir * d + j``;
* matching level (-1 of "*"): 1 group, 4 slots, slot ``k`` is matching ``k``;
* complete level (last of "*"): 4 groups of 1 slot, slot ``k`` leads to row
  ``4 * (row // 4) + k``.

Incoming edges of a switch are ordered by ``(source row, slot)`` (the order
:meth:`SplitterNetwork.in_edges` returns and :meth:`SplitterNetwork.in_edge_rank`
numbers); this is the input-wire order the hardware uses.

Random wiring
-------------
Within each half-splitter (a block and a direction) the ``M * d`` edge ends at the inputs
(input ``r``'s ``d`` ends, in slot order) are matched to the ``M * d`` ends at the ``M / 2``
outputs (``2d`` each) by a uniformly random permutation (the configuration model). The
network is then "cleaned up ... to remove parallel edges ... where possible" (Sec. IV):
while some input has more than ``m = ceil(d / (M / 2))`` edges to one output (``m = 1``
whenever ``M / 2 >= d``), one such edge swaps its output end with a random edge of the
same half-splitter, provided the swap creates no new excess; swaps are done in parallel
rounds (swaps touching disjoint rows) until none is left. The 4 matchings of level -1 are
cleaned the same way, swapping within one matching.

That is ``wiring="uniform"``, the paper's definition (Sec. I-C) read literally. Two more
constructions satisfy the same degree constraints: ``"maps"`` (slot ``j`` of the inputs of
a half-splitter is a random 2-to-1 map onto its outputs, so each slot alone already gives
every output 2 incoming edges) and ``"butterfly-plus-maps"`` (slot 0 is the butterfly
edge, the other slots random 2-to-1 maps). With the greedy router's first-available-edge
rule the last one reproduces the paper's Tables II and III for the random networks much
more closely than ``"uniform"`` does (docs/papers.md), so the experiments use it by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ParameterError
from ..seeds import generator

if TYPE_CHECKING:
    from .faults import FaultMap

__all__ = [
    "KINDS",
    "WIRINGS",
    "MIN_INPUTS",
    "MAX_INPUTS",
    "SplitterNetwork",
    "butterfly_network",
    "random_splitter_network",
    "make_network",
    "check_inputs",
    "build_network",
    "expansion_report",
]

KINDS = ("butterfly", "dilated-butterfly", "multibutterfly")
#: Random wirings of a multibutterfly (see :func:`_random_splitter_hops`).
WIRINGS = ("uniform", "maps", "butterfly-plus-maps")
MIN_INPUTS = 4
MAX_INPUTS = 65536
#: Rounds of parallel swaps the cleaner tries before it gives up (it never needs many).
CLEAN_ROUNDS = 500


def check_inputs(inputs: int, modified: bool = False) -> int:
    """Validate ``inputs`` and return ``n = log2(inputs)``."""
    low = 8 if modified else MIN_INPUTS
    if (not isinstance(inputs, (int, np.integer)) or inputs < low or inputs > MAX_INPUTS
            or inputs & (inputs - 1)):
        what = "inputs of a modified (*) network" if modified else "inputs"
        raise ParameterError(
            f"{what} must be a power of two in [{low}, {MAX_INPUTS}], got {inputs}")
    return int(inputs).bit_length() - 1


@dataclass
class SplitterNetwork:
    """A leveled splitter network with explicit, ordered edges (see module docstring).

    Attributes
    ----------
    kind : str
        ``"butterfly"``, ``"dilated-butterfly"`` or ``"multibutterfly"``.
    inputs : int
        ``N``.
    multiplicity : int
        ``d``: edges per direction of a splitter input.
    modified : bool
        The "*" network of Sec. IV.
    seed : int or None
        Seed of the random wiring (``None`` for deterministic networks).
    heads, slot_group, group_shift, group_mask, edges_per_group, block_size, level_kind
        The edge arrays, per hop ``i`` (module docstring). ``block_size[i]`` is the number
        of rows of a block (splitter) at level ``i``: its inputs are rows
        ``[b * M, (b + 1) * M)``, group ``g``'s outputs rows
        ``[b * M + g * M / G, b * M + (g + 1) * M / G)`` at level ``i + 1``.
    first_level : int
        Paper label of internal level 0 (``-1`` for "*", else 0).
    attempt : int
        Which retry of the seed produced the wiring (0 = first).
    faults : fatnet.golden.butterfly.faults.FaultMap or None
        Faulty and declared-faulty switches, if faults were placed (not imported here:
        the fault module builds on this one).
    """

    kind: str
    inputs: int
    multiplicity: int
    modified: bool
    seed: int | None
    heads: np.ndarray
    slot_group: np.ndarray
    group_shift: np.ndarray
    group_mask: np.ndarray
    edges_per_group: np.ndarray
    block_size: np.ndarray
    level_kind: tuple
    first_level: int
    attempt: int = 0
    faults: FaultMap | None = None  # faults.py imports this module: imported for types only
    wiring: str = "deterministic"
    expansion: list | None = None
    _in_rank: np.ndarray | None = field(default=None, repr=False, compare=False)

    # ----------------------------------------------------------------- shape
    @property
    def n(self) -> int:
        """``log2(N)``."""
        return self.inputs.bit_length() - 1

    @property
    def depth(self) -> int:
        """Number of hops from the inputs to the outputs (``n`` for every kind)."""
        return self.heads.shape[0]

    @property
    def num_levels(self) -> int:
        """Levels of switches including inputs and outputs (``depth + 1``)."""
        return self.depth + 1

    @property
    def slots(self) -> int:
        """``K``: padded out-degree."""
        return self.heads.shape[2]

    def level_label(self, i: int) -> int:
        """The paper's label of internal level ``i``."""
        return i + self.first_level

    def level_index(self, label: int) -> int:
        """Internal index of the paper's level ``label``."""
        i = label - self.first_level
        if not 0 <= i <= self.depth:
            raise ParameterError(
                f"level must be in [{self.first_level}, {self.first_level + self.depth}], "
                f"got {label}")
        return i

    @property
    def interior_switches(self) -> int:
        """Switches that are neither inputs nor outputs (where faults may be placed)."""
        return (self.depth - 1) * self.inputs

    @property
    def switches(self) -> int:
        """All switches, inputs and outputs included."""
        return self.num_levels * self.inputs

    @property
    def edges(self) -> int:
        """Number of edges (parallel edges counted)."""
        return int((self.heads >= 0).sum())

    # ----------------------------------------------------------------- edges
    def group_of(self, i: int, dest) -> np.ndarray:
        """Group a message for output ``dest`` must take at level ``i``."""
        return (np.asarray(dest) >> int(self.group_shift[i])) & int(self.group_mask[i])

    def group_slots(self, i: int, group: int) -> range:
        """Slots of group ``group`` at level ``i``."""
        d = int(self.edges_per_group[i])
        return range(group * d, (group + 1) * d)

    def out_edges(self, i: int, row: int) -> dict[int, list[int]]:
        """``{group: [target rows in slot order]}`` of switch ``(row, i)``."""
        groups = int(self.group_mask[i]) + 1
        return {g: [int(self.heads[i, row, k]) for k in self.group_slots(i, g)]
                for g in range(groups)}

    def in_edges(self, i: int, row: int) -> list[tuple[int, int]]:
        """Incoming edges of switch ``(row, i)`` (``i >= 1``) as ``(source row, slot)``,
        sorted by ``(source row, slot)``: the input-wire order of the hardware."""
        if not 1 <= i <= self.depth:
            raise ParameterError(f"level index must be in [1, {self.depth}], got {i}")
        src, slot = np.nonzero(self.heads[i - 1] == row)
        return [(int(s), int(k)) for s, k in zip(src, slot)]  # nonzero is row-major

    def in_edge_rank(self) -> np.ndarray:
        """``rank[i, row, k]``: position of edge ``(row, k)`` of hop ``i`` in its head's
        :meth:`in_edges` list (``-1`` for padding)."""
        if self._in_rank is None:
            self._in_rank = in_edge_rank(self.heads)
        return self._in_rank

    def splitter_rows(self, i: int, block: int) -> range:
        """Rows of block ``block`` at level ``i``."""
        m = int(self.block_size[i])
        return range(block * m, (block + 1) * m)

    def group_rows(self, i: int, block: int, group: int) -> range:
        """Rows at level ``i + 1`` that group ``group`` of block ``block`` leads to."""
        m = int(self.block_size[i])
        g = int(self.group_mask[i]) + 1
        width = m // g if self.level_kind[i] != "matching" else m
        base = block * m + (group * width if self.level_kind[i] != "matching" else 0)
        return range(base, base + width)

    def bipartite_graph(self, i: int, block: int, group: int) -> tuple[list[list[int]], int]:
        """Adjacency of one half-splitter as local indices: (adjacency, outputs)."""
        rows = self.splitter_rows(i, block)
        out = self.group_rows(i, block, group)
        slots = list(self.group_slots(i, group))
        adj = (self.heads[i, rows.start:rows.stop][:, slots] - out.start).tolist()
        return adj, len(out)

    def with_faults(self, faults) -> "SplitterNetwork":
        """A copy of this network carrying ``faults``."""
        return replace(self, faults=faults, _in_rank=self._in_rank)

    def blocked(self) -> np.ndarray:
        """``(levels, N)`` bool: switches no message may enter (faulty or declared)."""
        if self.faults is None:
            return np.zeros((self.num_levels, self.inputs), dtype=bool)
        return self.faults.unusable()

    def summary(self) -> dict:
        """Levels, switches and edges, as plain data."""
        return {
            "kind": self.kind, "inputs": self.inputs, "multiplicity": self.multiplicity,
            "modified": self.modified, "seed": self.seed, "attempt": self.attempt,
            "levels": [self.level_label(i) for i in range(self.num_levels)],
            "level_kinds": list(self.level_kind),
            "switches": self.switches, "interior_switches": self.interior_switches,
            "edges": self.edges,
        }


def in_edge_rank(heads: np.ndarray) -> np.ndarray:
    """Rank of every edge among its head's incoming edges, ordered by (source row, slot)."""
    depth, n_rows, k = heads.shape
    rank = np.full(heads.shape, -1, dtype=np.int16)
    for i in range(depth):
        flat = heads[i].ravel()
        valid = np.flatnonzero(flat >= 0)
        # Flat index r * K + k is already the (source row, slot) order; a stable sort by
        # head keeps it within each head.
        order = valid[np.argsort(flat[valid], kind="stable")]
        sorted_heads = flat[order]
        starts = np.r_[0, np.flatnonzero(np.diff(sorted_heads)) + 1]
        run_start = np.repeat(starts, np.diff(np.r_[starts, order.size]))
        r = rank[i].ravel()
        r[order] = np.arange(order.size) - run_start
        rank[i] = r.reshape(n_rows, k)
    return rank


# ---------------------------------------------------------------------- builders
def _level_arrays(n: int, modified: bool, d: int):
    """Per-hop metadata: kinds, group shifts/masks, edges per group, block sizes.

    Each hop is ``(kind, group_shift, group_mask, edges_per_group, block_size)``.
    """
    hops = []
    if modified:
        hops.append(("matching", 0, 0, 4, 1 << n))       # one group of 4 matchings
        splitter_levels = range(0, n - 2)
    else:
        splitter_levels = range(0, n)
    for level in splitter_levels:                         # group = bit `level` of D
        hops.append(("splitter", n - 1 - level, 1, d, 1 << (n - level)))
    if modified:
        hops.append(("complete", 0, 3, 1, 4))             # group = last two bits of D
    kinds, shift, mask, per_group, block = zip(*hops)
    return (tuple(kinds), np.array(shift, dtype=np.int64), np.array(mask, dtype=np.int64),
            np.array(per_group, dtype=np.int64), np.array(block, dtype=np.int64))


def _assemble(kind, inputs, d, modified, seed, hops, meta, attempt=0) -> SplitterNetwork:
    kinds, shift, mask, per_group, block = meta
    k_max = max(h.shape[1] for h in hops)
    heads = np.full((len(hops), inputs, k_max), -1, dtype=np.int32)
    slot_group = np.full((len(hops), k_max), -1, dtype=np.int8)
    for i, h in enumerate(hops):
        heads[i, :, :h.shape[1]] = h
        slot_group[i, :h.shape[1]] = np.arange(h.shape[1]) // per_group[i]
    return SplitterNetwork(kind=kind, inputs=inputs, multiplicity=d, modified=modified,
                           seed=seed, heads=heads, slot_group=slot_group, group_shift=shift,
                           group_mask=mask, edges_per_group=per_group, block_size=block,
                           level_kind=kinds, first_level=-1 if modified else 0,
                           attempt=attempt)


def _complete_hop(inputs: int) -> np.ndarray:
    rows = np.arange(inputs)
    return (rows // 4 * 4)[:, None] + np.arange(4)[None, :]


def _matching_hop(inputs: int, rng: np.random.Generator,
                  straight_first: bool = False) -> np.ndarray:
    """Level -1 of "*": 4 random perfect matchings onto level 0 (matching ``k`` = slot
    ``k``); with ``straight_first`` matching 0 is the identity (row to the same row),
    as the butterfly's straight edge is slot 0 in ``"butterfly-plus-maps"``."""
    targets = np.stack([rng.permutation(inputs) for _ in range(4)], axis=1)
    # Swap class = the matching: swapping two rows' ends within one matching keeps it one.
    classes = np.broadcast_to(np.arange(4), targets.shape).copy()
    if straight_first:
        targets[:, 0] = np.arange(inputs)
        # Slot 0 is never an excess end (the cleaner flags later repeats) and no other
        # class draws partners from it, so the identity matching stays.
    return clean_parallel_edges(targets, classes, np.ones(4, dtype=np.int64), rng)


def _butterfly_hop(n: int, level: int, d: int) -> np.ndarray:
    rows = np.arange(1 << n)
    bit = 1 << (n - 1 - level)
    up, down = rows & ~bit, rows | bit
    return np.concatenate([np.repeat(up[:, None], d, 1), np.repeat(down[:, None], d, 1)], 1)


def _random_splitter_hops(n: int, levels: range, d: int, rng: np.random.Generator,
                          wiring: str = "uniform") -> list[np.ndarray]:
    """Random wiring of the splitter hops ``levels``, cleaned all at once.

    ``wiring`` (see :data:`WIRINGS`): ``"uniform"`` wires every (level, direction) by the
    configuration model within each block (swap class = half-splitter); ``"maps"`` makes
    slot ``j`` of every input a uniformly random 2-to-1 map onto the half's outputs (swap
    class = half-splitter and slot, so each slot stays a 2-to-1 map);
    ``"butterfly-plus-maps"`` is ``"maps"`` with slot 0 the butterfly's edge (never
    swapped). The ends of all hops are cleaned in one call, which needs far fewer rounds
    than cleaning level by level.
    """
    inputs = 1 << n
    rows = np.arange(inputs)
    all_targets, all_classes, allowances = [], [], []
    n_classes = 0
    for level in levels:
        m = 1 << (n - level)
        half = m // 2
        blocks = inputs // m
        for direction in (0, 1):
            base = (rows // m) * m + direction * half
            if wiring == "uniform":
                stub_block = np.repeat(rows // m, d)      # stub r * d + j is r's block's
                position = np.arange(inputs * d) % (m * d)
                order = np.argsort(stub_block + rng.random(inputs * d), kind="stable")
                targets: np.ndarray = np.empty(inputs * d, dtype=np.int64)
                # The p-th stub of a block (in random order) gets the block's p-th output end.
                targets[order] = np.repeat(base, d) + position // (2 * d)
                targets = targets.reshape(inputs, d)
                classes = np.repeat((n_classes + rows // m)[:, None], d, 1)
                allowances.append(np.full(blocks, math.ceil(d / half)))
                n_classes += blocks
            else:
                targets = np.empty((inputs, d), dtype=np.int64)
                position = rows % m
                for j in range(d):
                    if j == 0 and wiring == "butterfly-plus-maps":
                        bit = 1 << (n - 1 - level)
                        targets[:, 0] = (rows & ~bit) | (bit * direction)
                        continue
                    order = np.argsort(rows // m + rng.random(inputs), kind="stable")
                    targets[order, j] = base + position // 2
                classes = (n_classes + (rows // m)[:, None] * d + np.arange(d)[None, :])
                allowances.append(np.full(blocks * d, math.ceil(d / half)))
                n_classes += blocks * d
            all_targets.append(targets)
            all_classes.append(classes)
    cleaned = clean_parallel_edges(np.concatenate(all_targets), np.concatenate(all_classes),
                                   np.concatenate(allowances), rng)
    hops = []
    for idx in range(len(levels)):
        up = cleaned[(2 * idx) * inputs:(2 * idx + 1) * inputs]
        down = cleaned[(2 * idx + 1) * inputs:(2 * idx + 2) * inputs]
        hops.append(np.concatenate([up, down], 1))
    return hops


def _excess(targets: np.ndarray, max_mult_of_row: np.ndarray) -> np.ndarray:
    """Bool (rows, d): this end repeats an earlier end of its row beyond the allowance."""
    d = targets.shape[1]
    if d == 2:  # the common case, without the (rows, d, d) comparison
        out = np.zeros(targets.shape, dtype=bool)
        out[:, 1] = (targets[:, 0] == targets[:, 1]) & (max_mult_of_row < 2)
        return out
    eq = targets[:, :, None] == targets[:, None, :]
    earlier = np.tril(np.ones((d, d), dtype=bool), -1)  # [j, j']: j' comes before j
    occurrence = (eq & earlier).sum(axis=2)          # earlier ends with the same target
    return occurrence >= max_mult_of_row[:, None]


def clean_parallel_edges(targets: np.ndarray, classes: np.ndarray, max_mult: np.ndarray,
                         rng: np.random.Generator) -> np.ndarray:
    """Remove excess parallel edges by swapping output ends within a swap class.

    Parameters
    ----------
    targets : (rows, d) int array
        Output row of every edge end.
    classes : (rows, d) int array
        Swap class of every end; ends swap only within a class (a half-splitter, or
        one matching).
    max_mult : (classes,) int array
        Allowed multiplicity of an (input, output) pair in each class.
    rng : Generator

    Returns
    -------
    The cleaned targets (a new array). Excess that no swap can remove stays.
    """
    targets = np.array(targets, dtype=np.int64)
    rows, d = targets.shape
    if d < 2:
        return targets
    classes = np.asarray(classes)
    flat_class = classes.ravel()
    order = np.argsort(flat_class, kind="stable")
    counts = np.bincount(flat_class, minlength=max_mult.size)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    row_allow = max_mult[classes[:, 0]]
    for _ in range(CLEAN_ROUNDS):
        bad = np.flatnonzero(_excess(targets, row_allow).ravel())
        if bad.size == 0:
            break
        flat = targets.ravel()
        c = flat_class[bad]
        partner = order[starts[c] + (rng.random(bad.size) * counts[c]).astype(np.int64)]
        r_a, r_b = bad // d, partner // d
        x, y = flat[bad], flat[partner]
        # Counts after the swap of the value each row receives (its old end leaves).
        gain_a = (targets[r_a] == y[:, None]).sum(1) + 1
        gain_b = (targets[r_b] == x[:, None]).sum(1) + 1
        ok = (r_a != r_b) & (x != y) & (gain_a <= row_allow[r_a]) & (gain_b <= row_allow[r_b])
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            continue
        # Keep only swaps whose two rows no earlier accepted candidate touches.
        touched = np.stack([r_a[idx], r_b[idx]], 1).ravel()
        _, first = np.unique(touched, return_index=True)
        is_first = np.zeros(touched.size, dtype=bool)
        is_first[first] = True
        keep = idx[is_first.reshape(-1, 2).all(1)]
        flat[bad[keep]], flat[partner[keep]] = y[keep], x[keep]
        targets = flat.reshape(rows, d)
    return targets


def butterfly_network(inputs: int, multiplicity: int = 1, modified: bool = False,
                      seed: int | None = None, rng: np.random.Generator | None = None
                      ) -> SplitterNetwork:
    """Butterfly (``multiplicity = 1``) or ``d``-dilated butterfly.

    ``modified`` adds the "*" changes; its level -1 matchings are random (``seed``).
    """
    n = check_inputs(inputs, modified)
    d = _check_multiplicity(multiplicity)
    meta = _level_arrays(n, modified, d)
    hops = []
    if modified:
        rng = rng if rng is not None else generator(seed or 0, "wiring", 0)
        hops.append(_matching_hop(inputs, rng))
    for level in range(n - 2 if modified else n):
        hops.append(_butterfly_hop(n, level, d))
    if modified:
        hops.append(_complete_hop(inputs))
    kind = "butterfly" if d == 1 else "dilated-butterfly"
    return _assemble(kind, inputs, d, modified, seed if modified else None, hops, meta)


def random_splitter_network(inputs: int, multiplicity: int = 2, modified: bool = False,
                            seed: int = 0, attempt: int = 0,
                            rng: np.random.Generator | None = None,
                            wiring: str = "uniform") -> SplitterNetwork:
    """A randomly-wired splitter network (multibutterfly) of multiplicity ``d``.

    The wiring is drawn from ``rng`` if given, else from attempt ``attempt`` of the
    ``wiring`` stream of ``seed`` (:mod:`fatnet.golden.seeds`);
    ``wiring`` is one of :data:`WIRINGS` (module docstring).
    """
    n = check_inputs(inputs, modified)
    d = _check_multiplicity(multiplicity)
    if wiring not in WIRINGS:
        raise ParameterError(f"wiring must be one of {', '.join(WIRINGS)}, got {wiring!r}")
    if rng is None:
        rng = generator(seed, "wiring", attempt)
    meta = _level_arrays(n, modified, d)
    hops = []
    if modified:
        hops.append(_matching_hop(inputs, rng, straight_first=wiring == "butterfly-plus-maps"))
    hops.extend(_random_splitter_hops(n, range(n - 2 if modified else n), d, rng, wiring))
    if modified:
        hops.append(_complete_hop(inputs))
    net = _assemble("multibutterfly", inputs, d, modified, seed, hops, meta, attempt)
    net.wiring = wiring
    return net


def _check_multiplicity(multiplicity: int) -> int:
    if not isinstance(multiplicity, (int, np.integer)) or not 1 <= multiplicity <= 64:
        raise ParameterError(f"multiplicity must be an integer in [1, 64], got {multiplicity}")
    return int(multiplicity)


def make_network(kind: str, inputs: int, multiplicity: int | None = None,
                 modified: bool = False, seed: int = 0, attempt: int = 0,
                 rng: np.random.Generator | None = None,
                 wiring: str = "uniform") -> SplitterNetwork:
    """Build a network of one of :data:`KINDS` (no expansion requirement, no faults).

    ``multiplicity`` defaults to 1 for ``butterfly`` and 2 otherwise; ``butterfly`` only
    accepts 1.
    """
    if kind not in KINDS:
        raise ParameterError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    if kind == "butterfly":
        if multiplicity not in (None, 1):
            raise ParameterError(
                f"multiplicity must be 1 for kind butterfly (use dilated-butterfly), "
                f"got {multiplicity}")
        return butterfly_network(inputs, 1, modified, seed, rng)
    d = 2 if multiplicity is None else multiplicity
    if kind == "dilated-butterfly":
        _check_multiplicity(d)
        if d < 2:
            raise ParameterError(
                f"multiplicity must be in [2, 64] for kind dilated-butterfly, got {d}")
        return butterfly_network(inputs, d, modified, seed,
                                 rng if rng is not None else generator(seed, "wiring", attempt))
    return random_splitter_network(inputs, d, modified, seed, attempt, rng, wiring)


# ---------------------------------------------------------------------- expansion
#: Retries of the seed that :func:`build_network` makes before it gives up.
DEFAULT_MAX_ATTEMPTS = 50


#: Word operations the adversarial search spends on one hop of a network, shared by its
#: distinct half-splitters (a random multibutterfly of 65,536 inputs has 2,048 of 128
#: inputs and more on its levels): four full searches a hop, so that one hop costs a few
#: seconds whatever N is.
LEVEL_SEARCH_WORK = 1 << 26
#: ... but never less than this per half-splitter (thousands of greedy-growth steps).
MIN_SEARCH_WORK = 1 << 16


def _measure(adj, outputs: int, alpha: float, exact_limit: int | None, seed: int,
             work: int):
    """The expansion of one half-splitter's graph (``adj``, ``outputs``)."""
    from ..bipartite import DEFAULT_EXACT_LIMIT, measure_expansion
    return measure_expansion(adj, outputs, alpha,
                             exact_limit=DEFAULT_EXACT_LIMIT if exact_limit is None
                             else exact_limit, seed=seed, work=work)


def expansion_report(net: SplitterNetwork, alpha: float, exact_limit: int | None = None,
                     seed: int = 0, stop_below: float | None = None) -> list[dict]:
    """Measured expansion per hop: the minimum ``beta`` over its half-splitters.

    Each entry: ``level`` (paper label), ``kind``, ``block_inputs`` (M), ``max_set_size``
    (``floor(alpha M)``), ``beta`` (minimum over blocks and groups; ``inf`` when every
    set is vacuous), ``exact`` (every half-splitter enumerated exactly), ``worst``
    (``[block, group, [rows of the worst set]]`` or None). With ``stop_below``, stops at
    the first hop whose ``beta`` is below it (for the generator's retries).

    Half-splitters with the same local graph have the same expansion, whatever the
    search: each distinct graph is measured once (every half-splitter of a butterfly's
    or dilated butterfly's hop is the same graph; a random multibutterfly's rarely
    repeat). Where a hop has more distinct graphs than one search's budget covers, they
    share :data:`LEVEL_SEARCH_WORK` (at least :data:`MIN_SEARCH_WORK` each), so a search
    that is not exact looks less hard at each of many splitters.
    """
    from ..bipartite import DEFAULT_SEARCH_WORK
    report = []
    for i in range(net.depth):
        m = int(net.block_size[i])
        groups = int(net.group_mask[i]) + 1
        best, exact, worst = math.inf, True, None
        kmax = int(math.floor(alpha * m + 1e-12))
        # distinct graph -> (its adjacency and outputs, the first block and group with it)
        distinct: dict = {}
        for block in range(net.inputs // m):
            for group in range(groups):
                adj, outputs = net.bipartite_graph(i, block, group)
                key = (outputs, tuple(map(tuple, adj)))
                if key not in distinct:
                    distinct[key] = (adj, outputs, block, group)
        work = max(MIN_SEARCH_WORK, min(DEFAULT_SEARCH_WORK,
                                        LEVEL_SEARCH_WORK // len(distinct)))
        for adj, outputs, block, group in distinct.values():
            res = _measure(adj, outputs, alpha, exact_limit, seed, work)
            exact &= res.exact
            if res.beta < best:
                best = res.beta
                worst = [block, group, [block * m + x for x in res.worst_set]]
                if stop_below is not None and best < stop_below:
                    break
        report.append({"level": net.level_label(i), "kind": net.level_kind[i],
                       "block_inputs": m, "max_set_size": kmax, "beta": best,
                       "exact": bool(exact), "worst": worst})
        if stop_below is not None and best < stop_below:
            break
    return report


def check_expansion(alpha: float, beta: float, max_attempts: int) -> None:
    """Validate a requested (alpha, beta) expansion and the retries allowed for it."""
    if not 0 < alpha <= 1:
        raise ParameterError(f"alpha must be in (0, 1], got {alpha}")
    if beta <= 0:
        raise ParameterError(f"beta must be > 0, got {beta}")
    if max_attempts < 1:
        raise ParameterError(f"max_attempts must be >= 1, got {max_attempts}")


def build_network(kind: str, inputs: int, multiplicity: int | None = None,
                  modified: bool = False, seed: int = 0, wiring: str = "uniform",
                  expansion: tuple[float, float] | None = None,
                  max_attempts: int = DEFAULT_MAX_ATTEMPTS,
                  exact_limit: int | None = None) -> SplitterNetwork:
    """:func:`make_network`, retried until every splitter has ``expansion = (alpha, beta)``.

    Attempt ``a`` draws its wiring from attempt ``a`` of the ``wiring`` stream; the first
    attempt whose every half-splitter reaches ``beta`` (exactly where small enough, by
    search beyond: see :mod:`fatnet.golden.bipartite`) is returned, with
    ``net.attempt = a``.

    Raises
    ------
    ParameterError
        If no attempt within ``max_attempts`` reaches it (or the network is deterministic
        and does not).
    """
    if expansion is None:
        return make_network(kind, inputs, multiplicity, modified, seed, wiring=wiring)
    alpha, beta = expansion
    check_expansion(alpha, beta, max_attempts)
    deterministic = kind != "multibutterfly" and not modified
    best_seen = 0.0
    for attempt in range(1 if deterministic else max_attempts):
        net = make_network(kind, inputs, multiplicity, modified, seed, attempt=attempt,
                           wiring=wiring)
        report = expansion_report(net, alpha, exact_limit, seed, stop_below=beta)
        worst = min(r["beta"] for r in report)
        if worst >= beta:
            net.expansion = report
            return net
        best_seen = max(best_seen, worst)
    tries = 1 if deterministic else max_attempts
    raise ParameterError(
        f"expansion beta must be <= {best_seen:.3g} for alpha {alpha} "
        f"({kind}, inputs {inputs}, seed {seed}: no wiring in {tries} attempt(s) reached "
        f"{beta})")
