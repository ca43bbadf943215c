"""Routing runs on the batched engine (:mod:`fatnet.golden.fattree.batch`).

The same runs as :func:`fatnet.golden.fattree.route.run_offline` and
:func:`~fatnet.golden.fattree.route.run_online` on the scalar engine, with the same
report (and, on request, the same :class:`~fatnet.golden.cycle.CycleResult` of every
cycle):

* Off-line: the scheduled cycles are independent, so up to :data:`BATCH_MESSAGES`
  messages of consecutive cycles run as one batch (switch settings, then the cycles);
  what a cycle defers or loses is re-scheduled after the cycles still pending, in the
  order the scalar driver does it.
* On-line: each cycle depends on the losses of the one before; a cycle's outcome
  depends only on its injection pattern (which destinations each source puts on which
  wires), so outcomes are remembered by pattern (at most :data:`ONLINE_MEMO` of them)
  and a repeated pattern is not run again. An unknown pattern runs in one batch with
  the unknown patterns of the cycles likely to follow it (found by guessing each
  unknown outcome from the losses seen so far); a large tree's cycle fills a batch by
  itself and runs alone, every node of a level at once.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..runner import ChannelUsage, RunReport, check_max_cycles
from .batch import BATCH_MESSAGES, cycle_results, geometry, run_batch, set_switches_batch
from .bitstream import encode
from .concentrator import follow, route_cascade
from .topology import EXT

__all__ = ["BATCH_MESSAGES", "ONLINE_MEMO", "ROUTE_MEMO", "inject", "run_cycles",
           "drive_offline_batched", "drive_online_batched"]

#: Most on-line injection patterns whose outcomes are remembered (then forgotten).
ONLINE_MEMO = 1 << 16
#: Most concentrator routings (cascade, occupied inputs) remembered per network.
ROUTE_MEMO = 1 << 16


class _Tally:
    """One cycle's outcome as the report counts it (a CycleResult when kept)."""

    def __init__(self, delivered, lost, local, used, deferred, result=None):
        self.delivered, self.lost, self.local = delivered, lost, local
        self.used, self.deferred, self.result = used, deferred, result


def _router(net):
    """route_cascade with its answers kept per (cascade, occupied inputs), the inputs
    as a sorted tuple or as a bit mask: (output each input reaches or -1, its edge at
    every stage)."""
    memo = net.__dict__.setdefault("_batch_routes", {})

    def route_of(casc, occupied):
        key = (id(casc), occupied)
        table = memo.get(key)
        if table is None:
            if len(memo) >= ROUTE_MEMO:
                memo.clear()
            inputs = occupied if isinstance(occupied, tuple) else tuple(
                b for b in range(casc.inputs) if occupied >> b & 1)
            reached = np.full(casc.inputs, -1, dtype=np.int64)
            edges = np.zeros((casc.inputs, max(1, len(casc.stages))), dtype=np.int64)
            for x, path in route_cascade(casc, inputs).items():
                reached[x] = follow(casc, x, path)
                edges[x, :len(path)] = path
            table = memo[key] = (reached, edges)
        return table
    return route_of


def _source_width(g, src):
    """Wires of every source's injection channel (a leaf's, or the external one)."""
    return np.where(src == EXT, g.caps[0], g.caps[g.L])


def _wires(cycle, message, src, width):
    """Each source's messages of a cycle on wires 0, 1, ... in message order; the
    rest overflow (:func:`fatnet.golden.fattree.switching.assign_injection_wires`)."""
    order = np.lexsort((message, src, cycle))
    key = np.stack([cycle[order], src[order]])
    start = np.flatnonzero(np.r_[True, (key[:, 1:] != key[:, :-1]).any(axis=0)])
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - np.repeat(start, np.diff(np.r_[start,
                                                                          len(order)]))
    return rank, rank < width


