"""Cycle packing over a path-incidence matrix, for every family with fixed paths.

A message set whose paths are known (a fat-tree's, a butterfly's bit-fixing paths) is,
for off-line scheduling, a matrix ``P[m]`` of the flat channel ids message ``m`` uses
(padded with a dummy channel whose capacity never binds) and a capacity per channel.
On that alone this module gives the lower bound ceil(lambda), the greedy packer (the
tightest messages first into the cycle that stays furthest ahead of the work to come,
Kempe chains before a new cycle is opened, a repair pass at the end) and a validator.
The family supplies the matrix, a tie-break key and channel names for reports.
"""

from __future__ import annotations

import heapq
from typing import Callable

import numpy as np

from .errors import ParameterError

__all__ = ["Incidence", "lower_bound_of", "greedy_pack", "finish_cycles", "problems_of"]

_BIG = np.int64(1) << 40  # capacity of the padding channel: never binding


class Incidence:
    """Messages with their channel paths, padded: the input of every packing function.

    Parameters
    ----------
    P : ndarray of int, shape (m, W)
        Flat channel ids per message; unused slots hold ``len(cap)`` (the dummy).
    cap : ndarray of int, shape (channels,)
        Capacity of every channel.
    local : ndarray of bool, shape (m,)
        Messages that use no channel (delivered locally); they go in the first cycle.
    tiebreak : ndarray, shape (m,)
        Among equally tight messages, the smaller key is placed first.
    channel_name : callable
        Flat channel id -> a name for error messages.
    """

    def __init__(self, P: np.ndarray, cap: np.ndarray, local: np.ndarray,
                 tiebreak: np.ndarray, channel_name: Callable[[int], str]):
        self.P = np.asarray(P, dtype=np.int64)
        self.m = len(self.P)
        self.nflat = len(cap)
        self.pad = self.nflat
        self.capx = np.concatenate([np.asarray(cap, dtype=np.int64).ravel(), [_BIG]])
        self.local = np.asarray(local, dtype=bool)
        self.tiebreak = np.asarray(tiebreak)
        self.channel_name = channel_name

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
            raise ParameterError(
                f"cannot schedule: {self.channel_name(int(bad[0]))} has capacity 0 but "
                f"messages must use it")

    def one_cycle(self, idx) -> bool:
        return bool((self.loads(idx) <= self.capx).all())


def problems_of(p: Incidence, cycles) -> list[str]:
    """Problems with a schedule (empty list = valid): every message index exactly once,
    none out of range, and in every cycle load <= cap on every channel."""
    problems: list[str] = []
    member_parts: list[np.ndarray] = []
    cycle_parts: list[np.ndarray] = []
    for i, cyc in enumerate(cycles):
        c = np.asarray(cyc)
        if c.ndim != 1:
            problems.append(f"cycle {i}: not a 1-D index array (shape {c.shape})")
            continue
        if len(c) and not np.issubdtype(c.dtype, np.integer):
            problems.append(f"cycle {i}: indices are not integers (dtype {c.dtype})")
            continue
        c = c.astype(np.int64)
        out = (c < 0) | (c >= p.m)
        for j in c[out]:
            problems.append(f"cycle {i}: message index {int(j)} out of range "
                            f"[0, {p.m - 1}]")
        member_parts.append(c[~out])
        cycle_parts.append(np.full(int((~out).sum()), i, dtype=np.int64))
    ncyc = len(cycles)
    members = np.concatenate(member_parts) if member_parts else np.zeros(0, dtype=np.int64)
    cycle_of = np.concatenate(cycle_parts) if cycle_parts else np.zeros(0, dtype=np.int64)
    seen = np.bincount(members, minlength=p.m)
    nf = p.nflat + 1
    flat = (cycle_of[:, None] * nf + p.P[members]).ravel()
    load = np.bincount(flat, minlength=ncyc * nf).reshape(ncyc, nf)[:, :-1]
    for i, f in zip(*np.nonzero(load > p.capx[None, :-1])):
        problems.append(f"cycle {int(i)}: {p.channel_name(int(f))} carries "
                        f"{int(load[i, f])} messages, capacity {int(p.capx[f])}")
    for j in np.flatnonzero(seen == 0):
        problems.append(f"message {int(j)} is in no cycle")
    for j in np.flatnonzero(seen > 1):
        problems.append(f"message {int(j)} is in {int(seen[j])} cycles")
    return problems


# ====================================================================== lower bound
def lower_bound_of(p: Incidence) -> int:
    """ceil(lambda) exactly: max over used channels of ceil(load / cap); at least 1
    if there is any message (a local one needs a cycle too), 0 for none."""
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



