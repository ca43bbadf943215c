"""The cycle packer (fatnet.golden.packer) on tiny random path-incidence matrices that
come from no family: greedy validity, the lower bound, and the validator, each against
an independent reference written here (loads counted with plain loops, the optimum
found by exhaustive search). Random cases print their seed.
"""

from __future__ import annotations

from math import ceil

import numpy as np
import pytest

from fatnet.golden.errors import ParameterError
from fatnet.golden.packer import Incidence, greedy_pack, lower_bound_of, problems_of

SEEDS = range(7100, 7260)
W = 3  # path slots per message


def name(f):
    return f"ch{f}"


def make(paths, cap, local=None, tiebreak=None):
    """An Incidence from plain lists of channel ids (padded here)."""
    C = len(cap)
    P = np.full((len(paths), W), C, dtype=np.int64)
    for i, p in enumerate(paths):
        P[i, :len(p)] = p
    local = np.zeros(len(paths), bool) if local is None else np.asarray(local, bool)
    tiebreak = np.zeros(len(paths)) if tiebreak is None else np.asarray(tiebreak)
    return Incidence(P, np.asarray(cap), local, tiebreak, name)


def random_instance(seed):
    """Paths, capacities, local flags. Every other seed is a graph (two channels per
    message, capacity 1: packing is edge colouring, and odd cycles need more than
    ceil(lambda) cycles); the rest mix path lengths, capacities and local messages."""
    rng = np.random.default_rng(seed)
    if seed % 2:
        C = int(rng.integers(3, 6))
        m = int(rng.integers(3, 9))
        return ([sorted(rng.choice(C, size=2, replace=False).tolist()) for _ in range(m)],
                [1] * C, [False] * m)
    C = int(rng.integers(1, 6))
    cap = np.where(rng.random(C) < 0.6, 1, rng.integers(2, 4, size=C)).tolist()
    m = int(rng.integers(0, 10))
    paths, local = [], []
    for _ in range(m):
        if rng.random() < 0.1:
            paths.append([])
            local.append(True)
            continue
        k = min(C, int(rng.integers(2, W + 1)) if rng.random() < 0.7
                else int(rng.integers(0, 2)))
        paths.append(sorted(rng.choice(C, size=k, replace=False).tolist()))
        local.append(False)
    return paths, cap, local


def fits(paths, cap, members):
    load = [0] * len(cap)
    for i in members:
        for c in paths[i]:
            load[c] += 1
    return all(load[c] <= cap[c] for c in range(len(cap)))


def independent_problems(paths, cap, cycles):
    """True if the schedule is invalid: a message missing, twice, out of range, or a
    channel over capacity in some cycle."""
    seen = [0] * len(paths)
    for c in cycles:
        for i in c:
            if not 0 <= int(i) < len(paths):
                return True
            seen[int(i)] += 1
    if any(s != 1 for s in seen):
        return True
    return not all(fits(paths, cap, [int(i) for i in c]) for c in cycles)


def optimum(paths, cap, local):
    """Fewest cycles, by exhaustive search (each message into a cycle already opened
    or the next one)."""
    idx = [i for i in range(len(paths)) if not local[i]]
    if not paths:
        return 0
    if not idx:
        return 1
    best = [len(idx)]

    def place(k, cycles):
        if len(cycles) >= best[0]:
            return
        if k == len(idx):
            best[0] = len(cycles)
            return
        i = idx[k]
        for c in cycles:
            c.append(i)
            if fits(paths, cap, c):
                place(k + 1, cycles)
            c.pop()
        cycles.append([i])
        place(k + 1, cycles)
        cycles.pop()

    place(0, [])
    return best[0]


def independent_lower_bound(paths, cap):
    if not paths:
        return 0
    load = [0] * len(cap)
    for p in paths:
        for c in p:
            load[c] += 1
    return max([1] + [ceil(load[c] / cap[c]) for c in range(len(cap)) if load[c]])


