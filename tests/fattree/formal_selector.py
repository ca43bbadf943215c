"""The fat-tree's selector's properties (docs/formal.md, "The selector"): one
:class:`Selector` with every input free at every clock (``clear``, the port's wires,
the acknowledgments coming back from both branches, the reset).

The property's account, from the ports, by the rule of docs/hardware.md: per wire
``seen`` (M has arrived), ``waiting`` (this bit is the turn bit) and the branch it is
connected to. One wire is tagged (``AnyConst``).
"""

from __future__ import annotations

from amaranth import Const, Elaboratable, Module, Mux, Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Cover

from fatnet.hdl.switches import Selector

__all__ = ["SelectorProof"]


class SelectorProof(Elaboratable):
    """One ``Selector(width)`` and its properties.

    Parameters
    ----------
    width : int
        Wires in the port.
    covers : bool
        The cover statements instead of the assertions.

    Attributes
    ----------
    ports, probes
        Its top-level ports, and probe name -> the selector register it reads
        (``formal_harness.prove_property``).
    """

    #: the selector's registers, by their names in its elaboration
    REGISTERS = ("seen", "waiting", "conn0", "conn1")

    def __init__(self, width: int, *, covers: bool = False):
        self._w = width
        self._covers = covers
        self.sel = Selector(width)
        sel = self.sel
        self._probe = {n: Signal(width, name=f"probe_{n}") for n in self.REGISTERS}
        self.probes = {f"probe_{n}": f"sel.{n}" for n in self.REGISTERS}
        self.ports = [sel.clear, sel.i.data, sel.i.ack, sel.b0.data, sel.b0.ack,
                      sel.b1.data, sel.b1.ack, *self._probe.values()]

    def _account(self, m):
        sel, w = self.sel, self._w
        i = sel.i.data
        a = {n: Signal(w, name=f"spec_{n}") for n in self.REGISTERS}
        with m.If(sel.clear):
            m.d.sync += [a[n].eq(0) for n in self.REGISTERS]
        with m.Else():
            m.d.sync += [a["seen"].eq(a["seen"] | i), a["waiting"].eq(i & ~a["seen"]),
                         a["conn0"].eq(a["conn0"] | (a["waiting"] & ~i)),
                         a["conn1"].eq(a["conn1"] | (a["waiting"] & i))]
        return a

    def elaborate(self, platform):
        m = Module()
        m.submodules.sel = sel = self.sel
        w = self._w
        i = sel.i.data
        a = self._account(m)
        x = AnyConst(range(w)) if w > 1 else Const(0, 1)
        if w > 1:
            m.d.comb += Assume(x < w)
        turn = Signal(name="tag_turn")
        with m.If(a["waiting"].bit_select(x, 1)):
            m.d.sync += turn.eq(i.bit_select(x, 1))
        held = (a["conn0"] | a["conn1"]).bit_select(x, 1)
        b = [sel.b0.data.bit_select(x, 1), sel.b1.data.bit_select(x, 1)]
        i_x = i.bit_select(x, 1)
        ack_x = sel.i.ack.bit_select(x, 1)
        if self._covers:
            m.d.comb += [
                Cover(held & ~turn & ack_x & i_x, "branch 0: its bits and an acknowledgment"),
                Cover(held & turn & ack_x & i_x, "branch 1: its bits and an acknowledgment"),
            ]
            return m
        p = self._probe
        m.d.comb += [Assert(p[n] == a[n], f"register {n}: what the rule says")
                     for n in self.REGISTERS]
        m.d.comb += [
            # M' = M AND (turn bit or its complement), in the turn bit's slot, the same
            # bit-time; then the wire's bits on the branch it is connected to
            Assert(sel.b0.data == ((a["waiting"] & ~i) | (a["conn0"] & i)),
                   "b0: M AND NOT turn, then the connected wires"),
            Assert(sel.b1.data == ((a["waiting"] & i) | (a["conn1"] & i)),
                   "b1: M AND turn, then the connected wires"),
            Assert(sel.i.ack == ((a["conn0"] & sel.b0.ack) | (a["conn1"] & sel.b1.ack)),
                   "acknowledgments: from the connected branch only"),
            Assert((a["conn0"] & a["conn1"]) == 0, "a wire is connected to one branch"),
            Assert(((a["conn0"] | a["conn1"]) & (~a["seen"] | a["waiting"])) == 0,
                   "connected only after the turn bit"),
            Assert((a["waiting"] & ~a["seen"]) == 0, "waiting only once M has arrived"),
            # the tagged wire: on the branch its turn bit selects, unchanged, never both
            Assert(~held | (turn == a["conn1"].bit_select(x, 1)),
                   "tagged: connected to the branch its turn bit selected"),
            Assert(~held | (Mux(turn, b[1], b[0]) == i_x),
                   "tagged: its bits on its branch, unchanged"),
            Assert(~held | ~Mux(turn, b[0], b[1]), "tagged: nothing of it on the other branch"),
        ]
        return m