# ====================================================================== greedy
def _greedy_order(p: Incidence, idx: np.ndarray) -> np.ndarray:
    """Tightest first: largest load factor on the path, then the family's tie-break
    key (smaller first), then index."""
    if len(idx) == 0:
        return idx
    ratio = p.loads(idx) / np.maximum(p.capx, 1)  # a used channel has cap >= 1
    ratio[-1] = 0.0
    worst = ratio[p.P[idx]].max(axis=1)
    return idx[np.lexsort((idx, p.tiebreak[idx], -worst))]


class _Groups:
    """The open cycles grouped by their load rows.

    Two cycles with equal load rows score alike for every message, and the packer takes
    the lowest cycle among equal scores; so it scores one row per group, at the group's
    lowest cycle, instead of every cycle (a packing of many cycles has few distinct
    rows). ``rows[g]`` is group g's row, ``lowest[g]`` its lowest cycle (a large value
    when it has none); each group's cycles are kept in a heap whose stale entries (cycles
    that have left) are dropped when they come to the top.
    """

    _NONE = np.iinfo(np.int64).max

    def __init__(self, width: int):
        self.index: dict[bytes, int] = {}
        self.rows = np.zeros((16, width), dtype=np.int64)
        self.lowest = np.full(16, self._NONE, dtype=np.int64)
        self.heaps: list[list[int]] = []
        self.group_of = np.full(16, -1, dtype=np.int64)   # cycle -> its group
        self.after: dict[tuple[int, int], int] = {}   # (group, step) -> group reached

    def moved(self, j: int, row: np.ndarray) -> None:
        """Cycle j's load row is now ``row``: move it to that row's group."""
        self.move_to(j, self.group_of_row(row))

    def moved_by(self, j: int, step: int, row: Callable[[], np.ndarray]) -> None:
        """Cycle j's old row changed by the step numbered ``step`` (a path added, say)
        into ``row()``: as :meth:`moved`, with the group reached from the old group by
        that step remembered, so a repeated step needs neither the row nor a lookup."""
        key = (int(self.group_of[j]), step)
        new = self.after.get(key)
        if new is None:
            new = self.after[key] = self.group_of_row(row())
        self.move_to(j, new)

    def group_of_row(self, row: np.ndarray) -> int:
        """The group whose row is ``row``, made if new."""
        key = row.tobytes()
        new = self.index.get(key)
        if new is None:
            new = self.index[key] = len(self.heaps)
            self.heaps.append([])
            if new >= len(self.rows):
                self.rows = np.vstack([self.rows, np.zeros_like(self.rows)])
                self.lowest = np.r_[self.lowest, np.full(len(self.lowest), self._NONE)]
            self.rows[new] = row
        return new

    def move_to(self, j: int, new: int) -> None:
        """Move cycle j to group ``new``."""
        if j >= len(self.group_of):
            self.group_of = np.r_[self.group_of, np.full(j + 1, -1, dtype=np.int64)]
        old = int(self.group_of[j])
        if old == new:
            return
        self.group_of[j] = new
        if old >= 0 and self.lowest[old] == j:
            heap = self.heaps[old]
            while heap and self.group_of[heap[0]] != old:
                heapq.heappop(heap)
            self.lowest[old] = heap[0] if heap else self._NONE
        heapq.heappush(self.heaps[new], j)
        self.lowest[new] = min(int(self.lowest[new]), j)

    #: cycles looked at first by :meth:`first_cycles` for each value (then twice as many)
    SCAN = 64

    def first_cycles(self, per_group: np.ndarray, count: int, T: int,
                     descending: bool = False) -> list[int]:
        """The first ``count`` cycles below T in stable order of their group's value
        ``per_group`` (ascending, or descending over the positive values only): what
        a stable sort of the values of every cycle gives, found by scanning each
        value's cycles from its lowest one until enough are found."""
        n = len(self.heaps)
        values, lowest = per_group[:n], self.lowest[:n]
        open_ = lowest < T
        levels = np.unique(values[open_ & (values > 0)] if descending else values[open_])
        out: list[int] = []
        for v in (levels[::-1] if descending else levels).tolist():
            members = open_ & (values == v)
            start, size = int(lowest[members].min()), self.SCAN
            while start < T and len(out) < count:
                stop = min(start + size, T)
                hits = (np.flatnonzero(members[self.group_of[start:stop]]) + start).tolist()
                out += hits[:count - len(out)]
                start, size = stop, 2 * size
            if len(out) >= count:
                break
        return out


