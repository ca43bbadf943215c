"""A test harness around the fat-tree: every port packed into one vector per direction.

Testbenches then touch three signals per bit-time instead of four per leaf. The harness
also plays the processors' part of the acknowledgment protocol: a destination raises
``recv_ack`` on a wire from the bit-time its M bit arrives until the next start strobe.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .fattree import FatTreeNetworkHW

__all__ = ["PackedHarness"]


class PackedHarness(wiring.Component):
    """The network with packed ``send``/``recv``/``send_ack`` vectors and auto-acknowledge.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork
    core : wiring.Component, optional
        The network top to wrap (default: a new :class:`FatTreeNetworkHW` of ``net``).
        Verilog generation passes a stand-in that instantiates the separately emitted
        top module, so the network is emitted once.
    """

    def __init__(self, net, core=None):
        self._net = net
        self._core = core
        self._layout = net.port_layout()
        width = sum(w for _, _, w in self._layout)
        super().__init__({
            "start": In(1),
            "send": In(width),
            "recv": Out(width),
            "send_ack": Out(width),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        net = self._net
        m.submodules.fattree = dut = (self._core if self._core is not None
                                      else FatTreeNetworkHW(net))
        ports = [dut.leaf[i] for i in range(net.n)] + [dut.ext]
        acking = Signal(len(self.recv))
        recv = Cat(p.recv for p in ports)
        m.d.comb += [
            dut.start.eq(self.start),
            Cat(p.send for p in ports).eq(self.send),
            self.recv.eq(recv),
            self.send_ack.eq(Cat(p.send_ack for p in ports)),
            Cat(p.recv_ack for p in ports).eq(acking | recv),
            self.busy.eq(dut.busy),
        ]
        with m.If(self.start):
            m.d.sync += acking.eq(0)
        with m.Else():
            m.d.sync += acking.eq(acking | recv)
        return m
