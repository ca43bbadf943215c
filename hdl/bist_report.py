"""The self-testing top's report formatter: a snapshot of the counters as the report
line's characters (:func:`fatnet.golden.bist.report_line` and CR LF) on a byte stream."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import COUNTERS, REPORT_FIELDS
from .logic import equals

__all__ = ["ReportFormatter", "COUNTS", "line_template", "hex_digit"]

#: The seven 32-bit counters (:data:`fatnet.golden.bist.COUNTERS`), one member each by
#: its name, as their owner drives them.
COUNTS = wiring.Signature({name: Out(32) for name in COUNTERS})


def line_template() -> list:
    """The report line as a list of items: an int (a character) or ``(counter,
    nibble)`` (nibble 7 is the most significant hex digit), ending in CR LF."""
    items: list[int | tuple[str, int]] = [ord(c) for c in "fatnet"]
    for key, name in zip(REPORT_FIELDS, COUNTERS):
        items += [ord(" "), ord(key), ord("=")]
        items += [(name, nib) for nib in range(7, -1, -1)]
    return items + [13, 10]


def hex_digit(d4):
    """The ASCII character (8 bits) of the hex digit ``d4`` (4 bits), lower case: a Mux
    chain (width-clean, see :mod:`.logic`)."""
    out = Const(ord("0"), 8)
    for i in range(1, 16):
        out = Mux(equals(d4, i), Const(ord("0123456789abcdef"[i]), 8), out)
    return out


class ReportFormatter(wiring.Component):
    """The report line of a snapshot of the counters, a character at a time.

    At ``snapshot`` the counters are copied and the line starts from its first
    character (a line still going out is cut short: the self-testing top's report
    period leaves time for a whole line); the line's characters then go out on
    ``o_stream``, one transfer at most every second clock (a character is registered:
    it is offered from the second clock after the transfer of the one before).

    The snapshot is one shift register whose top nibble is the next hex digit of the
    line (the counters in the line's order, most significant nibble first), shifted by
    a nibble as each digit goes out: a digit is then a function of 4 bits, not a choice
    among the line's 56 nibbles by the index. The character and the next index are
    registered (computed in the clock of the transfer, the character's multiplexers and
    the increment's carry chain were the top's longest paths on the iCE40).

    Attributes
    ----------
    snapshot : Signal
        Copy the counters and start the line (one clock).
    counts : wiring.PureInterface
        The counters (:data:`COUNTS`), 32 bits each.
    o_stream : stream.Interface
        The line's characters, 8 bits each.
    """

    def __init__(self):
        super().__init__({"snapshot": In(1), "counts": In(COUNTS),
                          "o_stream": Out(stream.Signature(8))})

    def elaborate(self, platform):
        m = Module()
        items = line_template()
        assert [it for it in items if not isinstance(it, int)] == [
            (name, nib) for name in COUNTERS for nib in range(7, -1, -1)]
        assert isinstance(items[0], int)     # the snapshot sets the first character
        end = len(items)
        index = Signal(range(end + 1), name="index", init=end)
        index_next = Signal(range(end + 2), name="index_next")
        held = Signal(32 * len(COUNTERS), name="held")   # the snapshot, shifted
        char, is_digit = self._character(m, index, held[-4:], items)
        char_next = Signal(8, name="char_next")
        # char_next and index_next hold the index's character and successor from the
        # clock after the index changes
        settled = Signal(name="settled", init=1)
        o = self.o_stream
        take = o.valid & o.ready
        m.d.comb += [o.payload.eq(char_next), o.valid.eq(~equals(index, end) & settled)]
        m.d.sync += [char_next.eq(char), index_next.eq(index + 1), settled.eq(~take)]
        with m.If(self.snapshot):
            m.d.sync += held.eq(Cat(*(getattr(self.counts, name)
                                     for name in reversed(COUNTERS))))
            m.d.sync += [index.eq(0), index_next.eq(1), char_next.eq(items[0]),
                         settled.eq(1)]
        with m.Elif(take):
            m.d.sync += index.eq(index_next)
            with m.If(is_digit):
                m.d.sync += held.eq(Cat(Const(0, 4), held[:-4]))
        return m

    @staticmethod
    def _character(m, index, digit, items):
        """The character of item ``index`` of the line (``digit``'s for a hex digit)
        and whether it is a hex digit (comb signals)."""
        char = Signal(8, name="char")
        is_digit = Signal(name="is_digit")
        digit_char = Signal(8, name="digit_char")
        m.d.comb += digit_char.eq(hex_digit(digit))
        with m.Switch(index):       # every case sets both (a full case, as lint asks)
            for i, it in enumerate(items):
                with m.Case(i):
                    if isinstance(it, int):
                        m.d.comb += [char.eq(it), is_digit.eq(0)]
                    else:
                        m.d.comb += [char.eq(digit_char), is_digit.eq(1)]
            with m.Default():
                m.d.comb += [char.eq(0), is_digit.eq(0)]
        return char, is_digit
