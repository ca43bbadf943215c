"""Amaranth hardware of Leiserson's fat-tree, built from the golden model's network.

Every structural choice (capacities, concentrator graphs, input order, decision widths)
comes from :class:`fatnet.golden.network.FatTreeNetwork`; the behaviour is the one
:mod:`fatnet.golden.cyclemodel` predicts, bit-time for bit-time (see its docstring and
the README's "Timing"). All state is cleared by ``clear`` (the delivery-cycle start
strobe); bit-time 0 of a delivery cycle is the clock cycle after the strobe.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from fatnet.golden.fattree import PORT_L, PORT_NAMES, PORT_R, PORT_U

__all__ = ["StageSwitch", "Selector", "FatTreeNode", "FatTreeNetworkHW", "leaf_signature"]


def _named(port):
    """A node input as seen inside the node. Amaranth names a module port after the
    innermost signal it merely feeds, so a port passed straight into a submodule would
    be called ``i`` instead of ``u__i`` in the Verilog; an (optimised-away) OR keeps the
    port's own name."""
    return port | 0


def _is(value, constant: int):
    """value == constant, written as a reduction so that the Verilog compares equal
    widths (Yosys prints ``value == 0`` as a logical NOT of a vector)."""
    return ~(value ^ Const(constant, len(value))).any()


class StageSwitch(wiring.Component):
    """One bipartite stage of a concentrator switch.

    Parameters
    ----------
    stage : fatnet.golden.concentrator.Stage
        Inputs, outputs and the edges of every input, in edge order.
    online : bool
        On-line arbitration (an arriving message takes its first free edge) instead of
        reading ``stage.decision_width`` decision bits from the stream.

    Attributes
    ----------
    clear : Signal, in
        Start of a delivery cycle: drop every connection.
    i : Signal(inputs), in
        One bit-serial wire per input.
    o : Signal(outputs), out
        One bit-serial wire per output.
    ack_o : Signal(outputs), in
        Acknowledgment wires coming back from the outputs.
    ack_i : Signal(inputs), out
        Acknowledgment wires going back to the inputs, along held connections.
    """

    def __init__(self, stage, *, online: bool):
        if stage.inputs < 1 or stage.outputs < 1:
            raise ValueError("a stage needs at least one input and one output")
        self._adj = [tuple(a) for a in stage.adjacency]
        self._r = stage.inputs
        self._s = stage.outputs
        self._online = online
        self._w = 0 if online else stage.decision_width
        super().__init__({
            "clear": In(1),
            "i": In(self._r), "o": Out(self._s),
            "ack_o": In(self._s), "ack_i": Out(self._r),
        })

    def elaborate(self, platform):
        m = Module()
        r, s, w, adj = self._r, self._s, self._w, self._adj
        seen = Signal(r, name="seen")
        # users[j]: (input, edge) pairs reaching output j, in input order (= priority)
        users = [[] for _ in range(s)]
        for x in range(r):
            for e, j in enumerate(adj[x]):
                users[j].append((x, e))

        claim = Signal(r, name="claim")  # this input claims an output in this bit-time
        arrive = Signal(r, name="arrive")
        m.d.comb += arrive.eq(self.i & ~seen)

        if w == 0:
            m.d.comb += claim.eq(arrive)
            values = None
        else:
            collecting = Signal(r, name="collecting")
            values = []
            for x in range(r):
                if w == 1:  # the one decision bit follows M directly
                    last = collecting[x]
                    values.append(self.i[x])
                else:
                    count = Signal(range(w), name=f"count{x}")
                    shift = Signal(w - 1, name=f"decision{x}")  # earlier bits, newest LSB
                    last = collecting[x] & (count == w - 1)
                    values.append(Cat(self.i[x], shift))
                    with m.If(self.clear | arrive[x]):
                        m.d.sync += count.eq(0)
                    with m.Elif(collecting[x]):
                        m.d.sync += [count.eq(count + 1),
                                     shift.eq(Cat(self.i[x], shift[:-1]) if w > 2
                                              else self.i[x])]
                m.d.comb += claim[x].eq(last)
                with m.If(self.clear):
                    m.d.sync += collecting[x].eq(0)
                with m.Elif(arrive[x]):
                    m.d.sync += collecting[x].eq(1)
                with m.Elif(last):
                    m.d.sync += collecting[x].eq(0)

        # State per output j: which of its users (input, edge) holds it, one-hot in input
        # order. An output is taken when any user holds it.
        conn = [Signal(len(users[j]), name=f"conn{j}") for j in range(s)]
        grant = [Signal(len(users[j]), name=f"grant{j}") for j in range(s)]
        taken = [c.any() for c in conn]
        # where[x][e] = (output, position among that output's users)
        where = [[None] * len(adj[x]) for x in range(r)]
        for j in range(s):
            for k, (x, e) in enumerate(users[j]):
                where[x][e] = (j, k)

        if not self._online:
            # The decision names one edge; among simultaneous requests for one free
            # output the lowest input wins (lowest set bit of the request vector).
            for j in range(s):
                if not users[j]:
                    continue
                req = Signal(len(users[j]), name=f"req{j}")
                m.d.comb += req.eq(Cat(claim[x] & _is(values[x], e) if values is not None
                                       else claim[x] & (e == 0)
                                       for x, e in users[j]))
                m.d.comb += grant[j].eq(Mux(taken[j], 0, req & (~req + 1)))
        else:
            # An arriving input takes its first edge whose output is free and not granted
            # to a lower input in the same bit-time (inputs served in index order).
            granted = [Const(0, 1)] * s
            for x in range(r):
                free = [~taken[j] & ~granted[j] for j in adj[x]]
                for e, j in enumerate(adj[x]):
                    first = free[e] & ~Cat(free[:e]).any() if e else free[e]
                    g = Signal(name=f"g{x}_{e}")
                    m.d.comb += g.eq(claim[x] & first)
                    granted[j] = granted[j] | g
                    jj, k = where[x][e]
                    m.d.comb += grant[jj][k].eq(g)

        for j in range(s):
            if not users[j]:
                m.d.comb += self.o[j].eq(0)
                continue
            inputs = Cat(self.i[x] for x, _ in users[j])
            m.d.comb += self.o[j].eq((conn[j] & inputs).any() | grant[j].any())
        for x in range(r):
            m.d.comb += self.ack_i[x].eq(Cat(
                conn[j][k] & self.ack_o[j] for j, k in where[x]).any())

        with m.If(self.clear):
            m.d.sync += [seen.eq(0)] + [c.eq(0) for c in conn]
        with m.Else():
            m.d.sync += seen.eq(seen | arrive)
            for j in range(s):
                m.d.sync += conn[j].eq(conn[j] | grant[j])
        return m


