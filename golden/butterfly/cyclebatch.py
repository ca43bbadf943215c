"""The cycle-exact circuit model of a splitter network, batched in numpy.

:func:`fatnet.golden.butterfly.cyclemodel.simulate_cycle` runs one delivery cycle
through the family-agnostic claim engine (:func:`fatnet.golden.cycle.run_cycle`), one
Python event per claim; it is the specification. This module computes the same
outcomes a level at a time for every message of one or many cycles at once, with a
few array operations per level, and builds the engine's own results from them
(:class:`~fatnet.golden.cycle.CycleResult`, :class:`~fatnet.golden.runner.RunReport`)
where a caller wants them. The tests compare both message for message, wire for wire
and bit-time for bit-time.

Why a level at a time is exact
------------------------------
* Every stream's M bit reaches level ``i`` at the same bit-time ``T_i`` (every
  switch of a level reads the same field width; links into levels ``1 .. depth - 1``
  all have ``link_stages`` registers), so the claims of one level happen together,
  after every claim of the level before. At one switch and direction they are served
  by input wire (the in-edge order), the ``r``-th taking the ``r``-th free usable edge
  of the direction in slot order; a stream with no free edge is lost there.
* A wire stuck at 1 feeds its switch a phantom whose M bit is there at the link's
  ``s`` bit-times, earlier than any message's (``T_i > s`` from level 1 on) at every
  level it reaches: the phantoms claim before the messages and never depend on them.
  Their run is the scalar engine's run of a cycle without messages, done once per
  network; the edges they claim are taken for every message.
* A message routed onto a stuck wire is lost there (its edge stays claimed); on a wire
  stuck at 1 it is acknowledged through the phantom, as the engine's rule says.

Memory: a cycle batch holds a few ``int64`` arrays of ``messages x (depth + 1)``;
:data:`MAX_BATCH_MESSAGES` bounds what one call of :func:`run_cycles` holds
(:func:`run_cycles_streamed` splits larger work).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..allocator import keep_freed_memory
from ..bitstream import bits_array
from ..cycle import CycleResult, Occupancy, Outcome, TerminalWaves, run_cycle
from ..errors import ParameterError
from ..messages import MessageSet
from ..runner import ChannelUsage, RunReport, SourceQueues, check_max_cycles

__all__ = ["MAX_BATCH_MESSAGES", "BatchedCircuit", "CycleArrays", "run_cycles",
           "run_cycles_streamed", "run_online", "encode_streams", "terminal_waves"]

#: Messages one :func:`run_cycles` call holds at most (about 100 bytes of arrays each
#: per level: 2^20 messages of a 1024-input network take well under 1 GiB).
MAX_BATCH_MESSAGES = 1 << 20

#: Cycles between two reports to a progress callback.
PROGRESS_CYCLES = 256

#: Status codes of :class:`CycleArrays`.
DELIVERED, LOST_CLAIM, LOST_STUCK = 0, 1, 2


@dataclass
class CycleArrays:
    """The outcomes of a batch of messages, one entry per message.

    Attributes
    ----------
    status : (M,) int
        :data:`DELIVERED`, :data:`LOST_CLAIM` (no free edge at ``rows[hops]``) or
        :data:`LOST_STUCK` (routed onto a stuck wire, the last of its path).
    hops : (M,) int
        Hops taken: the path has ``hops + 1`` wires.
    rows, wires : (M, depth + 1) int
        The channel ``(level, rows[:, level])`` and wire of every level reached.
    groups : (M, depth) int
        The direction (group) asked for at every level.
    ack_time : (M,) int
        Bit-time the source's acknowledgment rises, -1 for never.
    """

    status: np.ndarray
    hops: np.ndarray
    rows: np.ndarray
    wires: np.ndarray
    groups: np.ndarray
    ack_time: np.ndarray


class BatchedCircuit:
    """A :class:`~fatnet.golden.butterfly.cyclemodel.CircuitNetwork`'s arrays for
    :func:`run_cycles`: edges, usable edges, timing, stuck wires and the phantoms'
    run (module docstring)."""

    def __init__(self, circuit):
        from .cyclemodel import SplitterFabric
        net = circuit.network
        self.circuit = circuit
        self.depth, self.inputs = circuit.depth, circuit.n_inputs
        self.heads = net.heads.astype(np.int64)
        self.rank = circuit.rank.astype(np.int64)
        self.shift = net.group_shift.astype(np.int64)
        self.mask = net.group_mask.astype(np.int64)
        self.per_group = net.edges_per_group.astype(np.int64)
        self.n_groups = int(self.mask.max()) + 1
        self.fabric = SplitterFabric(circuit)
        self._timing(circuit)
        target = np.maximum(self.heads, 0)
        level_next = np.arange(1, self.depth + 1)[:, None, None]
        self.usable = (self.heads >= 0) & ~circuit.blocked[level_next, target]
        self.phantom_run = run_cycle(self.fabric, circuit.cycle_length, {}, {})
        self._stuck_arrays()
        self._phantom_claims()

    def _timing(self, circuit) -> None:
        """Bit-time ``T`` of M at every level, the stream offset there, the registers
        of every hop on the way back and each level's link delay."""
        depth = self.depth
        self.delay = np.array([self.fabric.link_delay((i, 0)) for i in range(depth + 1)])
        widths = np.array(circuit.field_widths, dtype=np.int64)
        self.widths = widths
        self.time = np.zeros(depth + 1, dtype=np.int64)
        self.offset = np.zeros(depth + 1, dtype=np.int64)
        self.time[1:] = np.cumsum(widths + 1 + self.delay[1:])
        self.offset[1:] = np.cumsum(widths)
        self.hop_registers = 1 + self.delay[1:]          # registers(=1) + the link's

    def _stuck_arrays(self) -> None:
        """``stuck[level, row, wire]``: -1, or the value the wire is stuck at."""
        wires = int(self.circuit.in_degree.max())
        self.stuck = np.full((self.depth + 1, self.inputs, max(wires, 1)), -1, dtype=np.int64)
        for (level, row, wire), value in self.fabric.stuck_wires.items():
            self.stuck[level, row, wire] = value
        self.phantom_ack = np.full(self.stuck.shape, -1, dtype=np.int64)
        for o in self.phantom_run.phantoms.values():
            occ = o.path[0]
            if o.ack_time is not None:
                self.phantom_ack[occ.channel[0], occ.channel[1], occ.wire] = o.ack_time

    def _phantom_claims(self) -> None:
        """The edges the phantoms claim are not free for any message."""
        for o in self.phantom_run.phantoms.values():
            for before, occ in zip(o.path, o.path[1:]):
                level, row = before.channel
                slot = np.flatnonzero((self.heads[level, row] == occ.channel[1])
                                      & (self.rank[level, row] == occ.wire))
                self.usable[level, row, slot] = False


