"""The self-testing top's traffic, per terminal: the generator (:class:`TrafficGenerator`:
its draw, its stream on ``send``, the acknowledgment it watches) and the checker of
each recv wire (:class:`PayloadChecker`), with the arithmetic of
:mod:`fatnet.golden.bist`.

Both follow the period's strobes, which the top drives: ``prepare`` (the clock that
ends a cycle and loads the next), ``live`` (a network bit-time) and ``ran`` (a cycle
has run since reset: the outcomes of the cycle a prepare ends count).
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import LFSR_BITS, LFSR_TAPS, OFFER_BITS
from .bist_config import BistConfig
from .logic import below, equals, zero_extend

__all__ = ["TrafficGenerator", "PayloadChecker"]


def _check_terminal(config: BistConfig, terminal) -> None:
    """ValueError unless ``terminal`` is one of the config's terminals."""
    if not isinstance(config, BistConfig):
        raise ValueError(f"config must be a BistConfig, got {config!r}")
    N = config.terminals
    if isinstance(terminal, bool) or not isinstance(terminal, int) or not 0 <= terminal < N:
        raise ValueError(f"terminal must be in [0, {N - 1}], got {terminal!r}")


#: The period's strobes, which every generator and checker follows (module docstring).
PERIOD_MEMBERS = {"prepare": In(1), "live": In(1), "ran": In(1)}