class Selector(wiring.Component):
    """The selectors of one input port: per wire, M' = M AND (turn bit or its complement).

    Parameters
    ----------
    width : int
        Wires in the port.

    Attributes
    ----------
    i : Signal(width), in
    b0, b1 : Signal(width), out
        The branch taken on turn bit 0 and on turn bit 1.
    ack_b0, ack_b1 : Signal(width), in
    ack_i : Signal(width), out
    """

    def __init__(self, width: int):
        if width < 1:
            raise ValueError(f"width must be >= 1, got {width}")
        self._width = width
        super().__init__({"clear": In(1), "i": In(width), "b0": Out(width), "b1": Out(width),
                          "ack_b0": In(width), "ack_b1": In(width), "ack_i": Out(width)})

    def elaborate(self, platform):
        m = Module()
        n = self._width
        seen = Signal(n)
        waiting = Signal(n)  # saw M in the previous bit-time: this bit is the turn bit
        conn0 = Signal(n)
        conn1 = Signal(n)
        arrive = self.i & ~seen
        m.d.comb += [
            self.b0.eq((waiting & ~self.i) | (conn0 & self.i)),
            self.b1.eq((waiting & self.i) | (conn1 & self.i)),
            self.ack_i.eq((conn0 & self.ack_b0) | (conn1 & self.ack_b1)),
        ]
        with m.If(self.clear):
            m.d.sync += [seen.eq(0), waiting.eq(0), conn0.eq(0), conn1.eq(0)]
        with m.Else():
            m.d.sync += [
                seen.eq(seen | arrive),
                waiting.eq(arrive),
                conn0.eq(conn0 | (waiting & ~self.i)),
                conn1.eq(conn1 | (waiting & self.i)),
            ]
        return m


#: For each input port, the output port its turn bit 0 and 1 lead to.
BRANCHES = {PORT_U: (PORT_L, PORT_R), PORT_L: (PORT_R, PORT_U), PORT_R: (PORT_L, PORT_U)}


def port_signature(width: int) -> wiring.Signature:
    """One node port: ``i`` and ``o`` carry messages, ``ack_i``/``ack_o`` go back."""
    return wiring.Signature({"i": In(width), "ack_i": Out(width),
                             "o": Out(width), "ack_o": In(width)})


class FatTreeNode(wiring.Component):
    """A fat-tree node (paper, Fig. 3): selectors, three concentrators (registers between
    stages for the streams and for the acknowledgments), registered ports.

    Parameters
    ----------
    net : fatnet.golden.network.FatTreeNetwork
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
            m.d.comb += [sel[p].clear.eq(self.clear), sel[p].i.eq(_named(self._port(p).i))]
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
            ack_out = _named(self._port(out).ack_o)
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
    net : fatnet.golden.network.FatTreeNetwork

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