def inject(g, cycles: int, cycle, message, src, dst):
    """What the sources of ``cycles`` delivery cycles drive, run: each source's messages
    on wires 0, 1, ... in message order, off-line with their switch settings.

    Parameters
    ----------
    g : Geometry
    cycles : int
    cycle, message, src, dst : ndarray of int
        The (non-local) messages: cycle in the batch, index, endpoints.

    Returns
    -------
    (Streams, wire, deferred, choices)
        The batch's streams (the injected messages in the order given, then the
        phantoms); every message's wire; whether it was not injected (no wire left at
        its source, or off-line no path through a concentrator); the injected ones'
        decisions per hop and stage (None on-line).
    """
    wire, fits = _wires(cycle, message, src, _source_width(g, src))
    deferred = ~fits
    choices = None
    if not g.online:
        ch, routed = set_switches_batch(g, _router(g.net), cycle[fits], message[fits],
                                        src[fits], dst[fits], wire[fits])
        deferred[np.flatnonzero(fits)[~routed]] = True
        choices = ch[routed]
    go = ~deferred
    st = run_batch(g, cycles, cycle[go], message[go], src[go], dst[go], wire[go], choices)
    return st, wire, deferred, choices


def run_cycles(net, ms, cycles: list, keep: bool = False) -> list[_Tally]:
    """Run delivery cycles (lists of message indices) as one batch; off-line cycles are
    set by the switch setter first, on-line ones arbitrate."""
    g = geometry(net)
    cycle = np.concatenate([np.full(len(c), b, dtype=np.int64)
                            for b, c in enumerate(cycles)] + [np.zeros(0, np.int64)])
    message = np.concatenate([np.asarray(c, dtype=np.int64) for c in cycles]
                             + [np.zeros(0, np.int64)])
    src, dst = ms.src[message], ms.dst[message]
    local = src == dst
    c, m, s, d = cycle[~local], message[~local], src[~local], dst[~local]
    st, wire, deferred, choices = inject(g, len(cycles), c, m, s, d)
    go = ~deferred
    tallies = _tallies(g, st, len(cycles), cycle[local], c[deferred], m[deferred])
    if keep:
        _keep_results(g, ms, st, cycles, tallies, choices, c[go], m[go], wire[go],
                      local_of=[message[local & (cycle == b)] for b in range(len(cycles))])
    return tallies


def _tallies(g, st, cycles: int, local_cycle, deferred_cycle, deferred_message):
    """Per cycle of a batch: messages delivered, lost (sorted), local, wire-cycles used
    per level, deferred."""
    msg = st.message >= 0
    delivered = np.bincount(st.cycle[msg & (st.status == 1)], minlength=cycles)
    local = np.bincount(local_cycle, minlength=cycles)
    lost_idx = np.flatnonzero(msg & (st.status == 0))
    lost_by = np.split(st.message[lost_idx], np.searchsorted(st.cycle[lost_idx],
                                                             np.arange(1, cycles)))
    q = np.arange(st.path.shape[1])
    on = msg[:, None] & (q[None, :] < st.path_len[:, None])
    level = np.log2(st.path[:, :, 0] + 1).astype(np.int64)
    flat = (st.cycle[:, None] * (g.L + 1) + level)[on]
    used = np.bincount(flat, minlength=cycles * (g.L + 1)).reshape(cycles, g.L + 1)
    order = np.argsort(deferred_cycle, kind="stable")
    deferred_by = np.split(deferred_message[order],
                           np.searchsorted(deferred_cycle[order], np.arange(1, cycles)))
    return [_Tally(int(delivered[b]), sorted(lost_by[b].tolist()), int(local[b]), used[b],
                   deferred_by[b].tolist()) for b in range(cycles)]


def _keep_results(g, ms, st, cycles, tallies, choices, cycle, message, wire, local_of):
    """The CycleResult of every cycle (the streams encoded as the scalar runner does)."""
    net = g.net
    injections: list[dict] = [{} for _ in cycles]
    for i, (b, m, w) in enumerate(zip(cycle.tolist(), message.tolist(), wire.tolist())):
        s, d = int(ms.src[m]), int(ms.dst[m])
        decisions = None
        if choices is not None:
            hops = net.tree.hops(s, d)
            decisions = [tuple(int(v) for v in choices[i, q, :len(
                net.cascades[(h.node, h.out_port)].stages)]) for q, h in enumerate(hops)]
        injections[b][m] = (w, encode(net, s, d, ms.payload[m], decisions))
    results = cycle_results(g, st, len(cycles), ms,
                            [sorted(x.tolist()) for x in local_of], injections)
    for t, r in zip(tallies, results):
        t.result = r


