"""The self-testing top's counters: each delivery cycle's outcomes, counted in stages
and added to the seven 32-bit counters (:data:`fatnet.golden.bist.COUNTERS`), which are
words of a memory (block RAM on every board) updated by one adder in a sweep of seven
clocks; at a report the sweep also sends each new value on a stream of words
(:data:`REPORT_WORD`) to the report formatter."""

from __future__ import annotations

import operator
from functools import reduce

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import COUNTERS
from .logic import equals, zero_extend

__all__ = ["BistCounters", "popcount", "count_four", "outcome_flags", "tree_clocks",
           "count_clocks", "LEVELS_PER_CLOCK", "SOURCE_OUTCOMES", "WIRE_OUTCOMES",
           "MIN_PERIOD", "REPORT_WORD", "counter_memory", "FEED", "ZERO_WORD",
           "collisions_undefined", "SWEEP_CLOCKS"]

#: The clocks of the sweep from a counter's read to its write: the word read and the
#: counter's increment registered, then their sum's low half and its carry, then the
#: high half (:meth:`BistCounters._add`).
SWEEP_CLOCKS = 4
#: The clocks of a prepare's count besides its adder tree's before the sweep's first
#: write: latch the outcomes, the five kinds fed a clock each (:data:`FEED`), take the
#: last sum, form the errors and the lost messages, the first read, then the sweep's
#: :data:`SWEEP_CLOCKS`.
_STAGES = 7 + SWEEP_CLOCKS
#: The shortest BIST period: each kind's sum is held for a period, from the clock after
#: the tree gives it, and the sweep takes each up to 8 clocks after the tree gives it
#: (the acknowledged messages', the first kind, given at clock L + 1 and taken at
#: L + 9: the sweep, a clock per counter, starts with the errors, which wait for the
#: last kind).
MIN_PERIOD = len(COUNTERS) + 1
#: One counter's new value at a report (:data:`fatnet.golden.bist.COUNTERS` index
#: ``index``); ``last`` marks a report's last word, the cycles'.
REPORT_WORD = data.StructLayout({"index": range(len(COUNTERS)), "value": 32, "last": 1})
#: The adder trees' levels per clock. The first two levels count four flags into three
#: bits, each a function of the four (one LUT4 deep); the others are short carry chains.
#: A register after every level would cost the logic of each level apart (more LUTs,
#: and a flip-flop per bit and level). :func:`popcount` takes two a clock on average:
#: the first clock the four-flag counts and one adder, each later clock at most two
#: adders.
LEVELS_PER_CLOCK = 2

#: The outcomes of a cycle counted, one flag per terminal: a new message, a message sent,
#: one acknowledged. The lost messages (sent and not acknowledged) are the sent less the
#: acknowledged: counted from those two sums, not flags of their own.
SOURCE_OUTCOMES = ("offered", "sent", "acknowledged")
#: The outcomes of a cycle, one flag per recv wire: a complete payload that passes its
#: check, one that fails it.
WIRE_OUTCOMES = ("delivered", "bad")
#: The order in which the kinds of outcome go through the one adder tree, a kind a
#: clock: the acknowledged (word 4, the first the sweep adds after the errors and the
#: lost, which are formed from the sums), then the kinds of a flag per recv wire (the
#: widest: the delivered, the failed checks, which only the errors take), then the sent
#: and the offered, so that the feed's shift register, whose stage i holds the kinds
#: from the i-th on (:meth:`BistCounters._feed`), narrows after the third stage.
FEED = ("acknowledged", "delivered", "bad", "sent", "offered")


