"""The self-test prediction's outcome table: every injection pattern's cycle, computed in
bulk and looked up.

Where the batched prediction (:func:`fatnet.sim.bist.run_counters`) may remember
injection patterns (no stuck link, not the flipped bit's cycle), a cycle's counts and
acknowledged terminals depend only on its pattern: which terminals wait, and for which
destination. Terminal ``s``'s slot takes one of a few values (its destinations, and
idle where it can be idle: a load below 1, or no destination at all), so a pattern is
a mixed-radix number, its *code* (:class:`PatternSpace`; terminal 0 the lowest digit).
With random destinations among 8 terminals that is 7^8 = 5.8 million patterns at load 1,
8^8 = 2^24 below it.

:class:`OutcomeTable` holds one ``uint32`` per pattern (:data:`MAX_ENTRIES` at most:
64 MiB), the cycle as the top sees it (:func:`pattern_entries`): the acknowledged
terminals (a bit mask), the messages sent, delivered and failing their check, and a
bit that says the entry is filled. Entries are computed many patterns at once: each
pattern is one independent cycle of a batch through the family's batched model
(:func:`fatnet.sim.family.run_cycle_batch`; a family without one runs them one by one
through its model, the same outcomes), a block of :data:`BLOCK_ENTRIES` patterns
sharing their high digits at each miss of the prediction (which costs no more than the
whole table up front, :meth:`OutcomeTable.complete`, with random destinations at load
1, where the first reports meet nearly every block, and far less at a light load, where
they meet a tenth of it). The table is kept on disk
(:func:`cache_path`), keyed by everything that determines it (:func:`cache_key`):
written atomically, checked when read (a corrupt or stale file is said and computed
again).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zlib
from pathlib import Path

import numpy as np

from ..golden.cycle import stuck_wires
from .family import has_cycle_batches, run_cycle_batch

__all__ = ["TABLE_VERSION", "MAX_ENTRIES", "MAX_TERMINALS", "BLOCK_ENTRIES", "TABLE_MODES",
           "PatternSpace", "pattern_space", "pattern_code", "OutcomeTable", "pattern_entries",
           "decode_entry", "cache_dir", "cache_key", "cache_path", "open_table", "kept"]

#: The table's format and computation; a new version never reads an old file.
TABLE_VERSION = 1
#: Patterns a table holds at most (4 bytes each: 64 MiB); a larger space is not tabled.
MAX_ENTRIES = 1 << 24
#: Terminals a table serves at most (the acknowledged mask's bits).
MAX_TERMINALS = 16
#: Patterns computed together, on a family with a batched model: a block of the lowest
#: digits, on a miss and a call of the model at a time up front (a family without one
#: computes a missing pattern alone). The butterfly's batched model computes about
#: 300,000 patterns a second in blocks of 1,000 to 4,000, a third of that in blocks of
#: 77,000 (its arrays outgrow the processor's caches).
BLOCK_ENTRIES = 1 << 12
#: A table filling as the prediction meets patterns is first kept on disk when this
#: fraction of it is filled (1/64), then each time it has doubled.
SAVE_FRACTION = 64
#: When :func:`fatnet.sim.bist.run_counters` uses a table: ``off`` never, ``cached``
#: when one is kept on disk (or open in this process), ``fill`` always (filled as the
#: prediction meets its patterns where it is not kept whole).
TABLE_MODES = ("off", "cached", "fill")

#: An entry's fields: acknowledged mask (bits 0-15), delivered (16-20), bad (21-25),
#: sent (26-30), filled (31).
FILLED = 1 << 31
_DELIVERED, _BAD, _SENT, _FIELD = 16, 21, 26, 31


class PatternSpace:
    """The injection patterns of a plan as mixed-radix codes.

    Parameters
    ----------
    values : list of list of int
        Per terminal, the values its slot takes: destinations, -1 for idle.
    """

    def __init__(self, values: list[list[int]]):
        self.values = values
        N = len(values)
        self.radix = [len(v) for v in values]
        self.weights = [int(np.prod(self.radix[:s], dtype=np.int64)) for s in range(N)]
        self.size = int(np.prod(self.radix, dtype=np.int64))
        # place[s][d]: what terminal s waiting for d adds to the code; index -1 (that
        # is, N) is idle, so ``place[s][dests[s]]`` takes the -1 of an idle slot as is
        self.place = []
        for s, vals in enumerate(values):
            row = [0] * (N + 1)
            for i, v in enumerate(vals):
                row[v] = i * self.weights[s]
            self.place.append(row)

    def code(self, dests) -> int:
        """The code of a pattern (``dests[s]``, -1 for idle)."""
        return pattern_code(self.place, dests)

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """The patterns of ``codes``: a (len(codes), N) array, -1 for idle."""
        out = np.empty((codes.size, len(self.values)), dtype=np.int64)
        for s, vals in enumerate(self.values):
            digit = (codes // self.weights[s]) % self.radix[s]
            out[:, s] = np.asarray(vals, dtype=np.int64)[digit]
        return out

    def block_size(self, most: int) -> int:
        """The patterns sharing every digit but the lowest few, at most ``most`` (and
        at least 1)."""
        size = 1
        for r in self.radix:
            if size * r > most:
                break
            size *= r
        return size


def pattern_code(place: list, dests) -> int:
    """The code of a pattern (``dests[s]``, -1 for idle) by :attr:`PatternSpace.place`."""
    return sum(place[s][d] for s, d in enumerate(dests))


def pattern_space(plan) -> PatternSpace | None:
    """The plan's pattern space, or None where a table does not serve it: more than
    :data:`MAX_TERMINALS` terminals, or more than :data:`MAX_ENTRIES` patterns."""
    from ..golden import bist as gb
    N, n = plan.terminals, plan.n
    if N > MAX_TERMINALS:
        return None
    fixed = gb.FIXED_PATTERNS.get(plan.pattern)
    values = []
    for s in range(N):
        dests = [d for d in range(N) if d != s] if fixed is None else \
            [d for d in (fixed(s, n),) if d != s]
        if plan.threshold == 0:
            dests = []
        # a terminal offers at every draw at load 1: it is never idle
        idle = [-1] if plan.threshold < gb.ALWAYS_OFFERS or not dests else []
        values.append(idle + dests)
    space = PatternSpace(values)
    return space if space.size <= MAX_ENTRIES else None


def pattern_entries(plan, view, dests: np.ndarray) -> np.ndarray:
    """The filled entries of the patterns ``dests`` ((B, N), -1 for idle), each one
    cycle of a batch through the family's model, as the top sees it (the rules of
    :func:`fatnet.sim.bist.run_counters` where no link is stuck: a delivered payload is
    the one sent and passes its check). ``view``: the plan's
    :class:`fatnet.sim.bist._StuckView`."""
    B, N = dests.shape
    f = plan.stuck_wire
    waiting = dests >= 0
    into = waiting.copy()
    if view.silent is not None:        # send data stuck at 0: its message never enters
        into[:, view.silent] = False
    b, s = np.nonzero(into)            # row-major: the cycles (patterns) sorted
    d = dests[b, s]
    res = run_cycle_batch(plan.family, plan.net, b, s, d)
    delivered = np.asarray(res.delivered, dtype=bool)
    at_stuck = np.zeros(b.size, dtype=bool)
    if view.stuck_recv is not None:   # delivered on the stuck terminal's wire 0
        at_stuck = delivered & (d == f.terminal) & (np.asarray(res.recv_wire) == 0)
    checked = delivered & ~(at_stuck & (f is not None and f.signal == "data"))
    ack_time = np.asarray(res.ack_time)
    ack = (ack_time >= 0) & (ack_time < plan.cycle_length)
    if f is not None and f.value == 0 and view.passes_ack:
        ack &= ~at_stuck
    mask = np.bincount(b[ack], weights=(1 << s[ack]).astype(np.float64),
                       minlength=B).astype(np.int64)
    if f is not None and (f.direction, f.signal) == ("send", "ack"):
        bit = 1 << f.terminal
        mask = np.where(waiting[:, f.terminal], (mask | bit) if f.value else (mask & ~bit),
                        mask)
    good = np.bincount(b[checked], minlength=B)
    bad = np.zeros(B, dtype=np.int64)
    if view.phantom is not None:      # recv data at 1: a payload of ones every cycle
        good, bad = (good + 1, bad) if view.phantom else (good, bad + 1)
    sent = waiting.sum(axis=1)
    return (mask | good << _DELIVERED | bad << _BAD | sent << _SENT | FILLED).astype(np.uint32)


def decode_entry(entry: int, bits_of: list) -> tuple:
    """A filled entry as ``(sent, acknowledged terminals, delivered, bad)``
    (``bits_of[mask]``: the terminals of an acknowledged mask)."""
    return ((entry >> _SENT) & _FIELD, bits_of[entry & 0xFFFF],
            (entry >> _DELIVERED) & _FIELD, (entry >> _BAD) & _FIELD)


def cache_dir() -> Path:
    """Where tables are kept: ``$XDG_CACHE_HOME/fatnet`` (``~/.cache/fatnet``)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "fatnet" / "bist-tables"


