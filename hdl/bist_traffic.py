"""The self-testing top's traffic, per terminal: the generator (:class:`TrafficGenerator`:
its draw, its stream on ``send``, the acknowledgment it watches) and the checker of
each recv wire (:class:`PayloadChecker`), with the arithmetic of
:mod:`fatnet.golden.bist`.

Both follow the period's strobes, which the top drives: ``prepare`` (the clock that
ends a cycle and loads the next), ``live`` (a network bit-time) and ``ran`` (a cycle
has run since reset: the outcomes of the cycle a prepare ends count).
"""

from __future__ import annotations

from functools import lru_cache

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import ALWAYS_OFFERS
from ..golden.bitstream import int_to_bits
from .bist_config import BistConfig
from .bist_draws import draw_const, draw_fields
from .logic import equals, free_init_register, zero_extend

__all__ = ["TrafficGenerator", "PayloadChecker", "shift_counter", "WINDOW_STROBES",
           "stream_strobes", "SEND_LEAD"]


def _check_terminal(config: BistConfig, terminal) -> None:
    """ValueError unless ``terminal`` is one of the config's terminals."""
    if not isinstance(config, BistConfig):
        raise ValueError(f"config must be a BistConfig, got {config!r}")
    N = config.terminals
    if isinstance(terminal, bool) or not isinstance(terminal, int) or not 0 <= terminal < N:
        raise ValueError(f"terminal must be in [0, {N - 1}], got {terminal!r}")


@lru_cache(maxsize=None)
def shift_counter(length: int) -> tuple[int, int, tuple[int, ...]]:
    """A counter of ``length`` steps without a carry chain: a shift register of
    ``width`` bits whose new bit 0 is the XOR of its top bit and bit ``tap``, loaded
    with all ones. ``(width, tap, states)``: the narrowest such register (the lowest
    tap) whose ``length + 1`` first states, ``states``, are distinct."""
    width = max(2, length.bit_length())
    while True:
        for tap in range(width - 1):
            x, seen = (1 << width) - 1, list[int]()
            while len(seen) <= length and x not in seen:
                seen.append(x)
                x = ((x << 1) | ((x >> (width - 1)) ^ (x >> tap)) & 1) & ((1 << width) - 1)
            if len(seen) > length:
                return width, tap, tuple(seen)
        width += 1


def member(value, values) -> Value:
    """Whether ``value`` is one of the constants ``values`` (one bit)."""
    return Cat(Const(0, 1), *(equals(value, v) for v in values)).any()


def stream_strobes(length: int, payload_bits: int, n: int, keeps_destination: bool,
                   flips: bool) -> dict[str, tuple[int, ...]]:
    """The strobes of a generator whose stream has ``length`` bits (the M bit, a
    header, a payload of ``payload_bits`` among 2^n terminals) and stays in registers
    from cycle to cycle (:meth:`TrafficGenerator._kept_stream`,
    :meth:`TrafficGenerator._destination_stream`): name -> its bit-times. ``mark_m``,
    the M bit's; ``mark_j``, the source's bit j's (and, where the generator keeps the
    destination, the check's bit j's, whose constant part is the source's bit j). Where
    it keeps the destination (the header is the destination; at most n sequence bits):
    ``rotate_dst``, the header's and the check's bit-times, ``rotate_seq``, the sequence
    number's and the check's last q, and ``flip_bit`` (where ``flips``), the check's last
    bit's; elsewhere ``rotate``, the header's, the sequence number's and the check's."""
    q = payload_bits - 2 * n
    source = length - payload_bits       # the bit-time of the source's first bit
    check = source + n + q
    strobes: dict[str, tuple[int, ...]] = {"mark_m": (0,)}
    for j in range(n):                   # bit j is sent (n - 1 - j) bits into its field
        strobes[f"mark_{j}"] = (source + n - 1 - j,) + \
            ((check + n - 1 - j,) if keeps_destination else ())
    if not keeps_destination:
        return {**strobes, "rotate": (*range(1, source), *range(source + n, length))}
    strobes.update(rotate_dst=(*range(1, source), *range(check, length)),
                   rotate_seq=(*range(source + n, check), *range(length - q, length)))
    if flips:
        strobes["flip_bit"] = (length - 1,)
    return strobes


