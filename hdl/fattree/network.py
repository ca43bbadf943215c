"""Amaranth hardware of Leiserson's fat-tree, built from the golden model's network.

Every structural choice (capacities, concentrator graphs, input order, decision widths)
comes from :class:`fatnet.golden.fattree.network.FatTreeNetwork`; the behaviour is the one
:mod:`fatnet.golden.fattree.cyclemodel` predicts, bit-time for bit-time (see its docstring and
docs/hardware.md, "Timing"). All state is cleared by ``clear`` (the delivery-cycle start
strobe); bit-time 0 of a delivery cycle is the clock cycle after the strobe.

Interfaces are :mod:`fatnet.hdl.signatures`: a node has three ports
(:class:`~fatnet.hdl.signatures.PortSignature`), node-to-node links are made with
:func:`amaranth.lib.wiring.connect`, and the network's leaves and external channel are
:class:`~fatnet.hdl.signatures.EndpointSignature` members of its top.

For Verilog generation, :class:`FatTreeNetworkHW` and :class:`FatTreeNode` take a
:class:`~fatnet.hdl.modules.ModuleLibrary`: each distinct node (and each distinct
concentrator stage) is then emitted once and instantiated where the network repeats it.
Without one (the default, and what the Amaranth simulator needs) the design is flat.
"""

from __future__ import annotations

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...golden.fattree.topology import BRANCHES, DOWN, PORT_L, PORT_NAMES, PORT_R, PORT_U, UP
from ..controller import (add_cycle_controller, controller_meaning, controller_members,
                          start_tree)
from ..signatures import EndpointSignature, PortSignature, attach, connect_held
from ..switches import Selector, StageSwitch, link_registers

__all__ = ["FatTreeNode", "FatTreeNetworkHW", "NodeSignature", "leaf_signature",
           "port_signature", "node_key", "network_signature", "port_meaning"]

#: Port member names of a node, by port index (PORT_U, PORT_L, PORT_R).
PORT_MEMBERS = ("u", "l", "r")


def port_signature(width: int) -> PortSignature:
    """One node port (:class:`~fatnet.hdl.signatures.PortSignature`)."""
    return PortSignature(width)


def leaf_signature(width: int) -> EndpointSignature:
    """A processor's connection, seen from the network
    (:class:`~fatnet.hdl.signatures.EndpointSignature`)."""
    return EndpointSignature(width)


class NodeSignature(wiring.Signature):
    """The signature of a fat-tree node.

    Parameters
    ----------
    widths : (int, int, int)
        Wires of ports U, L and R.

    Members
    -------
    clear : ``In(1)``
        Start of a delivery cycle.
    u, l, r : ``Out(PortSignature(width))``
        Ports U (to the parent), L and R (to the children): ``i`` enters the node,
        ``o`` leaves it (registered), ``i.ack`` acknowledges what entered (registered),
        ``o.ack`` comes back for what left.

    Raises
    ------
    ValueError
        If a width is not a positive integer.
    """

    def __init__(self, widths):
        widths = tuple(widths)
        if len(widths) != 3:
            raise ValueError(f"a node has three ports (U, L, R), not {len(widths)}")
        self._widths = widths
        super().__init__({"clear": In(1),
                          **{name: Out(PortSignature(w))
                             for name, w in zip(PORT_MEMBERS, widths)}})

    @property
    def widths(self) -> tuple:
        return self._widths

    def __eq__(self, other):
        return type(other) is type(self) and other._widths == self._widths

    def __repr__(self):
        return f"NodeSignature({self._widths})"


def port_link_stages(net, node: int, port: int) -> int:
    """Registers, each way, on the link a node port's input side ends: the golden
    :meth:`~fatnet.golden.fattree.network.FatTreeNetwork.link_stages_of` its channel."""
    heap, _ = net.port_channel(node, port, direction_in=True)
    return net.link_stages_of(heap)


def node_key(net, node: int) -> tuple:
    """What makes two nodes of one network identical: their port widths, their three
    cascades (the network's mode, kind and seed are shared) and their link registers."""
    ports = (PORT_U, PORT_L, PORT_R)
    return (tuple(net.port_width(node, p) for p in ports),
            tuple(id(net.cascades[(node, p)]) for p in ports),
            tuple(port_link_stages(net, node, p) for p in ports))


