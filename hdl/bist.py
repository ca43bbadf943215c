"""The self-testing top (BIST) around any family's network top, family-agnostic (it sees
the network's controller and endpoints only, and each terminal's headers as the model
gives them), built from one :class:`~fatnet.hdl.bist_config.BistConfig` and made of
components: per terminal a traffic generator and a checker per recv wire
(:mod:`fatnet.hdl.bist_traffic`), the counters (:mod:`fatnet.hdl.bist_counters`), the
report formatter (:mod:`fatnet.hdl.bist_report`) and the UART transmitter
(:mod:`fatnet.hdl.bist_uart`), the last two joined by a byte stream (valid/ready).
:class:`BistCore` holds the period's counter and strobes and joins the parts.

One *BIST period* is ``max(T + 2 + D, m + 1)`` clocks, T the network's delivery cycle,
D its start latency and m the generator's steps per draw
(:func:`fatnet.golden.bist.period_clocks`, :func:`~fatnet.golden.bist.draw_steps`):

* clock 0, *prepare*: the outcome of the cycle that just ended is latched (per
  terminal: acknowledged, or lost and kept to be sent again; per destination: a
  complete payload that passes its check is delivered, one that fails it is an error),
  then every terminal with no message waiting takes its draw
  (:func:`fatnet.golden.bist.draw`, read from its generator's state), and every terminal
  with a message has its stream ready (loaded, or kept from the cycle before): ``1``,
  the header for its destination (computed from the source and the destination by the
  family's rule, the model's stream bit for bit:
  :meth:`fatnet.hdl.family.HardwareFamily.bist_header`), the payload
  (:func:`fatnet.golden.bist.make_payload`);
* from clock 1 on: the latched outcomes are counted, in stages so that no clock's
  path runs through more than two of the adder tree's adders from a checker to a
  counter (:class:`~fatnet.hdl.bist_counters.BistCounters`): one tree sums a kind of
  outcome a clock (L clocks deep, :func:`~fatnet.hdl.bist_counters.tree_clocks` of the
  terminals or the recv wires, whichever are more), clock L + 6 forms the cycle's
  errors and lost messages, clocks L + 7 .. L + 17 sweep the counters' memory with one
  adder (a period is at least :data:`~fatnet.hdl.bist_counters.MIN_PERIOD` clocks);
* from clock 1 on: the generators' states, one memory for all terminals
  (:class:`~fatnet.hdl.bist_draws.DrawEngine`), are read a word a clock; each terminal
  that took its draw has its state moved on by the m steps of a draw and the draw the
  new state gives written into its draw register, which its next draw reads;
* clock 1: the network's ``start`` strobe;
* clocks 2 .. D + 1: the strobe in the network's start tree (none when D = 0);
* clocks D + 2 .. D + T + 1: the network's bit-times 0 .. T - 1: each terminal drives its
  stream on ``send`` (bit p at bit-time p) and watches ``send_ack``; each destination
  raises ``recv_ack`` from its message's first bit (the M bit) on, skips the ``prefix``
  bits the network leaves before the payload, and accumulates the payload's check.

Every strobe of the period (prepare, start, the bit-times, those of the parts of the
generators' kept streams, the checkers' payload bit-times where every message arrives
at one bit-time) is a flip-flop, loaded in the clock before from one table of the
period's counter (:class:`_Pulses`), the draw engine's word strobes a one-hot shift
register (:class:`~fatnet.hdl.bist_draws.DrawEngine`), and whether a cycle has run
is a flip-flop that the reset clears and that is high from the clock after it, so that
the nets that fan out to the terminals and into the network start at a register; each
but ``start`` has a copy for every :data:`STROBE_GROUP`
terminals (of the strobes those terminals follow), and prepare and whether a cycle has
run one for the counters and the draw engine, so that no strobe's net reaches every
terminal across the chip. No flip-flop of a generator or a checker takes the reset: the first
prepare after it (``ran`` low, as at every clock of the reset) starts each afresh.

Counts per cycle also give two errors: acknowledged but not delivered, and delivered but
not acknowledged (the source sends it again: delivered twice); errors add
``|acknowledged - delivered|``. Every ``report_cycles`` completed cycles the sweep
writes the seven counters' new values (:data:`fatnet.golden.bist.COUNTERS`) into the
report formatter's snapshot, which sends them as one line,
``fatnet C=xxxxxxxx O=... E=xxxxxxxx`` and CR LF, 8N1 at ``clock / baud_divisor``
baud.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..golden.bist import COUNTERS
from .bist_config import BistConfig
from .bist_draws import DrawEngine, draw_fields
from .bist_counters import SOURCE_OUTCOMES, WIRE_OUTCOMES, BistCounters, count_clocks
from .bist_report import ReportFormatter, line_template
from .bist_traffic import SEND_LEAD, PayloadChecker, TrafficGenerator
from .bist_uart import UartTx
from .gen import LINT_WAIVERS
from .logic import equals

__all__ = ["BistCore", "BistConfig", "line_template", "bist_lint_waivers", "count_clocks"]

#: Terminals per copy of the period's strobes (:meth:`BistCore._strobes`): each copy's
#: nets reach these terminals only, not every terminal across the chip.
STROBE_GROUP = 16

#: Verilator waivers for the self-testing top's Verilog (network and BIST in one file):
#: the network's own (:data:`fatnet.hdl.gen.LINT_WAIVERS`) and WIDTHEXPAND, because
#: Yosys narrows an adder's zero-extended operand (a per-cycle count added to a 32-bit
#: counter, the first level of the counts' adder trees) to its non-zero bits, and
#: Verilator then reports the narrower operand. The network alone is -Wall clean
#: without it (``fatnet gen``).
BIST_LINT_EXTRA = """// Yosys narrows an adder's zero-extended operand to its non-zero bits.
lint_off -rule WIDTHEXPAND
"""


def bist_lint_waivers() -> str:
    """The contents of the self-testing top's Verilator control file."""
    return LINT_WAIVERS + BIST_LINT_EXTRA