def _rank_in_group(group: np.ndarray, within: np.ndarray, width: int) -> np.ndarray:
    """Each element's place (0, 1, ...) among the elements of its ``group``, by
    ``within`` (distinct in a group, in ``[0, width)``)."""
    key = group * width + within
    order = np.argsort(key, kind="stable")
    group = group[order]
    index = np.arange(key.size)
    starts = np.ones(key.size, dtype=bool)
    np.not_equal(group[1:], group[:-1], out=starts[1:])
    place = np.empty(key.size, dtype=np.int64)
    place[order] = index - np.maximum.accumulate(np.where(starts, index, 0))
    return place


def run_cycles(bc: BatchedCircuit, cycle: np.ndarray, src: np.ndarray,
               dst: np.ndarray) -> CycleArrays:
    """Every message of many delivery cycles of one network, a level at a time.

    Parameters
    ----------
    bc : BatchedCircuit
    cycle, src, dst : (M,) int arrays
        The cycle (any labels: messages of different cycles never meet), input and
        output of every message; at most one message per (cycle, input).
    """
    m = src.size
    if m > MAX_BATCH_MESSAGES:
        raise ParameterError(f"messages of one batch must be at most {MAX_BATCH_MESSAGES}, "
                             f"got {m} (run_cycles_streamed splits them)")
    depth = bc.depth
    rows = np.zeros((m, depth + 1), dtype=np.int64)
    wires = np.zeros((m, depth + 1), dtype=np.int64)
    groups = np.zeros((m, depth), dtype=np.int64)
    status = np.full(m, DELIVERED, dtype=np.int64)
    hops = np.full(m, depth, dtype=np.int64)
    ack = np.full(m, -1, dtype=np.int64)
    rows[:, 0] = src
    # the cycle labels numbered 0, 1, ...: the (cycle, row, group) numbers stay small
    cyc = (np.unique(cycle, return_inverse=True)[1] if m and cycle.min() != cycle.max()
           else np.zeros(m, dtype=np.int64))
    if np.unique(cyc * bc.inputs + src).size != m:
        raise ParameterError("an input sends at most one message in a cycle (an input "
                             "has one wire)")
    alive = np.arange(m)
    for i in range(depth):
        alive = _claim_level(bc, i, alive, cyc, dst, rows, wires, groups, status, hops)
        alive = _stuck_level(bc, i + 1, alive, rows, wires, status, hops, ack)
    ack[alive] = bc.time[depth] + bc.hop_registers.sum()
    return CycleArrays(status, hops, rows, wires, groups, ack)


