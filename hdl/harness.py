"""A test harness around a network top: whole delivery cycles in memories, replayed and
captured by the harness itself.

A delivery cycle's stimulus is ``T`` words of ``W`` bits (``T`` bit-times, ``W`` = every
endpoint's ``send`` wires packed). The harness keeps it in a memory, ``stim``, that a
testbench fills by writing its rows directly (through the simulator's handles, as one
writes any array: nothing is clocked in), pulses ``start``, and ``T`` clocks later reads
two more memories, ``recv_cap`` and ``ack_cap``, which the harness filled with every
endpoint's ``recv`` and ``send_ack`` wires at every bit-time. A testbench therefore
touches the design only between delivery cycles, never per clock, and no port is wider
than the network's own (a port, or any Amaranth value, is limited to 65535 bits; a
cycle's stimulus of a large network is not).

Rows: a memory row holds ``k`` consecutive bit-times (:func:`bit_times_per_row`: as many
whole words as fit in :data:`ROW_BITS` bits, at least one), so a small network's whole
cycle is one row and a large one's is ``ceil(T / k)`` rows. Row ``r`` is bits
``r*k*W .. (r+1)*k*W - 1`` of the cycle's packed vector, in which word ``t`` (bits
``t*W .. t*W + W - 1``) is bit-time ``t``: the rows concatenated, row 0 lowest, are that
vector (words past ``T - 1`` in the last row are not used). Within a word the endpoints
follow :func:`endpoint_layout`: the ``send`` words (``stim``, ``ack_cap``) by the
endpoints' send widths, the ``recv`` words (``recv_cap``, ``Wr`` bits, ``k`` of them per
row too) by their recv widths (the same for the fat-tree; a splitter network's terminal
sends on one wire and receives on as many as an output has incoming edges).

Every other input of the network top (a splitter network's ``fault_mask``) is an input
of the harness of the same name and width, passed straight through: a testbench sets it
between delivery cycles.

The harness also plays the destinations' part of the acknowledgment protocol: a
destination raises ``recv_ack`` on a wire from the bit-time its M bit arrives until the
next start strobe.
"""

from __future__ import annotations

from typing import Any

from amaranth import Cat, Module, Shape, Signal, unsigned
from amaranth.lib import wiring
from amaranth.hdl import MemoryData
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..golden.cycle import start_latency
from .family import HardwareFamily
from .signatures import endpoints

__all__ = ["PackedHarness", "endpoint_ports", "endpoint_layout", "packed_layout",
           "recv_layout", "extra_inputs", "bit_times_per_row", "harness_geometry",
           "harness_manifest", "ROW_BITS", "MEMORIES"]

#: Widest memory row the harness makes of several bit-times' words (one word is a row
#: of its own when wider). Fewer, wider rows mean fewer simulator accesses per cycle.
ROW_BITS = 4096

#: The harness's memories: name -> which words it holds ("send" or "recv" widths).
MEMORIES = {"stim": "send", "recv_cap": "recv", "ack_cap": "send"}


def endpoint_ports(core) -> list[tuple[str, Any]]:
    """The endpoint interfaces of a network top, in its signature's order, named as in
    the Verilog (:func:`fatnet.hdl.signatures.endpoints`): an array member gives one
    endpoint per element, ``leaf[3]`` is ``leaf__3``. For the fat-tree: ``leaf__0`` ..
    ``leaf__{n-1}``, ``ext``. This is the one port map the harness packs by and the
    testbenches unpack by.
    """
    return [(name, port) for name, port, _ in endpoints(core)]


def endpoint_layout(core, which: str = "send") -> list[tuple[str, int, int]]:
    """(endpoint name, first bit, width) of each endpoint in one packed word, in
    signature order, by the endpoints' ``send`` widths (``which="recv"``: their ``recv``
    widths)."""
    out, pos = [], 0
    for name, port in endpoint_ports(core):
        width = len(port.send if which == "send" else port.recv)
        out.append((name, pos, width))
        pos += width
    return out