class TrafficGenerator(wiring.Component):
    """Terminal ``terminal``'s traffic generator.

    Its draw (:func:`fatnet.golden.bist.draw`) is read from its generator's state at
    the prepare that takes it; the generator steps in the clocks after (``draw_step``).
    At a prepare, the message of the cycle that ended is acknowledged (``send_ack``
    was high at a bit-time of it) or kept to be sent again; a terminal with no message
    kept takes its draw, a new message if it offers; a terminal with a message loads its
    stream: ``1``, the header for its destination (:meth:`_header`), the payload
    (:func:`fatnet.golden.bist.make_payload`, the sequence number counting its
    acknowledged messages). The stream goes out on ``send`` a bit per bit-time.

    Parameters
    ----------
    config : BistConfig
        The self-test's parameters.
    terminal : int
        s, the terminal (its address, its headers, its first state).

    Attributes
    ----------
    prepare, live, ran : Signal
        The period's strobes (module docstring).
    draw_step : Signal
        The clocks 1 .. m after a prepare (m = :func:`fatnet.golden.bist.draw_steps`),
        in which a generator that took its draw steps.
    flip : Signal
        Fault injection: the message loaded at this prepare goes out with its payload's
        last bit flipped.
    send_ack : Signal
        The network's acknowledgment of the message being sent.
    send : Signal
        The stream (0 outside bit-times).
    offered, sent, acknowledged, lost : Signal
        At a prepare, if ``ran``, the cycle that ended: had a new message; had a
        message; had one that was acknowledged; had one that was not.
    """

    def __init__(self, config: BistConfig, terminal: int):
        _check_terminal(config, terminal)
        self._config, self._s = config, terminal
        self._n, self._P, self._q = config.n, config.payload_bits, config.sequence_bits
        self._H = config.header_bits
        self._Hb = max(1, self._H.bit_length())
        super().__init__({**PERIOD_MEMBERS, "draw_step": In(1), "flip": In(1),
                          "send_ack": In(1), "send": Out(1), "offered": Out(1),
                          "sent": Out(1), "acknowledged": Out(1), "lost": Out(1)})

    def elaborate(self, platform):
        m = Module()
        n, q = self._n, self._q
        prepare, live, ran = self.prepare, self.live, self.ran
        dst = Signal(n, name="dst")
        seq = Signal(max(q, 1), name="seq")
        active = Signal(name="active")     # a message is being sent (kept or new)
        ack_seen = Signal(name="ack_seen")
        # ---- what the cycle that ended did
        acked = Signal(name="acked")
        m.d.comb += [acked.eq(ran & active & ack_seen), self.acknowledged.eq(acked),
                     self.lost.eq(ran & active & ~ack_seen)]
        keep = Signal(name="keep")
        m.d.comb += keep.eq(active & ~acked)
        seq_next = Signal(max(q, 1), name="seq_next")
        m.d.comb += seq_next.eq(Mux(acked, seq + 1, seq))
        offer, new_dst = self._draw(m, ~keep)
        new = Signal(name="new")
        m.d.comb += new.eq(~keep & offer)
        d_now = Signal(n, name="d_now")
        m.d.comb += d_now.eq(Mux(keep, dst, new_dst))
        go = Signal(name="go")
        m.d.comb += go.eq(keep | new)
        drew = Signal(name="drew")     # the running cycle's message is new
        m.d.comb += [self.offered.eq(ran & drew), self.sent.eq(ran & active)]
        with m.If(prepare):
            m.d.sync += [active.eq(go), dst.eq(d_now), seq.eq(seq_next),
                         drew.eq(new), ack_seen.eq(0)]
        with m.Elif(live):
            m.d.sync += ack_seen.eq(ack_seen | self.send_ack)
        self._stream(m, go, d_now, seq_next)
        return m

    def _draw(self, m, take):
        """The generator (:func:`fatnet.golden.bist.lfsr_step`, one step a clock) and
        the draw read from its state: a terminal that takes its draw at a prepare
        (``take``) steps its state in the ``draw_step`` clocks after it, ready for its
        next draw. ``(offer, new_dst)``, the draw the state gives now."""
        c, s, n = self._config, self._s, self._n
        hs = c.headers[s]
        x = Signal(LFSR_BITS, name="lfsr", init=c.states[s])
        took = Signal(name="took")     # took a draw at the last prepare
        new_bit = x[LFSR_TAPS[0]]
        for tap in LFSR_TAPS[1:]:
            new_bit = new_bit ^ x[tap]
        with m.If(self.prepare):
            m.d.sync += took.eq(take)
        with m.Elif(self.draw_step & took):
            m.d.sync += x.eq(Cat(new_bit, x[:-1]))
        offer = below(x[:OFFER_BITS], c.offer_threshold)
        if c.pattern == "random":
            v = x[OFFER_BITS:OFFER_BITS + n]
            return offer, Const(s, n) ^ Mux(v.any(), v, Const(1, n))
        if hs:
            (d_fixed,) = hs
            return offer, Const(d_fixed, n)
        return Const(0, 1), Const(s, n)    # the pattern maps s to itself: never sends

    def _header(self, m, dst):
        """The header for destination ``dst``: ``(bits, length)``, the bits MSB first
        from the top of an H-bit value, computed from the source and the destination
        by the family's rule (``config.header``). Its bits are left-aligned and at
        least as wide as the longest header drawn (H), so their top H bits hold every
        header drawn."""
        H, Hb = self._H, self._Hb
        bits, length = self._config.header(self._s, dst)
        if len(bits) < H:
            raise ValueError(f"terminal {self._s}'s header rule gives {len(bits)} bits, "
                             f"the model's headers need {H}")
        hdr_v = Signal(max(H, 1), name="hdr_next")
        hlen_v = Signal(Hb + 1, name="hlen_next")
        m.d.comb += [hdr_v.eq(bits[len(bits) - H:] if H else 0),
                     hlen_v.eq(length[:Hb + 1])]
        return hdr_v, hlen_v

    def _payload(self, m, dst, seq):
        """The payload to ``dst`` with sequence number ``seq``
        (:func:`fatnet.golden.bist.make_payload`; its check flipped at ``flip``)."""
        s, n, q = self._s, self._n, self._q
        chk = Const(s, n) ^ dst
        for i in range(0, q, n):
            chk = chk ^ zero_extend(seq[i:i + n], n)
        chk = chk ^ zero_extend(self.flip, n)
        payload = Signal(self._P, name="payload")
        m.d.comb += payload.eq(Cat(chk, seq[:q], Const(s, n)) if q else Cat(chk, Const(s, n)))
        return payload

    def _stream(self, m, go, dst, seq):
        """Load the stream at a prepare (if ``go``: a message to ``dst``, sequence
        number ``seq``) and shift it out on ``send`` at the bit-times."""
        H, Hb = self._H, self._Hb
        mbit = Signal(name="mbit")
        hcnt = Signal(Hb + 1, name="hcnt")
        hdr = Signal(max(H, 1), name="hdr")
        pay = Signal(self._P, name="pay")
        hdr_v, hlen_v = self._header(m, dst)
        payload = self._payload(m, dst, seq)
        with m.If(self.prepare):
            m.d.sync += [mbit.eq(go), hcnt.eq(Mux(go, hlen_v, 0)), hdr.eq(hdr_v),
                         pay.eq(Mux(go, payload, 0))]
        with m.Elif(self.live):
            with m.If(mbit):
                m.d.sync += mbit.eq(0)
            with m.Elif(hcnt.any()):
                m.d.sync += [hcnt.eq(hcnt - 1), hdr.eq(hdr << 1)]
            with m.Else():
                m.d.sync += pay.eq(pay << 1)
        m.d.comb += self.send.eq(self.live & Mux(mbit, 1, Mux(hcnt.any(), hdr[-1], pay[-1])))