def _claim_level(bc, i, alive, cyc, dst, rows, wires, groups, status, hops) -> np.ndarray:
    """The claims of level ``i``: who gets which edge, who is lost; the survivors."""
    row = rows[alive, i]
    g = (dst[alive] >> bc.shift[i]) & bc.mask[i]
    groups[alive, i] = g
    d = int(bc.per_group[i])
    if i == 0:     # one message per (cycle, input): each is alone at its switch
        place = np.zeros(alive.size, dtype=np.int64)
    else:
        queue = (cyc[alive] * bc.inputs + row) * bc.n_groups + g
        place = _rank_in_group(queue, wires[alive, i], bc.stuck.shape[2])
    chosen = np.full(alive.size, -1, dtype=np.int64)
    running = np.zeros(alive.size, dtype=np.int64)
    for j in range(d):
        slot = g * d + j
        ok = bc.usable[i, row, slot]
        running += ok
        take = ok & (running == place + 1)
        chosen[take] = slot[take]
    won = chosen >= 0
    lost = alive[~won]
    status[lost], hops[lost] = LOST_CLAIM, i
    alive, chosen, row = alive[won], chosen[won], row[won]
    rows[alive, i + 1] = bc.heads[i, row, chosen]
    wires[alive, i + 1] = bc.rank[i, row, chosen]
    return alive


def _stuck_level(bc, level, alive, rows, wires, status, hops, ack) -> np.ndarray:
    """Streams routed onto a stuck wire into ``level`` are lost there; on a wire stuck
    at 1 they are acknowledged through its phantom. The survivors."""
    if level == bc.depth or alive.size == 0:
        return alive
    row, wire = rows[alive, level], wires[alive, level]
    value = bc.stuck[level, row, wire]
    hit = value >= 0
    if not hit.any():
        return alive
    lost = alive[hit]
    status[lost], hops[lost] = LOST_STUCK, level
    phantom = bc.phantom_ack[level, row[hit], wire[hit]]
    s = int(bc.delay[level])
    through = (value[hit] == 1) & (phantom >= 0)
    t = int(bc.time[level])
    registers = int(bc.hop_registers[:level].sum())
    ack[lost[through]] = np.maximum(phantom[through] + s, t - s) - s + registers
    return alive[~hit]


def run_cycles_streamed(bc: BatchedCircuit, cycle, src, dst,
                        batch: int = MAX_BATCH_MESSAGES) -> CycleArrays:
    """:func:`run_cycles` over any number of messages, about ``batch`` at a time (whole
    cycles per batch, one cycle alone where it is larger: ``cycle`` must be sorted),
    the arrays concatenated."""
    cycle, src, dst = (np.asarray(a, dtype=np.int64) for a in (cycle, src, dst))
    keep_freed_memory()   # each batch's arrays reuse the last one's memory
    if cycle.size and np.any(np.diff(cycle) < 0):
        raise ParameterError("cycle must be sorted (whole cycles go into one batch)")
    parts = []
    start = 0
    while start < cycle.size:
        stop = min(cycle.size, start + batch)
        if stop < cycle.size and cycle[stop] == cycle[stop - 1]:   # a cycle cut in two:
            back = int(np.searchsorted(cycle, cycle[stop], "left"))   # leave it out,
            stop = back if back > start else int(np.searchsorted(cycle, cycle[stop], "right"))
        parts.append(run_cycles(bc, cycle[start:stop], src[start:stop], dst[start:stop]))
        start = stop
    if not parts:
        return run_cycles(bc, cycle, src, dst)
    return CycleArrays(*(np.concatenate([getattr(p, f) for p in parts])
                         for f in ("status", "hops", "rows", "wires", "groups", "ack_time")))