def recv_layout(core) -> list[tuple[str, int, int]]:
    """The packing of the ``recv`` words (``recv_cap``)."""
    return endpoint_layout(core, "recv")


def extra_inputs(core) -> list[tuple[str, int]]:
    """(name, width) of the network top's plain inputs besides ``start`` (passed through
    the harness: a splitter network's ``fault_mask``)."""
    return [(name, Shape.cast(member.shape).width)
            for name, member in core.signature.members.items()
            if not member.is_signature and member.flow == In and name != "start"]


def packed_layout(net, which: str = "send", *,
                  hardware: HardwareFamily) -> list[tuple[str, int, int]]:
    """The harness's packing of ``net``'s endpoints (:func:`endpoint_layout` of the
    network top's signature, from the family's ``hardware`` hooks), for testbenches that
    pack and unpack without elaborating anything."""
    return endpoint_layout(hardware.network_signature(net).create(), which)


def bit_times_per_row(T: int, W: int, Wr: int) -> int:
    """``k``: the bit-times one memory row holds, the same for the three memories: as
    many words (of the wider of ``W`` and ``Wr``) as fit in :data:`ROW_BITS`, at least
    one, and few enough that there are two rows at least (a memory of one row would
    have a zero-width address)."""
    return max(1, min(-(-T // 2), ROW_BITS // max(W, Wr, 1)))


def harness_geometry(net, *, hardware: HardwareFamily) -> dict:
    """The harness's memories without elaborating anything: ``T``, the word widths
    ``W`` (send) and ``Wr`` (recv), ``k`` bit-times per row and ``rows`` per memory."""
    T = net.cycle_length
    W = sum(w for _, _, w in packed_layout(net, hardware=hardware))
    Wr = sum(w for _, _, w in packed_layout(net, "recv", hardware=hardware))
    k = bit_times_per_row(T, W, Wr)
    return {"T": T, "W": W, "Wr": Wr, "k": k, "rows": -(-T // k)}


def harness_manifest(net, top: str, core) -> dict:
    """The manifest's ``harness`` entry: everything a testbench needs to drive the
    harness of ``core`` (the network top or its signature's interface) without reading
    the Verilog: module, sources, ports, the memories' names and rows, both packings."""
    T, D = net.cycle_length, start_latency(net)
    send, recv = endpoint_layout(core), recv_layout(core)
    W, Wr = sum(w for _, _, w in send), sum(w for _, _, w in recv)
    k = bit_times_per_row(T, W, Wr)
    rows = -(-T // k)
    name = f"{top}_harness"
    ports = [
        {"name": "clk", "width": 1, "dir": "in", "meaning": "bit clock: one bit-time per "
         "clock"},
        {"name": "rst", "width": 1, "dir": "in", "meaning": "synchronous reset (the "
         "memories keep their contents)"},
        {"name": "start", "width": 1, "dir": "in",
         "meaning": ("strobe, one clock: the next clock is bit-time 0 of a delivery cycle "
                     "replayed from the stim memory" if not D else
                     f"strobe, one clock: the clock D + 1 = {D + 1} after it "
                     f"(start_latency_clocks = {D}) is bit-time 0 of a delivery cycle "
                     f"replayed from the stim memory")},
        {"name": "busy", "width": 1, "dir": "out",
         "meaning": f"the delivery cycle is in progress (bit-times 0 .. {T - 1}); the "
                    f"capture memories are complete once it has fallen"},
    ] + [{"name": n, "width": w, "dir": "in",
          "meaning": f"passed straight through to the network top's {n}"}
         for n, w in extra_inputs(core)]
    words = {"send": (W, "packed as in 'packed' (by the endpoints' send widths)"),
             "recv": (Wr, "packed as in 'recv_packed' (by the endpoints' recv widths)")}
    what = {"stim": ("send", "the testbench writes the cycle's send words before start; "
                             "the harness drives word t on the send wires at bit-time t "
                             "and never writes this memory (it keeps its rows)"),
            "recv_cap": ("recv", "the harness writes each bit-time's recv wires; the "
                                 "testbench reads after busy falls"),
            "ack_cap": ("send", "the harness writes each bit-time's send_ack wires; the "
                                "testbench reads after busy falls")}
    memories = []
    for mem, (which, meaning) in what.items():
        width, packing = words[which]
        memories.append({"name": mem, "path": f"{name}.{mem}", "rows": rows,
                         "row_bits": k * width, "word_bits": width, "words": which,
                         "meaning": f"{meaning}; {packing}"})
    row = lambda lay: [{"port": p, "first_bit": b, "width": w} for p, b, w in lay]  # noqa
    return {
        "top": name, "sources": [f"{top}.v", f"{name}.v"], "ports": ports,
        "bit_times_per_row": k, "rows": rows, "memories": memories,
        "row_layout": (f"row r of a memory holds bit-times r*{k} .. r*{k}+{k - 1} "
                       f"(those below {T}): bit-time t is word t mod {k} of row t div "
                       f"{k}, at bits (t mod {k})*word_bits .. +word_bits-1; the rows "
                       f"concatenated, row 0 lowest, are the cycle's {T} words, word 0 "
                       f"lowest. Rows are memory elements, written and read through the "
                       f"simulator (e.g. cocotb dut.stim[r]), not ports"),
        "timing": (f"write stim's rows, pulse start for one clock, wait {T + D} more "
                   f"clocks (T + start_latency_clocks; busy falls), read recv_cap's and "
                   f"ack_cap's rows; the harness raises recv_ack on a wire from the "
                   f"bit-time its recv wire first carries a 1 (the message's M bit) until "
                   f"the next start (auto-acknowledge); the other inputs are set between "
                   f"cycles"),
        "packed": row(send),
        "recv_packed": row(recv),
    }


class PackedHarness(wiring.Component):
    """The network with whole-cycle stimulus and capture memories and auto-acknowledge.

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
        Gives the cycle length ``T``, and names the top's instance (``net.family``).
    core : wiring.Component
        The network top to wrap (the family's ``hardware.top(net)``). Verilog
        generation passes a stand-in that instantiates the separately emitted top
        module, so the network is emitted once. Only its signature's ports are used:
        the endpoints' ``send``/``send_ack``/``recv``/``recv_ack``, ``start``, ``busy``
        and the other plain inputs.

    Attributes
    ----------
    start : In(1)
        Strobe: starts a delivery cycle (the next clock is bit-time 0) from the rows in
        ``stim``.
    busy : Out(1)
        The network's delivery cycle is in progress (bit-times 0 .. T-1).
    <other inputs of the top> : In
        Passed through (``fault_mask``).
    stim : MemoryData(shape=unsigned(k * W), depth=rows)
        The cycle's ``send`` words, ``k`` per row, bit-time 0 in the low ``W`` bits of
        row 0; written by the testbench, read (never written) by the harness. It keeps
        its contents from cycle to cycle.
    recv_cap : MemoryData(shape=unsigned(k * Wr), depth=rows)
        The ``recv`` words of the last cycle, laid out like ``stim`` (complete once
        ``busy`` has fallen).
    ack_cap : MemoryData(shape=unsigned(k * W), depth=rows)
        The ``send_ack`` words of the last cycle, laid out like ``stim``.
    layout, recv_layout : list of (name, first bit, width)
        The endpoints' packing in a send word and in a recv word.
    word_width, recv_width, bit_times_per_row, rows : int
        ``W``, ``Wr``, ``k`` and the memories' depth.
    core : wiring.Component
        The network top the harness wraps (instance ``<net.family>`` in the Verilog).
    """

    def __init__(self, net, core):
        self._net = net
        self._core = core
        self._core_name = net.family
        self.layout = endpoint_layout(self._core)
        self.recv_layout = recv_layout(self._core)
        self.word_width = W = sum(w for _, _, w in self.layout)
        self.recv_width = Wr = sum(w for _, _, w in self.recv_layout)
        self.extra = extra_inputs(self._core)
        self.cycle_length = T = net.cycle_length
        self.start_latency = start_latency(net)
        self.bit_times_per_row = k = bit_times_per_row(T, W, Wr)
        self.rows = -(-T // k)
        members = {"start": In(1), "busy": Out(1)}
        members.update((name, In(width)) for name, width in self.extra)
        super().__init__(members)
        self.stim = MemoryData(shape=unsigned(k * W), depth=self.rows, init=[])
        self.recv_cap = MemoryData(shape=unsigned(k * Wr), depth=self.rows, init=[])
        self.ack_cap = MemoryData(shape=unsigned(k * W), depth=self.rows, init=[])

    @property
    def core(self):
        return self._core

    def elaborate(self, platform):
        m = Module()
        W, Wr, k = self.word_width, self.recv_width, self.bit_times_per_row
        m.submodules[self._core_name] = dut = self._core
        mems = {name: Memory(data=getattr(self, name)) for name in MEMORIES}
        for name, mem in mems.items():  # the Verilog arrays are named after them
            m.submodules[name] = mem
        ports = [p for _, p in endpoint_ports(dut)]
        recv = Cat(p.recv for p in ports)
        ack = Cat(p.send_ack for p in ports)
        # the bit-time as (row, word within the row); the word counter only when k > 1
        row = Signal(range(self.rows + 1))
        word = Signal(range(k)) if k > 1 else None
        stim = mems["stim"].read_port(domain="comb")
        rcap = mems["recv_cap"].write_port(granularity=Wr)
        acap = mems["ack_cap"].write_port(granularity=W)
        acking = Signal(Wr)
        sent = Signal(W)  # this bit-time's word of the row (0 outside the cycle)
        lane = Signal(k)  # one-hot: the word's lane in the capture rows
        with m.If(dut.busy):
            if k == 1:
                m.d.comb += [sent.eq(stim.data), lane.eq(1)]
            else:
                with m.Switch(word):
                    for i in range(k):  # the last word as the default: a complete case
                        with m.Case(i) if i < k - 1 else m.Default():
                            m.d.comb += [sent.eq(stim.data[i * W:(i + 1) * W]),
                                         lane.eq(1 << i)]
        m.d.comb += [
            dut.start.eq(self.start),
            Cat(p.send for p in ports).eq(sent),
            Cat(p.recv_ack for p in ports).eq(acking | recv),
            self.busy.eq(dut.busy),
            stim.addr.eq(row),
            rcap.addr.eq(row), rcap.data.eq(recv.replicate(k)), rcap.en.eq(lane),
            acap.addr.eq(row), acap.data.eq(ack.replicate(k)), acap.en.eq(lane),
        ]
        m.d.comb += [getattr(dut, name).eq(getattr(self, name)) for name, _ in self.extra]
        # from the strobe until the network's switches are cleared (start_latency
        # clocks later) their outputs are the last cycle's: acknowledge none of them
        clearing = earlier = self.start   # earlier: the strobe one register stage back
        for j in range(self.start_latency):
            late = Signal(name=f"start_late{j + 1}")
            m.d.sync += late.eq(earlier)
            clearing, earlier = clearing | late, late
        with m.If(clearing):
            m.d.sync += [acking.eq(0), row.eq(0)]
            if k > 1:
                m.d.sync += word.eq(0)
        with m.Else():
            m.d.sync += acking.eq(acking | recv)
            with m.If(dut.busy):  # the next bit-time's word
                if k > 1:
                    with m.If(word == k - 1):
                        m.d.sync += [word.eq(0), row.eq(row + 1)]
                    with m.Else():
                        m.d.sync += word.eq(word + 1)
                else:
                    m.d.sync += row.eq(row + 1)
        return m
