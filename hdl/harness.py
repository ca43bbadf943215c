"""A test harness around a network top: whole delivery cycles in, whole cycles out.

The harness takes one delivery cycle's stimulus at once, as one wide input ``stim`` of
``T x W`` bits (``T`` bit-times, ``W`` = every endpoint's ``send`` wires packed), loads
it into a shift register on the ``start`` strobe and presents one ``W``-bit word per
bit-time; it captures every endpoint's ``recv`` and ``send_ack`` wires at every bit-time
into two more ``T x W``-bit shift registers, read once the cycle has ended. A testbench
therefore touches the design twice per delivery cycle, not three times per clock.
Word ``t`` (bits ``t*W .. t*W + W - 1``) is bit-time ``t``; within a word the endpoints
follow :func:`endpoint_layout`.

The harness also plays the destinations' part of the acknowledgment protocol: a
destination raises ``recv_ack`` on a wire from the bit-time its M bit arrives until the
next start strobe.
"""

from __future__ import annotations

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .fattree import FatTreeNetworkHW

__all__ = ["PackedHarness", "endpoint_ports", "endpoint_layout", "packed_layout"]

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


def endpoint_layout(core) -> list[tuple[str, int, int]]:
    """(endpoint name, first bit, width) of each endpoint in one packed word, in
    signature order (the model's mirror is ``FatTreeNetwork.port_layout``)."""
    out, pos = [], 0
    for name, port in endpoint_ports(core):
        width = len(port.send)
        out.append((name, pos, width))
        pos += width
    return out


def packed_layout(net) -> list[tuple[str, int, int]]:
    """The harness's packing of ``net``'s endpoints (:func:`endpoint_layout` of the
    network top), for testbenches that pack and unpack without elaborating anything."""
    core = FatTreeNetworkHW(net)
    core._MustUse__silence = True  # built for its signature only
    return endpoint_layout(core)


class PackedHarness(wiring.Component):
    """The network with whole-cycle stimulus and capture registers and auto-acknowledge.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork
        Gives the cycle length ``T``.
    core : wiring.Component, optional
        The network top to wrap (default: a new :class:`FatTreeNetworkHW` of ``net``).
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
    recv_cap, ack_cap : Out(T * W)
        The ``recv`` and ``send_ack`` words of the last cycle, bit-time 0 in the low bits
        (complete once ``busy`` has fallen).
    busy : Out(1)
        The network's delivery cycle is in progress.
    """

    def __init__(self, net, core=None):
        self._net = net
        self._core = core if core is not None else FatTreeNetworkHW(net)
        self.layout = endpoint_layout(self._core)
        self.word_width = sum(w for _, _, w in self.layout)
        self.cycle_length = net.cycle_length
        tw = self.cycle_length * self.word_width
        super().__init__({
            "start": In(1),
            "stim": In(tw),
            "recv_cap": Out(tw),
            "ack_cap": Out(tw),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.word_width
        m.submodules.fattree = dut = self._core
        ports = [p for _, p in endpoint_ports(dut)]
        stim = Signal(len(self.stim))
        rcap = Signal(len(self.recv_cap))
        acap = Signal(len(self.ack_cap))
        acking = Signal(W)
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
        with m.If(self.start):
            m.d.sync += [acking.eq(0), stim.eq(self.stim)]
        with m.Else():
            m.d.sync += acking.eq(acking | recv)
            with m.If(dut.busy):  # one word per bit-time, in and out
                m.d.sync += [stim.eq(stim[W:]), rcap.eq(Cat(rcap[W:], recv)),
                             acap.eq(Cat(acap[W:], ack))]
        return m