# ---------------------------------------------------------------------- waves
def encode_streams(circuit, dst: np.ndarray, payload) -> np.ndarray:
    """Every message's stream (:meth:`~.cyclemodel.CircuitNetwork.encode`) as the rows
    of a uint8 array: the M bit, each level's group field MSB first, the payload."""
    dst = np.asarray(dst, dtype=np.int64)
    net = circuit.network
    if dst.size and (dst.min() < 0 or dst.max() >= circuit.n_inputs):
        raise ParameterError(f"destination must be an output in [0, "
                             f"{circuit.n_inputs - 1}]")
    fields = [bits_array((dst >> int(net.group_shift[i])) & int(net.group_mask[i]), w)
              for i, w in enumerate(circuit.field_widths)]
    ones = np.ones((dst.size, 1), dtype=np.int64)
    return np.concatenate([ones, *fields, bits_array(payload, circuit.payload_bits)],
                          axis=1).astype(np.uint8)


def terminal_waves(bc: BatchedCircuit, cycle, src, dst, payload) -> TerminalWaves:
    """Every terminal wire of many independent delivery cycles of one network, in bulk
    (:class:`~fatnet.golden.cycle.TerminalWaves`; cycles numbered in the order of their
    labels): the sources' injections and acknowledgments, the outputs' delivery wires
    (the phantoms of wires stuck at 1 included), which messages were delivered.
    ``cycle``, ``src``, ``dst``: as :func:`run_cycles`; ``payload``: every message's
    payload. Memory: ``length x inputs`` bytes per cycle and wire, besides
    :func:`run_cycles_streamed`'s."""
    cycle, src, dst = (np.asarray(a, dtype=np.int64) for a in (cycle, src, dst))
    labels, cyc = np.unique(cycle, return_inverse=True)
    order = np.argsort(cyc, kind="stable")
    cyc, src, dst = cyc[order], src[order], dst[order]
    wide = bc.circuit.payload_bits > 62     # beyond int64: Python integers
    streams = encode_streams(bc.circuit, dst, np.asarray(
        payload, dtype=object if wide else np.int64).reshape(-1)[order])
    arrays = run_cycles_streamed(bc, cyc, src, dst)
    T, n, C = bc.circuit.cycle_length, bc.inputs, labels.size
    drive = np.zeros((C, T, n, 1), dtype=np.uint8)
    length = min(streams.shape[1], T)
    drive[cyc[:, None], np.arange(length), src[:, None], 0] = streams[:, :length]
    ack = np.zeros_like(drive)
    heard = np.flatnonzero(arrays.ack_time >= 0)
    ack[cyc[heard], :, src[heard], 0] = np.arange(T) >= arrays.ack_time[heard, None]
    recv = _delivered_waves(bc, C, cyc, dst, streams, arrays)
    delivered = np.empty(order.size, dtype=bool)
    delivered[order] = arrays.status == DELIVERED
    return TerminalWaves(drive, recv, ack, (0,), (bc.depth,), delivered)


def _delivered_waves(bc: BatchedCircuit, cycles: int, cyc, dst, streams,
                     arrays: CycleArrays) -> np.ndarray:
    """The outputs' delivery wires: each delivered stream from the last level's M bit
    on (a fresh M bit, then what the switches left of it), over the phantoms' waves."""
    depth, T = bc.depth, bc.circuit.cycle_length
    wires = max(1, int(bc.circuit.in_degree[depth].max()))
    recv = np.zeros((cycles, T, bc.inputs, wires), dtype=np.uint8)
    for (level, row, wire), wave in bc.phantom_run.waveforms().items():
        if level == depth:
            recv[:, :, row, wire] = wave
    done = np.flatnonzero(arrays.status == DELIVERED)
    start, first = int(bc.time[depth]), int(bc.offset[depth])
    length = max(0, min(streams.shape[1] - first, T - start))
    wave = streams[done, first:first + length].copy()
    wave[:, :1] = 1
    recv[cyc[done, None], start + np.arange(length), dst[done, None],
         arrays.wires[done, depth, None]] = wave
    return recv


# ---------------------------------------------------------------------- results
def cycle_result(bc: BatchedCircuit, ms: MessageSet, idx: np.ndarray, arrays: CycleArrays,
                 at: np.ndarray) -> CycleResult:
    """The engine's :class:`CycleResult` of one cycle: messages ``idx`` (sorted), whose
    outcomes are entries ``at`` of ``arrays``."""
    c = bc.circuit
    outcomes: dict = {}
    injections: dict = {}
    for m, k in zip(idx.tolist(), at.tolist()):
        s, d = int(ms.src[m]), int(ms.dst[m])
        stream = c.encode(d, ms.payload[m])
        injections[m] = (0, stream)
        outcomes[m] = _outcome(bc, arrays, k, m, s, d, list(stream))
    return CycleResult(c.cycle_length, outcomes, injections, dict(bc.fabric.stuck_wires),
                       copy.deepcopy(bc.phantom_run.phantoms))


