"""The dimension router: Algorithm 1's router of one dimension at one node (Kuszmaul
1990, Sec. II), bit-serial, as the golden cycle-exact model's
:class:`~fatnet.golden.hypercube.bitserial.RouterChain` runs it.

Node ``x``'s rank-``r`` router handles dimension ``d = order[r]``. It owns one register,
the node's one-message buffer after dimension ``d`` (what its next router, or the node's
delivery port, reads), and it decides for the message on its input ``i``:

* it sees the message's M bit, then (the next bit-time) its relative-address bit for
  ``d``; a 0 claims its own register (the message stays at ``x``), a 1 claims the
  neighbour's across dimension ``d`` (the router's ``xo`` drives the claim and then the
  message's bits, combinationally, into the neighbour's ``xi``);
* the claimed register latches a fresh M bit in the address bit's slot, then the
  message's later bits, one bit-time after they arrive: one register level between
  dimension wires, switching in one bit-time;
* two claims of one register in one bit-time (a collision) are served by priority: the
  message from the node whose bit ``d`` is 0 keeps it (the model's rule: lower input
  first). A claim that fails, or that finds the register already held, is lost there:
  ``lost`` is high in that bit-time, and the message goes no further;
* the reverse wires (``ack``) run the circuit backwards with one register per router:
  the acknowledgment (a level from the destination) or, for Algorithm 2's rendezvous
  (Step 6), a whole stream driven back from the far end.

``clear`` (the top's start strobe) drops the connection and the register.
"""

from __future__ import annotations

from amaranth import Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..signatures import ChannelSignature

__all__ = ["DimensionRouter", "router_signature"]


def router_signature(high_port: bool = False) -> wiring.Signature:
    """The signature of a :class:`DimensionRouter` (without building one); ``high_port``:
    the priority is an input (``DimensionRouter(None)``)."""
    return wiring.Signature({
        **({"high": In(1)} if high_port else {}),
        "clear": In(1),
        "i": In(ChannelSignature(1)),
        "o": Out(ChannelSignature(1)),
        "xo": Out(ChannelSignature(1)),
        "xi": In(ChannelSignature(1)),
        "lost": Out(1),
    })


class DimensionRouter(wiring.Component):
    """Node ``x``'s router of one dimension ``d`` (module docstring).

    Parameters
    ----------
    high : bool or None
        Bit ``d`` of the node's address. It sets the priority: a node with bit 0 keeps its
        register for its own staying message in a tie; a node with bit 1 gives it to the
        neighbour's crossing message. None: it is the input ``high`` (one module for
        every node, whose address is an input).

    Members
    -------
    high : ``In(1)``
        Only with ``high=None``: bit ``d`` of the node's address.
    clear : ``In(1)``
        Start of a delivery cycle: drop the connection.
    i : ``In(ChannelSignature(1))``
        The message arriving at this rank of the node (the injection, or the node's
        previous router's register), and its acknowledgment going back.
    o : ``Out(ChannelSignature(1))``
        This rank's register (the node's next router, or its delivery port), and the
        acknowledgment coming back.
    xo : ``Out(ChannelSignature(1))``
        Across dimension ``d`` to the neighbour's ``xi``: the claim (one 1 in the
        bit-time the address bit is read), then the crossing message's bits; the
        acknowledgment of the neighbour's register comes back.
    xi : ``In(ChannelSignature(1))``
        The neighbour's ``xo``: its crossing message, and this register's
        acknowledgment going back to it.
    lost : ``Out(1)``
        A claim of this register failed in this bit-time (a collision).

    Raises
    ------
    ValueError
        If ``high`` is neither a bool nor None.
    """

    def __new__(cls, high):
        # refused before the component exists, so Amaranth has no unused one to report
        if high is not None and not isinstance(high, bool):
            raise ValueError(f"high must be a bool or None, not {high!r}")
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, high):
        self._high = high
        super().__init__(router_signature(high is None))

    def elaborate(self, platform):
        m = Module()
        i, xi = self.i.data, self.xi.data
        seen = Signal(name="seen")        # M has arrived on i this cycle
        waiting = Signal(name="waiting")  # M arrived last bit-time: i is the address bit
        cross = Signal(name="cross")      # the message on i crosses (claimed across)
        xseen = Signal(name="xseen")      # something has arrived on xi this cycle
        own = Signal(name="own")          # the register holds this node's message
        other = Signal(name="other")      # the register holds the neighbour's message
        ack = Signal(name="ack")          # the reverse wire, one register per router

        req_own = Signal(name="req_own")
        req_x = Signal(name="req_x")
        grant_own = Signal(name="grant_own")
        grant_x = Signal(name="grant_x")
        free = ~own & ~other
        m.d.comb += [req_own.eq(waiting & ~i), req_x.eq(xi & ~xseen)]
        high = self.high if self._high is None else Const(int(self._high), 1)
        # a node with bit 1 gives a tie to the neighbour (bit 0), a node with bit 0 keeps it
        m.d.comb += [grant_x.eq(req_x & free & (high | ~req_own)),
                     grant_own.eq(req_own & free & (~high | ~req_x))]
        m.d.comb += [
            self.lost.eq((req_own & ~grant_own) | (req_x & ~grant_x)),
            self.xo.data.eq(i & (waiting | cross)),
            self.i.ack.eq((own & ack) | (cross & self.xo.ack)),
            self.xi.ack.eq(other & ack),
        ]
        with m.If(self.clear):
            m.d.sync += [seen.eq(0), waiting.eq(0), cross.eq(0), xseen.eq(0), own.eq(0),
                         other.eq(0), ack.eq(0), self.o.data.eq(0)]
        with m.Else():
            m.d.sync += [
                seen.eq(seen | i), waiting.eq(i & ~seen), cross.eq(cross | (waiting & i)),
                xseen.eq(xseen | xi), own.eq(own | grant_own), other.eq(other | grant_x),
                self.o.data.eq(grant_own | grant_x | (own & i) | (other & xi)),
                ack.eq((own | other) & self.o.ack),
            ]
        return m
