"""Amaranth hardware of Leiserson's fat-tree, built from the golden model's network.

Every structural choice (capacities, concentrator graphs, input order, decision widths)
comes from :class:`fatnet.golden.fattree.network.FatTreeNetwork`; the behaviour is the one
:mod:`fatnet.golden.fattree.cyclemodel` predicts, bit-time for bit-time (see its docstring and
the README's "Timing"). All state is cleared by ``clear`` (the delivery-cycle start
strobe); bit-time 0 of a delivery cycle is the clock cycle after the strobe.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...golden.fattree.topology import BRANCHES, PORT_L, PORT_NAMES, PORT_R, PORT_U
from ..switches import Selector, StageSwitch, named

__all__ = ["FatTreeNode", "FatTreeNetworkHW", "leaf_signature", "port_signature"]


def port_signature(width: int) -> wiring.Signature:
    """One node port: ``i`` and ``o`` carry messages, ``ack_i``/``ack_o`` go back."""
    return wiring.Signature({"i": In(width), "ack_i": Out(width),
                             "o": Out(width), "ack_o": In(width)})


class FatTreeNode(wiring.Component):
    """A fat-tree node (paper, Fig. 3): selectors, three concentrators (registers between
    stages for the streams and for the acknowledgments), registered ports.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork
    node : int
        Heap index of the node.

    Attributes
    ----------
    clear : Signal, in
    u, l, r : port_signature
        Ports U, L and R; ``i`` enters the node, ``o`` leaves it (registered), ``ack_i``
        acknowledges what entered (registered), ``ack_o`` comes back for what left.
    """

    def __init__(self, net, node: int):
        self._net = net
        self._node = node
        self._widths = {p: net.port_width(node, p) for p in (PORT_U, PORT_L, PORT_R)}
        self._online = net.spec.mode == "online"
        super().__init__({
            "clear": In(1),
            "u": Out(port_signature(self._widths[PORT_U])),
            "l": Out(port_signature(self._widths[PORT_L])),
            "r": Out(port_signature(self._widths[PORT_R])),
        })

    def _port(self, p):
        return (self.u, self.l, self.r)[p]

    def elaborate(self, platform):
        m = Module()
        net, node = self._net, self._node
        sel = {}
        for p in (PORT_U, PORT_L, PORT_R):
            sel[p] = m.submodules[f"sel_{PORT_NAMES[p]}"] = Selector(self._widths[p])
            m.d.comb += [sel[p].clear.eq(self.clear), sel[p].i.eq(named(self._port(p).i))]
            m.d.sync += self._port(p).ack_i.eq(sel[p].ack_i)
            with m.If(self.clear):
                m.d.sync += self._port(p).ack_i.eq(0)

        # branch wires of every input port, by the output port they lead to
        branch = {}      # (in_port, out_port) -> (data signal, ack signal)
        for p, (p0, p1) in BRANCHES.items():
            branch[(p, p0)] = (sel[p].b0, sel[p].ack_b0)
            branch[(p, p1)] = (sel[p].b1, sel[p].ack_b1)

        for out in (PORT_U, PORT_L, PORT_R):
            a, b = net.concentrator_inputs(out)
            data_in = Cat(branch[(a, out)][0], branch[(b, out)][0])
            ack_to_inputs = Signal(len(data_in), name=f"ack_{PORT_NAMES[out]}_in")
            m.d.comb += Cat(branch[(a, out)][1], branch[(b, out)][1]).eq(ack_to_inputs)
            casc = net.cascades[(node, out)]
            width_out = self._widths[out]
            data, ack_back = data_in, ack_to_inputs
            data_out = Signal(width_out, name=f"conc_{PORT_NAMES[out]}_o")
            ack_out = named(self._port(out).ack_o)
            if not casc.stages:  # inputs <= outputs: straight through
                m.d.comb += data_out.eq(data)
                m.d.comb += ack_back.eq(ack_out[:len(data)])
            else:
                for j, stage in enumerate(casc.stages):
                    sw = m.submodules[f"conc_{PORT_NAMES[out]}_{j}"] = StageSwitch(
                        stage, online=self._online)
                    if j:  # registers between stages, both ways: one stage per clock
                        held = Signal(len(data), name=f"conc_{PORT_NAMES[out]}_{j}_i")
                        ack_held = Signal(len(data), name=f"conc_{PORT_NAMES[out]}_{j}_ack_i")
                        with m.If(self.clear):
                            m.d.sync += [held.eq(0), ack_held.eq(0)]
                        with m.Else():
                            m.d.sync += [held.eq(data), ack_held.eq(sw.ack_i)]
                        m.d.comb += ack_back.eq(ack_held)
                        data = held
                    else:
                        m.d.comb += ack_back.eq(sw.ack_i)
                    m.d.comb += [sw.clear.eq(self.clear), sw.i.eq(data)]
                    data, ack_back = sw.o, sw.ack_o
                m.d.comb += [data_out.eq(data), ack_back.eq(ack_out)]
            with m.If(self.clear):
                m.d.sync += self._port(out).o.eq(0)
            with m.Else():
                m.d.sync += self._port(out).o.eq(data_out)
        return m


def leaf_signature(width: int) -> wiring.Signature:
    """A processor's connection, seen from the network: it sends on ``send`` and sees
    acknowledgments on ``send_ack``; it receives on ``recv`` and acknowledges on
    ``recv_ack``."""
    return wiring.Signature({"send": In(width), "send_ack": Out(width),
                             "recv": Out(width), "recv_ack": In(width)})


class FatTreeNetworkHW(wiring.Component):
    """The whole fat-tree: every node, the leaves' ports, the external channel, and the
    delivery-cycle controller.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork

    Attributes
    ----------
    start : Signal, in
        Strobe: the next clock cycle is bit-time 0 of a new delivery cycle.
    bit_time : Signal, out
        Bit-time within the delivery cycle (saturates at the cycle length).
    busy : Signal, out
        High from bit-time 0 until the cycle length has passed.
    leaf : array of leaf_signature
        One per processor (``leaf__3__send`` etc. in Verilog).
    ext : leaf_signature
        The root's external channel: ``send`` enters the root, ``recv`` leaves it.
    """

    def __init__(self, net):
        self._net = net
        caps = net.spec.capacities
        self._T = net.cycle_length
        super().__init__({
            "start": In(1),
            "bit_time": Out(range(self._T + 1)),
            "busy": Out(1),
            "leaf": Out(leaf_signature(caps[-1])).array(net.n),
            "ext": Out(leaf_signature(caps[0])),
        })

    def elaborate(self, platform):
        m = Module()
        net = self._net
        L = net.L
        with m.If(self.start):
            m.d.sync += [self.bit_time.eq(0), self.busy.eq(1)]
        with m.Elif(self.busy):
            m.d.sync += self.bit_time.eq(self.bit_time + 1)
            with m.If(self.bit_time == self._T - 1):
                m.d.sync += self.busy.eq(0)

        nodes = {}
        for h in range(2 ** L - 1):
            nodes[h] = m.submodules[f"node_{h}"] = FatTreeNode(net, h)
            m.d.comb += nodes[h].clear.eq(self.start)

        def connect_down(parent_port, child_port):
            """parent's L/R port <-> child's U port."""
            m.d.comb += [child_port.i.eq(parent_port.o), parent_port.ack_o.eq(child_port.ack_i),
                         parent_port.i.eq(child_port.o), child_port.ack_o.eq(parent_port.ack_i)]

        for h, nd in nodes.items():
            for side, port in ((1, nd.l), (2, nd.r)):
                child = 2 * h + side
                if child in nodes:
                    connect_down(port, nodes[child].u)
                else:
                    lf = self.leaf[child - (2 ** L - 1)]
                    m.d.comb += [port.i.eq(lf.send), lf.send_ack.eq(port.ack_i),
                                 lf.recv.eq(port.o), port.ack_o.eq(lf.recv_ack)]
        root = nodes[0]
        m.d.comb += [root.u.i.eq(self.ext.send), self.ext.send_ack.eq(root.u.ack_i),
                     self.ext.recv.eq(root.u.o), root.u.ack_o.eq(self.ext.recv_ack)]
        return m
