"""The hypercube's batched cycle engine: Algorithm 1's router chains in numpy.

:meth:`.circuit.HypercubeCircuit.run` on the scalar engine runs every delivery cycle
through the family-agnostic claim engine (:func:`fatnet.golden.cycle.run_cycle` on a
:class:`~fatnet.golden.hypercube.bitserial.RouterChain`), one Python event per claim,
and drives its cycles with :func:`fatnet.golden.runner.drive_online`; that is the
specification. This module computes the same outcomes a rank at a time for every
message of one or many cycles at once, and builds the engine's own results from them
(:class:`~fatnet.golden.cycle.CycleResult`, :class:`~fatnet.golden.runner.RunReport`)
where a caller wants them. The tests compare both message for message, wire for wire
and bit-time for bit-time.

Why a rank at a time is exact
-----------------------------
* A message's route does not depend on the others: after rank ``r`` it is at its
  source with the bits ``dims[0 .. r]`` replaced by its destination's
  (:func:`chain_nodes`, computed once for every message).
* Every stream's M bit reaches rank ``r`` at bit-time ``2r`` and every claim of rank
  ``r`` happens at ``2r + 1``, after every claim of rank ``r - 1``. At most two streams
  claim one register (node ``y``'s rank-``r + 1`` input): the one from ``y`` and the one
  from ``y``'s neighbour across ``dims[r]``, and the scalar engine serves the one from
  the node whose bit ``dims[r]`` is 0 (in_port 0) first: the other is lost there.
* The chain has no link stage; a message is delivered at ``2f`` (``f`` ranks) and
  acknowledged ``f`` registers later, at ``3f``.
* Stuck wires (Algorithm 1's ``--stuck-link``, channels of ranks ``1 .. f - 1``;
  :mod:`fatnet.golden.cycle` says what they do): a stream whose M bit reaches a stuck
  wire at rank ``r`` is lost there, before rank ``r``'s claims. A wire stuck at 1
  feeds its router a phantom whose M bit is there at bit-time 0, so a phantom from
  rank ``r0`` claims at rank ``j`` in bit-time ``2(j - r0) + 1``, before every message
  (``2j + 1``), and the phantoms do the same in every cycle whatever the messages do:
  they are one cycle with no message on the scalar engine, run once per chain
  (:class:`StuckChain`), and in every cycle the registers they hold are taken before
  rank ``j``'s claims. A stream lost on a wire stuck at 1 at rank ``r`` is
  acknowledged at ``max(A, 2r) + r`` (A: that wire's phantom's acknowledgment, if it
  has one), as the engine's rule says with no link registers.

Memory: a batch holds a few ``int64`` arrays of ``messages x (ranks + 1)``;
:data:`MAX_BATCH_MESSAGES` bounds one :func:`run_cycles` call
(:func:`run_cycles_streamed` splits larger work).

The on-line driver (:func:`run_online`) keeps every source's queue as arrays
(:class:`~fatnet.golden.runner.SourceQueues`). Algorithm 2's, e-cube's and Valiant's
cycles are planned ahead as if every message a cycle injects were delivered and run as
one batch; the first cycle that does not deliver whole runs on the scalar model
(:class:`_PlannedCycles` says why that is exact).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..allocator import keep_freed_memory
from ..bitstream import bits_array
from ..cycle import CycleResult, Occupancy, Outcome, TerminalWaves, run_cycle
from ..errors import ParameterError
from ..messages import MessageSet
from ..runner import ChannelUsage, RunReport, SourceQueues, account_cycle, check_max_cycles

__all__ = ["MAX_BATCH_MESSAGES", "DELIVERED", "LOST", "ChainArrays", "chain_nodes",
           "StuckChain", "stuck_chain", "run_cycles", "run_cycles_streamed", "cycle_result",
           "expected_waves", "terminal_waves", "run_online"]

#: Messages one :func:`run_cycles` call holds at most (about ``16 (f + 1)`` bytes of
#: arrays each: 2^20 messages of the 20-cube take well under 1 GiB).
MAX_BATCH_MESSAGES = 1 << 20

#: Cycles between two reports to a progress callback.
PROGRESS_CYCLES = 1024

#: Status codes of :class:`ChainArrays`.
DELIVERED, LOST = 0, 1


@dataclass
class ChainArrays:
    """The outcomes of a batch of messages through a router chain, one entry per message.

    Attributes
    ----------
    status : (M,) int
        :data:`DELIVERED` or :data:`LOST` (its claim at rank ``hops`` failed).
    hops : (M,) int
        Ranks passed: the path holds the channels of ranks ``0 .. hops``.
    nodes : (M, f + 1) int
        The node of the rank-``r`` channel, ``r = 0 .. f`` (its route; the ranks past
        ``hops`` are where it would have gone).
    ack_time : (M,) int
        Bit-time the source's acknowledgment rises, -1 for never.
    """

    status: np.ndarray
    hops: np.ndarray
    nodes: np.ndarray
    ack_time: np.ndarray


def chain_nodes(dims, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Every message's node at every rank of the chain over ``dims``, shape
    ``(M, len(dims) + 1)``: its source with the bits of ``dims[0 .. r - 1]`` its
    destination's."""
    src = np.asarray(src, dtype=np.int64)
    cross = src ^ np.asarray(dst, dtype=np.int64)
    nodes = np.empty((src.size, len(dims) + 1), dtype=np.int64)
    nodes[:, 0] = src
    for r, d in enumerate(dims):
        nodes[:, r + 1] = nodes[:, r] ^ (cross & (1 << d))
    return nodes