class _Packer:
    """Cycle assignment with per-cycle loads, for the greedy method.

    ``loads(j)[c]`` is the load of channel c (flat index) in cycle j, kept as the row
    of cycle j's group; the padding channel's column is meaningless (its capacity never
    binds).
    """

    #: Kempe-chain limits: cycles tried as the target, partner cycles per target,
    #: messages moved by one chain, and moves in total per message placed.
    TARGETS, PARTNERS, CHAIN, BUDGET = 3, 4, 256, 16
    #: most messages whose scores :meth:`fill` works out together
    WINDOW = 64

    def __init__(self, p: Incidence, d0: int):
        self.p = p
        self.P = p.P
        self.capx = p.capx
        self.nf = p.nflat + 1
        self.d = max(d0, 1)
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
        # The distinct paths (a message set has few): message -> path number, and
        # each path's channels and capacities, looked up once instead of per message.
        # (each row seen as one opaque value: far quicker to sort than rows)
        whole = np.ascontiguousarray(p.P).view(np.dtype((np.void, 8 * W))).ravel()
        _, first, number = np.unique(whole, return_index=True, return_inverse=True)
        distinct = p.P[first]
        self.path_of: list[int] = number.ravel().tolist()
        self.paths = list(distinct)
        self.path_caps = [self.capx[q] for q in distinct]
        self.groups = _Groups(self.nf)
        for j in range(self.d):
            self.groups.moved(j, np.zeros(self.nf, dtype=np.int64))

    def open_cycle(self) -> int:
        self.d += 1
        self.groups.moved(self.d - 1, np.zeros(self.nf, dtype=np.int64))
        return self.d - 1

    def change(self, j: int, path, delta: int) -> None:
        """Add ``delta`` to cycle j's loads on ``path``."""
        row = self.loads(j)
        row[path] += delta
        self.groups.moved(j, row)

    def loads(self, j: int) -> np.ndarray:
        """A copy of cycle j's loads: its group's row."""
        return self.groups.rows[self.groups.group_of[j]].copy()

    def put(self, mi: int, j: int) -> None:
        k = self.path_of[mi]
        self.groups.moved_by(j, k, lambda: self._added(j, k))
        self.assign[mi] = j

    def _added(self, j: int, k: int) -> np.ndarray:
        """Cycle j's loads with path k added."""
        row = self.loads(j)
        row[self.paths[k]] += 1
        return row

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
        k = self.path_of[mi]
        path, cap = self.paths[k], self.path_caps[k]
        n = len(self.groups.heaps)
        lowest = self.groups.lowest[:n]
        free = cap - self.groups.rows[:n, path]        # (groups, W)
        score = np.minimum.reduce((free if rest is None else free - rest[path] / T) / cap,
                                  axis=1)
        # no room, or no cycle below T
        score[(np.minimum.reduce(free, axis=1) <= 0) | (lowest >= T)] = -np.inf
        best = score.max()
        if best > -np.inf:
            # the first cycle of the highest score, as an argmax over every cycle
            self.put(mi, int(lowest[score == best].min()))
            return True
        return self.chain_insert(mi, T)

    def fill(self, order: list[int], rest: np.ndarray) -> None:
        """Place the messages ``order`` in turn as :meth:`insert` with ``rest`` would
        (a new cycle when it fails), taking ``rest`` down by each message's path.

        Between two messages only ``rest`` (down by the first one's path) and one
        cycle's group change, and a group's row never changes; so the scores of the
        next messages (up to :attr:`WINDOW`) against every group are worked out at once
        (the same arithmetic, so the same numbers) and each message only picks its
        cycle. A window that ended early (the scores went stale) is followed by one at
        most twice as long as the part that was used."""
        i, size = 0, 1
        while i < len(order):
            placed = self._fill_window(order[i:i + size], rest)
            i += placed
            size = min(2 * placed, self.WINDOW)

    def _fill_window(self, window: list[int], rest: np.ndarray) -> int:
        """Place the first messages of ``window``; returns how many.

        Stops after a message that took a Kempe chain or a new cycle, or that moved a
        cycle into a new group or into one scored as empty, as the scores are stale
        then. A group left empty is struck out (and counts as scored empty)."""
        g, T = self.groups, self.d
        n, w = len(g.heaps), len(window)
        paths = self.P[window]                                         # (w, W)
        uses = np.zeros((w, self.nf))
        uses[np.arange(w)[:, None], paths] = 1.0     # as rest[path] -= 1 counts them
        ahead = rest - (np.cumsum(uses, axis=0) - uses)  # rest before each message
        cap = self.capx[paths]
        free = cap[:, None, :] - g.rows[:n][:, paths].transpose(1, 0, 2)   # (w, n, W)
        lead = np.take_along_axis(ahead, paths, axis=1)[:, None, :]
        score = np.minimum.reduce((free - lead / T) / cap[:, None, :], axis=2)
        fits = np.minimum.reduce(free, axis=2) > 0                        # (w, n)
        lowest = g.lowest[:n]
        empty = lowest >= T            # every cycle is below T: an empty group
        score[~fits | empty[None, :]] = -np.inf
        placed = w
        for t, mi in enumerate(window):
            best = score[t].max()
            if best == -np.inf:
                if not self.chain_insert(mi, T):
                    self.put(mi, self.open_cycle())
                placed = t + 1
                break
            j = int(lowest[score[t] == best].min())
            left = int(g.group_of[j])
            self.put(mi, j)
            if len(g.heaps) > n or empty[g.group_of[j]]:
                placed = t + 1
                break
            if lowest[left] == g._NONE:     # struck out; stale if a cycle comes back
                score[t + 1:, left] = -np.inf
                empty[left] = True
        rest -= uses[:placed].sum(axis=0)
        return placed

    def chain_insert(self, mi: int, T: int) -> bool:
        """Kempe chain: put mi into cycle j and move messages between j and a
        partner cycle k, back and forth, until both are within capacity.

        Targets j: the cycles with the fewest of mi's channels full, lowest first;
        partners k: those with the most room on the channels full in j, lowest first
        (worked out per group of equal cycles, then spread over the cycles)."""
        if T < 2 or self.budget <= 0:
            return False
        path = self.P[mi]
        rows = self.groups.rows[:len(self.groups.heaps)]
        free = self.capx[path] - rows[:, path]             # (groups, W)
        blocked = (free <= 0).sum(axis=1)
        for j in self.groups.first_cycles(blocked, self.TARGETS, T):
            full = path[free[self.groups.group_of[j]] <= 0]
            room = (self.capx[full] - rows[:, full]).min(axis=1)
            # the cycles with room, most first (j has none: ``full`` is full in j)
            for k in self.groups.first_cycles(room, self.PARTNERS, T, descending=True):
                if self._chain(mi, j, k):
                    return True
                if self.budget <= 0:
                    return False
        return False

    def _chain(self, mi: int, j: int, k: int) -> bool:
        P, capx = self.P, self.capx
        rows = {j: self.loads(j), k: self.loads(k)}
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
        self.groups.moved(j, rows[j])
        self.groups.moved(k, rows[k])
        self.assign[mi] = j
        for q, Y in moved:
            self.assign[q] = Y
        return True