class FatTreeNode(wiring.Component):
    """A fat-tree node (paper, Fig. 3): selectors, three concentrators (registers between
    stages for the streams and for the acknowledgments), registered ports. A port whose
    link comes from another node has ``spec.link_stages`` registers on it, each way
    (the incoming data before the selector, the acknowledgment after the port's own
    register), cleared with the node so they pack with its flip-flops.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork
    node : int
        Heap index of the node.
    library : fatnet.hdl.modules.ModuleLibrary, optional
        Generation only: instantiate each concentrator stage as a module emitted once.

    Members
    -------
    See :class:`NodeSignature`.
    """

    def __init__(self, net, node: int, *, library=None):
        if not 0 <= node < net.n - 1:
            raise ValueError(f"node must be in [0, {net.n - 2}], not {node}")
        self._net = net
        self._node = node
        self._library = library
        self._widths = {p: net.port_width(node, p) for p in (PORT_U, PORT_L, PORT_R)}
        self._links = {p: port_link_stages(net, node, p) for p in (PORT_U, PORT_L, PORT_R)}
        self._online = net.spec.mode == "online"
        super().__init__(NodeSignature(self._widths[p] for p in (PORT_U, PORT_L, PORT_R)))
        if library is not None:  # declared now: elaboration may run in a worker
            for out in (PORT_U, PORT_L, PORT_R):
                for stage in net.cascades[(node, out)].stages:
                    library.declare(*self._stage_module(stage))

    def _port(self, p):
        return (self.u, self.l, self.r)[p]

    def _stage_module(self, stage):
        """(key, build, hint) of a stage's module: stages are shared by every cascade
        of one shape, so the stage object (and the mode) identifies the module."""
        return (("stage", id(stage), self._online),
                lambda: StageSwitch(stage, online=self._online), "stage")

    def _stage(self, stage):
        if self._library is None:
            return StageSwitch(stage, online=self._online)
        return self._library.instance(*self._stage_module(stage))

    def elaborate(self, platform):
        m = Module()
        net, node = self._net, self._node
        sel = {}
        for p in (PORT_U, PORT_L, PORT_R):
            port = self._port(p)
            name, stages = PORT_NAMES[p], self._links[p]
            sel[p] = m.submodules[f"sel_{name}"] = Selector(self._widths[p])
            data_in = link_registers(m, port.i.data, stages, self.clear, f"link_{name}")
            ack = Signal(self._widths[p], name=f"ack_{name}_out") if stages else port.i.ack
            m.d.comb += [sel[p].clear.eq(self.clear), sel[p].i.data.eq(data_in)]
            with m.If(self.clear):
                m.d.sync += ack.eq(0)
            with m.Else():
                m.d.sync += ack.eq(sel[p].i.ack)
            if stages:
                m.d.comb += port.i.ack.eq(
                    link_registers(m, ack, stages, self.clear, f"link_{name}_ack"))

        # branch channels of every input port, by the output port they lead to
        branch = {}      # (in_port, out_port) -> selector branch (data out, ack in)
        for p, (p0, p1) in BRANCHES.items():
            branch[(p, p0)] = sel[p].b0
            branch[(p, p1)] = sel[p].b1

        for out in (PORT_U, PORT_L, PORT_R):
            name = PORT_NAMES[out]
            a, b = net.concentrator_inputs(out)
            data_in = Cat(branch[(a, out)].data, branch[(b, out)].data)
            ack_to_inputs = Signal(len(data_in), name=f"ack_{name}_in")
            m.d.comb += Cat(branch[(a, out)].ack, branch[(b, out)].ack).eq(ack_to_inputs)
            casc = net.cascades[(node, out)]
            data, ack_back = data_in, ack_to_inputs
            data_out = Signal(self._widths[out], name=f"conc_{name}_o")
            ack_out = self._port(out).o.ack
            if not casc.stages:  # inputs <= outputs: straight through
                m.d.comb += data_out.eq(data)
                m.d.comb += ack_back.eq(ack_out[:len(data)])
            else:
                for j, stage in enumerate(casc.stages):
                    sw = m.submodules[f"conc_{name}_{j}"] = self._stage(stage)
                    if j:  # registers between stages, both ways: one stage per clock
                        held = Signal(len(data), name=f"conc_{name}_{j}_i")
                        ack_held = Signal(len(data), name=f"conc_{name}_{j}_ack_i")
                        with m.If(self.clear):
                            m.d.sync += [held.eq(0), ack_held.eq(0)]
                        with m.Else():
                            m.d.sync += [held.eq(data), ack_held.eq(sw.i.ack)]
                        m.d.comb += ack_back.eq(ack_held)
                        data = held
                    else:
                        m.d.comb += ack_back.eq(sw.i.ack)
                    m.d.comb += [sw.clear.eq(self.clear), sw.i.data.eq(data)]
                    data, ack_back = sw.o.data, sw.o.ack
                m.d.comb += [data_out.eq(data), ack_back.eq(ack_out)]
            with m.If(self.clear):
                m.d.sync += self._port(out).o.data.eq(0)
            with m.Else():
                m.d.sync += self._port(out).o.data.eq(data_out)
        return m