def _account(report: RunReport, usage: ChannelUsage, tally: _Tally, keep: bool) -> None:
    usage.used += tally.used
    report.cycles += 1
    report.losses_per_cycle.append(len(tally.lost))
    if keep:
        report.results.append(tally.result)
    report.delivered += tally.delivered
    report.local += tally.local


def _batch(pending: deque, room: int) -> list:
    """Cycles from the front of ``pending``: at most ``room`` of them and (past the
    first) at most BATCH_MESSAGES messages."""
    out: list = []
    size = 0
    while pending and len(out) < room and (not out or size + len(pending[0])
                                           <= BATCH_MESSAGES):
        size += len(pending[0])
        out.append(pending.popleft())
    return out


def drive_offline_batched(net, ms, report: RunReport, usage: ChannelUsage, cycles: list,
                          reschedule, keep_results: bool,
                          max_cycles: int | None) -> RunReport:
    """:func:`fatnet.golden.runner.drive_offline` on the batched engine: the same
    cycles in the same order, the same report (``usage`` counts the wire-cycles per
    level)."""
    report.scheduled_cycles = len(cycles)
    max_cycles = 4 * len(cycles) + 16 if max_cycles is None else check_max_cycles(max_cycles)
    pending = deque(cycles)
    while pending:
        if report.cycles >= max_cycles:
            report.lost += [(m, f"not delivered within {max_cycles} cycles")
                            for m in pending.popleft()]
            continue
        batch = _batch(pending, max_cycles - report.cycles)
        for tally in run_cycles(net, ms, batch, keep_results):
            _account(report, usage, tally, keep_results)
            retry = tally.deferred + tally.lost
            report.retries += len(retry)
            if retry:
                pending.extend(reschedule(sorted(retry)))
    report.utilisation = usage.fractions(report.cycles)
    return report


#: On-line lookahead: injection patterns not seen yet, gathered along the cycles ahead
#: (each unknown outcome guessed) while they hold fewer than LOOKAHEAD_STREAMS messages
#: (below that, a batch costs about what one cycle does), run as one batch.
LOOKAHEAD_PATTERNS, LOOKAHEAD_CYCLES, LOOKAHEAD_STREAMS = 32, 256, 1024


class _Online:
    """The on-line sources' state: per source (in order of first appearance) its
    messages to others in order (``seq``), and per state the messages on its wires
    (a window of at most its channel's wires, oldest first) and how far into ``seq``
    the windows have taken. Lost messages stay in their window; delivered ones leave
    it and the next of ``seq`` move in."""

    def __init__(self, g, ms):
        self.dst = ms.dst.tolist()
        seqs: dict[int, list[int]] = {}
        self.local: list[int] = []
        for m, (s, d) in enumerate(zip(ms.src.tolist(), self.dst)):
            seq = seqs.setdefault(s, [])
            if s == d:
                self.local.append(m)
            else:
                seq.append(m)
        self.sources = list(seqs)
        self.seqs = [tuple(seqs[s]) for s in self.sources]
        self.widths = [int(g.caps[0] if s == EXT else g.caps[g.L]) for s in self.sources]
        self.dseqs = [tuple(self.dst[m] for m in seq) for seq in self.seqs]

    def start(self) -> tuple:
        return self.after(tuple(((), 0, ()) for _ in self.sources), frozenset())

    def after(self, state: tuple, lost: frozenset) -> tuple:
        """The state after a cycle that lost the (source, wire) positions ``lost``:
        per source its window, how far into ``seq`` it has taken, the window's
        destinations."""
        kept: dict[int, list[int]] = {}
        for i, p in sorted(lost):
            kept.setdefault(i, []).append(p)
        out = []
        for i, (win, nxt, dsts) in enumerate(state):
            ps = kept.get(i)
            if ps is None:   # slices of tuples are tuples; past the end they stop short
                taken = self.seqs[i][nxt:nxt + self.widths[i]]
                out.append((taken, nxt + len(taken),
                            self.dseqs[i][nxt:nxt + len(taken)]))
                continue
            taken = self.seqs[i][nxt:nxt + self.widths[i] - len(ps)]
            out.append((tuple(win[p] for p in ps) + taken, nxt + len(taken),
                        tuple(dsts[p] for p in ps) + self.dseqs[i][nxt:nxt + len(taken)]))
        return tuple(out)

    @staticmethod
    def pattern(state: tuple) -> tuple:
        """What a cycle's outcome depends on: per source, the destinations on its wires."""
        return tuple((i, dsts) for i, (_, _, dsts) in enumerate(state) if dsts)

    def remaining(self, state: tuple) -> list[int]:
        return [m for i, (win, nxt, _) in enumerate(state)
                for m in win + self.seqs[i][nxt:]]