class _Period(NamedTuple):
    """The period's strobes every terminal follows."""

    prepare: Signal   #: clock 0 of the period
    live: Signal | None   #: a network bit-time (None in the counters' copy)
    ran: Signal       #: a cycle has run since reset
    streams: dict      #: the generators' stream strobes, (name, bit-times) -> strobe
    window: dict       #: the checkers' payload strobes (``WINDOW_STROBES``), if any


class _Pulses:
    """The period's strobes as one lookup of the period's counter: every strobe is a
    flip-flop whose next value is a column of one table, the clocks of the period at
    which it is high, picked by the counter (:meth:`decode`: a few LUTs per column,
    two levels from the counter where the period is at most 32 clocks). A strobe has no
    logic of its own (no window set and cleared, no feedback), and the copies of a
    strobe share their column.

    Parameters
    ----------
    period : int
        The period's clocks.
    """

    def __init__(self, period: int):
        self._period = period
        self._columns: dict[frozenset, Signal] = {}   # the clocks it is high -> column

    def strobe(self, m, name: str, clocks, init: int = 0) -> Signal:
        """A flip-flop ``name`` high in the period's ``clocks`` (each in 0 .. period -
        1), loaded from the table in the clock before (``init``: its reset value)."""
        clocks = frozenset(clocks)
        if not all(0 <= c < self._period for c in clocks):
            raise ValueError(f"{name}: clocks {sorted(clocks)} outside the period "
                             f"of {self._period}")
        if clocks not in self._columns:
            self._columns[clocks] = Signal(name=f"pulse_{len(self._columns)}")
        flop = Signal(name=name, init=init)
        m.d.sync += flop.eq(self._columns[clocks])
        return flop

    def decode(self, m, t) -> None:
        """The table, from the period's counter ``t``: at clock c each column is
        whether its strobe is high at clock c + 1 (mod the period), bit 0 of a
        constant shifted right by ``t``: a function of ``t``'s bits alone, which Yosys
        maps as any function of them (one LUT for four bits, two levels for five),
        not as a sum of comparisons with ``t``; and a continuous one, which a Verilog
        simulator evaluates from time 0 (a process would wait for ``t`` to change)."""
        P = self._period
        for clocks, column in self._columns.items():
            table = sum(1 << c for c in range(P) if (c + 1) % P in clocks)
            m.d.comb += column.eq((Const(table, P) >> t)[0])