#: Clocks by which a kept stream's strobes (:func:`stream_strobes`) come before their
#: bit-times: the generator computes each bit in the clock before it sends it from a
#: flip-flop (:meth:`TrafficGenerator._send_registered`).
SEND_LEAD = 1

#: The period's strobes, which every generator and checker follows (module docstring).
PERIOD_MEMBERS = {"prepare": In(1), "live": In(1), "ran": In(1)}
#: The period's strobes of a checker whose payload comes at one bit-time
#: (:class:`PayloadChecker`).
WINDOW_STROBES = ("arrived", "in_payload", "in_source")


class TrafficGenerator(wiring.Component):
    """Terminal ``terminal``'s traffic generator.

    Its draw (:func:`fatnet.golden.bist.draw`) is read at the prepare that takes it,
    from a register of the draw its generator's state gives, which the shared engine
    (:class:`~fatnet.hdl.bist_draws.DrawEngine`) keeps and moves on after it.
    At a prepare, the message of the cycle that ended is acknowledged (``send_ack``
    was high at a bit-time of it) or kept to be sent again; a terminal with no message
    kept takes its draw, a new message if it offers. A terminal with a message sends its
    stream: ``1``, the header for its destination (:meth:`_head`), the payload
    (:func:`fatnet.golden.bist.make_payload`, the sequence number counting its
    acknowledged messages), on ``send`` a bit per bit-time. Where every destination the
    terminal draws has a header of one length (:attr:`stream_length`), the stream's bits
    that vary stay in registers from cycle to cycle and the M bit and the source come
    from the period's strobes (:meth:`_destination_stream` where the header is the
    destination, else :meth:`_kept_stream`); elsewhere the destination and the
    sequence number are kept and the stream loaded at every prepare
    (:meth:`_counted_stream`).

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
    draw, draw_ready : Signal
        The terminal's next draw (:func:`~fatnet.hdl.bist_draws.draw_fields`), which
        it takes where ``draw_ready`` and it took its draw at the last prepare.
    took : Signal
        The terminal took its draw at the last prepare (no message was kept).
    mark_m, mark_0 .. mark_n-1, rotate, rotate_dst, rotate_seq, flip_bit : Signal
        Where :attr:`stream_length` is not None, the bit-times of its stream's parts,
        :attr:`strobes` (:func:`stream_strobes`), each high :data:`SEND_LEAD` clock
        before its bit-time (the generator registers the bit it sends).
    flip : Signal
        Fault injection (where the config's ``flip_cycle`` is set): the message of the
        cycle this prepare starts goes out with its payload's last bit flipped.
    send_ack : Signal
        The network's acknowledgment of the message being sent.
    send : Signal
        The stream (0 outside bit-times).
    offered, sent, acknowledged, lost : Signal
        At a prepare, the cycle that ended (if one has run since reset, ``ran``: the
        counters count no other): had a new message; had a message; had one that was
        acknowledged; had one that was not.
    """

    def __init__(self, config: BistConfig, terminal: int):
        _check_terminal(config, terminal)
        self._config, self._s = config, terminal
        self._n, self._P, self._q = config.n, config.payload_bits, config.sequence_bits
        self._H = config.header_bits
        self._flips = config.flip_cycle is not None
        lengths = {len(h) for h in config.headers[terminal].values()}
        #: The stream's bits where every destination drawn has a header of one length
        #: (the M bit, the header, the payload), else None.
        self.stream_length = 1 + max(lengths, default=0) + self._P if len(lengths) <= 1 \
            else None
        n, q = self._n, self._q
        #: Whether the stream keeps the destination (:meth:`_destination_stream`):
        #: every header it draws is the destination, and q <= n.
        self.keeps_destination = self.stream_length == 1 + n + self._P and q <= n and all(
            h == int_to_bits(d, n) for d, h in config.headers[terminal].items())
        #: The period's strobes of a kept stream (:func:`stream_strobes`), name -> its
        #: bit-times; none for a counted stream.
        self.strobes = {} if self.stream_length is None else stream_strobes(
            self.stream_length, self._P, n, self.keeps_destination, self._flips)
        draw = sum(draw_fields(config))
        super().__init__({**PERIOD_MEMBERS, **{key: In(1) for key in self.strobes},
                          "draw": In(draw), "draw_ready": In(1), "took": Out(1),
                          "flip": In(1), "send_ack": In(1), "send": Out(1),
                          "offered": Out(1), "sent": Out(1), "acknowledged": Out(1),
                          "lost": Out(1)})

    def elaborate(self, platform):
        m = Module()
        prepare, live, ran = self.prepare, self.live, self.ran
        # No flip-flop here takes the reset: the first prepare after it (``ran`` low,
        # as at every clock of the reset) starts the terminal afresh, so the reset
        # reaches the terminals only through the period's registered strobes. Nothing
        # reads a register's value from before that prepare, so none has a power-up
        # value (free_init_register): on the ECP5 and the Gowin a flip-flop then takes
        # a synchronous set and its enable instead of LUTs.
        active = free_init_register(1, name="active")   # a message is being sent
        drew = free_init_register(1, name="drew")       # ... and it is new
        ack_seen = free_init_register(1, name="ack_seen")   # ... and acknowledged
        # ... and not acknowledged yet: ``active`` and not ``ack_seen``, in a flip-flop
        # of its own, which the choice to keep the message reads. The counters read
        # ``ack_seen`` (and the placer draws it toward them); this one only the
        # terminal's own logic reads.
        pending = free_init_register(1, name="pending")
        # ---- what the cycle that ended did (the counters count it only if ``ran``)
        m.d.comb += [self.offered.eq(drew), self.sent.eq(active),
                     self.acknowledged.eq(ack_seen), self.lost.eq(active & ~ack_seen)]
        acked = Signal(name="acked")
        keep = Signal(name="keep")
        m.d.comb += [acked.eq(ran & ack_seen), keep.eq(ran & pending)]
        # a terminal that took its draw at the last prepare sends a new message or none
        # (after a prepare with ``ran`` low, the reset's, every terminal has: it loads
        # ``active`` and ``drew`` alike, whatever they held before)
        offer, new_dst = self._draw(m, ~active | drew)
        new = Signal(name="new")
        m.d.comb += new.eq(~keep & offer)
        with m.If(prepare):
            m.d.sync += [active.eq(keep | new), drew.eq(new), ack_seen.eq(0),
                         pending.eq(keep | new)]
        with m.Elif(live):
            m.d.sync += [ack_seen.eq(ack_seen | (active & self.send_ack)),
                         pending.eq(pending & ~self.send_ack)]
        if self.stream_length is None:
            self._counted_stream(m, active, keep, acked, new_dst)
        elif self.keeps_destination:
            self._destination_stream(m, active, keep, acked, new_dst)
        else:
            self._kept_stream(m, active, keep, acked, new_dst)
        return m

    def _sequence_next(self, seq, acked):
        """The sequence number of the message loaded now: ``seq`` (the last one's) plus
        one if it was acknowledged; 0 at the first prepare."""
        return Mux(self.ran, Mux(acked, seq + 1, seq), 0)[:len(seq)]

    def _draw(self, m, took):
        """The terminal's next draw, in a register that the shared engine
        (:class:`~fatnet.hdl.bist_draws.DrawEngine`) writes after each prepare at
        which the terminal took its draw (``took``, the engine's ``draw_ready``), from
        its generator's state moved on by one draw; the draw it gives now,
        ``(offer, new_dst)``. The first prepare after reset (``ran`` low) reads the
        first state's draw, a constant, instead."""
        c, s, n = self._config, self._s, self._n
        hs = c.headers[s]
        offers, address = draw_fields(c)
        m.d.comb += self.took.eq(took)
        read = Const(draw_const(c, c.states[s]), offers + address)
        if offers + address:
            # written after a prepare before the next reads it: no reset
            kept = free_init_register(offers + address, name="draw")
            with m.If(self.draw_ready):     # shared by the word's terminals
                m.d.sync += kept.eq(Mux(took, self.draw, kept))
            read = Mux(self.ran, kept, read)
        offer = read[0] if offers else Const(c.offer_threshold >= ALWAYS_OFFERS, 1)
        if c.pattern == "random":
            return offer, Const(s, n) ^ read[offers:]
        if hs:
            (d_fixed,) = hs
            return offer, Const(d_fixed, n)
        return Const(0, 1), Const(s, n)    # the pattern maps s to itself: never sends

    def _head(self, dst):
        """The header for destination ``dst``, computed from the source and the
        destination by the family's rule (``config.header``), left-aligned in a value
        the stream sends from its top: ``(bits, length)``. Where every destination the
        terminal draws has a header of one length (:attr:`stream_length`), ``bits`` is
        exactly the header and ``length`` None; elsewhere ``bits`` is the M bit and the
        longest header's bits, ``length`` the bits to send (the M bit included)."""
        s, H = self._s, self._H
        bits, length = self._config.header(s, dst)
        if len(bits) < H:
            raise ValueError(f"terminal {s}'s header rule gives {len(bits)} bits, "
                             f"the model's headers need {H}")
        if self.stream_length is not None:
            return bits[len(bits) - (self.stream_length - 1 - self._P):], None
        width = (H + 1).bit_length()
        return Cat(bits[len(bits) - H:], Const(1, 1)), (length + 1)[:width]

    def _check(self, dst, seq, flip):
        """The payload's check to ``dst`` with sequence number ``seq``
        (:func:`fatnet.golden.bist.make_payload`; its last bit XOR ``flip``)."""
        n, q = self._n, self._q
        chk = Const(self._s, n) ^ dst
        for i in range(0, q, n):
            chk = chk ^ zero_extend(seq[i:i + n], n)
        return chk ^ zero_extend(flip, n)

    def _payload(self, dst, seq, flip):
        """The payload to ``dst`` with sequence number ``seq``
        (:func:`fatnet.golden.bist.make_payload`; its check's last bit XOR ``flip``)."""
        return Cat(self._check(dst, seq, flip), seq[:self._q], Const(self._s, self._n))

    def _flip(self):
        """``flip``, where the config injects a flipped bit (else no logic for it)."""
        return self.flip if self._flips else Const(0, 1)

    def _constant_bits(self):
        """The stream's bits that are the terminal's constants, at their bit-times: the
        OR of the ``mark`` strobes of the M bit and of the source's 1 bits."""
        ones = [self.mark_m] + [getattr(self, f"mark_{j}") for j in range(self._n)
                                if self._s >> j & 1]
        return Cat(*ones).any()

    def _send_registered(self, m, bit) -> None:
        """``send`` from a flip-flop loaded with ``bit``, the stream's bit computed in
        the clock before its bit-time (the strobes come :data:`SEND_LEAD` clock early),
        so that the net into the network starts at a register, not at the strobes'
        logic. Every strobe is low at a prepare and outside its bit-times (and through
        the reset), so the flip-flop holds 0 there."""
        sending = free_init_register(1, name="sending")
        m.d.sync += sending.eq(bit)
        m.d.comb += self.send.eq(sending)

    def _kept_stream(self, m, active, keep, acked, new_dst):
        """The stream from one register of the bits that vary (the header, the sequence
        number, the check) that holds the message from cycle to cycle: it rotates at
        the bit-times of ``rotate``, once for each of its bits, so each cycle sends it
        and leaves it as loaded; the M bit and the source are
        :meth:`_constant_bits`. A kept message is not loaded again, and the register's
        sequence number field is the terminal's sequence number. Every other prepare
        loads it (a new message to ``new_dst``, or none, the sequence number counted
        on). A flipped check bit is flipped back at the next prepare."""
        n, q = self._n, self._q
        # loaded at the first prepare (reset is one) before a bit of it is sent: no reset
        kept = free_init_register(self.stream_length - 1 - n, name="kept")
        seq_next = Signal(q, name="seq_next")
        m.d.comb += seq_next.eq(self._sequence_next(kept[n:n + q], acked))
        head, _ = self._head(new_dst)
        flip = self._flip()
        flipped = free_init_register(1, name="flipped")   # the check bit is flipped
        with m.If(self.prepare):
            m.d.sync += flipped.eq(flip)
            with m.If(keep):
                m.d.sync += kept[0].eq(kept[0] ^ flipped ^ flip)
            with m.Else():
                m.d.sync += kept.eq(Cat(self._check(new_dst, seq_next, flip), seq_next,
                                        head))
        with m.Elif(self.rotate):
            m.d.sync += kept.eq(Cat(kept[-1], kept[:-1]))
        self._send_registered(m, active & (self._constant_bits() | (self.rotate & kept[-1])))

    def _destination_stream(self, m, active, keep, acked, new_dst):
        """The stream where the header is the destination and the sequence number has
        at most n bits: the destination (n flip-flops) and the sequence number (q) kept
        from cycle to cycle, each rotating at its strobe's bit-times (``rotate_dst``:
        the header and the check, ``rotate_seq``: the sequence number and the check's
        last q), twice its width, so each cycle sends them and leaves them as loaded.
        The check's bit j is the source's bit j XOR the destination's XOR the sequence
        number's (the XOR of the n-bit chunks, of which there is one), sent as the XOR
        of the three at its bit-time; the M bit and the source are
        :meth:`_constant_bits`. A kept message's destination is not loaded again; every
        other prepare loads a new message's (or none's, ``new_dst``). Every prepare
        loads the sequence number, counted on if the last message was acknowledged (a
        kept one was not: it stays). A flipped check bit is sent flipped (``flip_bit``)
        in its cycle only. The stream's bits are computed a clock before they are sent
        (:meth:`_send_registered`)."""
        # loaded at the first prepare (reset is one) before a bit of it is sent: no reset
        dst = free_init_register(self._n, name="dst")
        seq = free_init_register(self._q, name="seq")
        with m.If(self.prepare & ~keep):
            m.d.sync += dst.eq(new_dst)
        with m.Elif(self.rotate_dst):
            m.d.sync += dst.eq(Cat(dst[-1], dst[:-1]))
        # loaded at every prepare: a kept message was not acknowledged, so its
        # sequence number stays as it is
        with m.If(self.prepare):
            m.d.sync += seq.eq(self._sequence_next(seq, acked))
        with m.Elif(self.rotate_seq):
            m.d.sync += seq.eq(Cat(seq[-1], seq[:-1]))
        bit = self._constant_bits() ^ (self.rotate_dst & dst[-1]) ^ \
            (self.rotate_seq & seq[-1])
        if self._flips:
            flipped = free_init_register(1, name="flipped")
            with m.If(self.prepare):
                m.d.sync += flipped.eq(self.flip)
            bit = bit ^ (self.flip_bit & flipped)
        self._send_registered(m, active & bit)

    def _counted_stream(self, m, active, keep, acked, new_dst):
        """The stream where the header's length depends on the destination: the
        destination and the sequence number kept in registers, and at every prepare
        the M bit and the header loaded into one register, whose bits are counted out
        first, the payload into another."""
        n, q, prepare, live = self._n, self._q, self.prepare, self.live
        dst = free_init_register(n, name="dst")
        seq = free_init_register(q, name="seq")
        d_now = Signal(n, name="d_now")
        seq_next = Signal(q, name="seq_next")
        m.d.comb += [d_now.eq(Mux(keep, dst, new_dst)),
                     seq_next.eq(self._sequence_next(seq, acked))]
        head, head_length = self._head(d_now)
        payload = self._payload(d_now, seq_next, self._flip())
        # loaded at every prepare (reset is one) before a bit of it is sent: no reset
        hreg = free_init_register(len(head), name="head")
        hcnt = free_init_register(len(head_length), name="hcnt")
        pay = free_init_register(self._P, name="pay")
        with m.If(prepare):
            m.d.sync += [dst.eq(d_now), seq.eq(seq_next), hreg.eq(head),
                         hcnt.eq(head_length), pay.eq(payload)]
        with m.Elif(live):
            with m.If(hcnt.any()):
                m.d.sync += [hcnt.eq(hcnt - 1), hreg.eq(hreg << 1)]
            with m.Else():
                m.d.sync += pay.eq(pay << 1)
        m.d.comb += self.send.eq(live & active & Mux(hcnt.any(), hreg[-1], pay[-1]))


