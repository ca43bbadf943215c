"""The self-testing top's report formatter: a snapshot of the counters, written a word at
a time into a memory, sent as the report line's characters
(:func:`fatnet.golden.bist.report_line` and CR LF) on a byte stream."""

from __future__ import annotations

import operator
from functools import reduce

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import COUNTERS, REPORT_FIELDS
from .bist_counters import REPORT_WORD, counter_memory
from .logic import equals

__all__ = ["ReportFormatter", "line_template", "hex_digit"]

#: The hex digits of a counter in the line.
DIGITS = 8


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

    Each word taken on ``i_report`` (:data:`~fatnet.hdl.bist_counters.REPORT_WORD`) is
    written into the snapshot, a memory of the seven counters; the clock after the word
    marked ``last`` the line starts from its first character (a line still going out is
    cut short: the self-testing top's report period leaves time for a whole line). The
    line's characters then go out on ``o_stream``, a transfer at most every fourth
    clock: a character is offered from the fourth clock after the transfer of the one
    before (the snapshot's and the template's words are read in the clock after, then
    registered, then the nibble and the template's word registered, then the
    character).

    The line's template (its characters, and which are hex digits) is a read-only
    memory addressed by the character's index. The line's hex digits are counted: the
    count's high bits are the snapshot's word, its low bits the nibble (the most
    significant first), so both memories' addresses are registers and a digit is a
    choice of eight nibbles, not a shift register of the whole snapshot.

    Attributes
    ----------
    i_report : stream.Interface
        A report's counters, a word at a time (always ready).
    o_stream : stream.Interface
        The line's characters, 8 bits each.
    started : Signal
        The line has started: the snapshot holds its counters (one clock).
    memory : amaranth.lib.memory.Memory
        The snapshot (:func:`~fatnet.hdl.bist_counters.counter_memory`).
    """

    def __init__(self):
        self.memory = counter_memory()
        super().__init__({"i_report": In(stream.Signature(REPORT_WORD, always_ready=True)),
                          "o_stream": Out(stream.Signature(8))})
        self.started = Signal(name="line_started")

    def elaborate(self, platform):
        m = Module()
        m.submodules.memory = self.memory
        items = line_template()
        assert [it for it in items if not isinstance(it, int)] == [
            (name, nib) for name in COUNTERS for nib in range(DIGITS - 1, -1, -1)]
        end = len(items)
        word = self.i_report
        write = self.memory.write_port()
        m.d.comb += [write.addr.eq(word.payload.index), write.data.eq(word.payload.value),
                     write.en.eq(word.valid)]
        m.d.sync += self.started.eq(word.valid & word.payload.last)
        index = Signal(range(end + 1), name="index", init=end)
        digit = Signal(range(len(COUNTERS) * DIGITS), name="digit")   # digits sent
        read = self.memory.read_port()
        m.d.comb += read.addr.eq(digit[3:])
        template = self._template(m, index, items)
        # the words read are registered as they leave the block RAMs (whose outputs are
        # slow on every board), then the nibble chosen and registered before its hex
        # digit and the choice of the template's character
        snapshot_held = Signal(32, name="snapshot_held", reset_less=True)
        template_read = Signal(9, name="template_read", reset_less=True)
        m.d.sync += [snapshot_held.eq(read.data), template_read.eq(template.data)]
        # the nibble the digit count is at (its low three bits), the most significant
        # first, chosen by a one-hot copy of those bits (an AND-OR two LUTs deep, not a
        # multiplexer of eight three deep)
        nibble_at = Signal(DIGITS, name="nibble_at", init=1)
        nibble = Signal(4, name="nibble")
        m.d.comb += nibble.eq(reduce(operator.or_, (
            snapshot_held[4 * (DIGITS - 1 - i):][:4] & nibble_at[i].replicate(4)
            for i in range(DIGITS))))
        nibble_held = Signal(4, name="nibble_held")
        word_held = Signal(9, name="template_held")
        m.d.sync += [nibble_held.eq(nibble), word_held.eq(template_read)]
        char = Mux(word_held[8], hex_digit(nibble_held), word_held[:8])
        is_digit = template_read[8]     # the index's: a transfer comes 4 clocks after it
        char_next = Signal(8, name="char_next")
        # the index's character is in char_next from the fourth clock after the index
        # changes (the template's and the snapshot's words read, then held, then the
        # nibble and the template's word held, then the character registered)
        settled = Signal(4, name="settled")
        # a line is going out (the index is before its end): a flip-flop, not a decode
        # of the index, which would lie on the path from the index back to itself
        going = Signal(name="going")
        o = self.o_stream
        take = o.valid & o.ready
        m.d.comb += [o.payload.eq(char_next), o.valid.eq(going & settled[-1])]
        # the index's and the digit count's successors are registered too (computed in
        # the clock of the transfer, the increments' carry chains were the formatter's
        # longest paths on the iCE40)
        index_next = Signal.like(index, name="index_next")
        digit_next = Signal.like(digit, name="digit_next")
        m.d.sync += [char_next.eq(char),
                     settled.eq(Cat(~take, settled[:-1] & ~take.replicate(len(settled) - 1))),
                     index_next.eq(index + 1), digit_next.eq(digit + 1)]
        # the index is the line's last: a flip-flop loaded with the index, not a decode
        # of it on the path to ``going``'s enable
        at_last = Signal(name="at_last")
        with m.If(self.started):
            m.d.sync += [index.eq(0), digit.eq(0), nibble_at.eq(1), settled.eq(0),
                         going.eq(1), at_last.eq(end == 1)]
        with m.Elif(take):
            m.d.sync += [index.eq(index_next), at_last.eq(equals(index_next, end - 1))]
            with m.If(at_last):
                m.d.sync += going.eq(0)
            with m.If(is_digit):
                m.d.sync += [digit.eq(digit_next),
                             nibble_at.eq(Cat(nibble_at[-1], nibble_at[:-1]))]
        return m

    @staticmethod
    def _template(m, index, items):
        """The read port, its address ``index``, of the line's template in a read-only
        memory (block RAM): item i's word is its character, or bit 8 set for a hex
        digit; the word after the line's last is 0."""
        rom = memory.Memory(shape=9, depth=len(items) + 1, attrs={"ram_style": "block"},
                            init=[it if isinstance(it, int) else 1 << 8 for it in items])
        m.submodules.template = rom
        read = rom.read_port()
        m.d.comb += read.addr.eq(index)
        return read