def _cycle_numbers(cycle: np.ndarray, src: np.ndarray, nodes: int) -> np.ndarray:
    """The cycle labels numbered 0, 1, ..., checked: one message per (cycle, source)."""
    m = src.size
    if m == 0 or cycle.min() == cycle.max():
        cyc = np.zeros(m, dtype=np.int64)
    else:
        cyc = np.unique(cycle, return_inverse=True)[1].reshape(-1).astype(np.int64)
    if np.unique(cyc * nodes + src).size != m:
        raise ParameterError("a node sends at most one message in a cycle (a node has one "
                             "wire)")
    return cyc


@dataclass
class StuckChain:
    """What a router chain's stuck wires do in every cycle (module docstring).

    Attributes
    ----------
    stuck : (f + 1, 2**k) int
        ``stuck[r, x]``: the value channel ``("rank", r, x)`` is stuck at, -1 for none.
    held : (f, 2**k) bool
        ``held[r, x]``: a phantom holds node ``x``'s rank-``r`` register (channel
        ``("rank", r + 1, x)``) from before rank ``r``'s claims to the cycle's end.
    wire_ack : (f + 1, 2**k) int
        For a wire stuck at 1, the bit-time its phantom's acknowledgment is on it (-1:
        never; -1 elsewhere).
    empty : CycleResult
        The scalar engine's cycle with no message: the phantoms and their waveforms.
    """

    stuck: np.ndarray
    held: np.ndarray
    wire_ack: np.ndarray
    empty: CycleResult


@lru_cache(maxsize=16)
def stuck_chain(chain, length: int) -> StuckChain | None:
    """The chain's :class:`StuckChain` for cycles of ``length`` bit-times (the phantoms'
    streams are that long; at least ``2f + 2``), None for a chain with no stuck wire."""
    if not chain.stuck_wires:
        return None
    f, n = chain.ranks, 1 << chain.k
    stuck = np.full((f + 1, n), -1, dtype=np.int64)
    for (_, r, x, _), value in chain.stuck_wires.items():
        stuck[r, x] = value
    empty = run_cycle(chain, max(length, 2 * f + 2), {}, {})
    held = np.zeros((f, n), dtype=bool)
    wire_ack = np.full((f + 1, n), -1, dtype=np.int64)
    for p in empty.phantoms.values():
        for occ in p.path[1:]:           # every register it claimed stays claimed
            held[occ.channel[1] - 1, occ.channel[2]] = True
        _, r, x = p.path[0].channel
        wire_ack[r, x] = -1 if p.ack_time is None else p.ack_time
    return StuckChain(stuck, held, wire_ack, empty)