class PayloadChecker(wiring.Component):
    """The checker of one of terminal ``terminal``'s recv wires.

    From a message's first bit (the M bit) it raises ``recv_ack`` to the cycle's end,
    skips the ``prefix`` bits the network delivers before the payload, and shifts in the
    payload; a complete payload passes its check (:func:`fatnet.golden.bist.payload_ok`
    with the terminal's own address) or fails it.

    Parameters
    ----------
    config : BistConfig
        The self-test's parameters.
    terminal : int
        s, the destination whose wire it watches.

    Attributes
    ----------
    prepare, live, ran : Signal
        The period's strobes (module docstring).
    recv : Signal
        The wire.
    recv_ack : Signal
        The acknowledgment the destination drives back.
    delivered, bad : Signal
        At a prepare, ``ran`` and the cycle that ended brought a complete payload that
        passes its check, that fails it.
    """

    def __init__(self, config: BistConfig, terminal: int):
        _check_terminal(config, terminal)
        self._s, self._n, self._P = terminal, config.n, config.payload_bits
        self._q, self._prefix = config.sequence_bits, config.prefix
        super().__init__({**PERIOD_MEMBERS, "recv": In(1), "recv_ack": Out(1),
                          "delivered": Out(1), "bad": Out(1)})

    def elaborate(self, platform):
        m = Module()
        n, P, q, recv = self._n, self._P, self._q, self.recv
        got = Signal(name="got")
        skip = Signal(range(max(self._prefix, 1) + 1), name="skip")
        take = Signal(range(P + 1), name="take")
        rin = Signal(P, name="rin")
        done = Signal(name="done")
        m.d.comb += self.recv_ack.eq(self.live & (got | recv))
        with m.If(self.prepare):
            m.d.sync += [got.eq(0), done.eq(0)]
        with m.Elif(self.live):
            with m.If(~got):
                with m.If(recv):
                    m.d.sync += [got.eq(1), skip.eq(self._prefix), take.eq(P)]
            with m.Elif(skip.any()):
                m.d.sync += skip.eq(skip - 1)
            with m.Elif(take.any()):
                m.d.sync += [take.eq(take - 1), rin.eq(Cat(recv, rin[:-1]))]
                with m.If(equals(take, 1)):
                    m.d.sync += done.eq(1)
        r_src, r_chk = rin[q + n:], rin[:n]
        want = r_src ^ Const(self._s, n)
        for i in range(0, q, n):
            want = want ^ zero_extend(rin[n + i:n + min(i + n, q)], n)
        good = ~(want ^ r_chk).any()
        m.d.comb += [self.delivered.eq(self.ran & done & good),
                     self.bad.eq(self.ran & done & ~good)]
        return m
