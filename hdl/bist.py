"""The self-testing top (BIST) around any family's network top: per terminal a traffic
generator and a checker, counters, and a UART report; family-agnostic (it sees the
network's controller and endpoints only, and each terminal's headers as the model
gives them).

One *BIST period* is ``T + 2 + D`` clocks, T the network's delivery cycle and D its
start latency (:func:`fatnet.golden.bist.period_clocks`):

* clock 0, *prepare*: the outcome of the cycle that just ended is latched (per
  terminal: acknowledged, or lost and kept to be sent again; per destination: a
  complete payload that passes its check is delivered, one that fails it is an error),
  then every terminal with no message waiting takes its draw
  (:func:`fatnet.golden.bist.draw`, computed in the clocks before), and every terminal
  with a message loads its stream: ``1``, the header for its destination (computed from
  the source and the destination by the family's rule, the model's stream bit for bit:
  :meth:`fatnet.hdl.family.HardwareFamily.bist_header`), the payload
  (:func:`fatnet.golden.bist.make_payload`);
* clocks 1 .. 3: the latched outcomes are counted, in stages so that no clock holds a
  path from a terminal's checker to a 32-bit counter (:data:`COUNT_CLOCKS`): clock 1
  sums each kind of outcome over the terminals, clock 2 forms the cycle's errors, clock
  3 adds to the counters (a period is at least 4 clocks);
* clock 1: the network's ``start`` strobe;
* clocks 2 .. D + 1: the strobe in the network's start tree (none when D = 0);
* clocks D + 2 .. D + T + 1: the network's bit-times 0 .. T - 1: each terminal drives its
  stream on ``send`` (bit p at bit-time p) and watches ``send_ack``; each destination
  raises ``recv_ack`` from its message's first bit (the M bit) on, skips the ``prefix``
  bits the network leaves before the payload, and shifts the payload in.

Counts per cycle also give two errors: acknowledged but not delivered, and delivered but
not acknowledged (the source sends it again: delivered twice); errors add
``|acknowledged - delivered|``. Every ``report_cycles`` completed cycles the seven
counters (:data:`fatnet.golden.bist.COUNTERS`) are copied and sent as one line,
``fatnet C=xxxxxxxx O=... E=xxxxxxxx`` and CR LF, 8N1 at ``clock / baud_divisor``
baud.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from ..golden.bist import COUNTERS, REPORT_FIELDS, draw, payload_fields, period_clocks
from .gen import LINT_WAIVERS
from .logic import below, equals, zero_extend

__all__ = ["BistCore", "line_template", "bist_lint_waivers"]

#: Verilator waivers for the self-testing top's Verilog (network and BIST in one file):
#: the network's own (:data:`fatnet.hdl.gen.LINT_WAIVERS`) and WIDTHEXPAND, because
#: Yosys narrows an adder's zero-extended operand (a per-cycle count added to a 32-bit
#: counter, the first level of the counts' adder trees) to its non-zero bits, and
#: Verilator then reports the narrower operand. The network alone is -Wall clean
#: without it (``fatnet gen``).
BIST_LINT_EXTRA = """// Yosys narrows an adder's zero-extended operand to its non-zero bits.
lint_off -rule WIDTHEXPAND
"""


#: Clocks from a prepare to the counters holding the cycle that ended (the count's
#: stages: latch the outcomes, sum them, form the errors, add): a period is at least this.
COUNT_CLOCKS = 4


def bist_lint_waivers() -> str:
    """The contents of the self-testing top's Verilator control file."""
    return LINT_WAIVERS + BIST_LINT_EXTRA


def line_template() -> list:
    """The report line as a list of items: an int (a character) or ``(counter,
    nibble)`` (nibble 7 is the most significant hex digit), ending in CR LF."""
    items: list[int | tuple[str, int]] = [ord(c) for c in "fatnet"]
    for key, name in zip(REPORT_FIELDS, COUNTERS):
        items += [ord(" "), ord(key), ord("=")]
        items += [(name, nib) for nib in range(7, -1, -1)]
    return items + [13, 10]