def _claims(dims, nodes: np.ndarray, keys: np.ndarray, size: int,
            stuck: StuckChain | None = None) -> np.ndarray:
    """Ranks passed by every message: at rank ``r`` a stream from in_port 1 (its node's
    bit ``dims[r]`` is 1) loses the register (``keys[:, r]``, in ``[0, size)``) that a
    stream from in_port 0 of its cycle claims. ``stuck``: a stream is lost on a stuck
    wire it reaches, and on a register a phantom holds."""
    m = nodes.shape[0]
    hops = np.full(m, len(dims), dtype=np.int64)
    alive = np.arange(m)
    taken = np.zeros(size, dtype=bool)
    for r, d in enumerate(dims):
        if stuck is not None:
            alive = _off_stuck_wires(stuck, r, nodes, alive, hops)
        key = keys[alive, r]
        second = ((nodes[alive, r] >> d) & 1).astype(bool)
        taken[key[~second]] = True
        lost = second & taken[key]
        taken[key] = False
        if stuck is not None:
            lost |= stuck.held[r, nodes[alive, r + 1]]
        if lost.any():
            hops[alive[lost]] = r
            alive = alive[~lost]
    return hops


def _off_stuck_wires(stuck: StuckChain, r: int, nodes: np.ndarray, alive: np.ndarray,
                     hops: np.ndarray) -> np.ndarray:
    """The streams of ``alive`` not on a stuck wire at rank ``r``; those on one end there."""
    on = stuck.stuck[r, nodes[alive, r]] >= 0
    hops[alive[on]] = r
    return alive[~on]


def _registers(cyc: np.ndarray, nodes: np.ndarray, n: int) -> tuple[np.ndarray, int]:
    """The register every message claims at every rank, numbered densely: ``(keys of
    shape (M, f), how many numbers)``."""
    m = cyc.size
    cycles = int(cyc.max()) + 1 if m else 0
    keys = cyc[:, None] * n + nodes[:, 1:]
    if cycles * n <= 8 * m + n:          # one flag per (cycle, node)
        return keys, cycles * n
    uniq, inverse = np.unique(keys, return_inverse=True)
    return inverse.reshape(keys.shape), int(uniq.size)


def run_cycles(chain, cycle, src, dst, *, checked: bool = False) -> ChainArrays:
    """Every message of many delivery cycles through one router chain, a rank at a time.

    Parameters
    ----------
    chain : RouterChain
        The chain (its ``k`` and ``dims``).
    cycle, src, dst : (M,) int arrays
        The cycle (any labels: messages of different cycles never meet), source and
        target node of every message; at most one message per (cycle, source).
    checked : bool
        The caller guarantees the labels are 0 .. C - 1 and one message per (cycle,
        source) (the on-line driver): the check is left out.
    """
    src = np.asarray(src, dtype=np.int64)
    cycle = np.asarray(cycle, dtype=np.int64)
    m = src.size
    if m > MAX_BATCH_MESSAGES:
        raise ParameterError(f"messages of one batch must be at most {MAX_BATCH_MESSAGES}, "
                             f"got {m} (run_cycles_streamed splits them)")
    n, f = 1 << chain.k, chain.ranks
    cyc = cycle if checked else _cycle_numbers(cycle, src, n)
    nodes = chain_nodes(chain.dims, src, dst)
    keys, size = _registers(cyc, nodes, n)
    stuck = stuck_chain(chain, 0)
    return _arrays(f, _claims(chain.dims, nodes, keys, size, stuck), nodes, stuck)


def _arrays(f: int, hops: np.ndarray, nodes: np.ndarray,
            stuck: StuckChain | None = None) -> ChainArrays:
    delivered = hops == f
    return ChainArrays(np.where(delivered, DELIVERED, LOST), hops, nodes,
                       _ack_times(f, hops, nodes, stuck))