def _greedy(p: Incidence, lb: int) -> tuple[np.ndarray, int]:
    """Fill, then repair; returns (assign, d) for the non-local messages."""
    idx = np.flatnonzero(~p.local)
    order = _greedy_order(p, idx)
    pk = _Packer(p, lb)
    rest = p.loads(order).astype(np.float64)
    rest[-1] = 0.0
    pk.fill(order.tolist(), rest)
    # Repair: empty the last cycle into the others while that works.
    while pk.d > lb:
        last = pk.d - 1
        members = _greedy_order(p, np.flatnonzero(pk.assign == last))
        for mi in members.tolist():
            pk.change(last, p.P[mi], -1)
            pk.assign[mi] = -1
            if not pk.insert(mi, last):
                pk.put(mi, last)
                break
        else:
            pk.d -= 1
            pk.groups.moved(last, np.zeros(pk.nf, dtype=np.int64))
            continue
        break
    return pk.assign, pk.d


def finish_cycles(cycles: list[np.ndarray], local: np.ndarray) -> list[np.ndarray]:
    """Local messages into the first cycle; empty cycles dropped; indices sorted."""
    cycles = [np.sort(c) for c in cycles if len(c)]
    if len(local):
        if cycles:
            cycles[0] = np.sort(np.concatenate([cycles[0], local]))
        else:
            cycles = [np.sort(local)]
    return [c.astype(np.int64) for c in cycles]


def greedy_pack(p: Incidence) -> list[np.ndarray]:
    """Greedy packing into ceil(lambda) cycles, opening more only when needed.

    Messages are placed tightest first (largest load factor on their path, then the
    tie-break key, then index) into the open cycle that keeps its channels furthest
    ahead of the work still to come (normalised surplus, see :meth:`_Packer.insert`).
    When no cycle has room, a bounded Kempe chain tries to make room by moving messages
    back and forth between two cycles (as in bipartite edge colouring); only when that
    fails is a new cycle opened. A repair pass then tries to empty the last cycle(s).
    """
    if p.m == 0:
        return []
    lb = lower_bound_of(p)
    local = np.flatnonzero(p.local)
    idx = np.flatnonzero(~p.local)
    assign, d = _greedy(p, lb)
    nl = assign[idx]
    order = np.argsort(nl, kind="stable")   # by cycle, each cycle's messages in order
    return finish_cycles(np.split(idx[order], np.searchsorted(nl[order], np.arange(1, d))),
                         local)
