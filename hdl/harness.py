"""A test harness around a network top: whole delivery cycles in, whole cycles out.

The harness takes one delivery cycle's stimulus at once, as one wide input ``stim`` of
``T x W`` bits (``T`` bit-times, ``W`` = every endpoint's ``send`` wires packed), loads
it into a shift register on the ``start`` strobe and presents one ``W``-bit word per
bit-time; it captures every endpoint's ``recv`` and ``send_ack`` wires at every bit-time
into two more ``T x W``-bit shift registers, read once the cycle has ended. A testbench
therefore touches the design twice per delivery cycle, not three times per clock.
Word ``t`` (bits ``t*W .. t*W + W - 1``) is bit-time ``t``; within a word the endpoints
follow :func:`endpoint_layout`: the ``send`` words (``stim``, ``ack_cap``) by the
endpoints' send widths, the ``recv`` words (``recv_cap``) by their recv widths (the
same for the fat-tree; a splitter network's terminal sends on one wire and receives on
as many as an output has incoming edges).

Every other input of the network top (a splitter network's ``fault_mask``) is an input
of the harness of the same name and width, passed straight through: a testbench sets it
between delivery cycles.

The harness also plays the destinations' part of the acknowledgment protocol: a
destination raises ``recv_ack`` on a wire from the bit-time its M bit arrives until the
next start strobe.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Shape, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["PackedHarness", "endpoint_ports", "endpoint_layout", "packed_layout",
           "recv_layout", "extra_inputs"]

#: The members of an endpoint's signature (a processor's or the external channel's).
ENDPOINT_MEMBERS = ("send", "send_ack", "recv", "recv_ack")


def endpoint_ports(core) -> list[tuple[str, object]]:
    """The endpoint interfaces of a network top, in its signature's order.

    Every member whose signature has ``send``, ``send_ack``, ``recv`` and ``recv_ack`` is
    an endpoint; an array member gives one endpoint per element, named with its index
    (``leaf[3]`` is ``leaf3``). For the fat-tree: ``leaf0`` .. ``leaf{n-1}``, ``ext``.
    This is the one port map the harness packs by and the testbenches unpack by.
    """
    out = []
    for name, member in core.signature.members.items():
        if not member.is_signature:
            continue
        if not all(k in member.signature.members for k in ENDPOINT_MEMBERS):
            continue
        obj = getattr(core, name)
        if member.dimensions:
            (count,) = member.dimensions
            out += [(f"{name}{i}", obj[i]) for i in range(count)]
        else:
            out.append((name, obj))
    return out


def endpoint_layout(core, which: str = "send") -> list[tuple[str, int, int]]:
    """(endpoint name, first bit, width) of each endpoint in one packed word, in
    signature order, by the endpoints' ``send`` widths (``which="recv"``: their ``recv``
    widths). The fat-tree's mirror is ``FatTreeNetwork.port_layout``."""
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


def _signature_core(net):
    from .gen import family_of
    return family_of(net).network_signature(net).create()


def packed_layout(net, which: str = "send") -> list[tuple[str, int, int]]:
    """The harness's packing of ``net``'s endpoints (:func:`endpoint_layout` of the
    network top's signature), for testbenches that pack and unpack without elaborating
    anything."""
    return endpoint_layout(_signature_core(net), which)


class PackedHarness(wiring.Component):
    """The network with whole-cycle stimulus and capture registers and auto-acknowledge.

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
        Gives the cycle length ``T`` and the family (``net.family``).
    core : wiring.Component, optional
        The network top to wrap (default: the family's top of ``net``).
        Verilog generation passes a stand-in that instantiates the separately emitted
        top module, so the network is emitted once. Only its signature's ports are
        used: the endpoints' ``send``/``send_ack``/``recv``/``recv_ack``, ``start``,
        ``busy``.

    Attributes
    ----------
    start : In(1)
        Strobe: loads ``stim`` and starts a delivery cycle (the next clock is bit-time 0).
    stim : In(T * W)
        The cycle's ``send`` words, bit-time 0 in the low ``W`` bits.
    recv_cap : Out(T * Wr)
        The ``recv`` words of the last cycle (``Wr``: every endpoint's recv wires),
        bit-time 0 in the low bits (complete once ``busy`` has fallen).
    ack_cap : Out(T * W)
        The ``send_ack`` words of the last cycle, same layout as ``stim``.
    <other inputs of the top> : In
        Passed through (``fault_mask``).
    busy : Out(1)
        The network's delivery cycle is in progress.
    """

    def __init__(self, net, core=None):
        self._net = net
        if core is None:
            from .gen import family_of
            core = family_of(net).top(net)
        self._core = core
        self._core_name = getattr(net, "family", "fattree")
        self.layout = endpoint_layout(self._core)
        self.recv_layout = recv_layout(self._core)
        self.word_width = sum(w for _, _, w in self.layout)
        self.recv_width = sum(w for _, _, w in self.recv_layout)
        self.extra = extra_inputs(self._core)
        self.cycle_length = net.cycle_length
        T = self.cycle_length
        members = {
            "start": In(1),
            "stim": In(T * self.word_width),
            "recv_cap": Out(T * self.recv_width),
            "ack_cap": Out(T * self.word_width),
            "busy": Out(1),
        }
        members.update((name, In(width)) for name, width in self.extra)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        W = self.word_width
        m.submodules[self._core_name] = dut = self._core
        ports = [p for _, p in endpoint_ports(dut)]
        stim = Signal(len(self.stim))
        rcap = Signal(len(self.recv_cap))
        acap = Signal(len(self.ack_cap))
        acking = Signal(self.recv_width)
        recv = Cat(p.recv for p in ports)
        ack = Cat(p.send_ack for p in ports)
        m.d.comb += [
            dut.start.eq(self.start),
            Cat(p.send for p in ports).eq(Mux(dut.busy, stim[:W], 0)),
            Cat(p.recv_ack for p in ports).eq(acking | recv),
            self.busy.eq(dut.busy),
            self.recv_cap.eq(rcap),
            self.ack_cap.eq(acap),
        ]
        m.d.comb += [getattr(dut, name).eq(getattr(self, name)) for name, _ in self.extra]
        with m.If(self.start):
            m.d.sync += [acking.eq(0), stim.eq(self.stim)]
        with m.Else():
            m.d.sync += acking.eq(acking | recv)
            with m.If(dut.busy):  # one word per bit-time, in and out
                m.d.sync += [stim.eq(stim[W:]), rcap.eq(Cat(rcap[self.recv_width:], recv)),
                             acap.eq(Cat(acap[W:], ack))]
        return m