def tree_clocks(flags: int) -> int:
    """The clocks of the adder tree that counts ``flags`` flags (>= 1): its levels (each
    adds the level before in pairs), :data:`LEVELS_PER_CLOCK` per clock; at least one."""
    levels = (flags - 1).bit_length()
    return max(1, -(-levels // LEVELS_PER_CLOCK))


def count_clocks(flags: int) -> int:
    """Clocks from a prepare to its report's first word (:data:`REPORT_WORD`, the
    errors'), the widest outcome having ``flags`` flags: latch the outcomes, feed the
    kinds through the adder tree (:func:`tree_clocks`), form the errors and the lost
    messages, read the first counter. The other words follow a clock apart, the
    cycles' last."""
    return _STAGES + tree_clocks(flags)


#: The counters' memory's word that is never written: 0, read instead of a counter in
#: the first sweep after a reset (a choice of address, not of the 32 bits read).
ZERO_WORD = len(COUNTERS)


def collisions_undefined(rtlil: str) -> str:
    """The RTLIL ``rtlil`` with every read port of a memory marked ``no_rw_check``
    (:func:`counter_memory`) told that a read of a word in the clock it is written reads
    an undefined value (``COLLISION_X_MASK`` all ones). Amaranth writes every read port
    as reading the old word, and Yosys does not apply the attribute to the read ports of
    an RTLIL memory; without this Yosys builds that read, on a block RAM that does not
    give it, from a register of the written word and a multiplexer per bit (33 LUTs and
    69 flip-flops for the counters' memory on the iCE40)."""
    lines = rtlil.split("\n")
    marked, module, attributes = set(), None, []
    for line in lines:
        words = line.split()
        if words[:1] == ["module"]:
            module = words[1]
        elif words[:1] == ["attribute"]:
            attributes.append(words[1])
            continue
        elif words[:1] == ["memory"] and "\\no_rw_check" in attributes:
            marked.add((module, words[-1]))
        attributes = []
    memid = None
    for i, line in enumerate(lines):
        words = line.split()
        if words[:1] == ["module"]:
            module = words[1]
        elif words[:2] == ["parameter", "\\MEMID"]:
            memid = words[2].strip('"').replace("\\\\", "\\")
        elif words[:2] == ["parameter", "\\COLLISION_X_MASK"] and (module, memid) in marked:
            width = words[2].split("'")[0]
            lines[i] = line[:line.index(words[2])] + f"{width}'" + "1" * int(width)
    return "\n".join(lines)


def counter_memory() -> memory.Memory:
    """A memory of the seven 32-bit counters, word k :data:`COUNTERS`[k], and
    :data:`ZERO_WORD`, all 0 at configuration; in block RAM (``ram_style``: Yosys would
    put so small a memory in logic on the ECP5 and the Gowin parts). Its users never
    use a word read in the clock it is written (the counters' sweep reads each word the
    clock before it writes it; the report formatter uses no word it reads while a
    report is written), so Yosys is told not to build logic that would give such a read
    the old word (``no_rw_check``, :func:`collisions_undefined`: on the iCE40 a
    register and a multiplexer per bit)."""
    return memory.Memory(shape=32, depth=ZERO_WORD + 1, init=[],
                         attrs={"ram_style": "block", "no_rw_check": 1})


def count_four(flags):
    """The number of ones among up to four one-bit ``flags``, 3 bits, as logic rather
    than adders: each bit a function of the four (one LUT4)."""
    a, b, c, d = list(flags) + [Const(0, 1)] * (4 - len(flags))
    ab, cd = a ^ b, c ^ d
    return Cat(ab ^ cd, (a & b) ^ (c & d) ^ (ab & cd), a & b & c & d)


def _registered_levels(levels: int, clocks: int) -> list[int]:
    """The level of an adder tree of ``levels`` levels that each of its ``clocks``
    clocks registers: the first the four-flag counts (level 2) and, where there are
    more levels, one adder; the adders left spread over the other clocks as evenly as
    they go (the earlier taking the more), so that no clock has more than two adders
    where ``clocks`` >= :func:`tree_clocks`. A clock with no adder left carries the
    count a level on."""
    ends = [2 + min(1, levels - 2) if clocks > 1 else 2]
    for left in range(clocks - 1, 0, -1):
        ends.append(ends[-1] + max(1, -(-(levels - ends[-1]) // left)))
    return ends


def popcount(m: Module, bits, name: str, clocks: int):
    """The number of ones among ``bits``, ``clocks`` clocks after them: a tree, each
    level adding the level before in pairs (an odd one carried), registered in ``m``'s
    ``sync`` at one level a clock (:func:`_registered_levels`), its values signals named
    ``{name}_l{level}_{i}``; the first two levels count the flags four at a time
    (:func:`count_four`, one LUT deep), the others are adders. The first clock takes
    the four-flag counts and at most one adder, the later ones at most two: the two
    adders of the second and the third level after the counts would be a clock's
    longest path. Once one value is left it is carried to the last level, so that
    trees of fewer flags give their count at the same clock. ``clocks`` >=
    :func:`tree_clocks` of ``len(bits)``. Each value is as wide as its count needs: a
    level-k value counts at most 2^k flags, k + 1 bits (at most
    ``len(bits).bit_length()``). The registers take no reset."""
    w = max(1, len(bits).bit_length())
    width = min(3, w)
    registered = _registered_levels(max(2, (len(bits) - 1).bit_length()), clocks)
    level = [Signal(width, name=f"{name}_l2_{i}", reset_less=True)
             for i in range(-(-len(bits) // 4))]
    first = m.d.sync if 2 in registered else m.d.comb
    first += [v.eq(count_four(bits[4 * i:4 * i + 4])) for i, v in enumerate(level)]
    for k in range(3, registered[-1] + 1):
        width = min(width + 1, w)
        pairs = [level[i:i + 2] for i in range(0, len(level), 2)]
        level = [Signal(width, name=f"{name}_l{k}_{i}", reset_less=True)
                 for i in range(len(pairs))]
        domain = m.d.sync if k in registered else m.d.comb
        domain += [v.eq(sum(pair)) for v, pair in zip(level, pairs)]
    if len(level) != 1:
        raise ValueError(f"{len(bits)} flags need {tree_clocks(len(bits))} clocks, "
                         f"got {clocks}")
    return level[0]


def outcome_flags(terminals: int, wires: int) -> wiring.Signature:
    """The outcome flags of a cycle as their drivers drive them: per terminal
    (:data:`SOURCE_OUTCOMES`, ``terminals`` bits each) and per recv wire
    (:data:`WIRE_OUTCOMES`, ``wires`` bits each)."""
    return wiring.Signature({**{key: Out(terminals) for key in SOURCE_OUTCOMES},
                             **{key: Out(wires) for key in WIRE_OUTCOMES}})


class BistCounters(wiring.Component):
    """The count of each delivery cycle, in stages, into the counters' memory.

    A cycle's outcome flags are taken at its ``prepare`` (the clock that ends it) and
    counted by one adder tree, a kind of outcome a clock (:data:`FEED`, from clock 1
    after the prepare), in stages so that no clock's path runs through more than two
    of the tree's adders (:func:`popcount`, :data:`LEVELS_PER_CLOCK` levels a clock:
    :func:`tree_clocks` of the terminals or the recv wires, whichever are more: L
    clocks); the kind fed at clock 1 + i is summed by clock L + 1 + i and held from
    clock L + 2 + i until the next period's. Clock L + 6 forms the cycle's errors
    (``bad + |acknowledged - delivered|``) and its lost messages (``sent -
    acknowledged``). If ``ran`` was high at the prepare (a cycle had run), the counters
    are then swept, one a clock, from the errors (word 6) down to the cycles (word 0):
    counter k is read at clock L + 13 - k after the prepare, its increment registered
    at the same clock, the word read and the increment registered at L + 14 - k, the
    sum's low half and carry at L + 15 - k, its high half at L + 16 - k, and the sum
    written back at clock L + 17 - k (the first sweep after a reset adds to 0 instead:
    the memory is not reset). Periods must be at least :data:`MIN_PERIOD` clocks, so
    that each sum holds until the sweep takes it. Every ``report_cycles`` counted
    cycles, the sweep also sends each new value on ``o_report`` (:data:`REPORT_WORD`,
    in the clock it is written, from registers: the errors' at clock L + 11, the
    cycles' at L + 17, with ``last``).

    Parameters
    ----------
    terminals : int
        Flags of each of :data:`SOURCE_OUTCOMES` (>= 1).
    wires : int
        Flags of each of :data:`WIRE_OUTCOMES`: the recv wires (>= 1).
    report_cycles : int
        Counted cycles between reports (>= 1).

    Attributes
    ----------
    latency : int
        Clocks from a prepare to its report's first word (:func:`count_clocks` of the
        widest outcome's flags).
    prepare : Signal
        The clock that ends a cycle: its flags are taken.
    ran : Signal
        A cycle has run (the flags taken at a prepare are counted).
    flags : wiring.PureInterface
        The cycle's outcome flags (:func:`outcome_flags`).
    o_report : stream.Interface
        A report's counters, a word a clock (:data:`REPORT_WORD`; always ready).
    error : Signal
        The errors' counter is not 0 (from the clock after it is written).
    memory : amaranth.lib.memory.Memory
        The counters (:func:`counter_memory`).
    """

    def __init__(self, terminals: int, wires: int, report_cycles: int):
        for name, value in (("terminals", terminals), ("wires", wires),
                            ("report_cycles", report_cycles)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self._report_cycles = report_cycles
        self._clocks = tree_clocks(max(terminals, wires))
        self.latency = count_clocks(max(terminals, wires))
        self.memory = counter_memory()
        super().__init__({"prepare": In(1), "ran": In(1),
                          "flags": In(outcome_flags(terminals, wires)),
                          "o_report": Out(stream.Signature(REPORT_WORD, always_ready=True)),
                          "error": Out(1)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.memory = self.memory
        L = self._clocks
        flags = {key: getattr(self.flags, key) for key in FEED}
        # the flags taken, the adder tree and the stages after it hold no state a reset
        # must clear (a cycle is counted only if ``ran`` at its prepare, a period after
        # the reset at least), so they take no reset: no reset net reaches them. The
        # tree is a plain pipeline (no enable); when its sums are taken and when the
        # sweep starts come from flip-flops (a shift register of the counted prepares),
        # not from a decode of the period's clock
        counted = Signal(L + len(FEED) + 1, name="counted")   # bit k: clock k + 1 after
        m.d.sync += counted.eq(Cat(self.prepare & self.ran, counted[:-1]))
        fed = self._feed(m, list(flags.values()))
        total = popcount(m, list(fed), "count", L)
        sums = {key: Signal(len(f).bit_length(), name=f"sum_{key}", reset_less=True)
                for key, f in flags.items()}
        for i, key in enumerate(FEED):
            with m.If(counted[L + i]):
                m.d.sync += sums[key].eq(total[:len(sums[key])])
        adds = {"cycles": Const(1, 1), **sums, **self._derived(m, sums)}
        self._sweep(m, counted[-1], [adds[name] for name in COUNTERS])
        return m

    def _feed(self, m, kinds: list):
        """The adder tree's input: the flags of ``kinds`` (:data:`FEED` order) taken at
        the prepare into a shift register of a stage per kind, which shifts a stage a
        clock toward stage 0, the tree's input: kind i at clock 1 + i, 0 after the last.
        Stage 0 is a flip-flop, not a choice of the kind by the clock (three levels of
        logic before the tree's first)."""
        stages = [Signal(max(len(k) for k in kinds[i:]), name=f"count_feed{i}",
                         reset_less=True) for i in range(len(kinds))]
        with m.If(self.prepare):
            m.d.sync += [stage.eq(kind) for stage, kind in zip(stages, kinds)]
        with m.Else():
            m.d.sync += [stage.eq(after) for stage, after in
                         zip(stages, stages[1:] + [Const(0, 1)])]
        return stages[0]

    @staticmethod
    def _derived(m, sums: dict) -> dict:
        """The cycle's errors (failed checks and ``|acknowledged - delivered|``) and lost
        messages (``sent - acknowledged``: every message sent is acknowledged or lost),
        registered. ``|acknowledged - delivered|`` is registered on its own, from the
        clock after the delivered messages' sum (:data:`FEED`: the failed checks' comes
        a clock later), so that no clock's path runs through the comparison, the
        subtraction and the addition."""
        w = max(len(v) for v in sums.values()) + 1
        a_n, d_n, bad_n, s_n = (zero_extend(sums[k], w) for k in
                                ("acknowledged", "delivered", "bad", "sent"))
        apart = Signal(w - 1, name="cycle_unmatched", reset_less=True)
        errors = Signal(w, name="cycle_errors", reset_less=True)
        lost = Signal(w - 1, name="cycle_lost", reset_less=True)
        m.d.sync += [apart.eq(Mux(a_n > d_n, a_n - d_n, d_n - a_n)[:w - 1]),
                     errors.eq((bad_n + zero_extend(apart, w))[:w]),
                     lost.eq((s_n - a_n)[:w - 1])]
        return {"errors": errors, "lost": lost}

    def _sweep(self, m, start, adds: list) -> None:
        """From the clock after ``start``, read each counter, from the last down to word
        0, one a clock, and take its ``adds`` entry (the first sweep after a reset reads
        :data:`ZERO_WORD` instead of the counter); add them (:meth:`_add`) and write the
        sum back :data:`SWEEP_CLOCKS` clocks after the read; at a report, send the new
        value on ``o_report`` in the clock it is written; the error flag from the
        errors' new value."""
        last = len(COUNTERS) - 1
        read = self.memory.read_port()
        write = self.memory.write_port()
        reading = Signal(name="sweep_reading")
        address = Signal(range(last + 1), name="sweep_read", init=last)
        step = Signal(max(len(a) for a in adds), name="sweep_add", reset_less=True)
        fresh = Signal(name="sweep_fresh", init=1)     # no sweep read since the reset
        assert ZERO_WORD == (1 << len(address)) - 1     # all ones: an OR chooses it
        m.d.comb += read.addr.eq(address | fresh.replicate(len(address)))
        # the counter read, one-hot (bit k: counter k, while reading), so that its
        # increment is chosen by an AND-OR two LUTs deep, not a multiplexer of seven
        reading_at = Signal(len(COUNTERS), name="sweep_reading_at", init=1 << last)
        m.d.sync += step.eq(reduce(operator.or_, (
            zero_extend(add, len(step)) & reading_at[k].replicate(len(step))
            for k, add in enumerate(adds))))
        with m.If(reading):
            m.d.sync += [address.eq(address - 1), reading_at.eq(reading_at >> 1)]
            with m.If(equals(address, 0)):
                m.d.sync += [reading.eq(0), fresh.eq(0)]
        with m.If(start):       # after the last read of a sweep, if the period is short
            m.d.sync += [reading.eq(1), address.eq(last), reading_at.eq(1 << last)]
        # what each read is for (written back, which word, reported), carried along the
        # sum's stages to the write
        tag = Cat(reading, address, self._reporting(m, start))
        for stage in range(SWEEP_CLOCKS):
            tag_next = Signal(len(tag), name=f"sweep_tag{stage + 1}")
            m.d.sync += tag_next.eq(tag)
            tag = tag_next
        writing, written, reporting = tag[0], tag[1:-1], tag[-1]
        value = self._add(m, read.data, step)
        m.d.comb += [write.addr.eq(written), write.data.eq(value), write.en.eq(writing)]
        # the errors' new value is not 0: an OR of its nibbles registered, then of those
        nonzero = Signal(8, name="errors_nonzero")
        with m.If(writing & equals(written, last)):
            m.d.sync += nonzero.eq(Cat(*(value[4 * i:4 * i + 4].any() for i in range(8))))
        m.d.comb += self.error.eq(nonzero.any())
        o = self.o_report
        m.d.comb += [o.valid.eq(writing & reporting), o.payload.index.eq(written),
                     o.payload.value.eq(value), o.payload.last.eq(equals(written, 0))]

    @staticmethod
    def _add(m, word, step):
        """The sweep's one adder, ``word + step`` (32 bits), :data:`SWEEP_CLOCKS` clocks
        after the read whose data ``word`` is (``step`` is registered in the clock of
        the read): the word read and ``step`` registered (a block RAM's output is slow
        on every board), then the low 16 bits' sum and its carry, with the high 16 bits
        held, then the high half plus the carry (two 16-bit carry chains, not one of 32
        bits); what is written and reported leaves a register."""
        half = 16
        held = Signal(32, name="sweep_held", reset_less=True)
        held_step = Signal(len(step), name="sweep_held_add", reset_less=True)
        low = Signal(half + 1, name="sweep_low", reset_less=True)     # and its carry
        high = Signal(32 - half, name="sweep_high", reset_less=True)
        total = Signal(32, name="sweep_value", reset_less=True)
        m.d.sync += [held.eq(word), held_step.eq(step),
                     low.eq(held[:half] + held_step), high.eq(held[half:]),
                     total.eq(Cat(low[:half], (high + low[half])[:32 - half]))]
        return total

    def _reporting(self, m, start):
        """Whether the sweep that ``start`` begins is a report's (every
        ``report_cycles``-th), from the clock after ``start``, with its reads."""
        R = self._report_cycles
        left = Signal(range(R), name="report_left", init=R - 1)
        reporting = Signal(name="report_reads")
        with m.If(start):
            m.d.sync += [reporting.eq(~left.any()), left.eq(Mux(left.any(), left - 1, R - 1))]
        return reporting
