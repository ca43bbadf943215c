"""Bit-serial switch components shared by the network families.

:class:`Selector` reads the field bit after a message's M bit and steers the message to
one of two branches; :class:`StageSwitch` is one bipartite stage of a switch whose
graph comes from the golden model (a concentrator stage of a fat-tree node, the
splitter edges of a butterfly switch): off-line it reads decision bits, on-line it
arbitrates. Both hold their connections until ``clear`` and pass acknowledgments back.
:func:`link_registers` pipelines a link between two switches.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .logic import equals
from .signatures import ChannelSignature

__all__ = ["StageSwitch", "Selector", "link_registers"]


def link_registers(m, wires, stages: int, clear, name: str, first: int = 0):
    """``wires`` delayed by ``stages`` registers of a pipelined link (``--link-stages``),
    each cleared by ``clear``, the switch's own delivery-cycle clear, so that a
    place-and-route tool packs them with the switch's flip-flops (same control set).
    They are named ``<name><first>``, ``<name><first + 1>``, ...
    Returns the last register (``wires`` itself for 0 stages)."""
    for s in range(first, first + stages):
        held = Signal(len(wires), name=f"{name}{s}")
        with m.If(clear):
            m.d.sync += held.eq(0)
        with m.Else():
            m.d.sync += held.eq(wires)
        wires = held
    return wires


class StageSwitch(wiring.Component):
    """One bipartite stage of a concentrator switch.

    Parameters
    ----------
    stage : fatnet.golden.fattree.concentrator.Stage
        Inputs, outputs and the edges of every input, in edge order.
    online : bool
        On-line arbitration (an arriving message takes its first free edge) instead of
        reading ``stage.decision_width`` decision bits from the stream.
    masked : bool
        Add the ``mask`` input (default False: no mask).

    Members
    -------
    clear : ``In(1)``
        Start of a delivery cycle: drop every connection.
    i : ``In(ChannelSignature(inputs))``
        ``i.data``: one bit-serial wire per input; ``i.ack``: acknowledgments going
        back to the inputs along held connections.
    o : ``Out(ChannelSignature(outputs))``
        ``o.data``: one bit-serial wire per output; ``o.ack``: acknowledgments coming
        back from the outputs.
    mask : ``In(outputs)``, only with ``masked=True``
        Outputs not to be granted (e.g. edges into faulty switches): a claim treats a
        masked output as taken. Connections already held are kept.

    Raises
    ------
    ValueError
        If the stage has no input or no output, or an edge names no output.
    """

    def __new__(cls, stage, *, online: bool, masked: bool = False):
        # refused before the component exists, so Amaranth has no unused one to report
        if stage.inputs < 1 or stage.outputs < 1:
            raise ValueError("a stage needs at least one input and one output")
        if len(stage.adjacency) != stage.inputs or any(
                not 0 <= j < stage.outputs for a in stage.adjacency for j in a):
            raise ValueError("every input needs an edge list naming outputs in range")
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, stage, *, online: bool, masked: bool = False):
        self._adj = [tuple(a) for a in stage.adjacency]
        self._r = stage.inputs
        self._s = stage.outputs
        self._online = bool(online)
        self._w = 0 if online else stage.decision_width
        self._masked = bool(masked)
        members = {
            "clear": In(1),
            "i": In(ChannelSignature(self._r)),
            "o": Out(ChannelSignature(self._s)),
        }
        if self._masked:
            members["mask"] = In(self._s)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        r, s, w, adj = self._r, self._s, self._w, self._adj
        i_data, i_ack, o_data, o_ack = self.i.data, self.i.ack, self.o.data, self.o.ack
        seen = Signal(r, name="seen")
        # users[j]: (input, edge) pairs reaching output j, in input order (= priority)
        users = [[] for _ in range(s)]
        for x in range(r):
            for e, j in enumerate(adj[x]):
                users[j].append((x, e))

        claim = Signal(r, name="claim")  # this input claims an output in this bit-time
        arrive = Signal(r, name="arrive")
        m.d.comb += arrive.eq(i_data & ~seen)

        if w == 0:
            m.d.comb += claim.eq(arrive)
            values = None
        else:
            collecting = Signal(r, name="collecting")
            values = []
            for x in range(r):
                if w == 1:  # the one decision bit follows M directly
                    last = collecting[x]
                    values.append(i_data[x])
                else:
                    count = Signal(range(w), name=f"count{x}")
                    shift = Signal(w - 1, name=f"decision{x}")  # earlier bits, newest LSB
                    last = collecting[x] & (count == w - 1)
                    values.append(Cat(i_data[x], shift))
                    with m.If(self.clear | arrive[x]):
                        m.d.sync += count.eq(0)
                    with m.Elif(collecting[x]):
                        m.d.sync += [count.eq(count + 1),
                                     shift.eq(Cat(i_data[x], shift[:-1]) if w > 2
                                              else i_data[x])]
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
        # a masked output is never granted: to a claim it looks taken
        taken = [c.any() | self.mask[j] if self._masked else c.any()
                 for j, c in enumerate(conn)]
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
                m.d.comb += req.eq(Cat(claim[x] & equals(values[x], e) if values is not None
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
                m.d.comb += o_data[j].eq(0)
                continue
            inputs = Cat(i_data[x] for x, _ in users[j])
            m.d.comb += o_data[j].eq((conn[j] & inputs).any() | grant[j].any())
        for x in range(r):
            m.d.comb += i_ack[x].eq(Cat(
                conn[j][k] & o_ack[j] for j, k in where[x]).any())

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

    Members
    -------
    clear : ``In(1)``
        Start of a delivery cycle: drop every connection.
    i : ``In(ChannelSignature(width))``
        The port's incoming wires (``i.data``) and their acknowledgments (``i.ack``).
    b0, b1 : ``Out(ChannelSignature(width))``
        The branch taken on turn bit 0 and on turn bit 1; ``b0.ack``/``b1.ack`` come
        back from the branch and go out on ``i.ack`` along held connections.

    Raises
    ------
    ValueError
        If ``width`` is not a positive integer.
    """

    def __new__(cls, width: int):
        # refused before the component exists, so Amaranth has no unused one to report
        if not isinstance(width, int) or width < 1:
            raise ValueError(f"width must be a positive integer, not {width!r}")
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, width: int):
        self._width = width
        super().__init__({"clear": In(1), "i": In(ChannelSignature(width)),
                          "b0": Out(ChannelSignature(width)),
                          "b1": Out(ChannelSignature(width))})

    def elaborate(self, platform):
        m = Module()
        n = self._width
        seen = Signal(n)
        waiting = Signal(n)  # saw M in the previous bit-time: this bit is the turn bit
        conn0 = Signal(n)
        conn1 = Signal(n)
        i = self.i.data
        arrive = i & ~seen
        m.d.comb += [
            self.b0.data.eq((waiting & ~i) | (conn0 & i)),
            self.b1.data.eq((waiting & i) | (conn1 & i)),
            self.i.ack.eq((conn0 & self.b0.ack) | (conn1 & self.b1.ack)),
        ]
        with m.If(self.clear):
            m.d.sync += [seen.eq(0), waiting.eq(0), conn0.eq(0), conn1.eq(0)]
        with m.Else():
            m.d.sync += [
                seen.eq(seen | arrive),
                waiting.eq(arrive),
                conn0.eq(conn0 | (waiting & ~i)),
                conn1.eq(conn1 | (waiting & i)),
            ]
        return m