@pytest.mark.parametrize("seed", SEEDS)
def test_greedy_valid_and_between_bound_and_optimum(seed):
    paths, cap, local = random_instance(seed)
    where = f"seed {seed}: paths={paths} cap={cap} local={local}"
    p = make(paths, cap, local)
    lb = lower_bound_of(p)
    assert lb == independent_lower_bound(paths, cap), where
    cycles = greedy_pack(p)
    assert not independent_problems(paths, cap, cycles), f"{where}: {cycles}"
    assert problems_of(p, cycles) == [], where
    opt = optimum(paths, cap, local)
    assert lb <= opt <= len(cycles), f"{where}: lb {lb} opt {opt} greedy {len(cycles)}"
    assert all(len(c) for c in cycles), where
    assert all(list(c) == sorted(c) for c in cycles), where
    loc = [i for i in range(len(paths)) if local[i]]
    if loc:
        assert set(loc) <= set(cycles[0].tolist()), where


@pytest.mark.parametrize("seed", SEEDS[:40])
def test_greedy_meets_the_bound_when_paths_are_single_channels(seed):
    """One channel per message: channels do not interact, so ceil(lambda) cycles
    always suffice, and greedy (which has room in some cycle for every message until
    each channel's load is placed) must find them."""
    rng = np.random.default_rng(seed)
    C = int(rng.integers(1, 5))
    cap = rng.integers(1, 4, size=C).tolist()
    paths = [[int(rng.integers(0, C))] for _ in range(int(rng.integers(1, 25)))]
    cycles = greedy_pack(make(paths, cap))
    lb = independent_lower_bound(paths, cap)
    assert len(cycles) == lb, f"seed {seed}: paths={paths} cap={cap} -> {cycles}"
    assert not independent_problems(paths, cap, cycles), f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS[:60])
def test_validator_agrees_with_independent_check_on_random_schedules(seed):
    paths, cap, local = random_instance(seed)
    rng = np.random.default_rng([seed, 1])
    p = make(paths, cap, local)
    m = len(paths)
    for trial in range(8):
        d = int(rng.integers(1, m + 2))
        assign = rng.integers(0, d, size=m)
        cycles = [np.flatnonzero(assign == j) for j in range(d)]
        if m and trial % 4 == 1:  # drop one message
            j = int(rng.integers(0, d))
            cycles[j] = cycles[j][1:]
        if m and trial % 4 == 2:  # duplicate one
            cycles[0] = np.append(cycles[0], int(rng.integers(0, m)))
        bad = independent_problems(paths, cap, cycles)
        got = problems_of(p, cycles)
        assert bool(got) == bad, f"seed {seed} trial {trial}: {cycles} -> {got}"


def test_validator_names_each_problem():
    # channel 0 cap 1, channel 1 cap 2
    p = make([[0], [0, 1], [1], [1]], [1, 2])
    assert problems_of(p, [np.array([0, 2]), np.array([1, 3])]) == []
    over = problems_of(p, [np.array([0, 1]), np.array([2, 3])])
    assert len(over) == 1 and "cycle 0" in over[0] and "ch0" in over[0] \
        and "carries 2" in over[0]
    missing = problems_of(p, [np.array([0, 2]), np.array([1])])
    assert missing == ["message 3 is in no cycle"]
    twice = problems_of(p, [np.array([0, 2]), np.array([1, 3, 2])])
    assert any("message 2 is in 2 cycles" in s for s in twice)
    assert any("cycle 1" in s and "ch1" in s for s in twice)
    out = problems_of(p, [np.array([0, 2, 9]), np.array([1, 3])])
    assert len(out) == 1 and "9" in out[0] and "out of range" in out[0]
    assert any("integers" in s for s in problems_of(p, [np.array([0.0, 2.0]),
                                                      np.array([1, 3])]))
    assert any("1-D" in s for s in problems_of(p, [np.array([[0, 2]]), np.array([1, 3])]))