class BistCore(wiring.Component):
    """The BIST around a network top (module docstring).

    Parameters
    ----------
    network : wiring.Component
        The family's network top (``start``, ``busy`` and one endpoint per terminal).
    ports : list
        Terminal s's endpoint interface (``send``, ``send_ack``, ``recv``,
        ``recv_ack``), s = 0 .. 2^n - 1.
    config : BistConfig
        The self-test's parameters, one terminal per port.

    Attributes
    ----------
    uart_tx : Signal
        The report lines, 8N1.
    led_heartbeat, led_error : Signal
        The LEDs.
    counters : dict of str to amaranth.lib.memory.MemoryData row
        The counters of the latest report (32 bits each; the report formatter's
        snapshot), in :data:`~fatnet.golden.bist.COUNTERS` order: a simulation reads
        them with ``ctx.get``.
    report : Signal
        A report's counters are all in ``counters`` and its line starts (one clock).
    """

    def __init__(self, network, ports, config: BistConfig):
        if not isinstance(config, BistConfig):
            raise ValueError(f"config must be a BistConfig, got {config!r}")
        if len(ports) != config.terminals:
            raise ValueError(f"ports must be one per terminal of the config "
                             f"({config.terminals}), got {len(ports)}")
        self._network, self._ports, self._config = network, ports, config
        self._sources = [TrafficGenerator(config, s) for s in range(config.terminals)]
        self._engine = DrawEngine(config) if sum(draw_fields(config)) else None
        self._checkers = [[PayloadChecker(config, s) for _ in port.recv]
                          for s, port in enumerate(ports)]
        wires = sum(map(len, self._checkers))
        self._counting = BistCounters(config.terminals, wires, config.report_cycles)
        self._report = ReportFormatter()
        super().__init__({"uart_tx": Out(1, init=1), "led_heartbeat": Out(1),
                          "led_error": Out(1)})
        self.counters = {name: self._report.memory.data[k] for k, name in enumerate(COUNTERS)}
        self.report = self._report.started

    def elaborate(self, platform):
        m = Module()
        m.submodules.network = self._network
        m.submodules.counting = counting = self._counting
        m.submodules.report = report = self._report
        m.submodules.uart = uart = UartTx(self._config.baud_divisor)
        copies, shared = self._period(m)
        self._terminals(m, copies)
        m.d.comb += [counting.prepare.eq(shared.prepare), counting.ran.eq(shared.ran)]
        if self._engine is not None:
            m.submodules.draws = engine = self._engine
            m.d.comb += [engine.prepare.eq(shared.prepare), engine.ran.eq(shared.ran)]
        wiring.connect(m, counting.o_report, report.i_report)
        wiring.connect(m, report.o_stream, uart.i_stream)
        m.d.comb += self.uart_tx.eq(uart.tx)
        self._indicators(m)
        return m

    def _period(self, m) -> tuple[list[_Period], _Period]:
        """The BIST period's counter and the network's ``start`` strobe (clock 1), and
        the copies of the other strobes (:meth:`_strobes`): one for each
        :data:`STROBE_GROUP` terminals, in their order, and one (prepare and ``ran``
        alone) for the counters and the draw engine."""
        period = self._config.period
        t = Signal(range(period), name="period_t")
        m.d.sync += t.eq(Mux(equals(t, period - 1), 0, t + 1))
        pulses = _Pulses(period)
        m.d.comb += self._network.start.eq(pulses.strobe(m, "start", {1}))
        groups = range(0, self._config.terminals, STROBE_GROUP)
        copies = [self._strobes(m, pulses, f"strobe{g}", self._sources[s:s + STROBE_GROUP])
                  for g, s in enumerate(groups)]
        shared = self._strobes(m, pulses, f"strobe{len(copies)}", None)
        pulses.decode(m, t)
        return copies, shared

    def _strobes(self, m, pulses: "_Pulses", prefix: str, sources) -> _Period:
        """One copy of the period's strobes (:class:`_Pulses`), named
        ``{prefix}_...``: clock 0 prepare, whether a cycle has run, and for the
        generators ``sources`` (None: prepare and ``ran`` alone) and their checkers,
        D + 2 .. D + T + 1 the bit-times, the bit-times of the parts of their kept
        streams (:meth:`_stream_strobes`), and where every message arrives at one
        bit-time the checkers' (:meth:`_payload_window`). The copies' flip-flops are
        kept apart (:func:`~fatnet.hdl.controller.keep_start_tree`).

        ``ran`` is a flip-flop that the reset clears and that is high from the clock
        after it: the reset's last clock is the last prepare with it low (the prepare
        strobe's reset value is high), and no logic of the period feeds it, so the nets
        it reaches start at a register whose input is a constant."""
        D, T = self._config.start_latency, self._config.cycle_length
        prep = pulses.strobe(m, f"{prefix}_prepare", {0}, init=1)   # reset is clock 0
        ran = Signal(name=f"{prefix}_ran")                 # a cycle has run since reset
        m.d.sync += ran.eq(1)
        if sources is None:
            return _Period(prep, None, ran, {}, {})
        live = pulses.strobe(m, f"{prefix}_live", range(D + 2, D + T + 2))   # a bit-time
        return _Period(prep, live, ran, self._stream_strobes(m, pulses, prefix, sources),
                       self._payload_window(m, pulses, prefix))

    def _stream_strobes(self, m, pulses: "_Pulses", prefix: str, sources) -> dict:
        """The strobes of the generators ``sources`` that keep their streams, one per
        distinct name and bit-times
        (:attr:`~fatnet.hdl.bist_traffic.TrafficGenerator.strobes`), each
        :data:`~fatnet.hdl.bist_traffic.SEND_LEAD` clock before its bit-times (the
        generator registers its stream's bit): ``(name, bit-times)`` -> strobe."""
        lead = self._config.start_latency + 2 - SEND_LEAD   # bit-time 0's clock, less it
        strobes: dict = {}
        for gen in sources:
            for key in gen.strobes.items():
                if key not in strobes:
                    name, times = key
                    strobes[key] = pulses.strobe(m, f"{prefix}_{name}_{len(strobes)}",
                                                 {lead + b for b in times})
        return strobes

    def _payload_window(self, m, pulses: "_Pulses", prefix: str) -> dict:
        """Where every message arrives at one bit-time a (the config's ``arrival``),
        the checkers' strobes: ``arrived``, bit-time a; ``in_payload``, the payload's
        bit-times a + 1 + prefix .. T - 1; ``in_source``, its first n. Else none."""
        c = self._config
        if c.arrival is None:
            return {}
        arrived = c.start_latency + 2 + c.arrival     # the clock of bit-time a
        first = arrived + 1 + c.prefix                  # of the payload's first bit
        return {"arrived": pulses.strobe(m, f"{prefix}_arrived", {arrived}),
                "in_payload": pulses.strobe(m, f"{prefix}_in_payload",
                                            range(first, first + c.payload_bits)),
                "in_source": pulses.strobe(m, f"{prefix}_in_source",
                                           range(first, first + c.n))}

    def _terminals(self, m, copies: list) -> None:
        """Every terminal's generator and checkers, joined to its port (through the
        stuck wire, if it is one of theirs), to its group's copy of the period's
        strobes, to the draw engine and to the counters' outcome flags."""
        flags: dict[str, list] = {key: [] for key in (*SOURCE_OUTCOMES, *WIRE_OUTCOMES)}
        for s, port in enumerate(self._ports):
            period = copies[s // STROBE_GROUP]
            m.submodules[f"t{s}_source"] = gen = self._sources[s]
            self._follow(m, gen, period)
            self._draws(m, gen, s)
            m.d.comb += [getattr(gen, key[0]).eq(period.streams[key])
                         for key in gen.strobes.items()]
            m.d.comb += gen.send_ack.eq(self._read(port.send_ack[0], s, "send", "ack"))
            self._drive(m, port.send[0], gen.send, s, "send", "data")
            for key in SOURCE_OUTCOMES:
                flags[key].append(getattr(gen, key))
            for w, chk in enumerate(self._checkers[s]):
                m.submodules[f"t{s}_w{w}_check"] = chk
                self._follow(m, chk, period)
                m.d.comb += chk.recv.eq(self._read(port.recv[w], s, "recv", "data", w))
                self._drive(m, port.recv_ack[w], chk.recv_ack, s, "recv", "ack", w)
                for key in WIRE_OUTCOMES:
                    flags[key].append(getattr(chk, key))
        flip = self._config.flip_cycle
        if flip is not None:
            m.d.comb += self._sources[0].flip.eq(equals(self._loading(m, copies[0]), flip))
        m.d.comb += [getattr(self._counting.flags, key).eq(Cat(bits))
                     for key, bits in flags.items()]

    def _draws(self, m, gen, s: int) -> None:
        """Terminal s's generator takes its next draw from the draw engine (word
        s // k, lane s % k), where its draws vary."""
        engine = self._engine
        if engine is None:
            return
        k = engine.lanes
        m.d.comb += [engine.sent[s].eq(gen.sent), engine.offered[s].eq(gen.offered),
                     gen.draw.eq(engine.draws[s % k]),
                     gen.draw_ready.eq(engine.ready[s // k])]

    @staticmethod
    def _follow(m, part, period: _Period) -> None:
        """A generator or checker follows the period's strobes (a windowed checker
        its payload's strobes too)."""
        m.d.comb += [part.prepare.eq(period.prepare), part.live.eq(period.live),
                     part.ran.eq(period.ran)]
        if getattr(part, "windowed", False):
            m.d.comb += [getattr(part, key).eq(strobe)
                         for key, strobe in period.window.items()]

    @staticmethod
    def _loading(m, period: _Period):
        """The index of the cycle being prepared (32 bits): the prepares before it."""
        loading = Signal(32, name="loading")
        with m.If(period.prepare):
            m.d.sync += loading.eq(loading + 1)
        return loading

    def _stuck_value(self, s, direction, signal, w=0):
        """The stuck value of terminal s's wire w, or None for a sound wire."""
        f = self._config.stuck_wire
        if f is not None and (f.terminal, f.direction, f.signal, w) == \
                (s, direction, signal, 0):
            return Const(f.value, 1)
        return None

    def _read(self, wire, s, direction, signal, w=0):
        """What the top sees on a wire the network drives (the stuck value)."""
        v = self._stuck_value(s, direction, signal, w)
        return wire if v is None else v

    def _drive(self, m, wire, value, s, direction, signal, w=0):
        """Drive a wire into the network (with its stuck value, if stuck)."""
        v = self._stuck_value(s, direction, signal, w)
        m.d.comb += wire.eq(value if v is None else v)

    def _indicators(self, m) -> None:
        """The LEDs: an error was counted; a heartbeat."""
        m.d.comb += self.led_error.eq(self._counting.error)
        beat = Signal(24, name="heartbeat")
        m.d.sync += beat.eq(beat + 1)
        m.d.comb += self.led_heartbeat.eq(beat[-1])
