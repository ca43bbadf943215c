"""A checking harness around a network top: many delivery cycles run back to back from
memories and compared with the expected wires in hardware.

The packed harness (:mod:`fatnet.hdl.harness`) replays one delivery cycle per start
strobe and captures it; a testbench then reads and compares the captures, so it touches
the design once per cycle. The checking harness holds a *batch* of up to ``B`` cycles:
their stimulus and the model's expected ``recv`` and ``send_ack`` words, in five
memories of one flat layout. One ``start`` strobe runs ``cycles`` delivery cycles back
to back (the harness strobes the network again itself one clock after each cycle's last
bit-time) and compares, at every bit-time, every endpoint's ``recv`` and ``send_ack``
wires with the expected words. It counts the bit-times that differ (``errors``) and
latches the first one: its cycle, bit-time and the differing bits of both words
(``first_recv_diff``, ``first_ack_diff``: 1 where the wire differs). The captures of
every cycle stay in ``recv_cap`` and ``ack_cap``, so a testbench that finds ``errors``
non-zero can read the failing cycles' wires; a testbench of a passing batch writes the
memories, strobes once, waits, and reads ``errors``.

Layout: the batch is a flat stream of words, word ``j = c * T + t`` being bit-time
``t`` of cycle ``c``; row ``r`` holds words ``r * k .. r * k + k - 1`` (``k`` =
:func:`checker_geometry`'s ``k``), word ``j`` at bits ``(j mod k) * width ..`` of row
``j div k``. The send words (``stim``, ``expect_ack``, ``ack_cap``) and the recv words
(``expect_recv``, ``recv_cap``) are packed as in the packed harness
(:func:`fatnet.hdl.harness.endpoint_layout`).

Timing: cycle 0's strobe is the ``start`` strobe itself; cycle ``c + 1``'s is the clock
after cycle ``c``'s last bit-time, so cycle ``c``'s bit-time ``t`` is the clock ``c * (T
+ 1 + D) + D + 1 + t`` after the ``start`` strobe's (``D``: the start latency) and the
batch ends ``cycles * (T + 1 + D)`` clocks after the strobe's clock, as that many
strobes of the packed harness would. The other inputs of the network top (a splitter
network's ``fault_mask``) pass straight through and hold for the whole batch. The
destinations' acknowledgment is the packed harness's (auto-acknowledge, cleared at each
cycle's strobe).
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Module, Signal, unsigned
from amaranth.hdl import MemoryData
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.cycle import start_latency
from .harness import endpoint_layout, endpoint_ports, extra_inputs, recv_layout

__all__ = ["CheckingHarness", "CheckerShape", "SHAPES", "DEFAULT_SHAPE",
           "checker_geometry", "checker_manifest", "CHECK_MEMORIES"]


class CheckerShape(NamedTuple):
    """The sizes of the checking harness's memories."""

    #: Widest row made of several bit-times' words (a word wider than this is a row of
    #: its own).
    row_bits: int
    #: Bits of one batch memory at most (the widest of the five, ``rows * k * width``):
    #: the batch holds as many whole cycles as fit, at least two.
    batch_bits: int


#: The checking harness's shapes. ``wide``: rows of up to 4,096 bits and batches of up to
#: 2^20 bits, so a testbench writes a batch in few, wide rows (Verilator, where a write
#: through the simulator costs more than the clocks it feeds; the co-simulation and the
#: soak). ``narrow``: one word a row and batches of up to 2^14 bits, because an
#: event-driven simulator evaluates a whole row at every bit-time (Icarus runs the
#: 3-cube's 1,272 cycles in 1 s with narrow rows, 54 s with wide ones), and every bit of
#: the memories' initial values is work for the converter and the simulators' compilers
#: (a short run is mostly its build).
SHAPES = {"wide": CheckerShape(row_bits=4096, batch_bits=1 << 20),
          "narrow": CheckerShape(row_bits=1, batch_bits=1 << 14)}

#: The shape :func:`fatnet.hdl.gen.generate` writes unless told otherwise.
DEFAULT_SHAPE = "wide"


#: The checking harness's memories: name -> which words it holds ("send" or "recv").
CHECK_MEMORIES = {"stim": "send", "expect_recv": "recv", "expect_ack": "send",
                  "recv_cap": "recv", "ack_cap": "send"}