def test_tiebreak_and_lowest_cycle_order():
    # two messages on one channel of capacity 1: two cycles; the smaller key is placed
    # first, into the lowest cycle
    p = make([[0], [0]], [1], tiebreak=[1, 0])
    assert [c.tolist() for c in greedy_pack(p)] == [[1], [0]]
    p = make([[0], [0]], [1], tiebreak=[0, 1])
    assert [c.tolist() for c in greedy_pack(p)] == [[0], [1]]


def test_empty_local_only_and_unroutable():
    empty = Incidence(np.zeros((0, W), dtype=np.int64), np.array([1, 1]),
                      np.zeros(0, bool), np.zeros(0), name)
    assert greedy_pack(empty) == [] and lower_bound_of(empty) == 0
    locals_ = make([[], [], []], [1], local=[True] * 3)
    assert [c.tolist() for c in greedy_pack(locals_)] == [[0, 1, 2]]
    assert lower_bound_of(locals_) == 1
    # a used channel of capacity 0 cannot be scheduled; an unused one is harmless
    with pytest.raises(ParameterError, match="ch1"):
        lower_bound_of(make([[0], [1]], [2, 0]))
    with pytest.raises(ParameterError):
        greedy_pack(make([[0], [1]], [2, 0]))
    assert lower_bound_of(make([[0], [0]], [1, 0])) == 2


@pytest.mark.parametrize("seed", range(80))
def test_greedy_valid_on_crowded_instances(seed):
    """A dozen messages of 2-3 channels on a few channels of capacity 1-2: cycles fill
    up, so the Kempe chains (about one instance in seven) and the repair pass run; the
    packing must still be valid and no shorter than the bound."""
    rng = np.random.default_rng([seed, 4])
    C = int(rng.integers(3, 7))
    cap = rng.integers(1, 3, size=C).tolist()
    paths = [sorted(rng.choice(C, size=int(rng.integers(2, 4)), replace=False).tolist())
             for _ in range(int(rng.integers(6, 16)))]
    p = make(paths, cap, tiebreak=rng.random(len(paths)))
    cycles = greedy_pack(p)
    where = f"seed {seed}: cap={cap} paths={paths}"
    assert not independent_problems(paths, cap, cycles), f"{where} -> {cycles}"
    assert problems_of(p, cycles) == [], where
    assert len(cycles) >= independent_lower_bound(paths, cap) == lower_bound_of(p), where


def test_odd_cycle_needs_more_than_the_bound():
    """A triangle: every channel carries 2 (bound 2), but any two messages share a
    channel of capacity 1, so each needs a cycle of its own."""
    paths = [[0, 1], [1, 2], [0, 2]]
    p = make(paths, [1, 1, 1])
    assert lower_bound_of(p) == 2 and optimum(paths, [1, 1, 1], [False] * 3) == 3
    cycles = greedy_pack(p)
    assert sorted(c.tolist() for c in cycles) == [[0], [1], [2]]


# ---------------------------------------------------------------- windowed fill
# The packer places messages in windows whose scores it works out together; the
# schedule must be exactly the one of placing them one at a time. The one-at-a-time
# placement is kept here as the reference: the packer's placement of one message
# (insert and put), its choice of Kempe chains (a stable sort of every cycle's value)
# and its fill loop as they were before the windows.
def _reference_insert(self, mi, T, rest=None):
    path = self.P[mi]
    cap = self.capx[path]
    groups = np.flatnonzero(self.groups.lowest[:len(self.groups.heaps)] < T)
    free = cap - self.groups.rows[groups[:, None], path]
    fits = free.min(axis=1) > 0
    if fits.any():
        if rest is None:
            score = (free / cap).min(axis=1)
        else:
            score = ((free - rest[path] / T) / cap).min(axis=1)
        score[~fits] = -np.inf
        lowest = self.groups.lowest[groups]
        self.put(mi, int(lowest[score == score.max()].min()))
        return True
    return self.chain_insert(mi, T)