def popcount(m: Module, bits, name: str):
    """The number of ones among ``bits``, ``len(bits).bit_length()`` bits wide: a tree of
    adders of equal widths, every sum a signal named ``{name}_...`` (driven in ``m``'s
    ``comb``)."""
    w = max(1, len(bits).bit_length())
    level: list[Signal] = []
    for b in bits:
        v = Signal(w, name=f"{name}_{len(level)}")
        m.d.comb += v.eq(b)
        level.append(v)
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            v = Signal(w, name=f"{name}_{len(level)}_{i}")
            m.d.comb += v.eq((level[i] + level[i + 1])[:w])
            nxt.append(v)
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0] if level else Const(0, w)


def hex_digit(d4):
    """The ASCII character (8 bits) of the hex digit ``d4`` (4 bits), lower case: a Mux
    chain."""
    out = Const(ord("0"), 8)
    for i in range(1, 16):
        out = Mux(equals(d4, i), Const(ord("0123456789abcdef"[i]), 8), out)
    return out


class _Clocks(NamedTuple):
    """The period's signals every terminal reads."""

    prep: Signal      #: clock 0 of the period, the prepare
    live: Signal      #: a network bit-time
    ran: Signal       #: a cycle has run since reset
    loading: Signal   #: the index of the cycle being prepared (32 bits)