def _online_outcomes(net, ms, online: _Online, memo: dict, guess: dict,
                     state: tuple) -> None:
    """Remember the outcome of ``state``'s pattern, and of the unknown patterns met
    along the cycles after it (each unknown outcome guessed from the losses seen so far
    per source, wire and destination), all run as one batch."""
    found: dict = {}
    streams = 0
    for _ in range(LOOKAHEAD_CYCLES):
        key = online.pattern(state)
        hit = memo.get(key)
        if hit is not None:
            lost = hit[0]
        else:
            if key in found:   # the guesses lead round in a circle
                break
            size = sum(len(d) for _, d in key)
            if found and streams + size > LOOKAHEAD_STREAMS:
                break
            streams += size
            found[key] = state
            lost = frozenset((i, p) for i, dsts in key for p, d in enumerate(dsts)
                             if guess.get((i, p, d), 0) > 0)
        if len(found) >= LOOKAHEAD_PATTERNS or not key:
            break
        state = online.after(state, lost)
    if len(memo) + len(found) > ONLINE_MEMO:
        memo.clear()
    tallies = run_cycles(net, ms, [sorted(m for w, _, _ in st for m in w)
                                   for st in found.values()])
    for (key, st), t in zip(found.items(), tallies):
        lost_set = set(t.lost)
        lost = frozenset((i, p) for i, (w, _, _) in enumerate(st) for p, m in enumerate(w)
                         if m in lost_set)
        memo[key] = (lost, t.used, t.delivered)
        for i, dsts in key:
            for p, d in enumerate(dsts):
                guess[(i, p, d)] = guess.get((i, p, d), 0) + (1 if (i, p) in lost else -1)


def drive_online_batched(net, ms, report: RunReport, usage: ChannelUsage,
                         keep_results: bool, max_cycles: int) -> RunReport:
    """:func:`fatnet.golden.runner.drive_online` on the batched engine: the same
    injections cycle by cycle, the same report.

    A cycle's outcome depends only on its injection pattern (which destinations each
    source puts on which wires): outcomes are remembered by pattern (at most
    :data:`ONLINE_MEMO`), and an unknown pattern is run together with the unknown
    patterns of the cycles likely to follow it.
    """
    max_cycles = check_max_cycles(max_cycles)
    online = _Online(geometry(net), ms)
    memo: dict = {}
    guess: dict = {}
    state = online.start()
    local = online.local
    lost_before = 0   # a lost message stays on its source's wires: the next cycle retries it
    while (local or any(w for w, _, _ in state)) and report.cycles < max_cycles:
        idx = sorted(local + [m for w, _, _ in state for m in w])
        if keep_results:
            tally = run_cycles(net, ms, [idx], True)[0]
            lost_set = set(tally.lost)
            lost = frozenset((i, p) for i, (w, _, _) in enumerate(state)
                             for p, m in enumerate(w) if m in lost_set)
        else:
            key = online.pattern(state)
            if key not in memo:
                _online_outcomes(net, ms, online, memo, guess, state)
            lost, cycle_used, delivered = memo[key]
            tally = _Tally(delivered, sorted(state[i][0][p] for i, p in lost), len(local),
                           cycle_used, [])
        _account(report, usage, tally, keep_results)
        state = online.after(state, lost)
        local = []
        report.retries += lost_before
        lost_before = len(lost)
    report.lost += [(m, f"not delivered within {max_cycles} cycles")
                    for m in local + online.remaining(state)]
    report.utilisation = usage.fractions(report.cycles)
    return report