def _reference_first_by_value(values, count, descending=False):
    present = np.flatnonzero(np.bincount(values))
    out = []
    for v in (present[::-1] if descending else present).tolist():
        out += np.flatnonzero(values == v)[:count - len(out)].tolist()
        if len(out) >= count:
            break
    return out


def _reference_chain_insert(self, mi, T):
    if T < 2 or self.budget <= 0:
        return False
    path = self.P[mi]
    rows = self.groups.rows[:len(self.groups.heaps)]
    free = self.capx[path] - rows[:, path]
    per_cycle = self.groups.group_of[:T]
    blocked = (free <= 0).sum(axis=1)[per_cycle]
    for j in _reference_first_by_value(blocked, self.TARGETS):
        full = path[free[self.groups.group_of[j]] <= 0]
        room = (self.capx[full] - rows[:, full]).min(axis=1)[per_cycle]
        room[j] = 0
        for k in _reference_first_by_value(np.maximum(room, 0), self.PARTNERS,
                                           descending=True):
            if room[k] <= 0:
                break
            if self._chain(mi, j, k):
                return True
            if self.budget <= 0:
                return False
    return False


def _reference_put(self, mi, j):
    self.change(j, self.P[mi], 1)
    self.assign[mi] = j


def _reference_fill(self, order, rest):
    for mi in order:
        if not self.insert(mi, self.d, rest):
            self.put(mi, self.open_cycle())
        rest[self.P[mi]] -= 1


def crowded_instance(seed):
    """Many messages (up to 600) on a few channels, drawn from a small pool of paths
    (as a family's are: many messages share a path) or each its own, with capacities
    1-3, some local messages and tie-break keys with ties: windows of every length,
    Kempe chains, new cycles and the repair pass all occur."""
    rng = np.random.default_rng([seed, 34])
    C = int(rng.integers(2, 9))
    cap = rng.integers(1, 4, size=C).tolist()
    m = int(rng.integers(1, 600))
    pool = [sorted(rng.choice(C, size=int(rng.integers(1, min(C, W) + 1)),
                              replace=False).tolist())
            for _ in range(int(rng.integers(1, 12)))]
    if seed % 3 == 0:
        paths = [sorted(rng.choice(C, size=int(rng.integers(1, min(C, W) + 1)),
                                   replace=False).tolist()) for _ in range(m)]
    else:
        paths = [pool[int(k)] for k in rng.integers(0, len(pool), size=m)]
    local = rng.random(m) < 0.05
    paths = [[] if loc else q for q, loc in zip(paths, local)]
    return paths, cap, local.tolist(), rng.integers(0, 4, size=m)


# 195, 218 and 459: a cycle comes back into a group that a window struck out when it
# was left empty
@pytest.mark.parametrize("seed", [*range(60), 195, 218, 459])
def test_windowed_fill_matches_one_message_at_a_time(seed, monkeypatch):
    """The same cycles, each with the same messages, as the reference placement."""
    from fatnet.golden import packer
    paths, cap, local, tiebreak = crowded_instance(seed)
    where = (f"seed {seed} (replay: pytest tests/engines/test_packer.py -k "
             f"'windowed_fill and {seed}]'): cap={cap}")
    if seed % 2:    # the cycles of a value looked at one, two, four... at a time
        monkeypatch.setattr(packer._Groups, "SCAN", 1)
    cycles = greedy_pack(make(paths, cap, local, tiebreak))
    monkeypatch.setattr(packer._Packer, "insert", _reference_insert)
    monkeypatch.setattr(packer._Packer, "put", _reference_put)
    monkeypatch.setattr(packer._Packer, "chain_insert", _reference_chain_insert)
    monkeypatch.setattr(packer._Packer, "fill", _reference_fill)
    expected = greedy_pack(make(paths, cap, local, tiebreak))
    assert [c.tolist() for c in cycles] == [c.tolist() for c in expected], where
    assert not independent_problems(paths, cap, cycles), where