def checker_geometry(T: int, W: int, Wr: int, shape: str = DEFAULT_SHAPE) -> dict:
    """The checking harness's batch for cycles of ``T`` words of ``W`` (send) and ``Wr``
    (recv) bits in memories of ``shape`` (:data:`SHAPES`): ``B`` cycles a batch (as many
    as its ``batch_bits`` hold, at least two), ``k`` words a row (as many as its
    ``row_bits`` hold, at least one) and ``rows`` per memory (``ceil(B * T / k)``)."""
    row_bits, batch_bits = SHAPES[shape]
    widest = max(W, Wr, 1)
    B = max(2, batch_bits // (T * widest))
    k = max(1, min(row_bits // widest, B * T // 2))
    return {"T": T, "W": W, "Wr": Wr, "B": B, "k": k, "rows": -(-(B * T) // k),
            "shape": shape}


def _widths(core) -> tuple[int, int]:
    return (sum(w for _, _, w in endpoint_layout(core)),
            sum(w for _, _, w in recv_layout(core)))


def checker_manifest(net, top: str, core, shape: str = DEFAULT_SHAPE) -> dict:
    """The manifest's ``checker`` entry: what a testbench needs to drive the checking
    harness of ``core`` (of ``shape``) without reading the Verilog."""
    T, D = net.cycle_length, start_latency(net)
    geo = checker_geometry(T, *_widths(core), shape)
    B, k, W, Wr = geo["B"], geo["k"], geo["W"], geo["Wr"]
    name = f"{top}_checker"
    ports = [
        {"name": "clk", "width": 1, "dir": "in", "meaning": "bit clock"},
        {"name": "rst", "width": 1, "dir": "in", "meaning": "synchronous reset (the "
         "memories keep their contents)"},
        {"name": "start", "width": 1, "dir": "in", "meaning": "strobe, one clock: runs "
         "the batch's first 'cycles' delivery cycles back to back; clears errors"},
        {"name": "cycles", "width": B.bit_length(), "dir": "in",
         "meaning": f"delivery cycles the next batch runs, 1 .. {B}; held through it"},
        {"name": "busy", "width": 1, "dir": "out", "meaning": "the batch is in progress "
         "(from the start strobe's clock to the last cycle's last bit-time)"},
        {"name": "errors", "width": 32, "dir": "out", "meaning": "bit-times of the batch "
         "so far at which a recv or send_ack wire differed from the expected word"},
        {"name": "first_cycle", "width": max(1, (B - 1).bit_length()), "dir": "out",
         "meaning": "the cycle (within the batch) of the first differing bit-time"},
        {"name": "first_bit_time", "width": max(1, (T - 1).bit_length()), "dir": "out",
         "meaning": "the bit-time of the first differing bit-time"},
        {"name": "first_recv_diff", "width": Wr, "dir": "out", "meaning": "recv word XOR "
         "expected recv word at the first differing bit-time (packed as recv_packed)"},
        {"name": "first_ack_diff", "width": W, "dir": "out", "meaning": "send_ack word "
         "XOR expected send_ack word at the first differing bit-time (packed as packed)"},
    ] + [{"name": n, "width": w, "dir": "in",
          "meaning": f"passed straight through to the network top's {n} (held for a "
                     f"batch)"} for n, w in extra_inputs(core)]
    what = {"stim": "written by the testbench: the send words the harness drives",
            "expect_recv": "written by the testbench: the expected recv words",
            "expect_ack": "written by the testbench: the expected send_ack words",
            "recv_cap": "written by the harness: every bit-time's recv wires",
            "ack_cap": "written by the harness: every bit-time's send_ack wires"}
    memories = [{"name": mem, "path": f"{name}.{mem}", "rows": geo["rows"],
                 "row_bits": k * (W if which == "send" else Wr), "words": which,
                 "word_bits": W if which == "send" else Wr, "meaning": what[mem]}
                for mem, which in CHECK_MEMORIES.items()]
    return {
        "top": name, "sources": [f"{top}.v", f"{name}.v"], "ports": ports,
        "shape": shape, "batch_cycles": B, "bit_times_per_row": k, "rows": geo["rows"],
        "memories": memories,
        "row_layout": (f"the batch is one stream of words: word j = c*{T} + t is bit-time "
                       f"t of cycle c; row r holds words r*{k} .. r*{k}+{k - 1}, word j "
                       f"at bits (j mod {k})*word_bits .. +word_bits-1 of row j div {k}"),
        "timing": (f"write the memories' rows, set cycles (n), pulse start for one "
                   f"clock, wait n*{T + 1 + D} - 1 more clocks (n*(T + 1 + "
                   f"start_latency_clocks) from the strobe's clock; busy falls), read "
                   f"errors (and, if it is not 0, first_* and the capture rows); cycle c "
                   f"+ 1 is strobed by the harness one clock after cycle c's bit-time "
                   f"{T - 1}; auto-acknowledge as in the harness, cleared at each "
                   f"cycle's strobe"),
    }


class CheckingHarness(wiring.Component):
    """The network with a batch of cycles' stimulus, expected wires and captures in
    memories, compared in hardware (module docstring).

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
        Gives the cycle length ``T`` and the start latency; names the top's instance.
    core : wiring.Component
        The network top to wrap (or the stand-in instance of Verilog generation).
    shape : str
        The memories' sizes, a key of :data:`SHAPES`.

    Attributes
    ----------
    stim, expect_recv, expect_ack, recv_cap, ack_cap : MemoryData
        The batch memories (:data:`CHECK_MEMORIES`), ``rows`` rows of ``k`` words.
    batch_cycles, bit_times_per_row, rows, word_width, recv_width : int
        ``B``, ``k``, the memories' depth, ``W`` and ``Wr``.
    """

    def __init__(self, net, core, shape: str = DEFAULT_SHAPE):
        if shape not in SHAPES:
            raise ValueError(f"shape must be one of {', '.join(SHAPES)}, not {shape!r}")
        self._core, self._core_name = core, net.family
        self.cycle_length = T = net.cycle_length
        self.start_latency = start_latency(net)
        self.word_width, self.recv_width = W, Wr = _widths(core)
        geo = checker_geometry(T, W, Wr, shape)
        self.batch_cycles, self.bit_times_per_row, self.rows = geo["B"], geo["k"], geo["rows"]
        self.extra = extra_inputs(core)
        B = self.batch_cycles
        members = {"start": In(1), "cycles": In(B.bit_length()), "busy": Out(1),
                   "errors": Out(32), "first_cycle": Out(range(B)),
                   "first_bit_time": Out(range(T)), "first_recv_diff": Out(Wr),
                   "first_ack_diff": Out(W)}
        members.update((name, In(width)) for name, width in self.extra)
        super().__init__(members)
        k = self.bit_times_per_row
        for name, which in CHECK_MEMORIES.items():
            width = W if which == "send" else Wr
            setattr(self, name, MemoryData(shape=unsigned(k * width), depth=self.rows,
                                           init=[]))

    def elaborate(self, platform):
        m = Module()
        m.submodules[self._core_name] = dut = self._core
        ports = [p for _, p in endpoint_ports(dut)]
        recv, ack = Cat(p.recv for p in ports), Cat(p.send_ack for p in ports)
        strobe = self._sequence(m, dut)
        words = self._words(m, dut, recv, ack)
        m.d.comb += Cat(p.send for p in ports).eq(words["stim"])
        self._compare(m, dut, recv ^ words["expect_recv"], ack ^ words["expect_ack"])
        self._acknowledge(m, ports, recv, strobe)
        m.d.comb += [getattr(dut, name).eq(getattr(self, name)) for name, _ in self.extra]
        return m

    def _sequence(self, m, dut):
        """The cycles of the batch: the network's start (the strobe, then one clock
        after each cycle's last bit-time while cycles remain), the cycle and bit-time
        counters and ``busy``. Returns the network's start."""
        T, B = self.cycle_length, self.batch_cycles
        self._cycle, self._bit = cycle, bit = Signal(range(B)), Signal(range(T))
        again, running = Signal(), Signal()
        m.d.comb += [dut.start.eq(self.start | again), self.busy.eq(self.start | running)]
        m.d.sync += again.eq(0)
        with m.If(self.start):
            m.d.sync += [cycle.eq(0), bit.eq(0), running.eq(1)]
        with m.Elif(dut.busy):
            with m.If(bit == T - 1):
                m.d.sync += bit.eq(0)
                with m.If(cycle + 1 < self.cycles):
                    m.d.sync += [again.eq(1), cycle.eq(cycle + 1)]
                with m.Else():
                    m.d.sync += running.eq(0)
            with m.Else():
                m.d.sync += bit.eq(bit + 1)
        return dut.start

    def _words(self, m, dut, recv, ack) -> dict:
        """The batch memories' word of the current bit-time: the stimulus and expected
        words read, the captures written. The (row, word) counters run through the
        batch's flat stream, advancing at every bit-time."""
        k = self.bit_times_per_row
        row = Signal(range(self.rows + 1))
        word = Signal(range(k)) if k > 1 else None
        mems = {name: Memory(data=getattr(self, name)) for name in CHECK_MEMORIES}
        for name, mem in mems.items():  # the Verilog arrays are named after them
            m.submodules[name] = mem
        lane = Signal(k)
        widths = {"send": self.word_width, "recv": self.recv_width}
        out = {}
        for name in ("stim", "expect_recv", "expect_ack"):
            port = mems[name].read_port(domain="comb")
            out[name] = Signal(widths[CHECK_MEMORIES[name]], name=f"{name}_word")
            m.d.comb += port.addr.eq(row)
            self._select(m, dut, word, port.data, out[name], lane if name == "stim" else None)
        for name, value in (("recv_cap", recv), ("ack_cap", ack)):
            wp = mems[name].write_port(granularity=len(value))
            m.d.comb += [wp.addr.eq(row), wp.data.eq(value.replicate(k)), wp.en.eq(lane)]
        with m.If(self.start):
            m.d.sync += row.eq(0)
            if word is not None:
                m.d.sync += word.eq(0)
        with m.Elif(dut.busy):
            if word is None:
                m.d.sync += row.eq(row + 1)
            else:
                with m.If(word == k - 1):
                    m.d.sync += [word.eq(0), row.eq(row + 1)]
                with m.Else():
                    m.d.sync += word.eq(word + 1)
        return out

    def _select(self, m, dut, word, data, into, lane) -> None:
        """``into`` = word ``word`` of the row ``data`` while the network is busy (0
        outside); ``lane`` (if given) its one-hot lane, for the capture writes."""
        k, width = self.bit_times_per_row, len(into)
        with m.If(dut.busy):
            if word is None:
                m.d.comb += into.eq(data)
                if lane is not None:
                    m.d.comb += lane.eq(1)
                return
            with m.Switch(word):
                for i in range(k):  # the last word as the default: a complete case
                    with m.Case(i) if i < k - 1 else m.Default():
                        m.d.comb += into.eq(data[i * width:(i + 1) * width])
                        if lane is not None:
                            m.d.comb += lane.eq(1 << i)

    def _compare(self, m, dut, recv_diff, ack_diff) -> None:
        """Count the bit-times whose words differ; latch the first one. The count adds
        the comparison's bit itself, not 1 under a condition, so that on a four-state
        simulator an X on a compared wire makes the count X, where a condition would
        read it as false."""
        differs = dut.busy & (recv_diff.any() | ack_diff.any())
        with m.If(self.start):
            m.d.sync += self.errors.eq(0)
        with m.Else():
            m.d.sync += self.errors.eq(self.errors + differs)
        with m.If(~self.start & differs):
            with m.If(self.errors == 0):
                m.d.sync += [self.first_cycle.eq(self._cycle), self.first_bit_time.eq(self._bit),
                             self.first_recv_diff.eq(recv_diff),
                             self.first_ack_diff.eq(ack_diff)]

    def _acknowledge(self, m, ports, recv, strobe) -> None:
        """The destinations' auto-acknowledge, as in the packed harness: a ``recv_ack``
        rises with its wire's M bit and holds until the strobe (and the start latency's
        clocks after it, while the switches still show the last cycle) of the next
        cycle."""
        acking = Signal(len(recv))
        clearing = earlier = strobe
        for j in range(self.start_latency):
            late = Signal(name=f"start_late{j + 1}")
            m.d.sync += late.eq(earlier)
            clearing, earlier = clearing | late, late
        m.d.comb += Cat(p.recv_ack for p in ports).eq(acking | recv)
        with m.If(clearing):
            m.d.sync += acking.eq(0)
        with m.Else():
            m.d.sync += acking.eq(acking | recv)