class BistCore(wiring.Component):
    """The BIST around a network top (module docstring).

    Parameters
    ----------
    network : wiring.Component
        The family's network top (``start``, ``busy`` and one endpoint per terminal).
    ports : list
        Terminal s's endpoint interface (``send``, ``send_ack``, ``recv``,
        ``recv_ack``), s = 0 .. 2^n - 1.
    cycle_length : int
        T, the network's delivery cycle in bit-times.
    headers : list of dict
        Per terminal, destination -> the header bits it drives after the M bit (the
        destinations it can draw: every other terminal for ``random``, one for a fixed
        pattern): the longest sets the header register's width, a fixed pattern's
        destination is the one key; the bits come from ``header``.
    pattern : str
        ``random`` or a fixed pattern (:data:`fatnet.golden.bist.FIXED_PATTERNS`).
    prefix : int
        Bits the network delivers between the M bit and the payload.
    payload_bits : int
        P (>= 2n + 4).
    states : list of int
        Per terminal, the generator's first state.
    offer_threshold : int
        The 17-bit threshold of the offered load.
    report_cycles : int
        Completed cycles between reports.
    baud_divisor : int
        Clocks per UART bit.
    flip_cycle : int or None
        Fault injection: in this cycle (counted from 0) terminal 0's payload goes out
        with its last bit flipped.
    stuck_wire : fatnet.golden.bist.StuckWire or None
        Fault injection: this wire between the top and a terminal's port (wire 0 of
        its ``send``, ``send_ack``, ``recv`` or ``recv_ack``) is held at its value at
        every clock; the side that reads it sees only that value.
    start_latency : int
        D, the network's start latency (:func:`fatnet.golden.cycle.start_latency`):
        bit-time 0 is the clock D + 1 after the strobe.
    header : callable
        ``header(s, destination)``: terminal s's header for an n-bit destination value,
        ``(bits, length)`` (the family's
        :meth:`~fatnet.hdl.family.HardwareFamily.bist_header`); it must agree with
        ``headers`` on every destination there.
    """

    def __init__(self, network, ports, cycle_length, headers, pattern, prefix,
                 payload_bits, states, offer_threshold, report_cycles, baud_divisor,
                 flip_cycle=None, stuck_wire=None, start_latency=0, *, header):
        N = len(ports)
        n = (N - 1).bit_length()
        if N < 2 or N != 1 << n:
            raise ValueError(f"the terminals must be a power of two >= 2, got {N}")
        if baud_divisor < 2:
            raise ValueError(f"baud_divisor must be >= 2, got {baud_divisor}")
        if period_clocks(cycle_length, start_latency) < COUNT_CLOCKS:
            raise ValueError(f"the BIST period must be >= {COUNT_CLOCKS} clocks, the count's "
                             f"stages; cycle_length {cycle_length} gives "
                             f"{period_clocks(cycle_length, start_latency)}")
        self._network, self._ports, self._T = network, ports, cycle_length
        self._headers, self._pattern, self._prefix = headers, pattern, prefix
        self._P, self._n = payload_bits, n
        self._states, self._thr = states, offer_threshold
        self._R, self._div, self._flip = report_cycles, baud_divisor, flip_cycle
        self._stuck, self._D, self._header = stuck_wire, start_latency, header
        _, self._q, _ = payload_fields(payload_bits, n)
        #: the longest header (H) and the width of its length
        self._H = max((len(h) for hs in headers for h in hs.values()), default=0)
        self._Hb = max(1, self._H.bit_length())
        super().__init__({"uart_tx": Out(1, init=1), "led_heartbeat": Out(1),
                          "led_error": Out(1)})
        #: the counters (32 bits each), in :data:`~fatnet.golden.bist.COUNTERS` order
        self.counters = {name: Signal(32, name=f"count_{name}") for name in COUNTERS}

    def elaborate(self, platform):
        # Width-clean for Verilator's -Wall: equalities with constants are XOR
        # reductions, the offer threshold is a comparison built from its bits, the hex
        # digits come from a table, every sum is of equal widths (:mod:`.logic`).
        m = Module()
        m.submodules.network = self._network
        clocks = self._period(m)
        outcomes = self._terminals(m, clocks)
        report = self._count(m, clocks, outcomes)
        take_snap = self._indicators(m, report)
        self._uart(m, take_snap)
        return m

    def _period(self, m) -> _Clocks:
        """The BIST period's counter and strobes: clock 0 prepare, 1 the network's
        start strobe, 2 .. D + 1 the start tree, D + 2 .. D + T + 1 the bit-times."""
        c = self.counters
        D = self._D
        last = period_clocks(self._T, D) - 1
        t = Signal(range(last + 1), name="period_t")
        prep = Signal(name="prep")
        live = Signal(name="live")        # a network bit-time
        strobe = equals(t, 1)
        if D:
            waiting = Signal(name="waiting")   # the strobe is in the start tree
            m.d.sync += waiting.eq(Mux(strobe, 1, Mux(equals(t, D + 1), 0, waiting)))
            m.d.comb += live.eq(~equals(t, 0) & ~strobe & ~waiting)
        else:
            m.d.comb += live.eq(~equals(t, 0) & ~strobe)
        m.d.comb += prep.eq(equals(t, 0))
        m.d.sync += t.eq(Mux(equals(t, last), 0, t + 1))
        m.d.comb += self._network.start.eq(strobe)
        ran = Signal(name="ran")          # a cycle has run since reset
        loading = Signal(32, name="loading")  # the index of the cycle being prepared
        m.d.comb += loading.eq(Mux(ran, c["cycles"] + 1, c["cycles"])[:32])
        return _Clocks(prep, live, ran, loading)

    def _stuck_value(self, s, direction, signal, w=0):
        """The stuck value of terminal s's wire w, or None for a sound wire."""
        f = self._stuck
        if f is not None and (f.terminal, f.direction, f.signal, w) == \
                (s, direction, signal, 0):
            return Const(f.value, 1)
        return None

    def _read(self, wire, s, direction, signal, w=0):
        """What the top sees on a wire the network drives (the stuck value)."""
        v = self._stuck_value(s, direction, signal, w)
        return wire if v is None else v

    def _drive(self, m, wire, value, s, direction, signal, w=0):
        """Drive a wire into the network (with its stuck value, if stuck)."""
        v = self._stuck_value(s, direction, signal, w)
        m.d.comb += wire.eq(value if v is None else v)

    def _terminals(self, m, clocks: _Clocks) -> dict:
        """Every terminal's generator and checkers; the outcome flags of the cycle
        that ended, per kind (``offered``, ``sent``, ``acknowledged``, ``lost``,
        ``delivered``, ``bad``), one flag per terminal (per recv wire for the last
        two)."""
        acked, lost, ok, bad, offered, sending = [], [], [], [], [], []
        for s, port in enumerate(self._ports):
            a, lo, drew, active = self._source(m, s, port, clocks)
            oks, bads = self._checkers(m, s, port, clocks)
            ok += oks
            bad += bads
            acked.append(a)
            lost.append(lo)
            offered.append(clocks.ran & drew)
            sending.append(clocks.ran & active)
        return {"offered": offered, "sent": sending, "acknowledged": acked,
                "lost": lost, "delivered": ok, "bad": bad}

    def _source(self, m, s, port, clocks: _Clocks):
        """Terminal s's generator: its message (kept or drawn), its stream on wire 0
        of ``send``; ``(acked, lost, drew, active)``, the flags of the cycle that
        ended (acknowledged, lost) and of the running one (a new message, sending)."""
        n, P, H, Hb, q = self._n, self._P, self._H, self._Hb, self._q
        prep, live, ran = clocks.prep, clocks.live, clocks.ran
        pending = Signal(name=f"t{s}_pending")
        dst = Signal(n, name=f"t{s}_dst")
        seq = Signal(max(q, 1), name=f"t{s}_seq")
        active = Signal(name=f"t{s}_active")
        ack_seen = Signal(name=f"t{s}_ack_seen")
        mbit = Signal(name=f"t{s}_mbit")
        hcnt = Signal(Hb + 1, name=f"t{s}_hcnt")
        hdr = Signal(max(H, 1), name=f"t{s}_hdr")
        pay = Signal(P, name=f"t{s}_pay")
        # ---- what the cycle that ended did
        a = Signal(name=f"t{s}_acked")
        lo = Signal(name=f"t{s}_lost")
        m.d.comb += [a.eq(ran & active & ack_seen), lo.eq(ran & active & ~ack_seen)]
        keep = Signal(name=f"t{s}_keep")
        m.d.comb += keep.eq(pending & ~a)
        seq_next = Signal(max(q, 1), name=f"t{s}_seq_next")
        m.d.comb += seq_next.eq(Mux(a, seq + 1, seq))
        x1, x2, offer, new_dst = self._draw(m, s)
        new = Signal(name=f"t{s}_new")
        m.d.comb += new.eq(~keep & offer)
        d_now = Signal(n, name=f"t{s}_d_now")
        m.d.comb += d_now.eq(Mux(keep, dst, new_dst))
        hdr_v, hlen_v, payload = self._stream(m, s, d_now, seq_next, clocks.loading)
        go = Signal(name=f"t{s}_go")
        m.d.comb += go.eq(keep | new)
        drew = Signal(name=f"t{s}_drew")     # the running cycle's message is new
        with m.If(prep):
            m.d.sync += [pending.eq(go), active.eq(go), dst.eq(d_now), seq.eq(seq_next),
                         drew.eq(new), ack_seen.eq(0), mbit.eq(go),
                         hcnt.eq(Mux(go, hlen_v, 0)), hdr.eq(hdr_v),
                         pay.eq(Mux(go, payload, 0))]
            with m.If(~keep):
                m.d.sync += x1.eq(x2)
        with m.Elif(live):
            m.d.sync += ack_seen.eq(ack_seen | self._read(port.send_ack[0], s, "send", "ack"))
            with m.If(mbit):
                m.d.sync += mbit.eq(0)
            with m.Elif(hcnt.any()):
                m.d.sync += [hcnt.eq(hcnt - 1), hdr.eq(hdr << 1)]
            with m.Else():
                m.d.sync += pay.eq(pay << 1)
        # wire 0 of the terminal's send wires (the model's first wire)
        self._drive(m, port.send[0], live & Mux(mbit, 1, Mux(hcnt.any(), hdr[-1], pay[-1])),
                    s, "send", "data")
        return a, lo, drew, active

    def _draw(self, m, s):
        """Terminal s's draw, ready before the prepare that takes it: x1 is the
        generator's next state (the model's x stepped once), which changes only at a
        prepare; the offer and the destination drawn from it are registered (reset: the
        draw from the first state). ``(x1, x2, offer, new_dst)``, x2 the state after
        x1."""
        n, hs = self._n, self._headers[s]
        x1_0, offer_0, dst_0 = draw(self._states[s], s, n, self._thr, self._pattern)
        x1 = Signal(32, name=f"t{s}_x1", init=x1_0)
        y = x1 ^ (x1 << 13)[:32]
        y = y ^ (y >> 17)
        x2 = y ^ (y << 5)[:32]        # the state after x1
        offer = Signal(name=f"t{s}_offer", init=offer_0)
        new_dst = Signal(n, name=f"t{s}_new_dst", init=dst_0)
        cheap = below(x1[:16], self._thr)
        if self._pattern == "random":
            v = x1[16:16 + n]
            m.d.sync += [new_dst.eq(Const(s, n) ^ Mux(v.any(), v, Const(1, n))),
                         offer.eq(cheap)]
        elif hs:
            (d_fixed,) = hs
            m.d.sync += [new_dst.eq(d_fixed), offer.eq(cheap)]
        else:                          # the pattern maps s to itself: never sends
            m.d.sync += [new_dst.eq(s), offer.eq(0)]
        return x1, x2, offer, new_dst

    def _stream(self, m, s, d_now, seq_next, loading):
        """Terminal s's stream for destination ``d_now``: ``(header, header length,
        payload)``, the header computed from the source and the destination (the
        family's rule, ``header``)."""
        n, P, H, Hb, q = self._n, self._P, self._H, self._Hb, self._q
        # the family's rule: its bits are left-aligned and at least as wide as the
        # longest header drawn (H), so their top H bits hold every header drawn
        bits, length = self._header(s, d_now)
        if len(bits) < H:
            raise ValueError(f"terminal {s}'s header hook gives {len(bits)} bits, the "
                             f"model's headers need {H}")
        hdr_v = Signal(max(H, 1), name=f"t{s}_hdr_next")
        hlen_v = Signal(Hb + 1, name=f"t{s}_hlen_next")
        m.d.comb += [hdr_v.eq(bits[len(bits) - H:] if H else 0),
                     hlen_v.eq(length[:Hb + 1])]
        chk = Const(s, n) ^ d_now
        for i in range(0, q, n):
            chunk = seq_next[i:i + n]
            chk = chk ^ zero_extend(chunk, n)
        if self._flip is not None and s == 0:
            chk = chk ^ zero_extend(equals(loading, self._flip), n)
        payload = Signal(P, name=f"t{s}_payload")
        m.d.comb += payload.eq(Cat(chk, seq_next[:q], Const(s, n)) if q else
                               Cat(chk, Const(s, n)))
        return hdr_v, hlen_v, payload

    def _checkers(self, m, s, port, clocks: _Clocks):
        """Destination s's checkers, one per recv wire (a dilated network can deliver
        a message on each); ``(ok, bad)``, per wire the flags of the cycle that ended:
        a complete payload that passes its check, one that fails it."""
        n, P, q = self._n, self._P, self._q
        prep, live, ran = clocks.prep, clocks.live, clocks.ran
        ok, bad = [], []
        for w in range(len(port.recv)):
            recv = self._read(port.recv[w], s, "recv", "data", w)
            got = Signal(name=f"t{s}_w{w}_got")
            skip = Signal(range(max(self._prefix, 1) + 1), name=f"t{s}_w{w}_skip")
            take = Signal(range(P + 1), name=f"t{s}_w{w}_take")
            rin = Signal(P, name=f"t{s}_w{w}_rin")
            done = Signal(name=f"t{s}_w{w}_done")
            self._drive(m, port.recv_ack[w], live & (got | recv), s, "recv", "ack", w)
            with m.If(prep):
                m.d.sync += [got.eq(0), done.eq(0)]
            with m.Elif(live):
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
            want = r_src ^ Const(s, n)
            for i in range(0, q, n):
                want = want ^ zero_extend(rin[n + i:n + min(i + n, q)], n)
            good = ~(want ^ r_chk).any()
            o_, b_ = Signal(name=f"t{s}_w{w}_ok"), Signal(name=f"t{s}_w{w}_bad")
            m.d.comb += [o_.eq(ran & done & good), b_.eq(ran & done & ~good)]
            ok.append(o_)
            bad.append(b_)
        return ok, bad

    def _count(self, m, clocks: _Clocks, outcomes: dict):
        """The count of the cycle that ended, in stages (a terminal's outcome, the
        adder trees over all terminals and the counters' adders in one clock would be
        the top's longest path): clock 0 latches each outcome, clock 1 sums them, clock
        2 forms the errors, clock 3 adds to the counters. The report strobe: every
        ``report_cycles`` counted cycles."""
        c = self.counters
        prep, ran = clocks.prep, clocks.ran
        m.d.sync += ran.eq(ran | prep)
        ended = Signal(name="count_ended")      # the latched cycle ran
        latched = {key: [Signal(name=f"latched_{key}_{i}") for i in range(len(flags))]
                   for key, flags in outcomes.items()}
        sums = {key: Signal(max(1, len(flags).bit_length()), name=f"cycle_{key}")
                for key, flags in latched.items()}
        # the sums and the errors are plain pipeline registers (no enable: the latched
        # outcomes hold from one prepare to the next, so the sums hold the cycle's from
        # clock 2 on and the errors from clock 3); the counters add at clock 3, strobed
        # by a flip-flop rather than a decode of t (an enable or a decode, merged into
        # the adders' first LUTs, lay on the top's longest path)
        stage = Signal(COUNT_CLOCKS - 1, name="count_stage")   # bit k: t == k + 1
        m.d.sync += stage.eq(Cat(prep, stage[:-1]))
        with m.If(prep):
            m.d.sync += ended.eq(ran)
            m.d.sync += [f.eq(v) for key, flags in outcomes.items()
                         for f, v in zip(latched[key], flags)]
        m.d.sync += [sums[key].eq(popcount(m, flags, f"pc{i}"))
                     for i, (key, flags) in enumerate(latched.items())]
        w = max(len(v) for v in sums.values()) + 1
        a_n, d_n, bad_n = (zero_extend(sums[k], w)
                           for k in ("acknowledged", "delivered", "bad"))
        errors = Signal(w, name="cycle_errors")
        m.d.sync += errors.eq((bad_n + Mux(a_n > d_n, a_n - d_n, d_n - a_n)[:w])[:w])
        rep_left = Signal(range(self._R), name="report_left", init=self._R - 1)
        report = Signal(name="report")
        m.d.comb += report.eq(0)
        with m.If(stage[-1] & ended):
            adds = {"cycles": Const(1, 32), "errors": errors,
                    **{name: sums[name] for name in COUNTERS if name in sums}}
            m.d.sync += [c[name].eq((c[name] + zero_extend(adds[name], 32))[:32])
                         for name in COUNTERS]
            last = ~rep_left.any()
            m.d.sync += rep_left.eq(Mux(last, self._R - 1, rep_left - 1))
            m.d.comb += report.eq(last)
        return report

    def _indicators(self, m, report):
        """The LEDs (an error was counted; a heartbeat) and the snapshot strobe, taken
        a clock after the counters settle (``report``, delayed), which it returns."""
        take_snap = Signal(name="take_snapshot")
        m.d.sync += take_snap.eq(report)
        m.d.comb += self.led_error.eq(self.counters["errors"].any())
        beat = Signal(24, name="heartbeat")
        m.d.sync += beat.eq(beat + 1)
        m.d.comb += self.led_heartbeat.eq(beat[-1])
        return take_snap

    def _uart(self, m, take_snap):
        """The UART: one line per snapshot (refused at build time if a line cannot
        finish within report_cycles periods).

        The snapshot is one shift register whose top nibble is the next hex digit of
        the line (the counters in the line's order, most significant nibble first),
        shifted by a nibble as each digit is sent: a digit is then a function of 4
        bits, not a choice among the line's 56 nibbles by the index.
        """
        c = self.counters
        items = line_template()
        L = len(items)
        idx = Signal(range(L + 1), name="uart_index", init=L)
        char = Signal(8, name="uart_char")
        assert [it for it in items if not isinstance(it, int)] == [
            (name, nib) for name in COUNTERS for nib in range(7, -1, -1)]
        snapshot = Signal(32 * len(COUNTERS), name="snapshot")
        digit = snapshot[-4:]
        hex_item = Signal(name="uart_hex_item")          # the index is a hex digit's
        digit_char = Signal(8, name="uart_digit_char")    # the one digit's character
        m.d.comb += digit_char.eq(hex_digit(digit))
        with m.Switch(idx):       # every case sets both (a full case, as lint asks)
            for i, it in enumerate(items):
                with m.Case(i):
                    if isinstance(it, int):
                        m.d.comb += [char.eq(it), hex_item.eq(0)]
                    else:
                        m.d.comb += [char.eq(digit_char), hex_item.eq(1)]
            with m.Default():
                m.d.comb += [char.eq(0), hex_item.eq(0)]
        shifter = Signal(10, name="uart_shift")
        bits_left = Signal(range(11), name="uart_bits")
        baud = Signal(range(self._div), name="uart_baud")
        idle = ~bits_left.any()
        # the character and the next index, registered: a character is loaded at most
        # every 10 clocks (10 bits of at least a clock each), so both have settled by
        # the next load; the snapshot sets them with the index (a line's first item is
        # a constant character). (Computed in the load's clock, the character's
        # multiplexers and the increment's carry chain were the top's longest paths on
        # the iCE40.)
        assert isinstance(items[0], int)
        char_r = Signal(8, name="uart_char_next")
        idx_next = Signal(range(L + 2), name="uart_index_next")
        m.d.sync += [char_r.eq(char), idx_next.eq(idx + 1)]
        with m.If(take_snap):
            m.d.sync += snapshot.eq(Cat(*(c[name] for name in reversed(COUNTERS))))
            m.d.sync += [idx.eq(0), idx_next.eq(1), char_r.eq(items[0]), bits_left.eq(0)]
        with m.Elif(idle):
            with m.If(~equals(idx, L)):
                m.d.sync += [shifter.eq(Cat(Const(0, 1), char_r, Const(1, 1))),
                             bits_left.eq(10), baud.eq(self._div - 1), idx.eq(idx_next)]
                with m.If(hex_item):
                    m.d.sync += snapshot.eq(Cat(Const(0, 4), snapshot[:-4]))
        with m.Else():
            with m.If(~baud.any()):
                m.d.sync += [shifter.eq(Cat(shifter[1:], Const(1, 1))),
                             bits_left.eq(bits_left - 1), baud.eq(self._div - 1)]
            with m.Else():
                m.d.sync += baud.eq(baud - 1)
        m.d.comb += self.uart_tx.eq(Mux(idle, 1, shifter[0]))
