"""The batched self-test prediction on an outcome table, a block of cycles at a time.

Where the plan's outcome table (:mod:`fatnet.sim.bisttable`) serves the batched
prediction (:func:`fatnet.sim.bist.run_counters`: no stuck link, no flipped bit), a
cycle is one table lookup by its injection pattern's code, and the acknowledged
terminals move the code on to the next cycle's pattern. That chain is sequential (the
next pattern depends on which messages this one acknowledged), so it stays a loop, kept
to the least Python a cycle can take: every offering terminal's offers become a stream
of code changes, drawn in blocks (:func:`fatnet.golden.bist.draw_run`) and computed
with numpy (:class:`_CodeStreams`), so an acknowledged terminal costs one call of its
stream's ``__next__``; the loop records each cycle's pattern code and nothing else. The
counters follow from the entries of a block, gathered by those codes, with numpy
(:func:`block_counters`):
cumulative sums of the entries' fields, and the offers from the identity ``offered after
cycle c = sent in c + acknowledged before c`` (a terminal's message waits from its offer
until it is acknowledged, and every waiting message is sent).
"""

from __future__ import annotations

from itertools import chain, repeat

import numpy as np

from ..golden import bist as gb
from .bisttable import _BAD, _DELIVERED, _FIELD, _SENT, OutcomeTable, PatternSpace

__all__ = ["BLOCK_CYCLES", "FILL_BLOCK_CYCLES", "TableRun", "block_counters"]

#: Cycles the loop runs between two calls of numpy on a complete table.
BLOCK_CYCLES = 1 << 12
#: Cycles a block runs while the table still fills (a miss runs the model, so progress
#: is shown more often).
FILL_BLOCK_CYCLES = 1 << 8
#: Draws generated at a time for each terminal short of offers (numpy's cost per draw
#: falls by half from 4,096 to 16,384).
DRAW_BLOCK = 1 << 14
#: A refill draws for every terminal at most this many blocks ahead of its reading.
AHEAD = 2
#: Acknowledged terminals of every 16-bit mask (numpy 1.26 has no ``bitwise_count``).
_POPCOUNT = np.sum([(np.arange(1 << 16, dtype=np.int64) >> b) & 1 for b in range(16)], axis=0)