def link(m, out, into, direction: int, heap: int, stuck: dict) -> None:
    """Connect channel ``(direction, heap)``: a node's outgoing ``out`` to the next node's
    incoming ``into``; a wire of it in ``stuck`` (the golden ``stuck_wires``,
    ``--stuck-link``) is held at its value on the way in, whatever ``out`` drives."""
    connect_held(m, out, into, {w: v for (d, h, w), v in stuck.items()
                                if (d, h) == (direction, heap)})


def network_signature(net) -> wiring.Signature:
    """The signature of a network's top (see :class:`FatTreeNetworkHW`): the one port
    map the manifest, the harness packing and the waveform groups derive from."""
    caps = net.spec.capacities
    return wiring.Signature({
        **controller_members(net.cycle_length),
        "leaf": Out(EndpointSignature(caps[-1])).array(net.n),
        "ext": Out(EndpointSignature(caps[0])),
    })


def port_meaning(net, row: dict) -> str:
    """What one top-level port (a :func:`fatnet.hdl.signatures.port_rows` row) means."""
    if row["endpoint"] is not None:
        path = row["path"]
        who = "the external interface" if path[0] == "ext" else f"processor {path[1]}"
        return EndpointSignature.MEANING[path[-1]].format(who=who)
    meaning = controller_meaning(row["name"], net.cycle_length, net.start_stages)
    if meaning is None:
        raise ValueError(f"{row['name']!r} is no port of the fat-tree's top")
    return meaning


class FatTreeNetworkHW(wiring.Component):
    """The whole fat-tree: every node, the leaves' ports, the external channel, and the
    delivery-cycle controller.

    Parameters
    ----------
    net : fatnet.golden.fattree.network.FatTreeNetwork
    library : fatnet.hdl.modules.ModuleLibrary, optional
        Generation only: instantiate each distinct node as a module emitted once
        (:func:`node_key`) instead of building every node in place.

    Members
    -------
    start : ``In(1)``
        Strobe: the next clock cycle is bit-time 0 of a new delivery cycle.
    bit_time : ``Out(range(cycle_length + 1))``
        Bit-time within the delivery cycle; it counts from 0 and stays at the cycle
        length once the cycle is over (saturates), until the next strobe.
    busy : ``Out(1)``
        High from bit-time 0 until the cycle length has passed.
    leaf : ``Out(EndpointSignature(c_L)).array(n)``
        One per processor (``leaf__3__send`` etc. in Verilog).
    ext : ``Out(EndpointSignature(c_0))``
        The root's external channel: ``send`` enters the root, ``recv`` leaves it.
    """

    def __init__(self, net, *, library=None):
        self._net = net
        self._library = library
        self._T = net.cycle_length
        super().__init__(network_signature(net))

    def _node(self, h):
        net = self._net
        if self._library is None:
            return FatTreeNode(net, h)
        return self._library.instance(("node",) + node_key(net, h),
                                      lambda: FatTreeNode(net, h, library=self._library),
                                      "node")

    def elaborate(self, platform):
        m = Module()
        net = self._net
        L = net.L
        clears, start = start_tree(m, self.start, 2 ** L - 1, net.start_stages)
        add_cycle_controller(m, start, self.bit_time, self.busy, self._T)

        nodes = {}
        for h in range(2 ** L - 1):
            nodes[h] = m.submodules[f"node_{h}"] = self._node(h)
            m.d.comb += nodes[h].clear.eq(clears[h])

        stuck = net.stuck_wires
        for h, nd in nodes.items():
            for side, port in ((1, nd.l), (2, nd.r)):
                child = 2 * h + side
                if child in nodes:  # the link: parent's L/R port <-> child's U port
                    link(m, port.o, nodes[child].u.i, DOWN, child, stuck)
                    link(m, nodes[child].u.o, port.i, UP, child, stuck)
                else:
                    attach(m, self.leaf[child - (2 ** L - 1)], port)
        attach(m, self.ext, nodes[0].u)
        return m