def _ack_times(f: int, hops: np.ndarray, nodes: np.ndarray,
               stuck: StuckChain | None) -> np.ndarray:
    """Every message's acknowledgment: ``3f`` delivered; lost on a wire stuck at 1 at
    rank ``r`` whose phantom is acknowledged at A, ``max(A, 2r) + r``; else -1."""
    ack = np.where(hops == f, 3 * f, -1)
    if stuck is not None:
        last = nodes[np.arange(hops.size), hops]
        phantom = np.where(stuck.stuck[hops, last] == 1, stuck.wire_ack[hops, last], -1)
        ack = np.where(phantom >= 0, np.maximum(phantom, 2 * hops) + hops, ack)
    return ack


def run_cycles_streamed(chain, cycle, src, dst,
                        batch: int = MAX_BATCH_MESSAGES) -> ChainArrays:
    """:func:`run_cycles` over any number of messages, about ``batch`` at a time (whole
    cycles per batch: ``cycle`` must be sorted), the arrays concatenated."""
    cycle, src, dst = (np.asarray(a, dtype=np.int64) for a in (cycle, src, dst))
    keep_freed_memory()   # each batch's arrays reuse the last one's memory
    if cycle.size and np.any(np.diff(cycle) < 0):
        raise ParameterError("cycle must be sorted (whole cycles go into one batch)")
    bounds = [0]
    while bounds[-1] < cycle.size:
        start = bounds[-1]
        stop = min(cycle.size, start + batch)
        if stop < cycle.size:          # end the batch on a cycle's boundary
            back = int(np.searchsorted(cycle, cycle[stop], "left"))
            stop = back if back > start else int(np.searchsorted(cycle, cycle[stop],
                                                                 "right"))
        bounds.append(stop)
    parts = [run_cycles(chain, cycle[a:b], src[a:b], dst[a:b])
             for a, b in zip(bounds, bounds[1:])] or [run_cycles(chain, cycle, src, dst)]
    return ChainArrays(*(np.concatenate([getattr(p, name) for p in parts])
                         for name in ("status", "hops", "nodes", "ack_time")))


# ---------------------------------------------------------------------- results
def cycle_result(net, ms: MessageSet, idx: np.ndarray, hops: np.ndarray,
                 nodes: np.ndarray, wires: dict | None = None) -> CycleResult:
    """The scalar engine's :class:`CycleResult` of one cycle of an Algorithm 1 circuit
    ``net``: messages ``idx`` (sorted), ``hops`` and ``nodes`` their rows of
    :class:`ChainArrays`. ``wires``: ``(rank, node)`` -> its :class:`Occupancy`, kept
    by a caller across cycles (they are frozen), filled as needed."""
    chain = net.chain
    f = chain.ranks
    stuck = stuck_chain(chain, net.cycle_length)
    acks = _ack_times(f, hops, nodes, stuck).tolist()
    wires = {} if wires is None else wires
    outcomes: dict = {}
    injections: dict = {}
    for m, h, route, ack in zip(idx.tolist(), hops.tolist(), nodes.tolist(), acks):
        s, d = int(ms.src[m]), int(ms.dst[m])
        stream = net.encode(s, d, int(ms.payload[m]))
        injections[m] = (0, stream)
        o = Outcome(m, s, d, "lost", list(stream),
                    [wires.get((r, route[r])) or wires.setdefault(
                        (r, route[r]), Occupancy(chain.channel(r, route[r]), 0, 2 * r, r))
                     for r in range(h + 1)], [1] * h, ack_time=None if ack < 0 else ack)
        if h == f:
            o.status, o.arrival = "delivered", 2 * f
        else:
            o.lost_at = _lost_at(chain, stuck, h, route)
        outcomes[m] = o
    if stuck is None:
        return CycleResult(net.cycle_length, outcomes, injections)
    return CycleResult(net.cycle_length, outcomes, injections, dict(chain.stuck_wires),
                       dict(stuck.empty.phantoms))