def _outcome(bc: BatchedCircuit, arrays: CycleArrays, k: int, m: int, s: int, d: int,
             stream: list) -> Outcome:
    """One message's :class:`Outcome`, as the engine records it."""
    hops = int(arrays.hops[k])
    status = int(arrays.status[k])
    rows, wires = arrays.rows[k].tolist(), arrays.wires[k].tolist()
    path = [Occupancy((level, rows[level]), wires[level], int(bc.time[level]),
                      int(bc.offset[level])) for level in range(hops + 1)]
    ack = int(arrays.ack_time[k])
    o = Outcome(m, s, d, "lost", stream, path,
                [int(r) for r in bc.hop_registers[:hops]],
                ack_time=None if ack < 0 else ack)
    if status == DELIVERED:
        o.status, o.arrival = "delivered", int(bc.time[hops])
    elif status == LOST_CLAIM:
        g = int(arrays.groups[k, hops])
        o.lost_at = ((hops, rows[hops]), bc.fabric.port_name(g), 0,
                     "every output of its input is taken")
    else:
        value = int(bc.stuck[hops, rows[hops], wires[hops]])
        o.lost_at = ((hops, rows[hops]), f"input wire {wires[hops]}", -1,
                     f"its wire is stuck at {value}")
    return o


# ---------------------------------------------------------------------- on-line
def _valid(circuit, ms: MessageSet) -> bool:
    """Whether every message names an input and an output (else the scalar engine runs,
    to fail exactly where and as it does)."""
    n = circuit.n_inputs
    return bool(len(ms) == 0 or (ms.src.min() >= 0 and ms.src.max() < n
                                 and ms.dst.min() >= 0 and ms.dst.max() < n))


def run_online(circuit, ms: MessageSet, keep_results: bool = False, max_cycles: int = 1000,
               masks=None, progress=None) -> RunReport | None:
    """:func:`~fatnet.golden.butterfly.cyclemodel.run_circuit` (``masks``:
    :func:`~fatnet.golden.butterfly.cyclemodel.run_masked`) on the batched engine: the
    same report. Each cycle every input sends its oldest undelivered message; the
    cycles follow one another (a cycle's losses are the next one's retries), each one
    a batch of its messages. Returns None for messages the scalar engine refuses.
    ``progress(done, total, what)``, if given, is told the messages delivered every
    :data:`PROGRESS_CYCLES` cycles."""
    from .cyclemodel import masked_network
    max_cycles = check_max_cycles(max_cycles)
    if not _valid(circuit, ms):
        return None
    if masks is None:
        engines = [BatchedCircuit(circuit)]
    else:
        engines = [BatchedCircuit(masked_network(circuit, mk)) for mk in masks]
    report = RunReport("online", len(ms), cycle_length=circuit.cycle_length)
    usage = ChannelUsage(lambda channel: channel[0], circuit.in_degree.sum(axis=1))
    queue = SourceQueues(ms)
    sent = np.zeros(len(ms), dtype=bool)
    used_masks: list = []
    while queue.any() and report.cycles < max_cycles:
        c = min(report.cycles, len(engines) - 1)
        if masks is not None:
            used_masks.append(masks[min(report.cycles, len(masks) - 1)])
        idx = queue.fronts()
        arrays = run_cycles(engines[c], np.zeros(idx.size, dtype=np.int64), ms.src[idx],
                            ms.dst[idx])
        delivered = arrays.status == DELIVERED
        _account(report, usage, arrays, idx, delivered)
        if keep_results:
            report.results.append(cycle_result(engines[c], ms, idx, arrays,
                                               np.arange(idx.size)))
        report.retries += int(sent[idx].sum())
        sent[idx] = True
        queue.pop(idx[delivered])
        if progress is not None and report.cycles % PROGRESS_CYCLES == 0:
            progress(report.delivered, len(ms), "circuit model")
    report.lost += queue.left(max_cycles)
    report.utilisation = usage.fractions(report.cycles)
    if masks is not None:
        report.masks = used_masks
    return report


def _account(report: RunReport, usage: ChannelUsage, arrays: CycleArrays, idx,
             delivered) -> None:
    """A cycle's counts in the report: delivered, lost, wire-cycles per level."""
    report.cycles += 1
    report.losses_per_cycle.append(int(idx.size - delivered.sum()))
    report.delivered += int(delivered.sum())
    # a path holds one wire of every level up to its last hop's
    reached = np.bincount(arrays.hops, minlength=usage.used.size)
    usage.used += reached[::-1].cumsum()[::-1]