class _CodeStreams:
    """Every offering terminal's offers as streams of changes to the pattern code.

    Terminal ``s``'s offers in order (its draws, :func:`fatnet.golden.bist.draw_run`;
    the draws that do not offer are its gaps) give three streams, each an iterator's
    ``__next__``:

    * ``step[s]``: when s's message is acknowledged (or at reset), the change of the
      code to its next offer's slot if that offer comes in the next cycle (gap 0), or to
      idle otherwise;
    * ``gap[s]``: that offer's gap (the cycles s stays idle);
    * ``arrive[s]``: for each offer with a gap, the change from idle to its slot when
      it comes.

    At load 1 every draw offers: no gap, so only ``step`` is made (:attr:`gapless`);
    with a fixed pattern there too, every step is 0 and nothing is drawn
    (:attr:`static`: the pattern never changes).
    """

    def __init__(self, plan, space: PatternSpace, never: set):
        self.plan = plan
        N = plan.terminals
        self.states = list(plan.states)
        self.place = np.asarray(space.place, dtype=np.int64)  # column -1 (N): idle
        # every step a terminal can take, [s, a, b]: from waiting for a to waiting for b
        # (N: idle), as Python ints made once: a block's steps are references to them,
        # none made anew
        self.step_values = np.array([[[row[b] - row[a] for b in range(N + 1)]
                                      for a in range(N + 1)] for row in space.place],
                                    dtype=object)
        self.last = self.place[:, -1].copy()    # the slot of its last offer (with gaps)
        self.last_dest = np.full(N, N, dtype=np.int64)   # its destination (no gap)
        self.skipped = [0] * N
        self.gapless = plan.threshold >= gb.ALWAYS_OFFERS
        self.static = self.gapless and plan.pattern in gb.FIXED_PATTERNS
        self.offering = [s for s in range(N) if s not in never]
        self.blocks: list[dict] = [{} for _ in range(N)]    # s -> block index -> lists
        self.drawn = [0] * N                                 # blocks drawn per terminal
        self.reading = [0] * N                               # block the step stream reads
        self.step = [repeat(0).__next__ if self.static else self._stream(s, 0)
                     for s in range(N)]
        self.gap = [self._stream(s, 1) for s in range(N)] if not self.gapless \
            else [repeat(0).__next__] * N
        self.arrive = [self._stream(s, 2) for s in range(N)] if not self.gapless else []

    def _stream(self, s: int, kind: int):
        """The ``__next__`` of terminal ``s``'s stream ``kind`` (0 step, 1 gap, 2
        arrive): an iterator over the lists of its blocks, in C but at their ends."""
        return chain.from_iterable(self._lists(s, kind)).__next__

    def _lists(self, s: int, kind: int):
        k = 0
        while True:
            if kind == 0:
                self.reading[s] = k
            while self.drawn[s] <= k:
                self._refill(s)
            lists = self.blocks[s][k]
            yield lists[kind]
            lists[kind] = None
            if all(x is None for x in lists):
                del self.blocks[s][k]
            k += 1

    def _refill(self, s: int) -> None:
        """Draw a block for ``s`` and every offering terminal at most :data:`AHEAD`
        blocks ahead of the one it reads (all of them, where they offer alike: one call
        of numpy for every terminal; a terminal whose message waits on stays bounded)."""
        terminals = [t for t in self.offering
                     if t == s or self.drawn[t] - self.reading[t] <= AHEAD]
        p = self.plan
        xs, offers, dests = gb.draw_run([self.states[t] for t in terminals], terminals,
                                        p.n, p.threshold, p.pattern, DRAW_BLOCK)
        if self.gapless:    # every draw offers: the rows' steps at once
            lists = [[row] for row in self._steps(terminals, dests).tolist()]
        else:
            lists = [self._changes(t, offers[row], dests[row])
                     for row, t in enumerate(terminals)]
        for row, t in enumerate(terminals):
            self.states[t] = int(xs[row, -1])
            self.blocks[t][self.drawn[t]] = lists[row]
            self.drawn[t] += 1

    def _steps(self, terminals: list, dests: np.ndarray) -> np.ndarray:
        """Where every draw offers: each row's step changes (gap 0 throughout), an
        object array of :attr:`step_values`."""
        rows = np.asarray(terminals)[:, None]
        before = np.concatenate([self.last_dest[rows], dests[:, :-1]], axis=1)
        self.last_dest[terminals] = dests[:, -1]
        return self.step_values[rows, before, dests]

    def _changes(self, t: int, offers: np.ndarray, dests: np.ndarray) -> list:
        """Where offers come after gaps: the three streams' lists of terminal ``t``'s
        offers in one block of draws."""
        idx = np.flatnonzero(offers)
        if idx.size == 0:
            self.skipped[t] += offers.size
            return [[], [], []]
        gaps = np.diff(idx, prepend=-1) - 1
        gaps[0] += self.skipped[t]
        self.skipped[t] = offers.size - 1 - int(idx[-1])
        slot = self.place[t][dests[idx]]
        before = np.concatenate(([self.last[t]], slot[:-1]))
        self.last[t] = slot[-1]
        idle = self.place[t, -1]
        step = np.where(gaps == 0, slot, idle) - before
        return [step.tolist(), gaps.tolist(), (slot - idle)[gaps > 0].tolist()]