def _lost_at(chain, stuck: StuckChain | None, h: int, route: list) -> tuple:
    """Where and why a stream of ``route`` lost at rank ``h`` was lost, in the scalar
    engine's words: on a stuck wire, or its claim of a register already taken."""
    dim = chain.dims[h]
    switch = (h, route[h] & ~(1 << dim))
    value = -1 if stuck is None else int(stuck.stuck[h, route[h]])
    if value >= 0:
        return switch, "input wire 0", -1, f"its wire is stuck at {value}"
    return switch, chain.port_name((route[h + 1] >> dim) & 1), 0, "output 0 already taken"


def _stream_bits(net, src: np.ndarray, dst: np.ndarray, payload) -> np.ndarray:
    """Every message's stream (:meth:`.circuit.Alg1Circuit.encode`) as rows of a uint8
    array: the M bit, one relative-address bit per rank, the payload MSB first."""
    P = net.payload_bits
    dims = np.asarray(net.chain.dims, dtype=np.int64)
    rel = (src ^ dst)[:, None]
    payload_bits = bits_array(payload, P)
    ones = np.ones((src.size, 1), dtype=np.int64)
    return np.concatenate([ones, (rel >> dims) & 1, payload_bits], axis=1).astype(np.uint8)


def expected_waves(net, cycle, src, dst, payload) -> tuple[np.ndarray, np.ndarray]:
    """What every wire of an Algorithm 1 circuit ``net`` carries in many independent
    delivery cycles, bit-time for bit-time: ``(forward, ack)``, uint8 arrays of shape
    ``(cycles, f + 1, 2**k, cycle_length)``; ``[c, r, x]`` is channel ``("rank", r,
    x)`` in cycle ``c`` (cycles numbered in the order of their labels): rank 0 node
    ``x``'s ``send`` wire and its reverse ``send_ack``, rank ``f`` its ``recv`` wire
    and ``recv_ack``. They equal the scalar engine's :meth:`CycleResult.waveforms` and
    :meth:`CycleResult.ack_waveforms` (zeros where those have no key). ``cycle``,
    ``src``, ``dst``: as :func:`run_cycles`; ``payload``: every message's payload. Memory:
    ``2 (f + 1) 2**k cycle_length`` bytes per cycle (1,040 for the 4-cube at M = 8)."""
    forward, ack, _ = _waves(net, cycle, src, dst, payload)
    return forward, ack


def terminal_waves(net, cycle, src, dst, payload) -> TerminalWaves:
    """The terminals' wires of :func:`expected_waves` (rank 0's ``send`` and
    ``send_ack``, rank ``f``'s ``recv``) as :class:`~fatnet.golden.cycle.TerminalWaves`,
    with the messages delivered."""
    forward, ack, delivered = _waves(net, cycle, src, dst, payload)
    f = net.chain.ranks
    drive, recv, send_ack = (np.ascontiguousarray(a.transpose(0, 2, 1)[..., None])
                             for a in (forward[:, 0], forward[:, f], ack[:, 0]))
    return TerminalWaves(drive, recv, send_ack, ("rank", 0), ("rank", f), delivered)


