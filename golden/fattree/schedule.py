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
_BIG = np.int64(1) << 40  # capacity of the padding channel: never binding


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
class _Prep:
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
        self.m = len(self.src)
        L, nc = tree.L, tree.num_channels
        self.nflat = 2 * nc
        self.pad = 2 * nc
        self.lca = np.asarray(tree.lca_level(self.src, self.dst),
                              dtype=np.int64).reshape(self.m)
        self.local = (self.src == self.dst)
        P = np.full((self.m, 2 * (L + 1)), self.pad, dtype=np.int64)
        for j in range(L + 1):
            on = self.lca < j
            up = on & (self.src >= 0)
            down = on & (self.dst >= 0)
            base = (1 << j) - 1
            P[up, 2 * j] = UP * nc + base + (self.src[up] >> (L - j))
            P[down, 2 * j + 1] = DOWN * nc + base + (self.dst[down] >> (L - j))
        self.P = P
        self.capx = np.concatenate([self.cap.ravel(), [_BIG]]).astype(np.int64)

    def loads(self, idx) -> np.ndarray:
        """Flat loads of the messages ``idx`` (dummy channel included, last)."""
        return np.bincount(self.P[idx].ravel(), minlength=self.nflat + 1)

    def check_routable(self) -> None:
        """Every used channel must have capacity >= 1, else nothing can be scheduled."""
        if self.m == 0:
            return
        used = np.zeros(self.nflat + 1, dtype=bool)
        used[self.P.ravel()] = True
        bad = np.flatnonzero(used[:-1] & (self.capx[:-1] < 1))
        if len(bad):
            f = int(bad[0])
            raise ParameterError(
                f"cannot schedule: {_channel_name(self.tree, f)} has capacity 0 but "
                f"messages must use it")

    def one_cycle(self, idx) -> bool:
        return bool((self.loads(idx) <= self.capx).all())

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
    channel. The loads are those of :meth:`FatTree.load`, computed for all cycles at
    once from the same :meth:`FatTree.channel_incidence` (one bincount per cycle
    and channel).
    """
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    cap = np.asarray(tree.cap if cap is None else cap)
    m = len(src)
    nc = tree.num_channels
    if cap.shape != (2, nc):
        return [f"cap has shape {cap.shape}, expected (2, {nc}) ([direction, heap])"]
    problems: list[str] = []
    members, cycle_of = [], []
    for i, cyc in enumerate(cycles):
        c = np.asarray(cyc)
        if c.ndim != 1:
            problems.append(f"cycle {i}: not a 1-D index array (shape {c.shape})")
            continue
        if len(c) and not np.issubdtype(c.dtype, np.integer):
            problems.append(f"cycle {i}: indices are not integers (dtype {c.dtype})")
            continue
        c = c.astype(np.int64)
        out = (c < 0) | (c >= m)
        for j in c[out]:
            problems.append(f"cycle {i}: message index {int(j)} out of range "
                            f"[0, {m - 1}]")
        members.append(c[~out])
        cycle_of.append(np.full(int((~out).sum()), i, dtype=np.int64))
    ncyc = len(cycles)
    members = np.concatenate(members) if members else np.zeros(0, dtype=np.int64)
    cycle_of = np.concatenate(cycle_of) if cycle_of else np.zeros(0, dtype=np.int64)
    seen = np.bincount(members, minlength=m)
    msg, dirs, heaps = tree.channel_incidence(src[members], dst[members])
    load = np.bincount((cycle_of[msg] * 2 + dirs) * nc + heaps,
                       minlength=ncyc * 2 * nc).reshape(ncyc, 2, nc)
    for i, d, h in zip(*np.nonzero(load > cap[None])):
        problems.append(
            f"cycle {int(i)}: channel heap {int(h)} {_DIR_NAMES[int(d)]} "
            f"(level {int(tree.level_of[h])}) carries {int(load[i, d, h])} messages, "
            f"capacity {int(cap[d, h])}")
    for j in np.flatnonzero(seen == 0):
        problems.append(f"message {int(j)} is in no cycle")
    for j in np.flatnonzero(seen > 1):
        problems.append(f"message {int(j)} is in {int(seen[j])} cycles")
    return problems


def _assert_valid(tree, src, dst, cycles, cap, method: str) -> None:
    problems = validate_schedule(tree, src, dst, cycles, cap)
    if problems:
        shown = "; ".join(problems[:10])
        more = f" (and {len(problems) - 10} more)" if len(problems) > 10 else ""
        raise RuntimeError(f"bug: schedule method {method!r} produced an invalid "
                           f"schedule: {shown}{more}")


# ====================================================================== lower bound
def _lower_bound(p: _Prep) -> int:
    if p.m == 0:
        return 0
    p.check_routable()
    load = p.loads(np.arange(p.m))[:-1]
    capf = p.capx[:-1]
    used = load > 0
    lb = 0
    if used.any():
        lb = int(((load[used] + capf[used] - 1) // capf[used]).max())
    return max(lb, 1)


def lower_bound(tree: FatTree, src, dst, cap=None) -> int:
    """ceil(lambda(M)) exactly: max over channels of ceil(load / cap).

    0 for an empty message set; at least 1 if there is any message (a local message
    src == dst needs one cycle although it uses no channel). Raises ParameterError
    when a message needs a channel of capacity 0.
    """
    return _lower_bound(_Prep(tree, src, dst, cap))


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


def _finish(cycles: list[np.ndarray], local: np.ndarray) -> list[np.ndarray]:
    """Local messages into the first cycle; empty cycles dropped; indices sorted."""
    cycles = [np.sort(c) for c in cycles if len(c)]
    if len(local):
        if cycles:
            cycles[0] = np.sort(np.concatenate([cycles[0], local]))
        else:
            cycles = [np.sort(local)]
    return [c.astype(np.int64) for c in cycles]


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
    return _finish(cycles, np.flatnonzero(p.local))


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
    lb = _lower_bound(p)
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
            return _finish(cycles, local)
        t += 1
        pieces = refine(pieces)


# ====================================================================== greedy
def _greedy_order(p: _Prep, idx: np.ndarray) -> np.ndarray:
    """Tightest first: largest load factor on the path, then LCA nearest the root
    (longest path), then index."""
    if len(idx) == 0:
        return idx
    ratio = p.loads(idx) / np.maximum(p.capx, 1)  # a used channel has cap >= 1
    ratio[-1] = 0.0
    worst = ratio[p.P[idx]].max(axis=1)
    return idx[np.lexsort((idx, p.lca[idx], -worst))]


class _Packer:
    """Cycle assignment with per-cycle loads, for the greedy method.

    ``loads[j, c]`` is the load of channel c (flat index) in cycle j; the padding
    channel's column is meaningless (its capacity never binds).
    """

    #: Kempe-chain limits: cycles tried as the target, partner cycles per target,
    #: messages moved by one chain, and moves in total per message placed.
    TARGETS, PARTNERS, CHAIN, BUDGET = 3, 4, 256, 16

    def __init__(self, p: _Prep, d0: int):
        self.p = p
        self.P = p.P
        self.capx = p.capx
        self.nf = p.nflat + 1
        self.d = max(d0, 1)
        self.loads = np.zeros((2 * self.d + 4, self.nf), dtype=np.int64)
        self.assign = np.full(p.m, -1, dtype=np.int64)
        self.moving = np.zeros(p.m, dtype=bool)
        self.budget = self.BUDGET * p.m + 1024
        # Users of every channel (CSR, message indices ascending per channel).
        W = p.P.shape[1]
        flat = p.P.ravel()
        msg = np.repeat(np.arange(p.m, dtype=np.int64), W)
        real = flat != p.pad
        order = np.argsort(flat[real], kind="stable")
        self.user_msg = msg[real][order]
        self.user_ptr = np.searchsorted(flat[real][order], np.arange(self.nf + 1))

    def open_cycle(self) -> int:
        if self.d >= len(self.loads):
            self.loads = np.vstack([self.loads, np.zeros_like(self.loads)])
        self.d += 1
        return self.d - 1

    def put(self, mi: int, j: int) -> None:
        self.loads[j, self.P[mi]] += 1
        self.assign[mi] = j

    def insert(self, mi: int, T: int, rest=None) -> bool:
        """Put mi into one of the cycles 0..T-1, directly or through a Kempe chain;
        False if neither works.

        Among the cycles with room, the one maximising the normalised surplus
        min over mi's channels c of (cap(c) - load_j(c) - rest(c) / T) / cap(c)
        wins, where ``rest(c)`` is the demand on c not placed yet (mi included):
        the cycle whose channels stay furthest ahead of their share of the work to
        come. Without ``rest`` (repair), the relative slack (cap - load) / cap is
        used. Ties go to the lowest cycle.
        """
        path = self.P[mi]
        free = self.capx[path] - self.loads[:T, path]        # (T, W)
        fits = free.min(axis=1) > 0
        if fits.any():
            if rest is None:
                score = (free / self.capx[path]).min(axis=1)
            else:
                score = ((free - rest[path] / T) / self.capx[path]).min(axis=1)
            score[~fits] = -np.inf
            self.put(mi, int(np.argmax(score)))
            return True
        return self.chain_insert(mi, T, free)

    def chain_insert(self, mi: int, T: int, free: np.ndarray) -> bool:
        """Kempe chain: put mi into cycle j and move messages between j and a
        partner cycle k, back and forth, until both are within capacity."""
        if T < 2 or self.budget <= 0:
            return False
        path = self.P[mi]
        blocked = (free <= 0).sum(axis=1)
        for j in np.argsort(blocked, kind="stable")[:self.TARGETS].tolist():
            full = path[free[j] <= 0]
            room = (self.capx[full] - self.loads[:T, full]).min(axis=1)
            room[j] = 0
            ks = np.flatnonzero(room > 0)
            ks = ks[np.argsort(-room[ks], kind="stable")][:self.PARTNERS]
            for k in ks.tolist():
                if self._chain(mi, j, k):
                    return True
                if self.budget <= 0:
                    return False
        return False

    def _chain(self, mi: int, j: int, k: int) -> bool:
        P, capx = self.P, self.capx
        rows = {j: self.loads[j].copy(), k: self.loads[k].copy()}
        other = {j: k, k: j}
        moved: list[tuple[int, int]] = []
        rows[j][P[mi]] += 1
        self.moving[mi] = True
        stack = [(j, int(c)) for c in P[mi] if rows[j][c] > capx[c]]
        ok = True
        while stack:
            X, c = stack.pop()
            lx = rows[X]
            if lx[c] <= capx[c]:
                continue
            if len(moved) >= self.CHAIN or self.budget <= 0:
                ok = False
                break
            users = self.user_msg[self.user_ptr[c]:self.user_ptr[c + 1]]
            cand = users[(self.assign[users] == X) & ~self.moving[users]]
            if len(cand) == 0:
                ok = False
                break
            Y = other[X]
            ly = rows[Y]
            pc = P[cand]
            clash = (ly[pc] >= capx[pc]).sum(axis=1)
            pick = int(cand[int(np.argmin(clash))])
            pp = P[pick]
            lx[pp] -= 1
            ly[pp] += 1
            self.moving[pick] = True
            moved.append((pick, Y))
            self.budget -= 1
            stack.append((X, c))
            stack.extend((Y, int(c2)) for c2 in pp if ly[c2] > capx[c2])
        self.moving[mi] = False
        for q, _ in moved:
            self.moving[q] = False
        if not ok:
            return False
        self.loads[j] = rows[j]
        self.loads[k] = rows[k]
        self.assign[mi] = j
        for q, Y in moved:
            self.assign[q] = Y
        return True


def _greedy(p: _Prep, lb: int) -> tuple[np.ndarray, int]:
    """Fill, then repair; returns (assign, d) for the non-local messages."""
    idx = np.flatnonzero(~p.local)
    order = _greedy_order(p, idx)
    pk = _Packer(p, lb)
    rest = p.loads(order).astype(np.float64)
    rest[-1] = 0.0
    for mi in order.tolist():
        if not pk.insert(mi, pk.d, rest):
            pk.put(mi, pk.open_cycle())
        rest[p.P[mi]] -= 1
    # Repair: empty the last cycle into the others while that works.
    while pk.d > lb:
        last = pk.d - 1
        members = _greedy_order(p, np.flatnonzero(pk.assign == last))
        for mi in members.tolist():
            pk.loads[last, p.P[mi]] -= 1
            pk.assign[mi] = -1
            if not pk.insert(mi, last):
                pk.put(mi, last)
                break
        else:
            pk.d -= 1
            pk.loads[last] = 0
            continue
        break
    return pk.assign, pk.d


def schedule_greedy(tree: FatTree, src, dst, cap=None) -> list[np.ndarray]:
    """Greedy packing into ceil(lambda) cycles, opening more only when needed.

    Messages are placed tightest first (largest load factor on their path, then
    LCA nearest the root, then index) into the open cycle that keeps its channels
    furthest ahead of the work still to come (normalised surplus, see
    :meth:`_Packer.insert`). When no cycle has room, a bounded Kempe chain tries to make
    room by moving messages back and forth between two cycles (as in bipartite edge
    colouring); only when that fails is a new cycle opened. A repair pass then tries
    to empty the last cycle(s) by the same moves.
    """
    p = _Prep(tree, src, dst, cap)
    if p.m == 0:
        return []
    lb = _lower_bound(p)
    local = np.flatnonzero(p.local)
    idx = np.flatnonzero(~p.local)
    assign, d = _greedy(p, lb)
    nl = assign[idx]
    cycles = [idx[nl == j] for j in range(d)]
    return _finish(cycles, local)


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
    order). Every returned schedule is checked with :func:`validate_schedule`; an
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
    best = None
    for name in names:
        cycles = _FUNCS[name](tree, src, dst, cap)
        _assert_valid(tree, src, dst, cycles, cap, name)
        if best is None or len(cycles) < len(best):
            best = cycles
    return best


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