def cache_key(plan, space: PatternSpace) -> str:
    """Everything that determines the plan's table, as canonical JSON: the version, the
    network's build parameters (faults, seeds, structure) and the text of the model's
    and the prediction's sources, the pattern space, the stuck wire and the timing."""
    from ..golden import bist as gb
    params = plan.family.testbench.build_params(plan.net)
    text = hashlib.sha256()
    for path in sorted({*params.sources, __file__, gb.__file__,
                        sys.modules[__package__ + ".bist"].__file__}):
        text.update(Path(path).read_bytes())
    key = {"version": TABLE_VERSION, "family": str(plan.net.family),
           "network": params.params, "sources": text.hexdigest(), "values": space.values,
           "stuck_wire": str(plan.stuck_wire), "cycle_length": plan.cycle_length,
           "payload_bits": plan.payload_bits, "prefix": plan.prefix}
    return json.dumps(key, sort_keys=True, default=str)


def cache_path(key: str) -> Path:
    """The file of the table of ``key``."""
    return cache_dir() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.npz"


def _say(text: str) -> None:
    print(f"fatnet: {text}", file=sys.stderr, flush=True)


class OutcomeTable:
    """A plan's table (module docstring): read from disk where kept, filled on a miss a
    block at a time, or all at once by :meth:`complete`.

    Parameters
    ----------
    plan : fatnet.sim.bist.BistPlan
        With no stuck link (the caller checks it).
    view : fatnet.sim.bist._StuckView
        The plan's faults as the prediction sees them.
    space : PatternSpace
        :func:`pattern_space` of the plan.
    key : str or None
        :func:`cache_key` of the plan, where the caller has it.
    """

    def __init__(self, plan, view, space: PatternSpace, key: str | None = None):
        if stuck_wires(plan.net):
            raise ValueError("a network with a stuck link has no outcome table")
        self.plan, self.view, self.space = plan, view, space
        self.batched = has_cycle_batches(plan.family, plan.net)
        self.block = space.block_size(BLOCK_ENTRIES) if self.batched else 1
        self.key = key or cache_key(plan, space)
        self.path = cache_path(self.key)
        kept = self._read() if self.path.exists() else None
        self.entries: np.ndarray = np.zeros(space.size, dtype=np.uint32) if kept is None \
            else kept
        self.filled = int(np.count_nonzero(self.entries))
        self.saved = self.filled
        #: the entries as a memoryview: indexing it gives a Python int, fast
        self.lookup = memoryview(self.entries)   # type: ignore[arg-type]

    @property
    def is_complete(self) -> bool:
        return self.filled == self.space.size

    def entry(self, code: int) -> int:
        """The filled entry of pattern ``code`` (its block computed on a miss)."""
        e = self.lookup[code]
        if not e:
            self._fill(np.arange(code - code % self.block,
                                 min(self.space.size, code - code % self.block + self.block)))
            e = self.lookup[code]
        return e

    def complete(self, progress=None) -> None:
        """Fill every entry left, a block per call of the model, and keep the table on
        disk; ``progress(done, total, what)`` on the way (patterns)."""
        size = self.space.size
        what = f"the self-test's outcome table ({size:,} patterns)"
        for start in range(0, size, self.block):
            if progress is not None and start % (64 * self.block) == 0:
                progress(self.filled, size, what)
            block = np.arange(start, min(size, start + self.block))
            todo = block[self.entries[block] == 0]
            if todo.size:
                self._fill(todo, save=False)
        if progress is not None:
            progress(self.filled, size, what)
        self.save()

    def _fill(self, codes: np.ndarray, save: bool = True) -> None:
        """Compute the entries of ``codes``; keep the table on disk each time it has
        doubled since it was last kept, from :data:`SAVE_FRACTION` of it on (each
        write is the whole table: the cost stays a fraction of the computing)."""
        self.entries[codes] = pattern_entries(self.plan, self.view, self.space.decode(codes))
        self.filled += codes.size
        if save and (self.is_complete or (self.filled >= 2 * self.saved and
                                          self.filled * SAVE_FRACTION >= self.space.size)):
            self.save()

    def save(self) -> None:
        """Write the table to :attr:`path` atomically (a temporary file renamed)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        meta = json.dumps({"key": self.key, "crc32": zlib.crc32(self.entries.tobytes())})
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        try:
            np.savez(tmp, entries=self.entries, meta=np.array(meta))
            os.replace(tmp, self.path)
        except OSError as e:   # a cache that cannot be written costs time, not results
            _say(f"cannot keep the self-test's outcome table in {self.path}: {e}")
            tmp.unlink(missing_ok=True)
            return
        self.saved = self.filled

    def _read(self) -> np.ndarray | None:
        """The kept table, or None (said on stderr) when the file is corrupt or stale."""
        try:
            with np.load(self.path, allow_pickle=False) as z:
                meta = json.loads(str(z["meta"]))
                entries = np.array(z["entries"])
            stale = meta.get("key") != self.key
            intact = entries.dtype == np.uint32 and entries.shape == (self.space.size,) \
                and meta.get("crc32") == zlib.crc32(entries.tobytes())
        except Exception as e:   # any unreadable file is computed again  # noqa: BLE001
            _say(f"the self-test's outcome table {self.path} is corrupt ({e}): "
                 f"computing it again")
            return None
        if stale or not intact:
            _say(f"the self-test's outcome table {self.path} is "
                 f"{'stale' if stale else 'corrupt'}: computing it again")
            return None
        return entries


#: The table opened last in this process, by key (a board reset restarts the
#: prediction, which then finds it here even where the disk cannot keep it).
_OPEN: dict[str, OutcomeTable] = {}


def open_table(plan, view, space: PatternSpace, key: str | None = None) -> OutcomeTable:
    """The plan's table: the one this process opened last if it is the plan's, else
    :class:`OutcomeTable` (read from disk where kept)."""
    key = key or cache_key(plan, space)
    table = _OPEN.get(key)
    if table is None:
        _OPEN.clear()
        table = _OPEN[key] = OutcomeTable(plan, view, space, key)
    return table


def kept(plan, space: PatternSpace) -> bool:
    """Whether the plan's table is open in this process or kept on disk."""
    key = cache_key(plan, space)
    return key in _OPEN or cache_path(key).exists()