def _waves(net, cycle, src, dst, payload) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`expected_waves` and whether each message was delivered."""
    src, dst, cycle = (np.asarray(a, dtype=np.int64) for a in (src, dst, cycle))
    chain, f, n, T = net.chain, net.chain.ranks, net.nodes, net.cycle_length
    cyc = _cycle_numbers(cycle, src, n)
    arrays = run_cycles(chain, cyc, src, dst, checked=True)
    cycles = int(cyc.max()) + 1 if cyc.size else 0
    forward = np.zeros((cycles, f + 1, n, T), dtype=np.uint8)
    ack = np.zeros_like(forward)
    bits = _stream_bits(net, src, dst, payload)
    delivered = arrays.status == DELIVERED
    stuck = stuck_chain(chain, T)
    for r in range(f + 1):
        reached = arrays.hops >= r
        if stuck is not None:       # the fed router sees the stuck value, not the stream
            reached &= stuck.stuck[r, arrays.nodes[:, r]] < 0
        on = np.flatnonzero(reached)
        length = min(bits.shape[1] - r, T - 2 * r)
        wave = bits[on, r:r + length].copy()
        wave[:, 0] = 1                     # the M bit in the slot of the bit consumed
        forward[cyc[on], r, arrays.nodes[on, r], 2 * r:2 * r + length] = wave
        if stuck is None:
            back = np.flatnonzero(delivered)
            ack[cyc[back], r, arrays.nodes[back, r], 3 * f - r:] = 1
    if stuck is not None:
        _stuck_waves(forward, ack, cyc, arrays, stuck)
    return forward, ack, delivered


def _stuck_waves(forward: np.ndarray, ack: np.ndarray, cyc: np.ndarray,
                 arrays: ChainArrays, stuck: StuckChain) -> None:
    """:func:`_waves`' acknowledgments on a chain with stuck wires: every acknowledged
    stream's, ``ack_time - r`` at rank ``r`` of its path (a stream lost on a wire stuck
    at 1 not on that wire, whose reverse is the phantom's); then the phantoms' wires
    of every cycle, forward and back (they never share a wire with a message)."""
    f, T = forward.shape[1] - 1, forward.shape[-1]
    times = np.arange(T)
    acked = arrays.ack_time >= 0
    for r in range(f + 1):
        back = np.flatnonzero(acked & ((arrays.hops > r) | (arrays.status == DELIVERED)))
        ack[cyc[back], r, arrays.nodes[back, r]] = times >= (arrays.ack_time[back] - r)[:, None]
    for waves, into in ((stuck.empty.waveforms(), forward), (stuck.empty.ack_waveforms(), ack)):
        for (_, r, x, _), wave in waves.items():
            into[:, r, x] |= wave


# ---------------------------------------------------------------------- on-line
def run_online(net, ms: MessageSet, keep_results: bool = False, max_cycles: int = 1000,
               progress=None) -> RunReport:
    """:meth:`.circuit.HypercubeCircuit.run` on the batched engine: the same report. Each
    cycle every source sends its oldest undelivered message: Algorithm 1's cycles one
    after another, each a batch of its messages (:func:`run_cycles`); the other
    algorithms' cycles planned ahead and run as one batch (:class:`_PlannedCycles`).
    ``progress(done, total, what)``, if given, is told the messages delivered every
    :data:`PROGRESS_CYCLES` cycles."""
    max_cycles = check_max_cycles(max_cycles)
    net.check_messages(ms)
    report = net.online_report(ms)
    usage = net.channel_usage()
    model = _ChainCycles(net, ms) if net.algorithm == "alg1" else _PlannedCycles(net, ms)
    queue = SourceQueues(ms)
    sent = np.zeros(len(ms), dtype=bool)
    while queue.any() and report.cycles < max_cycles:
        for idx, delivered in model.cycles(queue, max_cycles - report.cycles, report, usage,
                                           keep_results):
            report.retries += int(np.count_nonzero(sent[idx]))
            sent[idx] = True
            queue.pop(idx[delivered])
            if progress is not None and report.cycles % PROGRESS_CYCLES == 0:
                progress(report.delivered, len(ms), "circuit model")
    model.finish(usage)
    report.lost += queue.left(max_cycles)
    report.utilisation = usage.fractions(report.cycles)
    return report


class _ChainCycles:
    """Algorithm 1's cycles on the batched engine: every message's route computed once;
    a cycle's claims on its fronts' routes; the wire-cycles counted at the end."""

    def __init__(self, net, ms: MessageSet):
        self.net, self.ms = net, ms
        self.dims, self.n = net.chain.dims, net.nodes
        self.stuck = stuck_chain(net.chain, net.cycle_length)
        self.nodes = chain_nodes(self.dims, ms.src, ms.dst)
        self.hops: list[np.ndarray] = []
        self.wires: dict = {}

    def cycles(self, queue: SourceQueues, budget: int, report: RunReport,
               usage: ChannelUsage, keep: bool):
        """The next cycle (its fronts, which were delivered), counted in ``report``."""
        idx = queue.fronts()
        nodes = self.nodes[idx]
        hops = _claims(self.dims, nodes, nodes[:, 1:], self.n, self.stuck)
        delivered = hops == len(self.dims)
        done = int(np.count_nonzero(delivered))
        report.cycles += 1
        report.losses_per_cycle.append(idx.size - done)
        report.delivered += done
        self.hops.append(hops)
        if keep:
            report.results.append(cycle_result(self.net, self.ms, idx, hops, nodes,
                                               self.wires))
        yield idx, delivered

    def finish(self, usage: ChannelUsage) -> None:
        """Every path holds the channels of ranks ``0 .. hops``."""
        if self.hops:
            reached = np.bincount(np.concatenate(self.hops), minlength=usage.used.size)
            usage.used += reached[::-1].cumsum()[::-1]


#: Cycles :class:`_PlannedCycles` plans ahead at most (at first 64).
PLANNED_CYCLES = 1 << 14


class _PlannedCycles:
    """Algorithm 2's, e-cube's and Valiant's cycles, planned ahead as if every message
    a cycle injects were delivered (each source's next message in the next cycle; e-cube
    and Valiant leave out a message whose destination an earlier one of the cycle takes,
    :meth:`.circuit.HypercubeCircuit.injections`), then run as one batch. The plan holds
    up to the first cycle that does not deliver every message it injects: the cycles
    before it are the scalar driver's, and that cycle runs on the scalar model
    (:meth:`~.circuit.HypercubeCircuit.simulate_cycle`, which also refuses what the
    scalar engine refuses), from where the next plan starts.

    * Algorithm 2 (a cycle a partial permutation): the step-level model of a batch of
      routings (:func:`.alg2.route_batch`, the corrected reading); a cycle it routes
      with every message delivered and no rule broken, the bit-serial model
      (:func:`.bitserial.run_alg2`) delivers whole too (the tests check the two models
      step by step), and the hardware's cycle reports only that.
    * e-cube and Valiant: the cycles as disjoint k-cubes of one larger cube (cycle
      ``c``'s node ``x`` is node ``c * 2**k + x``): a message never crosses a dimension
      its source and destination (and Valiant's intermediate node) agree in, and every
      rule of a step is local to a link queue or a node, so each k-cube runs as alone
      (:func:`.store_forward.route` with the cycle's own options).
    """

    def __init__(self, net, ms: MessageSet):
        self.net, self.ms = net, ms
        self.waits = net.algorithm in ("ecube", "valiant")
        self.inter = net.intermediates(ms) if net.algorithm == "valiant" else None
        self.src = np.asarray(ms.src, dtype=np.int64)
        self.dst = np.asarray(ms.dst, dtype=np.int64)
        #: cycles the next plan holds: doubled after a plan delivers whole, cut to the
        #: cycles that did after one that does not (1: the scalar model alone)
        self.ahead = 64

    def cycles(self, queue: SourceQueues, budget: int, report: RunReport,
               usage: ChannelUsage, keep: bool):
        """The cycles of one plan (fronts, which were delivered), counted in ``report``;
        the driver pops each before the next is yielded."""
        plan = self._plan(queue, min(budget, self.ahead))
        runs = self._batch(plan) if len(plan) > 1 else [None]
        good = next((c for c, run in enumerate(runs) if run is None), len(runs))
        self.ahead = min(2 * self.ahead, PLANNED_CYCLES) if good == len(plan) else max(good, 1)
        for (fronts, sent), run in zip(plan, runs):
            if run is None:          # not every message delivered: the scalar model
                result = self.net.simulate_cycle(self.ms, self.net.injections(self.ms,
                                                                              fronts))
                account_cycle(report, usage, result, keep)
                if len(result.delivered) == sent.size:    # plan again from two cycles
                    self.ahead = max(self.ahead, 2)
                yield fronts, np.isin(fronts, result.delivered)
                return
            report.cycles += 1
            report.losses_per_cycle.append(0)
            report.delivered += sent.size
            usage.used[[0, -1]] += sent.size      # the send and recv channels
            if keep:
                injections = self.net.injections(self.ms, fronts)
                report.results.append(self.net.cycle_result(
                    injections, self.src[sent], self.dst[sent], run))
            yield fronts, np.isin(fronts, sent)

    def _plan(self, queue: SourceQueues, budget: int) -> list:
        """Up to ``budget`` cycles ahead: (fronts, the messages injected)."""
        ahead = queue.copy()
        plan: list = []
        while len(plan) < budget and ahead.any():
            fronts = ahead.fronts()
            sent = fronts
            if self.waits:           # the first message to each destination goes
                sent = fronts[np.sort(np.unique(self.dst[fronts], return_index=True)[1])]
            plan.append((fronts, sent))
            ahead.pop(sent)
        return plan

    def _batch(self, plan: list) -> list:
        """Per planned cycle: what :meth:`cycle_result` takes if it delivers every
        message it injects, else None (and None for every cycle after it)."""
        if self.waits:
            runs = _store_forward_cycles(self.net, [sent for _, sent in plan], self.src,
                                         self.dst, self.inter)
        else:
            runs = _alg2_cycles(self.net, [sent for _, sent in plan], self.src, self.dst)
        bad = next((c for c, run in enumerate(runs) if run is None), len(runs))
        return runs[:bad] + [None] * (len(runs) - bad)

    def finish(self, usage: ChannelUsage) -> None:
        return None


def _alg2_cycles(net, cycles: list, src: np.ndarray, dst: np.ndarray) -> list:
    """Per cycle (messages injected): every message's delivery (all True) if
    :func:`.alg2.route_batch` routes it whole, else None. Cycles of one size (they
    come in runs: a queue only empties) go in one batch."""
    from .alg2 import route_batch
    out: list = [None] * len(cycles)
    sizes = np.array([c.size for c in cycles], dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, sizes[1:] != sizes[:-1]]).tolist() if sizes.size else []
    for a, b in zip(starts, [*starts[1:], int(sizes.size)]):
        idx = np.stack(cycles[a:b])
        ordered = np.sort(dst[idx], axis=1)
        partial = ~(ordered[:, 1:] == ordered[:, :-1]).any(axis=1)   # no destination twice
        ok = partial.copy()
        if partial.any() and idx.shape[1]:
            ok[partial] = route_batch(net.k, src[idx[partial]], dst[idx[partial]],
                                      message_bits=net.M).ok
        for c in range(a, b):
            out[c] = np.ones(idx.shape[1], dtype=bool) if ok[c - a] else None
    return out


@dataclass
class _CycleRun:
    """What :meth:`.circuit.StoreForwardCircuit.cycle_result` reads of one cycle's
    store-and-forward run that delivered every message."""

    steps: int
    delivery_step: np.ndarray
    final: np.ndarray
    stopped: str = "delivered"
    deadlock: bool = False


def _store_forward_cycles(net, cycles: list, src: np.ndarray, dst: np.ndarray,
                          inter: np.ndarray | None) -> list:
    """Per cycle (messages injected): its run (:class:`_CycleRun`) if it delivers every
    message, else None; the cycles as disjoint k-cubes of one larger cube, at most
    ``2**20`` nodes at once (:data:`.cube.MAX_DIMENSION`)."""
    from .cube import MAX_DIMENSION
    from .store_forward import route
    per_run = 1 << (MAX_DIMENSION - net.k)
    out: list = []
    for first in range(0, len(cycles), per_run):
        part = cycles[first:first + per_run]
        label = np.repeat(np.arange(len(part), dtype=np.int64), [c.size for c in part])
        msgs = np.concatenate(part)
        shift = label << net.k
        options = {} if inter is None else {"intermediate": inter[msgs] + shift,
                                            **net.queue_options}
        run = route(net.k + max(len(part) - 1, 0).bit_length(), src[msgs] + shift,
                    dst[msgs] + shift, algorithm=net.algorithm, buffer=net.buffer,
                    max_steps=net.steps, **options)
        bounds = np.cumsum([0] + [c.size for c in part])
        for a, b in zip(bounds, bounds[1:]):
            steps = run.delivery_step[a:b]
            out.append(_CycleRun(int(steps.max(initial=0)), steps, dst[msgs[a:b]])
                       if (steps >= 0).all() else None)
    return out
