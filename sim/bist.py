"""The self-testing top's plan and its prediction, for every family with hardware.

:func:`make_plan` asks the family's model (its testbench hooks ``prepare`` and
``simulate``) for the stream of every message a terminal can send, one message alone,
and keeps its header (what comes between the M bit and the payload) and the bits the
network delivers before the payload. :func:`predict` runs the same generators as the
hardware (:mod:`fatnet.golden.bist`) through the family's model cycle after cycle, with
the hardware's protocol (a message not acknowledged is sent again), and returns every
report the UART will print. :func:`build_core` puts the network top and
:class:`~fatnet.hdl.bist.BistCore` together.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import numpy as np
from amaranth import Const

from ..golden import bist as gb
from ..golden.bitstream import bits_to_int, int_to_bits
from ..golden.checks import check_int
from ..golden.cycle import start_latency, stuck_wires
from ..golden.errors import FatnetInputError, ParameterError
from ..golden.messages import MessageSet
from ..golden.runner import check_engine
from ..golden.seeds import check_seed
from ..hdl.signatures import endpoints
from .bisttable import (TABLE_MODES, OutcomeTable, decode_entry, kept, open_table,
                        pattern_code, pattern_space)
from . import bistrun
from .bistrun import TableRun
from .family import SimFamily, self_test_of

#: Cycles the plan runs through the model to see that it takes the generators' traffic.
TRIAL_CYCLES = 64

__all__ = ["BistPlan", "make_plan", "predict", "run_counters", "counter_run", "unpredicted",
           "build_core", "bist_config", "network_ports", "decode_uart", "line_clocks",
           "line_cycles", "terminal_count", "model_header", "period_of", "fixed_arrival"]


@dataclass
class BistPlan:
    """What the self-testing top is built from (the arguments of :func:`make_plan`)."""

    net: Any
    family: SimFamily
    pattern: str
    load: float
    bist_seed: int
    report_cycles: int
    baud_divisor: int
    flip_cycle: int | None
    terminals: int
    n: int
    payload_bits: int
    cycle_length: int
    headers: list = field(repr=False)
    prefix: int = 0
    states: list = field(repr=False, default_factory=list)
    threshold: int = 0
    stuck_wire: gb.StuckWire | None = None
    arrival: int | None = None    #: :func:`fixed_arrival`


def terminal_count(net, family: SimFamily) -> int:
    """The terminals of a network the family builds (its endpoints' ports by the
    testbench's names, from 0 up), read from the network's signature alone."""
    from ..hdl.signatures import port_rows
    names = {r["endpoint"] for r in port_rows(family.hardware.network_signature(net))}
    N = 0
    while family.testbench.port_name(net, N) in names:
        N += 1
    return N


def period_of(net, family: SimFamily) -> int:
    """The clocks of the self-test's period around ``net``
    (:func:`fatnet.golden.bist.period_clocks` of its delivery cycle, its start latency
    and its terminals)."""
    n = (terminal_count(net, family) - 1).bit_length()
    return gb.period_clocks(int(net.cycle_length), start_latency(net), n)


def line_clocks(baud_divisor: int) -> int:
    """Clocks the UART takes for one report line: per character 10 bits and the clock
    that loads the next."""
    from ..hdl.bist_report import line_template
    return len(line_template()) * (10 * baud_divisor + 1) + 2


def line_cycles(baud_divisor: int, period: int) -> int:
    """The fewest BIST periods of ``period`` clocks a report line's UART time takes:
    the shortest report period."""
    return max(1, -(-line_clocks(baud_divisor) // period))


def make_plan(net, family: SimFamily, *, pattern="random", load=1.0, bist_seed=0,
              report_cycles=None, baud_divisor=104, flip_cycle=None, stuck_wire=None) -> BistPlan:
    """The BIST's plan for a network the family builds; one-line
    :class:`~fatnet.golden.errors.ParameterError` on options it cannot take.
    ``stuck_wire``: None, or a :class:`~fatnet.golden.bist.StuckWire`."""
    if pattern not in gb.PATTERNS:
        raise ParameterError(f"pattern must be one of {', '.join(gb.PATTERNS)}, got "
                             f"{pattern!r}")
    thr = gb.threshold(load)
    bist_seed = check_seed(bist_seed, "bist_seed")
    self_test_of(family, net)
    family.hardware.check_buildable(net)
    N = terminal_count(net, family)
    n = (N - 1).bit_length()
    if N < 2 or N != 1 << n:
        raise ParameterError(f"the self-testing top needs a power-of-two number of "
                             f"terminals >= 2, this network has {N}")
    gb.check_address_bits(n)
    # the family computes the headers in hardware (or refuses the network in one line)
    family.hardware.bist_header(net, 0, Const(0, n))
    P = int(net.payload_bits)
    gb.check_payload_bits(P, n)
    if stuck_wire is not None:
        stuck_wire = gb.check_stuck_wire(stuck_wire, N)
    T = int(net.cycle_length)
    period = period_of(net, family)
    line = line_clocks(baud_divisor)
    need = line_cycles(baud_divisor, period)
    if report_cycles is None:
        report_cycles = need + 1
    check_int("report-cycles", report_cycles, 1, numpy=False)
    if report_cycles < need:
        raise ParameterError(f"report-cycles must be >= {need}: a report line takes "
                             f"{line} clocks, one cycle {period}; got {report_cycles}")
    headers, prefix, arrivals = [], None, set()
    for s in range(N):
        if pattern == "random":
            dests = [d for d in range(N) if d != s]
        else:
            d = gb.FIXED_PATTERNS[pattern](s, n)
            dests = [] if d == s else [d]
        hs = {}
        for d in dests:
            hs[d], pre, arrival = _model_message(net, family, s, d)
            arrivals.add(arrival)
            if pre is not None:
                if prefix is None:
                    prefix = pre
                elif pre != prefix:
                    raise ParameterError(f"the self-testing top needs one payload offset "
                                         f"at every destination: {prefix} and {pre} bits")
        headers.append(hs)
    plan = BistPlan(net, family, pattern, load, bist_seed, report_cycles, baud_divisor,
                    flip_cycle, N, n, P, T, headers, prefix or 0,
                    [gb.initial_state(bist_seed, s) for s in range(N)], thr, stuck_wire,
                    fixed_arrival(arrivals, T, prefix or 0, P))
    # a trial: the model must take every cycle the generators make, with the streams
    # of the table (a network whose headers depend on the cycle's other messages, or
    # which takes partial permutations only, cannot be self-tested this way)
    try:
        predict(replace(plan, stuck_wire=None), TRIAL_CYCLES)
    except (ParameterError, FatnetInputError) as e:
        raise ParameterError(f"the self-testing top cannot drive this network with "
                             f"pattern {pattern}: {e}") from None
    return plan


def model_header(net, family: SimFamily, source: int, destination: int):
    """The header of terminal ``source``'s message to ``destination`` as the model's
    stream of that message alone carries it (the bits between the M bit and the
    payload, a list of 0 and 1), and the bits the network delivers before the payload
    (None if the model does not deliver it)."""
    return _model_message(net, family, source, destination)[:2]


def _model_message(net, family: SimFamily, source: int, destination: int):
    """:func:`model_header`'s header and prefix, and the bit-time at which the model
    delivers the message's M bit (None if it does not deliver it)."""
    P = int(net.payload_bits)
    ms = MessageSet.from_pairs([source], [destination], P, 0, payload=[0])
    res = family.testbench.simulate(net, ms, family.testbench.prepare(net, ms, [0]))
    o = res.outcomes[0]
    stream = list(res.injections[0][1])
    prefix = len(stream) - 1 - P - o.path[-1].offset if o.status == "delivered" else None
    return [int(b) for b in stream[1:len(stream) - P]], prefix, o.arrival


def fixed_arrival(arrivals: set, T: int, prefix: int, P: int) -> int | None:
    """The bit-time at which every message's M bit reaches its destination, where the
    model delivers every message alone that it delivers (``arrivals``, their bit-times,
    None for one it loses) at one bit-time and the payload then ends the cycle of T
    bit-times: no message that comes later is complete, so a checker may take the
    payload's bit-times from the period's strobes
    (:attr:`fatnet.hdl.bist_config.BistConfig.arrival`). None elsewhere. A stream of
    ones that a wire stuck at 1 feeds comes earlier and lasts to the cycle's end: its
    payload is ones at any bit-time."""
    delivered = arrivals - {None}
    if len(delivered) != 1:
        return None
    (arrival,) = delivered
    return arrival if arrival + 1 + prefix + P == T else None


#: Stuck wires the model cannot predict, and why.
UNPREDICTED = {("send", "data", 1): "a send wire stuck at 1 drives a stream of ones, which "
                                    "is no message the model can run"}


def unpredicted(plan: BistPlan) -> str | None:
    """Why :func:`predict` cannot predict the plan's stuck wire, or None if it can."""
    f = plan.stuck_wire
    if f is not None and 1 in stuck_wires(plan.net).values():
        return ("a link stuck at 1 inside the network sends a stream of ones to some "
                "terminal, and the model does not combine it with a stuck terminal wire")
    return None if f is None else UNPREDICTED.get((f.direction, f.signal, f.value))


def predict(plan: BistPlan, cycles: int, on_cycle=None, engine: str = "batched") -> list[dict]:
    """The reports of the first ``cycles`` completed delivery cycles: one dict of the
    counters (:data:`fatnet.golden.bist.COUNTERS`) per report (:func:`counter_run`, on
    ``engine``). ``on_cycle(done)``, if given, is called on the way at least every
    :data:`fatnet.sim.bistrun.BLOCK_CYCLES` cycles and at the last (progress)."""
    run = counter_run(plan, engine)
    reports = [run.at(k * plan.report_cycles, on_cycle)
               for k in range(1, max(cycles, 0) // plan.report_cycles + 1)]
    if cycles > 0:
        run.at(cycles, on_cycle)
    return reports


class _CycleCounters:
    """:func:`counter_run` a cycle at a time (:func:`run_counters`' generator)."""

    def __init__(self, cycles):
        self._cycles = cycles
        self.counts = {name: 0 for name in gb.COUNTERS}

    def at(self, cycles: int, on_cycle=None) -> dict:
        """The counters after ``cycles`` completed cycles (a copy, not below those
        reached); ``on_cycle(done)`` every :data:`PROGRESS_EVERY` cycles and at the last."""
        if cycles < self.counts["cycles"]:
            raise ValueError(f"the run has passed cycle {cycles}")
        while self.counts["cycles"] < cycles:
            self.counts = next(self._cycles)
            done = self.counts["cycles"]
            if on_cycle is not None and (done % PROGRESS_EVERY == 0 or done == cycles):
                on_cycle(done)
        return dict(self.counts)


def counter_run(plan: BistPlan, engine: str = "batched", table: str = "cached"):
    """:func:`run_counters`' counters at any cycle count, forward from reset: an object
    whose ``at(cycles, on_cycle=None)`` gives the counters after ``cycles`` completed
    cycles (a copy; ``cycles`` not below the last asked), calling ``on_cycle(done)`` on
    the way at least every :data:`fatnet.sim.bistrun.BLOCK_CYCLES` cycles and at the
    last. Where the plan's outcome table serves the batched engine (no stuck link, no
    flipped bit) the cycles run a block at a time (:class:`fatnet.sim.bistrun.TableRun`),
    else one at a time."""
    _check_run(plan, engine, table)
    if engine == "batched":
        patterns = _Patterns(plan, _stuck_view(plan), table)
        run = _table_run(plan, patterns)
        return _CycleCounters(_batched_counters(plan, patterns)) if run is None else run
    return _CycleCounters(_scalar_counters(plan))


def _check_run(plan: BistPlan, engine: str, table: str) -> None:
    """ParameterError, in one line, on what :func:`run_counters` cannot run."""
    check_engine(engine)
    why = unpredicted(plan)
    if why is not None:
        raise ParameterError(f"the model does not predict stuck-wire {plan.stuck_wire}: {why}")
    if table not in TABLE_MODES:
        raise ParameterError(f"table must be one of {', '.join(TABLE_MODES)}, got {table!r}")


def _table_run(plan: BistPlan, patterns: _Patterns) -> TableRun | None:
    """The batched engine's run on the plan's outcome table, None where no table serves
    it or the flipped bit's cycle must run through the model."""
    if patterns.table is None or plan.flip_cycle is not None:
        return None
    return TableRun(plan, patterns.table, _Offers(plan).never)


#: Delivery cycles between two calls of ``on_cycle`` a cycle at a time.
PROGRESS_EVERY = 256


@dataclass
class _StuckView:
    """How :func:`run_counters` sees the plan's stuck wire and the network's stuck links
    (its docstring)."""

    fault: tuple | None           #: (direction, signal, value) of the stuck wire
    silent: int | None            #: the terminal whose messages never enter
    stuck_recv: tuple | None      #: the stuck terminal's recv port, wire 0
    passes_ack: bool              #: the network passes recv_ack back to the source
    phantom: bool | None          #: recv data at 1: the ones pass the check (None: no)
    has_phantom: bool             #: a link inside the network is stuck at 1
    terminal_of: dict             #: port name -> terminal (with a phantom only)


def _stuck_view(plan: BistPlan) -> _StuckView:
    """The plan's faults as the prediction needs them."""
    N, n, P, T = plan.terminals, plan.n, plan.payload_bits, plan.cycle_length
    tb = plan.family.testbench
    f = plan.stuck_wire
    fault = None if f is None else (f.direction, f.signal, f.value)
    silent = f.terminal if f is not None and fault == ("send", "data", 0) else None  # never enters
    stuck_recv = (tb.port_name(plan.net, f.terminal), 0) if f and f.direction == "recv" \
        else None
    # whether the network passes the destination's recv_ack back to the source
    passes_ack = self_test_of(plan.family, plan.net).destination_acknowledges(plan.net)
    # recv data stuck at 1: the checker takes a payload of ones every cycle, if the
    # M bit, the prefix and the payload fit in the cycle
    phantom = None
    if f is not None and fault == ("recv", "data", 1) and 1 + plan.prefix + P <= T:
        phantom = gb.payload_ok((1 << P) - 1, f.terminal, P, n)
    has_phantom = 1 in stuck_wires(plan.net).values()
    terminal_of = {tb.port_name(plan.net, t): t for t in range(N)} if has_phantom else {}
    return _StuckView(fault, silent, stuck_recv, passes_ack, phantom, has_phantom,
                      terminal_of)


def run_counters(plan: BistPlan, engine: str = "batched", table: str = "cached"):
    """The counters after every completed delivery cycle, from reset, without end: one
    dict (the same object each time, updated; copy what you keep).

    ``engine`` (:data:`fatnet.golden.runner.ENGINES`): ``"scalar"`` runs every cycle
    through the model, the specification; ``"batched"`` (:func:`_batched_counters`)
    draws the generators in blocks and runs an injection pattern through the model once,
    the same counters cycle for cycle. ``table`` (batched engine;
    :data:`fatnet.sim.bisttable.TABLE_MODES`): ``"cached"`` looks the patterns up in the
    plan's outcome table where one is kept on disk, ``"fill"`` uses it always, filling it
    a block of patterns at each miss where it is not kept whole, ``"off"`` never.

    A stuck wire (``plan.stuck_wire``, terminal t) is predicted from the model's
    outcomes of the sound network, as the top sees the wire:

    * send data at 0: t's message never enters the network (the model runs the cycle
      without it); it is sent, lost and sent again forever;
    * send ack at 0 / 1: t never / always sees its message acknowledged;
    * recv data at 0: t's checker on wire 0 sees nothing and does not acknowledge, so
      a message delivered there is not delivered, and not acknowledged where the network
      passes recv_ack back (the testbench hook ``destination_acknowledges``; where the
      network acknowledges by itself it is acknowledged: an error);
    * recv data at 1: the checker on wire 0 sees a message of all ones every cycle
      (delivered if that payload passes t's check, an error otherwise) and acknowledges
      from bit-time 0, so a message delivered there is acknowledged, not delivered;
    * recv ack at 0: a message delivered on t's wire 0 is checked but, where the network
      passes recv_ack back, not acknowledged;
    * recv ack at 1: as the sound network (the destination acknowledges anyway).

    A link stuck inside the network (``--stuck-link``) is part of the network, so the
    model's outcomes carry it: a message lost on a link stuck at 1 may still be
    acknowledged (through the phantom stream of ones the link feeds on), and a phantom
    delivered to terminal t is checked there as a payload of ones (delivered if it
    passes t's check, an error otherwise).

    Send data at 1 is not predicted (:data:`UNPREDICTED`): ParameterError.
    """
    _check_run(plan, engine, table)
    if engine == "scalar":
        return _scalar_counters(plan)
    patterns = _Patterns(plan, _stuck_view(plan), table)
    run = _table_run(plan, patterns)
    return _batched_counters(plan, patterns) if run is None else _table_counters(run)


def _table_counters(run: TableRun):
    """:func:`run_counters` on the outcome table: its blocks' counters cycle by cycle."""
    counts = dict(run.counts)
    while True:
        columns = run.block(bistrun.BLOCK_CYCLES)
        for row in zip(*(columns[name].tolist() for name in gb.COUNTERS)):
            counts.update(zip(gb.COUNTERS, row))
            yield counts


def _scalar_counters(plan: BistPlan):
    """:func:`run_counters` on the scalar engine: every terminal draws, builds its
    payload and runs through the model in every cycle."""
    N, n, P = plan.terminals, plan.n, plan.payload_bits
    _, q, _ = gb.payload_fields(P, n)
    seq_mask = (1 << q) - 1
    x = list(plan.states)
    pending = [False] * N
    dst = [0] * N
    seq = [0] * N
    counts = {name: 0 for name in gb.COUNTERS}
    view = _stuck_view(plan)
    c = 0
    while True:
        srcs, dsts, pays = [], [], []
        for s in range(N):
            if not pending[s]:
                x[s], offers, d = gb.draw(x[s], s, n, plan.threshold, plan.pattern)
                if offers:
                    pending[s], dst[s] = True, d
                    counts["offered"] += 1
            if pending[s]:
                pay = gb.make_payload(s, dst[s], seq[s], P, n)
                if plan.flip_cycle == c and s == 0:
                    pay ^= 1
                srcs.append(s)
                dsts.append(dst[s])
                pays.append(pay)
        acked, delivered, bad = _cycle_outcome(plan, view, srcs, dsts, pays)
        for s in acked:
            pending[s] = False
            seq[s] = (seq[s] + 1) & seq_mask
        _count_cycle(counts, len(srcs), len(acked), delivered, bad)
        c += 1
        yield counts


def _count_cycle(counts: dict, sent: int, acked: int, delivered: int, bad: int) -> None:
    """Add one completed cycle's messages to the counters."""
    counts["cycles"] += 1
    counts["sent"] += sent
    counts["acknowledged"] += acked
    counts["lost"] += sent - acked
    counts["delivered"] += delivered
    counts["errors"] += bad + abs(acked - delivered)


def _cycle_outcome(plan: BistPlan, view: _StuckView, srcs, dsts, pays):
    """One delivery cycle of the messages ``srcs[i] -> dsts[i]`` with payloads
    ``pays[i]`` through the model, as the top sees it: ``(acknowledged, delivered,
    bad)``, the terminals whose message is acknowledged (in ``srcs``' order) and the
    checkers' counts of intact and failed payloads."""
    outcome, res = _model_cycle(plan, view, srcs, dsts, pays)
    delivered, bad, unheard = _phantom_checks(plan, view, res)
    acked = []
    for i, s in enumerate(srcs):
        ok, error, ack = _source_outcome(plan, view, s, outcome.get(i), unheard)
        delivered, bad = delivered + ok, bad + error
        if ack:
            acked.append(s)
    return tuple(acked), delivered, bad


#: Draws the batched engine generates at a time for each terminal short of offers.
DRAW_BLOCK = 4096
#: Injection patterns the batched engine remembers at most (a pattern's key and outcome
#: take a few hundred bytes for 8 terminals); past it the memory starts again.
MEMO_PATTERNS = 1 << 18
#: After every MEMO_TRIAL patterns the batched engine has not seen before, it stops
#: remembering patterns if fewer than one cycle in MEMO_RARE found its pattern remembered.
MEMO_TRIAL, MEMO_RARE = 4096, 8


class _Offers:
    """Every terminal's offers in order: terminal ``s``'s next is ``gaps[s][at[s]]``,
    the draws that do not offer before the one that does, and ``dests[s][at[s]]``, its
    destination (the generators of :func:`fatnet.golden.bist.draw_run`,
    :data:`DRAW_BLOCK` draws at a time for every terminal short of offers)."""

    def __init__(self, plan: BistPlan):
        self.plan = plan
        self.states = list(plan.states)
        N, n = plan.terminals, plan.n
        fixed = gb.FIXED_PATTERNS.get(plan.pattern)
        #: terminals that never offer: no load, or a pattern that maps them to themselves
        self.never = {s for s in range(N)
                      if plan.threshold == 0 or (fixed is not None and fixed(s, n) == s)}
        self.gaps: list[list[int]] = [[] for _ in range(N)]
        self.dests: list[list[int]] = [[] for _ in range(N)]
        self.at = [0] * N
        self.skipped = [0] * N    # draws without an offer since the last one queued

    def next(self, s: int) -> tuple[int, int] | None:
        """Terminal ``s``'s next offer (taken), None if it never offers."""
        if not self.ready(s):
            return None
        i = self.at[s]
        self.at[s] = i + 1
        return self.gaps[s][i], self.dests[s][i]

    def ready(self, s: int) -> bool:
        """Whether terminal ``s`` has an offer to take (drawing blocks until it has),
        False if it never offers."""
        if s in self.never:
            return False
        while self.at[s] == len(self.gaps[s]):   # s, and every terminal short of offers
            N = self.plan.terminals
            self._refill([t for t in range(N) if t == s or (
                t not in self.never and len(self.gaps[t]) - self.at[t] < DRAW_BLOCK // 8)])
        return True

    def _refill(self, terminals: list[int]) -> None:
        """Draw a block for each of ``terminals`` at once and queue their offers."""
        p = self.plan
        xs, offers, dests = gb.draw_run([self.states[t] for t in terminals], terminals,
                                        p.n, p.threshold, p.pattern, DRAW_BLOCK)
        for row, t in enumerate(terminals):
            self.states[t] = int(xs[row, -1])
            idx = np.flatnonzero(offers[row])
            if idx.size == 0:
                self.skipped[t] += DRAW_BLOCK
                continue
            gaps = np.diff(idx, prepend=-1) - 1
            gaps[0] += self.skipped[t]
            self.skipped[t] = DRAW_BLOCK - 1 - int(idx[-1])
            i = self.at[t]
            self.gaps[t] = self.gaps[t][i:] + gaps.tolist()
            self.dests[t] = self.dests[t][i:] + dests[row, idx].tolist()
            self.at[t] = 0


def _batched_counters(plan: BistPlan, patterns: _Patterns):
    """:func:`run_counters` on the batched engine.

    A terminal with no message waiting draws once a cycle, so its offers are a fixed
    sequence (:class:`_Offers`): the draws that do not offer are waiting time. A
    cycle's counts and acknowledged terminals depend only on its injection pattern (the
    waiting terminals' destinations) where the network has no stuck link (the model
    routes a stream by its header, the one of the plan's table for the source and
    destination, which :func:`_model_cycle` checks; a delivered payload is the one sent,
    whatever its sequence number, and passes its check): each
    pattern runs through the model once and is remembered (:data:`MEMO_PATTERNS`;
    patterns that hardly repeat are soon no longer remembered, :data:`MEMO_TRIAL`), or
    looked up in the plan's outcome table (:mod:`fatnet.sim.bisttable`, in ``patterns``;
    a plan the table serves whole runs on :mod:`fatnet.sim.bistrun` instead). With a
    stuck link (whose stream of ones or zeros meets the payload) and in the flipped
    payload's cycle, the cycle runs through the model every time."""
    view = _stuck_view(plan)
    N = plan.terminals
    offers = _Offers(plan)
    # the lists of one terminal's gaps and destinations are replaced as they refill
    gaps, at, odests = offers.gaps, offers.at, offers.dests
    dests, acks = [-1] * N, [0] * N     # acks[s]: s's sequence number before the mask
    wake: dict[int, list] = {}          # cycle -> the terminals that offer then
    for s in range(N):
        _wait(offers, s, 0, wake)
    place, outcome, flip = patterns.place, patterns.outcome, plan.flip_cycle
    code = pattern_code(place, dests)
    counts = {name: 0 for name in gb.COUNTERS}
    c = fresh = 0   # fresh: offers of this cycle by terminals acknowledged in the last
    while True:
        woken = wake.pop(c, None)
        if woken is not None:
            for s, d in woken:
                code += place[s][d] - place[s][-1]
                dests[s] = d
                fresh += 1
        counts["offered"] += fresh
        fresh = 0
        if c == flip or patterns.off:
            entry = _pattern_outcome(plan, view, dests, acks, c)
        else:
            entry = outcome(code, dests, acks, c)
        sent, acked, delivered, bad = entry
        _count_cycle(counts, sent, len(acked), delivered, bad)
        for s in acked:
            acks[s] += 1
            was = place[s][dests[s]]
            if at[s] == len(gaps[s]) and not offers.ready(s):
                code += place[s][-1] - was
                dests[s] = -1
                continue
            i = at[s]
            at[s] = i + 1
            if gaps[s][i] == 0:   # it offers in the next cycle: the common case at load 1
                d = odests[s][i]
                fresh += 1
            else:
                d = -1
                _wait_until(wake, c + 1 + gaps[s][i], s, odests[s][i])
            code += place[s][d] - was
            dests[s] = d
        c += 1
        yield counts


class _Patterns:
    """The outcomes of injection patterns for :func:`_batched_counters`: remembered
    (a dict, until the trial finds they hardly repeat) or looked up in the plan's
    outcome table (:mod:`fatnet.sim.bisttable`) where it serves the plan; ``off`` when
    every cycle runs through the model (a stuck link, or patterns that hardly repeat
    with no table)."""

    def __init__(self, plan: BistPlan, view: _StuckView, table: str):
        self.plan, self.view = plan, view
        self.off = bool(stuck_wires(plan.net))
        space = None if self.off or table == "off" else pattern_space(plan)
        N = plan.terminals
        #: a code per pattern: with no table, a number nobody reads
        self.place = space.place if space is not None else [[0] * (N + 1)] * N
        self.memo: dict = {}
        self.misses = self.cycles = 0
        self.table: OutcomeTable | None = None
        self.bits_of = [tuple(s for s in range(N) if m >> s & 1) for m in range(1 << N)] \
            if space is not None else []
        self.decoded: dict = {}
        if space is not None and (table == "fill" or kept(plan, space)):
            self._use_table(open_table(plan, view, space))

    def _use_table(self, table: OutcomeTable) -> None:
        """Look every pattern up in ``table``."""
        self.table = table
        self.lookup, self.entry = table.lookup, table.entry
        self.outcome = self._from_table     # type: ignore[method-assign]

    def _from_table(self, code: int, dests, acks, c: int):
        """:meth:`outcome` from the table: a lookup, its entry decoded once."""
        e = self.lookup[code] or self.entry(code)
        return self.decoded.get(e) or self._decode(e)

    def _decode(self, e: int) -> tuple:
        entry = self.decoded[e] = decode_entry(e, self.bits_of)
        return entry

    def outcome(self, code: int, dests, acks, c: int):
        """Cycle ``c``'s ``(sent, acknowledged, delivered, bad)`` (:func:`_pattern_outcome`)."""
        self.cycles += 1
        key = tuple(dests)
        entry = self.memo.get(key)
        if entry is not None:
            return entry
        entry = _pattern_outcome(self.plan, self.view, dests, acks, c)
        if len(self.memo) >= MEMO_PATTERNS:
            self.memo.clear()
        self.memo[key] = entry
        self.misses += 1
        # patterns that hardly repeat (random destinations at a high load) are not
        # worth the memory: run each through the model
        if self.misses % MEMO_TRIAL == 0 and (self.cycles - self.misses) * MEMO_RARE < \
                self.misses:
            self.memo.clear()
            self.off = True
        return entry


def _wait(offers: _Offers, s: int, c: int, wake: dict) -> None:
    """Terminal ``s`` has no message waiting from cycle ``c`` on: put it under the cycle
    of its next offer (none if it never offers)."""
    offer = offers.next(s)
    if offer is not None:
        _wait_until(wake, c + offer[0], s, offer[1])


def _wait_until(wake: dict, c: int, s: int, d: int) -> None:
    """Terminal ``s`` offers a message to ``d`` in cycle ``c``."""
    at = wake.get(c)
    if at is None:
        wake[c] = [(s, d)]
    else:
        at.append((s, d))


def _pattern_outcome(plan: BistPlan, view: _StuckView, dests: list, acks: list, c: int):
    """Cycle ``c`` of the waiting terminals' messages (``dests[s]``, -1 for none; the
    sequence number ``acks[s]`` modulo the field) through the model: ``(sent,
    acknowledged, delivered, bad)`` (:func:`_cycle_outcome`)."""
    n, P = plan.n, plan.payload_bits
    srcs = [s for s, d in enumerate(dests) if d >= 0]
    dsts = [dests[s] for s in srcs]
    pays = [gb.make_payload(s, dests[s], acks[s], P, n) ^ (plan.flip_cycle == c and s == 0)
            for s in srcs]
    return (len(srcs), *_cycle_outcome(plan, view, srcs, dsts, pays))


def _model_cycle(plan: BistPlan, view: _StuckView, srcs, dsts, pays):
    """The model runs the cycle's messages that enter the network: ``(outcome, res)``,
    the outcome of each entering message by its index in ``srcs`` and the model's
    result (None when nothing runs). ParameterError when the model leaves a message
    out or drives another stream than the top's table."""
    tb = plan.family.testbench
    P = plan.payload_bits
    into = [i for i, s in enumerate(srcs) if s != view.silent]
    res = None
    if into or view.has_phantom:
        ms = MessageSet.from_pairs([srcs[i] for i in into], [dsts[i] for i in into],
                                   P, 0, payload=[pays[i] for i in into])
        res = tb.simulate(plan.net, ms, tb.prepare(plan.net, ms, list(range(len(into)))))
    outcome: dict = {}
    if res is None:   # nothing entered and no phantom: no outcome
        return outcome, res
    for j, i in enumerate(into):
        o = res.outcomes.get(j)
        want = [1] + plan.headers[srcs[i]][dsts[i]] + int_to_bits(pays[i], P)
        if o is None or list(res.injections[j][1]) != want:
            raise ParameterError(
                f"the model {'leaves out' if o is None else 'drives another stream for'}"
                f" terminal {srcs[i]}'s message to {dsts[i]} in a cycle with "
                f"{len(into)} messages")
        outcome[i] = o
    return outcome, res


def _recv_port_name(plan: BistPlan, key: tuple) -> str:
    """The top's ``recv`` port a delivered stream's last wire ``key`` is."""
    port = plan.family.testbench.recv_port(plan.net, key)
    if port is None:
        raise ValueError(f"wire {key} ends a delivered stream but is no recv port of the top")
    return port[0]


def _phantom_checks(plan: BistPlan, view: _StuckView, res):
    """The payloads of ones the checkers see (a recv wire stuck at 1, the phantoms of
    links stuck at 1): ``(delivered, bad, unheard)``, ``unheard`` the links stuck at 1
    whose phantom nobody acknowledges."""
    n, P, T = plan.n, plan.payload_bits, plan.cycle_length
    delivered = bad = 0
    if view.phantom is not None:
        delivered, bad = (1, 0) if view.phantom else (0, 1)
    phantoms = list(res.phantoms.values()) if view.has_phantom and res is not None else []
    # where each delivered phantom ends: a terminal's checker, or None for a port
    # the top ties off (the fat-tree's ext)
    ends = {o.message: view.terminal_of.get(_recv_port_name(plan, o.path[-1].key))
            for o in phantoms if o.status == "delivered"}
    # the wires stuck at 1 whose phantom nobody acknowledges: it ends where the top
    # ties the port off, or is lost on such a wire in turn
    unheard = set()
    for _ in phantoms:
        for o in phantoms:
            if (o.message in ends and ends[o.message] is None) or \
                    (o.status == "lost" and o.path[-1].key in unheard):
                unheard.add(o.path[0].key)
    for o in phantoms:
        t = ends.get(o.message)
        if t is not None:     # t's checker sees a payload of ones
            if o.arrival + 1 + plan.prefix + P > T:
                raise ParameterError(f"the model delivers a stuck link's stream "
                                     f"of ones to terminal {t} too late to check")
            ok = gb.payload_ok((1 << P) - 1, t, P, n)
            delivered, bad = delivered + ok, bad + (not ok)
    return delivered, bad, unheard


def _source_outcome(plan: BistPlan, view: _StuckView, s: int, o, unheard):
    """Terminal s's message in the cycle, its model outcome ``o`` (None: it did not
    enter), as the top sees it: ``(delivered, bad, acknowledged)``, the first two 0 or
    1."""
    tb = plan.family.testbench
    f = plan.stuck_wire
    n, P, T = plan.n, plan.payload_bits, plan.cycle_length
    delivered = bad = 0
    ack = False
    if o is not None and o.status == "delivered":
        at_stuck = view.stuck_recv is not None and tb.recv_port(
            plan.net, (*o.path[-1].channel, o.path[-1].wire)) == view.stuck_recv
        if not (at_stuck and f is not None and f.signal == "data"):   # the checker sees the payload
            if gb.payload_ok(bits_to_int(o.stream[len(o.stream) - P:]), int(o.dst), P, n):
                delivered += 1
            else:
                bad += 1
        # a recv wire stuck at 0 (data or ack) leaves recv_ack low, which
        # matters where the network passes recv_ack back
        ack = o.ack_time is not None and o.ack_time < T and \
            not (at_stuck and f is not None and f.value == 0 and view.passes_ack)
    elif o is not None and o.ack_time is not None:
        # lost on a link stuck at 1: acknowledged when its phantom is
        ack = o.ack_time < T and o.path[-1].key not in unheard
    if f is not None and (f.direction, f.signal) == ("send", "ack") and s == f.terminal:
        ack = bool(f.value)
    return delivered, bad, ack


def bist_config(plan: BistPlan):
    """The :class:`~fatnet.hdl.bist_config.BistConfig` of the plan's self-testing top."""
    from ..hdl.bist_config import BistConfig
    return BistConfig(
        cycle_length=plan.cycle_length, start_latency=start_latency(plan.net),
        pattern=plan.pattern, payload_bits=plan.payload_bits, prefix=plan.prefix,
        headers=tuple(plan.headers),
        header=partial(plan.family.hardware.bist_header, plan.net),
        states=tuple(plan.states),
        offer_threshold=plan.threshold, report_cycles=plan.report_cycles,
        baud_divisor=plan.baud_divisor, flip_cycle=plan.flip_cycle,
        stuck_wire=plan.stuck_wire, arrival=plan.arrival)


def network_ports(plan: BistPlan, library=None) -> tuple:
    """The family's network top of ``plan`` and its terminals' endpoint interfaces,
    terminal 0 first (the ports the self-test drives and reads)."""
    top = plan.family.hardware.top(plan.net, library=library)
    by_name = {name: iface for name, iface, _ in endpoints(top)}
    return top, [by_name[plan.family.testbench.port_name(plan.net, s)]
                 for s in range(plan.terminals)]


def build_core(plan: BistPlan, library=None):
    """The :class:`~fatnet.hdl.bist.BistCore` around the family's network top."""
    from ..hdl.bist import BistCore
    top, ports = network_ports(plan, library)
    return BistCore(top, ports, bist_config(plan))


def decode_uart(bits, baud_divisor: int) -> str:
    """The text on a UART line sampled once per clock (8N1, ``baud_divisor`` clocks per
    bit): each start bit's falling edge, then mid-bit samples."""
    bits = np.asarray(bits, dtype=np.uint8)
    out, i, D = [], 0, baud_divisor
    while i < bits.size:
        if bits[i] == 0 and (i == 0 or bits[i - 1] == 1):
            mids = [i + D * (j + 1) + D // 2 for j in range(9)]
            if mids[-1] >= bits.size:
                break
            byte = sum(int(bits[p]) << j for j, p in enumerate(mids[:8]))
            out.append(chr(byte))
            i = i + 10 * D - D // 2
        else:
            i += 1
    return "".join(out)
