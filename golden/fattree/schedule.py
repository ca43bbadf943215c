"""Off-line scheduling of message sets on a fat-tree (paper, Section III).

A *schedule* of a message set M (messages identified by their index into ``src`` and
``dst``; duplicates allowed) is a partition of M into one-cycle sets M_1 .. M_d: for
every cycle i and every channel c, load(M_i, c) <= cap(c). Every function takes an
optional ``cap`` array shaped like :attr:`FatTree.cap` (indexed [direction, heap]):
the hardware's effective capacities, which may be below nominal and differ per channel.

Methods
-------
``theorem1``
    Faithful Theorem 1: the messages crossing each node left-to-right (and
    right-to-left, and the external traffic through the root's external channel) are
    halved recursively with :func:`split_even` until every piece is one-cycle; the
    pieces of all groups of one level share cycles; levels run one after another.
    d <= 2 ceil(lambda) (lg n + 1).
``corollary2``
    Corollary 2: with fictitious capacities cap' = cap - lg n >= 1, every group is
    halved the same number t of times and piece i of every group goes to cycle i;
    the smallest t whose schedule is valid against the real capacities is used.
``greedy``
    Our improvement, aiming at d = ceil(lambda): ceil(lambda) cycles are opened and
    the tightest messages placed first, each into the cycle whose channels stay
    furthest ahead of the remaining work; when no cycle has room, a bounded Kempe
    chain (messages moved back and forth between two cycles) makes room before a
    new cycle is opened; a repair pass then tries to empty the last cycle(s).
``best``
    The valid schedule with the fewest cycles among the above.

Everything is deterministic (no randomness).
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import ParameterError
from ..packer import Incidence, finish_cycles, greedy_pack, lower_bound_of, problems_of
from .topology import DOWN, EXT, UP, FatTree

__all__ = [
    "METHODS",
    "validate_schedule",
    "lower_bound",
    "split_even",
    "schedule_theorem1",
    "schedule_corollary2",
    "schedule_greedy",
    "schedule",
    "measure",
]

#: Accepted values of ``schedule(..., method=...)``.
METHODS = ("best", "greedy", "theorem1", "corollary2")

_DIR_NAMES = {UP: "UP", DOWN: "DOWN"}


# ====================================================================== input checks
def _messages(tree: FatTree, src, dst) -> tuple[np.ndarray, np.ndarray]:
    """src, dst as 1-D int64 arrays, checked: same length, endpoints in range."""
    src = np.asarray(src)
    dst = np.asarray(dst)
    if src.ndim != 1 or dst.ndim != 1 or len(src) != len(dst):
        raise ParameterError(
            f"src and dst must be 1-D arrays of equal length, got shapes "
            f"{src.shape} and {dst.shape}")
    if len(src) and not (np.issubdtype(src.dtype, np.integer)
                         and np.issubdtype(dst.dtype, np.integer)):
        raise ParameterError("src and dst must be integer arrays")
    src = src.astype(np.int64, copy=False)
    dst = dst.astype(np.int64, copy=False)
    for name, a in (("source", src), ("destination", dst)):
        bad = (a < EXT) | (a >= tree.n)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ParameterError(
                f"message {i}: {name} must be a leaf index in [0, {tree.n - 1}] or "
                f"{EXT} (ext), got {int(a[i])}")
    both = (src == EXT) & (dst == EXT)
    if both.any():
        i = int(np.flatnonzero(both)[0])
        raise ParameterError(f"message {i}: a message cannot go from 'ext' to 'ext'")
    return src, dst


def _capacities(tree: FatTree, cap) -> np.ndarray:
    """The capacity array (default tree.cap), checked: shape, integral, >= 0."""
    if cap is None:
        return np.asarray(tree.cap, dtype=np.int64)
    a = np.asarray(cap)
    shape = (2, tree.num_channels)
    if a.shape != shape:
        raise ParameterError(f"cap must have shape {shape} ([direction, heap]), "
                             f"got {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a)) \
                or np.any(a != np.floor(a)):
            raise ParameterError("cap must hold integer capacities")
    a = a.astype(np.int64)
    if (a < 0).any():
        d, h = (int(x[0]) for x in np.nonzero(a < 0))
        raise ParameterError(
            f"cap must be >= 0 everywhere; channel heap {h} {_DIR_NAMES[d]} has "
            f"{int(a[d, h])}")
    return a


def _channel_name(tree: FatTree, flat: int) -> str:
    d, h = divmod(int(flat), tree.num_channels)
    return f"channel heap {h} {_DIR_NAMES[d]} (level {int(tree.level_of[h])})"


# ====================================================================== prepared data
class _Prep(Incidence):
    """Messages with their channel paths, padded: the shared input of every method.

    ``P[m]`` lists the flat channel indices (direction * num_channels + heap) message
    m occupies; unused slots hold ``pad`` = 2 * num_channels, a dummy channel whose
    capacity ``capx[pad]`` never binds. ``capx`` is the flattened capacity array
    with the dummy appended.
    """

    def __init__(self, tree: FatTree, src, dst, cap):
        self.tree = tree
        self.src, self.dst = _messages(tree, src, dst)
        self.cap = _capacities(tree, cap)
        m = len(self.src)
        L, nc = tree.L, tree.num_channels
        pad = 2 * nc
        self.lca = np.asarray(tree.lca_level(self.src, self.dst),
                              dtype=np.int64).reshape(m)
        self.local = (self.src == self.dst)
        P = np.full((m, 2 * (L + 1)), pad, dtype=np.int64)
        for j in range(L + 1):
            on = self.lca < j
            up = on & (self.src >= 0)
            down = on & (self.dst >= 0)
            base = (1 << j) - 1
            P[up, 2 * j] = UP * nc + base + (self.src[up] >> (L - j))
            P[down, 2 * j + 1] = DOWN * nc + base + (self.dst[down] >> (L - j))
        # Ties among equally tight messages go to the one whose LCA is nearest the
        # root (the longest path).
        super().__init__(P, self.cap.ravel(), self.local, self.lca,
                         lambda f: _channel_name(tree, f))

    def groups(self):
        """The scheduling groups of the non-local messages, stage by stage.

        Stage 0 is the external traffic (to EXT, then from EXT: both cross the
        root's external channel); stage k + 1 holds the groups of the nodes at level
        k (left-to-right, then right-to-left crossing, per node in heap order).
        Returns a list (index = stage) of lists of index arrays.
        """
        L = self.tree.L
        src, dst, lca = self.src, self.dst, self.lca
        nonlocal_ = np.flatnonzero(~self.local)
        stages: list[list[np.ndarray]] = [[] for _ in range(L + 1)]
        if len(nonlocal_) == 0:
            return stages
        s = src[nonlocal_]
        d = dst[nonlocal_]
        k = lca[nonlocal_]
        stage = k + 1
        # Group key inside a stage: EXT -> 0 (to ext) / 1 (from ext); nodes:
        # 2 * heap + (0 left-to-right, 1 right-to-left).
        key = np.where(d == EXT, 0, 1)
        inner = k >= 0
        kk = np.where(inner, k, 0)
        node = (np.int64(1) << kk) - 1 + np.where(inner, s >> (L - kk), 0)
        side = np.where(inner, (s >> np.maximum(L - kk - 1, 0)) & 1, 0)
        key = np.where(inner, 2 * node + side, key)
        order = np.lexsort((nonlocal_, key, stage))
        st, ky, ix = stage[order], key[order], nonlocal_[order]
        cut = np.flatnonzero((np.diff(st) != 0) | (np.diff(ky) != 0)) + 1
        for chunk_st, chunk in zip(np.split(st, cut), np.split(ix, cut)):
            stages[int(chunk_st[0])].append(chunk)
        return stages


# ====================================================================== validation
def validate_schedule(tree: FatTree, src, dst, cycles, cap=None) -> list[str]:
    """Problems with a schedule (empty list = valid).

    Checks that every message index 0..m-1 appears exactly once over all cycles,
    that no index is out of range, and that in every cycle load <= cap on every
    channel (:func:`fatnet.golden.packer.problems_of` over the messages' paths).
    """
    cap = np.asarray(tree.cap if cap is None else cap)
    nc = tree.num_channels
    if cap.shape != (2, nc):
        return [f"cap has shape {cap.shape}, expected (2, {nc}) ([direction, heap])"]
    return problems_of(_Prep(tree, src, dst, cap), cycles)


def _assert_valid(tree, src, dst, cycles, cap, method: str) -> None:
    problems = validate_schedule(tree, src, dst, cycles, cap)
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise RuntimeError(f"bug: schedule method {method!r} produced an invalid "
                           f"schedule: {shown}{more}")


# ====================================================================== lower bound
def lower_bound(tree: FatTree, src, dst, cap=None) -> int:
    """ceil(lambda(M)) exactly: max over channels of ceil(load / cap).

    0 for an empty message set; at least 1 if there is any message (a local message
    src == dst needs one cycle although it uses no channel). Raises ParameterError
    when a message needs a channel of capacity 0.
    """
    return lower_bound_of(_Prep(tree, src, dst, cap))


# ====================================================================== split_even
def _match_ends(pos: list, L: int) -> list:
    """Hierarchical matching of string ends; ``mate[i]`` = partner or -1.

    ``pos`` is the leaf of every end (EXT = -1 is a single place). Within a leaf as
    many ends as possible are paired (in index order); then, level by level up the
    tree, the (at most one) leftover end of each subtree is paired with the leftover
    of its sibling subtree. At most one end stays unmatched.
    """
    mate = [-1] * len(pos)
    pending: dict = {}
    for i, x in enumerate(pos):
        j = pending.pop(x, None)
        if j is None:
            pending[x] = i
        else:
            mate[i] = j
            mate[j] = i
    if EXT in pending:
        return mate  # EXT ends: all at one place; nothing above it
    for _ in range(L):
        if len(pending) < 2:
            break
        up: dict = {}
        for x, i in pending.items():
            j = up.pop(x >> 1, None)
            if j is None:
                up[x >> 1] = i
            else:
                mate[i] = j
                mate[j] = i
        pending = up
    return mate


def _trace(ms: list, md: list) -> list:
    """Tracing phase: colour 0 (traversed source -> destination) or 1 (backwards).

    Messages form paths and even cycles alternating source-end and destination-end
    matches. Start at the message with an unmatched source end (if any), colour it
    0, follow its destination mate (colour 1), that one's source mate (colour 0), and
    so on; then the message with an unmatched destination end (colour 1, followed
    backwards); then every remaining cycle from its lowest-index message (colour 0).
    Every matched pair of ends thus gets different colours.
    """
    m = len(ms)
    colour = [-1] * m
    starts = []
    for i in range(m):
        if ms[i] < 0:
            starts.append((i, 0))
            break
    for i in range(m):
        if md[i] < 0:
            starts.append((i, 1))
            break
    starts.extend((i, 0) for i in range(m))
    for cur, c in starts:
        # c == 0: cur is traversed source -> destination; continue at its dest mate.
        while cur >= 0 and colour[cur] < 0:
            colour[cur] = c
            cur = md[cur] if c == 0 else ms[cur]
            c ^= 1
    return colour


def _split_positions(p: _Prep, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matching and tracing on the group ``idx`` (checked by the caller)."""
    L = p.tree.L
    ms = _match_ends(p.src[idx].tolist(), L)
    md = _match_ends(p.dst[idx].tolist(), L)
    colour = np.asarray(_trace(ms, md), dtype=np.int8)
    return idx[colour == 0], idx[colour == 1]


def _check_group(p: _Prep, idx: np.ndarray) -> None:
    s, d, k = p.src[idx], p.dst[idx], p.lca[idx]
    if (s == d).any():
        i = int(idx[np.flatnonzero(s == d)[0]])
        raise ParameterError(f"split_even: message {i} is local (src == dst)")
    if (d == EXT).all() or (s == EXT).all():
        return
    if ((s == EXT) | (d == EXT)).any():
        raise ParameterError("split_even: a group must be all to ext, all from ext, "
                             "or all leaf-to-leaf through one node")
    L = p.tree.L
    k0 = int(k[0])
    node = s >> (L - k0)
    side = (s >> (L - k0 - 1)) & 1
    if (k != k0).any() or (node != node[0]).any() or (side != side[0]).any():
        raise ParameterError("split_even: the messages must all cross the same node in "
                             "the same direction (same LCA node and direction)")


def split_even(tree: FatTree, src, dst, idx) -> tuple[np.ndarray, np.ndarray]:
    """The paper's matching-and-tracing split of one group of messages.

    ``idx`` indexes messages that all cross the same LCA node in the same direction,
    or all go to EXT, or all come from EXT. Returns ``(a, b)``, a partition of
    ``idx`` (each in the order of ``idx``), such that for every channel c
    load(a, c) <= ceil(load(idx, c) / 2) and the same for b.
    """
    p = _Prep(tree, src, dst, None)
    idx = np.asarray(idx)
    if idx.ndim != 1 or (len(idx) and not np.issubdtype(idx.dtype, np.integer)):
        raise ParameterError("split_even: idx must be a 1-D integer index array")
    idx = idx.astype(np.int64)
    if len(idx) == 0:
        return idx.copy(), idx.copy()
    if ((idx < 0) | (idx >= p.m)).any():
        raise ParameterError(f"split_even: indices must be in [0, {p.m - 1}]")
    _check_group(p, idx)
    return _split_positions(p, idx)


def _halve_until_one_cycle(p: _Prep, idx: np.ndarray, small: int) -> list[np.ndarray]:
    """Theorem 1's refinement: split recursively until every piece is one-cycle."""
    if len(idx) <= small or p.one_cycle(idx):
        return [idx]
    a, b = _split_positions(p, idx)
    return _halve_until_one_cycle(p, a, small) + _halve_until_one_cycle(p, b, small)


def _min_used_cap(p: _Prep) -> int:
    used = np.unique(p.P.ravel())
    return int(p.capx[used].min()) if len(used) else 1


# ====================================================================== Theorem 1
def schedule_theorem1(tree: FatTree, src, dst, cap=None) -> list[np.ndarray]:
    """Theorem 1: per-node halving, one level (stage) after another, root first.

    The external traffic (both directions through the root's external channel) is
    the first stage, then the nodes of level 0, 1, .., L-1; inside a stage, piece i
    of every group runs in the same cycle. Local messages go in the first cycle.
    """
    p = _Prep(tree, src, dst, cap)
    p.check_routable()
    small = _min_used_cap(p)  # a group no larger than every capacity is one-cycle
    cycles: list[np.ndarray] = []
    for stage in p.groups():
        pieces = [_halve_until_one_cycle(p, g, small) for g in stage]
        if not pieces:
            continue
        width = max(len(x) for x in pieces)
        for i in range(width):
            parts = [x[i] for x in pieces if i < len(x)]
            cycles.append(np.concatenate(parts))
    return finish_cycles(cycles, np.flatnonzero(p.local))


# ====================================================================== Corollary 2
def schedule_corollary2(tree: FatTree, src, dst, cap=None) -> list[np.ndarray]:
    """Corollary 2: every group halved t times, piece i of every group in cycle i.

    Needs every channel capacity > lg n (fictitious capacities cap - lg n >= 1);
    uses the smallest t whose schedule is valid against the real capacities.
    """
    p = _Prep(tree, src, dst, cap)
    lg = tree.L
    smallest = int(p.cap.min())
    if smallest - lg < 1:
        raise ParameterError(f"corollary2 needs every channel capacity > lg n = {lg}; "
                             f"smallest is {smallest}")
    p.check_routable()
    local = np.flatnonzero(p.local)
    lb = lower_bound_of(p)
    t = 0
    while (1 << t) < lb:
        t += 1
    # (piece number, messages) of every group; empty pieces are left out, and a
    # one-message piece splits into (itself, empty) as split_even would split it.
    pieces = [(0, g) for stage in p.groups() for g in stage]

    def refine(pieces):
        out = []
        for i, x in pieces:
            if len(x) == 1:
                out.append((2 * i, x))
            else:
                a, b = _split_positions(p, x)
                out.append((2 * i, a))
                if len(b):
                    out.append((2 * i + 1, b))
        return out

    for _ in range(t):
        pieces = refine(pieces)
    # Terminates: once every piece has at most one message, a channel at level k
    # carries at most k + 1 <= lg n + 1 <= cap messages per cycle.
    while True:
        by_cycle: dict[int, list] = {}
        for i, x in pieces:
            by_cycle.setdefault(i, []).append(x)
        cycles = [np.concatenate(by_cycle[c]) for c in sorted(by_cycle)]
        if all(p.one_cycle(c) for c in cycles):
            return finish_cycles(cycles, local)
        t += 1
        pieces = refine(pieces)


# ====================================================================== greedy
def schedule_greedy(tree: FatTree, src, dst, cap=None) -> list[np.ndarray]:
    """Greedy packing into ceil(lambda) cycles, opening more only when needed.

    Messages are placed tightest first (largest load factor on their path, then
    LCA nearest the root, then index) into the open cycle that keeps its channels
    furthest ahead of the work still to come (normalised surplus; the packer is
    :func:`fatnet.golden.packer.greedy_pack`). When no cycle has room, a bounded Kempe chain
    tries to make
    room by moving messages back and forth between two cycles (as in bipartite edge
    colouring); only when that fails is a new cycle opened. A repair pass then tries
    to empty the last cycle(s) by the same moves.
    """
    return greedy_pack(_Prep(tree, src, dst, cap))


# ====================================================================== dispatch
_FUNCS = {
    "greedy": schedule_greedy,
    "theorem1": schedule_theorem1,
    "corollary2": schedule_corollary2,
}


def _corollary2_applies(tree: FatTree, cap) -> bool:
    c = _capacities(tree, cap)
    return int(c.min()) > tree.L


def schedule(tree: FatTree, src, dst, cap=None, method: str = "best") -> list[np.ndarray]:
    """Schedule a message set with one of :data:`METHODS` (default ``best``).

    ``best`` runs greedy, theorem1 and (when every capacity exceeds lg n)
    corollary2 and returns the valid schedule with the fewest cycles (ties: in that
    order); it stops at the first that has ceil(lambda) cycles, which no schedule has
    fewer than. Every schedule made is checked with :func:`validate_schedule`; an
    invalid one raises RuntimeError (a bug).
    """
    if method not in METHODS:
        raise ParameterError(f"method must be one of {', '.join(METHODS)}, "
                             f"got {method!r}")
    if method != "best":
        cycles = _FUNCS[method](tree, src, dst, cap)
        _assert_valid(tree, src, dst, cycles, cap, method)
        return cycles
    names = ["greedy", "theorem1"]
    if _corollary2_applies(tree, cap):
        names.append("corollary2")
    schedules = []
    bound = lower_bound(tree, src, dst, cap)
    for name in names:
        cycles = _FUNCS[name](tree, src, dst, cap)
        _assert_valid(tree, src, dst, cycles, cap, name)
        schedules.append(cycles)
        if len(cycles) <= bound:
            break   # none is shorter, and a tie would go to this one
    return min(schedules, key=len)  # the first of the shortest: ties go by names' order


def measure(tree: FatTree, src, dst, method: str, cap=None) -> dict:
    """Run one method; return dict(cycles, lower_bound, ratio, seconds).

    ``ratio`` is cycles / lower_bound (1.0 for an empty message set); ``seconds``
    is the scheduling time (validation included, as :func:`schedule` does it).
    """
    t0 = time.perf_counter()
    cycles = schedule(tree, src, dst, cap, method=method)
    seconds = time.perf_counter() - t0
    lb = lower_bound(tree, src, dst, cap)
    d = len(cycles)
    return {"cycles": d, "lower_bound": lb, "ratio": (d / lb) if lb else 1.0,
            "seconds": seconds}