class PayloadChecker(wiring.Component):
    """The checker of one of terminal ``terminal``'s recv wires.

    From a message's first bit (the M bit) it raises ``recv_ack`` to the cycle's end,
    skips the ``prefix`` bits the network delivers before the payload, and accumulates
    the payload's check as its bits arrive (:meth:`_accumulate`, n flip-flops); a
    complete payload passes its check (:func:`fatnet.golden.bist.payload_ok` with the
    terminal's own address) or fails it. Where every message arrives at one bit-time
    (the config's ``arrival``, :attr:`windowed`) the payload's bit-times are the
    period's strobes ``arrived``, ``in_payload`` and ``in_source``, which the top
    drives for every checker; elsewhere a shift counter per wire counts the bits from
    the M bit on.

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
    arrived, in_payload, in_source : Signal
        Where :attr:`windowed`: the bit-time ``arrival``; the payload's bit-times; its
        first n (the source's).
    recv : Signal
        The wire.
    recv_ack : Signal
        The acknowledgment the destination drives back.
    delivered, bad : Signal
        At a prepare, the cycle that ended (if one has run since reset, ``ran``: the
        counters count no other) brought a complete payload that passes its check, that
        fails it.
    """

    def __init__(self, config: BistConfig, terminal: int):
        _check_terminal(config, terminal)
        self._s, self._n, self._P = terminal, config.n, config.payload_bits
        self._q, self._prefix = config.sequence_bits, config.prefix
        #: Whether the payload's bit-times are the period's strobes (the config's
        #: ``arrival`` is set).
        self.windowed = config.arrival is not None
        window = {key: In(1) for key in WINDOW_STROBES} if self.windowed else {}
        super().__init__({**PERIOD_MEMBERS, **window, "recv": In(1), "recv_ack": Out(1),
                          "delivered": Out(1), "bad": Out(1)})

    def elaborate(self, platform):
        m = Module()
        # Nothing here takes the reset: a prepare clears it all, as at every clock of
        # the reset.
        got = free_init_register(1, name="got")    # the M bit has come
        acc = free_init_register(self._n, name="acc")
        m.d.comb += self.recv_ack.eq(self.live & (got | self.recv))
        with m.If(self.prepare):
            m.d.sync += acc.eq(0)
        # enabled by the period's strobes alone (shared by every checker's flip-flops),
        # loaded with recv_ack, which is low at a prepare (never a bit-time)
        with m.If(self.prepare | self.live):
            m.d.sync += got.eq(self.recv_ack)
        done = self._window(m, acc) if self.windowed else self._count(m, got, acc)
        good = Signal(name="good")
        m.d.comb += [good.eq(equals(acc, self._s)), self.delivered.eq(done & good),
                     self.bad.eq(done & ~good)]
        return m

    def _count(self, m, got, acc):
        """The payload's bits counted on the wire: a shift register (no carry chain)
        that steps from states[0] in the bit-times after the M bit, so it is at its
        last state exactly when the payload is complete. ``done``."""
        prefix, P, recv = self._prefix, self._P, self.recv
        width, tap, states = shift_counter(prefix + P)
        count = free_init_register(width, name="count")
        done = Signal(name="done")
        m.d.comb += done.eq(equals(count, states[-1]))
        # the bit arriving now: after the prefix, of the source (its first n)
        in_payload = member(count, states[prefix:]) if prefix else Const(1, 1)
        in_source = member(count, states[prefix:prefix + self._n])
        with m.If(self.prepare):
            m.d.sync += count.eq(states[0])
        with m.Elif(self.live & got & ~done):
            m.d.sync += [count.eq(Cat(count[-1] ^ count[tap], count[:-1])),
                         acc.eq(self._accumulate(acc, recv, in_payload, in_source))]
        return done

    def _window(self, m, acc):
        """The payload's bits at the period's strobes: the check accumulates every bit
        of ``in_payload`` (the wire is 0 there unless a message has come), and the
        payload is complete if the M bit had come by the bit-time ``arrived`` (a
        stream that comes earlier is ones to the cycle's end; one that comes later
        ends after the cycle). ``done``."""
        armed = free_init_register(1, name="armed")    # the M bit came in time
        with m.If(self.prepare | self.arrived):    # recv_ack: got | recv, low at a prepare
            m.d.sync += armed.eq(self.recv_ack)
        with m.If(self.in_payload):    # never at a prepare
            m.d.sync += acc.eq(self._accumulate(acc, self.recv, Const(1, 1),
                                                self.in_source))
        return armed

    def _accumulate(self, acc, bit, in_payload, in_source):
        """The check accumulated one arriving bit further, serially: ``acc`` rotated up
        by one, the bit XORed in at index 0, or at index -q mod n for a bit of the
        source. Rotated once for every bit after it, payload bit b ends at index b mod n
        (the sequence number's and the check's chunk index), a source bit at its own
        index (b - q mod n): the complete payload leaves in ``acc`` the source, the
        sequence number's chunks and the check XORed, which is the destination's
        address exactly when the check holds (:func:`fatnet.golden.bist.payload_ok`)."""
        n, q = self._n, self._q
        rotated = Cat(acc[-1], acc[:-1])
        at_source = -q % n
        into = [Const(0, 1)] * n
        if at_source == 0:           # every field at one alignment
            into[0] = bit & in_payload
        else:
            into[0] = bit & in_payload & ~in_source
            into[at_source] = bit & in_source
        return rotated ^ Cat(*into)
