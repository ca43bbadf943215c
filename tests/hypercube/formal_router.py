"""The dimension router's properties (docs/formal.md, "The dimension router"): one
:class:`DimensionRouter` with every input free at every clock (``clear``, its own input
``i``, the neighbour's ``xi``, the acknowledgments coming back, the priority ``high``
when it is an input, the reset).

The property keeps its own account of the router from its ports, by the rule of
docs/hypercube.md and the router's docstring: per input ``seen``/``waiting`` (the own
message's M bit, then its address bit for this dimension), ``xseen`` (the neighbour's
crossing message has arrived), whether the own message crosses, and who holds the
register. One message is tagged (``AnyConst``): the node's own, or the neighbour's
crossing one.
"""

from __future__ import annotations

from amaranth import Const, Elaboratable, Module, Mux, Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Cover

from fatnet.hdl.hypercube.router import DimensionRouter

__all__ = ["RouterProof"]

#: The router's registers the property reads (probes), by their Verilog names.
REGISTERS = ("seen", "waiting", "cross", "xseen", "own", "other", "ack")


class RouterProof(Elaboratable):
    """One ``DimensionRouter(high)`` and its properties.

    Parameters
    ----------
    high : bool or None
        The router's priority (None: an input, free at every clock).
    covers : bool
        The cover statements instead of the assertions.

    Attributes
    ----------
    ports, probes
        Its top-level ports, and probe name -> the router register it reads
        (``formal_harness.prove_property``).
    """

    def __init__(self, high, *, covers: bool = False):
        self._high = high
        self._covers = covers
        self.rt = DimensionRouter(high)
        rt = self.rt
        self._probe = {n: Signal(name=f"probe_{n}") for n in REGISTERS}
        self.probes = {f"probe_{n}": f"rt.{n}" for n in REGISTERS}
        self.ports = [rt.clear, rt.i.data, rt.i.ack, rt.o.data, rt.o.ack, rt.xo.data,
                      rt.xo.ack, rt.xi.data, rt.xi.ack, rt.lost, *self._probe.values()]
        if high is None:
            self.ports.append(rt.high)

    def _account(self, m):
        """The router by its rule, from the ports: registers, claims, grants."""
        rt = self.rt
        i, xi = rt.i.data, rt.xi.data
        a = {n: Signal(name=f"spec_{n}") for n in REGISTERS + ("o",)}
        high = rt.high if self._high is None else Const(int(self._high), 1)
        a["req_own"] = a["waiting"] & ~i            # address bit 0: stays at this node
        a["req_x"] = xi & ~a["xseen"]               # the crossing message's claim
        free = ~a["own"] & ~a["other"]
        # a tie goes to the message from the node whose bit of this dimension is 0
        a["grant_own"] = a["req_own"] & free & ~(a["req_x"] & high)
        a["grant_x"] = a["req_x"] & free & ~(a["req_own"] & ~high)
        with m.If(rt.clear):
            m.d.sync += [a[n].eq(0) for n in REGISTERS + ("o",)]
        with m.Else():
            m.d.sync += [
                a["seen"].eq(a["seen"] | i), a["waiting"].eq(i & ~a["seen"]),
                a["cross"].eq(a["cross"] | (a["waiting"] & i)),
                a["xseen"].eq(a["xseen"] | xi),
                a["own"].eq(a["own"] | a["grant_own"]),
                a["other"].eq(a["other"] | a["grant_x"]),
                a["o"].eq(a["grant_own"] | a["grant_x"] | (a["own"] & i)
                          | (a["other"] & xi)),
                a["ack"].eq((a["own"] | a["other"]) & rt.o.ack),
            ]
        return a

    def _tagged(self, m, a):
        """The tagged message: ``src`` 0 the node's own (on ``i``), 1 the neighbour's
        crossing one (on ``xi``); its claim, its fate, and its wire a clock ago."""
        rt = self.rt
        t = {"src": AnyConst(1)}
        crossing = t["src"]
        for name in ("lost", "new", "i"):
            t[name] = Signal(name=f"tag_{name}")
        # the own message claims this register with address bit 0 (with 1 it crosses)
        claim_now = (crossing & a["req_x"]) | (~crossing & a["req_own"])
        won = (crossing & a["grant_x"]) | (~crossing & a["grant_own"])
        wire = (crossing & rt.xi.data) | (~crossing & rt.i.data)
        with m.If(rt.clear):
            m.d.sync += [t["lost"].eq(0), t["new"].eq(0)]
        with m.Elif(claim_now):
            m.d.sync += [t["lost"].eq(~won), t["new"].eq(won)]
        with m.Else():
            m.d.sync += t["new"].eq(0)
        m.d.sync += t["i"].eq(wire)
        t["held"] = (crossing & a["other"]) | (~crossing & a["own"])
        t["claim"] = claim_now
        t["won"] = won
        t["ack"] = (crossing & rt.xi.ack) | (~crossing & rt.i.ack)
        return t

    def elaborate(self, platform):
        m = Module()
        m.submodules.rt = rt = self.rt
        a = self._account(m)
        self._a = a
        t = self._tagged(m, a)
        past_clear = Signal(name="spec_past_clear")
        m.d.sync += past_clear.eq(rt.clear)
        if self._covers:
            self._add_covers(m, a, t)
            return m
        p = self._probe
        m.d.comb += [Assert(p[n] == a[n], f"register {n}: what the rule says")
                     for n in REGISTERS]
        m.d.comb += [
            Assert(rt.o.data == a["o"], "o: the holder's bits one bit-time later, M' first"),
            Assert(rt.xo.data == (rt.i.data & (a["waiting"] | a["cross"])),
                   "xo: the claim in the address bit's slot, then the crossing bits"),
            Assert(rt.lost == ((a["req_own"] & ~a["grant_own"])
                               | (a["req_x"] & ~a["grant_x"])),
                   "lost: exactly the claims that fail in this bit-time"),
            Assert(rt.i.ack == ((a["own"] & a["ack"]) | (a["cross"] & rt.xo.ack)),
                   "i.ack: back along the own message's circuit only"),
            Assert(rt.xi.ack == (a["other"] & a["ack"]),
                   "xi.ack: back to the neighbour only while it holds the register"),
            # invariants of the rule (and what makes the induction close)
            Assert(~(a["own"] & a["other"]), "the register has at most one holder"),
            Assert(~(a["own"] & a["cross"]), "the own message stays or crosses, not both"),
            Assert(~(a["own"] | a["cross"]) | (a["seen"] & ~a["waiting"]),
                   "the own message decided only after its address bit"),
            Assert(~a["waiting"] | a["seen"], "waiting only once M has arrived"),
            Assert(~a["other"] | a["xseen"], "the neighbour's message held after it came"),
        ]
        self._tag_asserts(m, t, past_clear)
        return m

    def _tag_asserts(self, m, t, past_clear):
        """The tagged message leaves once, intact, or is lost and never acknowledged."""
        m.d.comb += [
            Assert(~(t["held"] & t["lost"]), "tagged: held and lost at once"),
            Assert(~t["lost"] | Mux(t["src"], self._a["xseen"],
                                    self._a["seen"] & ~self._a["waiting"] & ~self._a["cross"]),
                   "tagged: lost only after its claim, and an own lost message not crossing"),
            Assert(~t["new"] | t["held"], "tagged: held from the bit-time after its claim"),
            Assert(~t["lost"] | ~t["ack"], "tagged: a lost message is never acknowledged"),
            Assert(~(t["held"] & t["new"]) | (self.rt.o.data == ~past_clear),
                   "tagged: M' in the address bit's slot"),
            Assert(~(t["held"] & ~t["new"]) | (self.rt.o.data == (t["i"] & ~past_clear)),
                   "tagged: its bits one bit-time later, unchanged"),
        ]

    def _add_covers(self, m, a, t):
        """Each rule's case reachable."""
        rt = self.rt
        m.d.comb += [
            Cover(t["held"] & t["ack"] & ~t["src"], "own message stays, acknowledged"),
            Cover(t["held"] & t["ack"] & t["src"], "crossing message held, acknowledged"),
            Cover(a["cross"] & rt.i.ack, "own message crosses, acknowledged from across"),
            Cover(t["lost"] & ~rt.clear, "tagged message lost"),
            Cover(t["held"] & ~t["new"] & t["i"] & rt.o.data, "a payload 1 forwarded"),
        ]
        # a tie: a node whose bit is 0 keeps the register, one whose bit is 1 gives it
        tie = a["req_own"] & a["req_x"]
        if self._high is not True:
            m.d.comb += Cover(tie & a["grant_own"], "tie won by the own message")
        if self._high is not False:
            m.d.comb += Cover(tie & a["grant_x"], "tie won by the crossing one")