class TableRun:
    """The batched prediction on an outcome table from reset, a block of cycles at a
    time (module docstring): :meth:`run` gives each cycle's table entry, :meth:`block`
    the counters after each cycle of a block, :meth:`at` the counters at a cycle count.

    Parameters
    ----------
    plan : fatnet.sim.bist.BistPlan
        With no stuck link and no flipped bit.
    table : OutcomeTable
        The plan's table.
    never : set of int
        The terminals that never offer.
    """

    def __init__(self, plan, table: OutcomeTable, never: set):
        self.table = table
        N = plan.terminals
        space = table.space
        self.streams = _CodeStreams(plan, space, never)
        self.code = sum(space.place[s][-1] for s in range(N))   # every terminal idle
        self.cycles = 0
        self.terminals = N
        #: the acknowledged masks of a complete table (:meth:`_lookup`)
        self.masks: memoryview | None = None
        #: the counters after the cycles run
        self.counts = {name: 0 for name in gb.COUNTERS}
        self.wake: dict[int, list] = {}
        self.bits_of = [tuple(s for s in range(N) if m >> s & 1) for m in range(1 << N)]
        #: the step streams of the terminals of every acknowledged mask
        self.steps_of = [tuple(self.streams.step[s] for s in bits) for bits in self.bits_of]
        for s in self.streams.offering:       # as if acknowledged just before reset
            self._next_offer(s, -1)

    def _next_offer(self, s: int, c: int) -> None:
        """Terminal ``s``'s message was acknowledged in cycle ``c``: on to its next."""
        self.code += self.streams.step[s]()
        gap = self.streams.gap[s]()
        if gap:
            self.wake.setdefault(c + 1 + gap, []).append(s)

    def at(self, cycles: int, on_cycle=None) -> dict:
        """The counters after ``cycles`` completed cycles (a copy; not below the cycles
        run), running blocks of :data:`BLOCK_CYCLES` (:data:`FILL_BLOCK_CYCLES` while
        the table fills) and calling ``on_cycle(done)`` after each."""
        if cycles < self.cycles:
            raise ValueError(f"the run has passed cycle {cycles}")
        while self.cycles < cycles:
            most = BLOCK_CYCLES if self.table.is_complete else FILL_BLOCK_CYCLES
            self.block(min(most, cycles - self.cycles))
            if on_cycle is not None:
                on_cycle(self.cycles)
        return dict(self.counts)

    def block(self, cycles: int) -> dict:
        """The counters after each of the next ``cycles`` cycles (:func:`block_counters`)."""
        columns = block_counters(self.run(cycles), self.counts)
        self.counts = {name: int(column[-1]) for name, column in columns.items()}
        return columns

    def run(self, cycles: int) -> np.ndarray:
        """The table entries of the next ``cycles`` cycles (uint32)."""
        look, miss = self._lookup()
        code = self.code
        codes: list[int] = []
        if self.streams.static:      # one pattern, every cycle
            look[code] or miss(code)
            codes = [code] * cycles
        elif self.streams.gapless:   # every acknowledged terminal offers again at once
            append, steps_of = codes.append, self.steps_of
            for _ in range(cycles):
                append(code)
                for step in steps_of[(look[code] or miss(code)) & 0xFFFF]:
                    code += step()
        else:
            code = self._run_with_gaps(cycles, code, look, miss, codes.append)
        self.code = code
        self.cycles += cycles
        return self.table.entries[np.array(codes, dtype=np.int64)]

    def _lookup(self) -> tuple:
        """``(look, miss)``: ``look[code] or miss(code)`` is a pattern's acknowledged
        mask in its low 16 bits. On a complete table ``look`` is the masks alone
        (:attr:`masks`, a fraction of the entries' memory, so more of it stays in the
        processor's caches; a mask of 0 is no miss); while it fills, the entries (0: not
        filled) and the filling."""
        if not self.table.is_complete:
            entry = self.table.entry
            return self.table.lookup, entry
        if self.masks is None:
            kind = np.uint8 if self.terminals <= 8 else np.uint16
            self.masks = memoryview((self.table.entries & 0xFFFF).astype(kind))  # type: ignore[arg-type]
        return self.masks, _no_mask

    def _run_with_gaps(self, cycles: int, code: int, look, miss, append) -> int:
        """:meth:`run`'s loop where offers come after gaps: the code at the end."""
        bits_of, step, gap, arrive, wake = (self.bits_of, self.streams.step, self.streams.gap,
                                            self.streams.arrive, self.wake)
        for c in range(self.cycles, self.cycles + cycles):
            if wake:
                woken = wake.pop(c, None)
                if woken is not None:
                    for s in woken:
                        code += arrive[s]()
            append(code)
            for s in bits_of[(look[code] or miss(code)) & 0xFFFF]:
                code += step[s]()
                g = gap[s]()
                if g:
                    at = wake.get(c + 1 + g)
                    if at is None:
                        wake[c + 1 + g] = [s]
                    else:
                        at.append(s)
        return code


def _no_mask(code: int) -> int:
    """A mask of 0 in :meth:`TableRun._lookup`'s complete table: nothing acknowledged."""
    return 0


def block_counters(entries: np.ndarray, counts: dict) -> dict:
    """The counters (:data:`fatnet.golden.bist.COUNTERS`) after each cycle of a block of
    table ``entries``, from ``counts`` before the block: one int64 array per counter."""
    e = entries.astype(np.int64)
    sent = (e >> _SENT) & _FIELD
    acked = _POPCOUNT[e & 0xFFFF]
    delivered = (e >> _DELIVERED) & _FIELD
    bad = (e >> _BAD) & _FIELD
    acked_sum = counts["acknowledged"] + np.cumsum(acked)
    before = np.concatenate(([counts["acknowledged"]], acked_sum[:-1]))
    return {"cycles": counts["cycles"] + np.arange(1, e.size + 1),
            "offered": sent + before,
            "sent": counts["sent"] + np.cumsum(sent),
            "delivered": counts["delivered"] + np.cumsum(delivered),
            "acknowledged": acked_sum,
            "lost": counts["lost"] + np.cumsum(sent - acked),
            "errors": counts["errors"] + np.cumsum(bad + np.abs(acked - delivered))}
