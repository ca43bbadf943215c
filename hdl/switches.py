"""Bit-serial switch components shared by the network families.

:class:`Selector` reads the field bit after a message's M bit and steers the message to
one of two branches; :class:`StageSwitch` is one bipartite stage of a switch whose
graph comes from the golden model (a concentrator stage of a fat-tree node, the
splitter edges of a butterfly switch): off-line it reads decision bits, on-line it
arbitrates. Both hold their connections until ``clear`` and pass acknowledgments back.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["StageSwitch", "Selector", "named"]


def named(port):
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
    stage : fatnet.golden.fattree.concentrator.Stage
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
