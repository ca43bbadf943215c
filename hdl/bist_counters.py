"""The self-testing top's counters: each delivery cycle's outcomes, counted in stages
and added to the seven 32-bit counters (:data:`fatnet.golden.bist.COUNTERS`), which are
words of a memory (block RAM on every board) updated by one adder in a sweep of seven
clocks; at a report the sweep also sends each new value on a stream of words
(:data:`REPORT_WORD`) to the report formatter."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import COUNTERS
from .logic import equals, zero_extend

__all__ = ["BistCounters", "popcount", "count_four", "outcome_flags", "tree_clocks",
           "count_clocks", "LEVELS_PER_CLOCK", "SOURCE_OUTCOMES", "WIRE_OUTCOMES",
           "SWEEP_CLOCKS", "REPORT_WORD", "counter_memory"]

#: The clocks of a prepare's count besides its adder trees' before the sweep starts:
#: latch the outcomes, form the errors and the lost messages, the first read.
_STAGES = 3
#: The counters' sweep: one counter read, added to and written back a clock. The
#: shortest BIST period: the sweep's increments must hold until their counter's turn.
SWEEP_CLOCKS = len(COUNTERS)
#: One counter's new value at a report (:data:`fatnet.golden.bist.COUNTERS` index
#: ``index``); ``last`` marks a report's last word, the cycles'.
REPORT_WORD = data.StructLayout({"index": range(len(COUNTERS)), "value": 32, "last": 1})
#: The adder trees' levels per clock. The first two levels count four flags into three
#: bits, each a function of the four (one LUT4 deep); later pairs of levels are two
#: short carry chains. A register after every level would cost the logic of each level
#: apart (more LUTs, and a flip-flop per bit and level). :func:`popcount` takes two.
LEVELS_PER_CLOCK = 2

#: The outcomes of a cycle counted, one flag per terminal: a new message, a message sent,
#: one acknowledged. The lost messages (sent and not acknowledged) are the sent less the
#: acknowledged: counted from those two sums, not flags of their own.
SOURCE_OUTCOMES = ("offered", "sent", "acknowledged")
#: The outcomes of a cycle, one flag per recv wire: a complete payload that passes its
#: check, one that fails it.
WIRE_OUTCOMES = ("delivered", "bad")


def tree_clocks(flags: int) -> int:
    """The clocks of the adder tree that counts ``flags`` flags (>= 1): its levels (each
    adds the level before in pairs), :data:`LEVELS_PER_CLOCK` per clock; at least one."""
    levels = (flags - 1).bit_length()
    return max(1, -(-levels // LEVELS_PER_CLOCK))


def count_clocks(flags: int) -> int:
    """Clocks from a prepare to its report's first word (:data:`REPORT_WORD`, the
    errors'), the widest outcome having ``flags`` flags: latch the outcomes, the adder
    tree's clocks (:func:`tree_clocks`), form the errors and the lost messages, read the
    first counter. The other words follow a clock apart, the cycles' last."""
    return _STAGES + tree_clocks(flags)


def counter_memory() -> memory.Memory:
    """A memory of the seven 32-bit counters, word k :data:`COUNTERS`[k], all 0 at
    configuration; in block RAM (``ram_style``: Yosys would put so small a memory in
    logic on the ECP5 and the Gowin parts)."""
    return memory.Memory(shape=32, depth=len(COUNTERS), init=[],
                         attrs={"ram_style": "block"})


def count_four(flags):
    """The number of ones among up to four one-bit ``flags``, 3 bits, as logic rather
    than adders: each bit a function of the four (one LUT4)."""
    a, b, c, d = list(flags) + [Const(0, 1)] * (4 - len(flags))
    ab, cd = a ^ b, c ^ d
    return Cat(ab ^ cd, (a & b) ^ (c & d) ^ (ab & cd), a & b & c & d)


def popcount(m: Module, bits, name: str, clocks: int):
    """The number of ones among ``bits``, ``clocks`` clocks after them: a tree, each
    level adding the level before in pairs (an odd one carried), registered in ``m``'s
    ``sync`` every :data:`LEVELS_PER_CLOCK` levels, its values signals named
    ``{name}_l{level}_{i}``; the first two levels count the flags four at a time
    (:func:`count_four`), the others are adders. Once one value is left it is carried to
    the last level, so that trees of fewer flags give their count at the same clock.
    ``clocks`` >= :func:`tree_clocks` of ``len(bits)``. Each value is as wide as its
    count needs: a level-k value counts at most 2^k flags, k + 1 bits (at most
    ``len(bits).bit_length()``). The registers take no reset."""
    w = max(1, len(bits).bit_length())
    width = min(3, w)
    level = [Signal(width, name=f"{name}_l2_{i}", reset_less=True)
             for i in range(-(-len(bits) // 4))]
    m.d.sync += [v.eq(count_four(bits[4 * i:4 * i + 4])) for i, v in enumerate(level)]
    for k in range(3, clocks * LEVELS_PER_CLOCK + 1):
        width = min(width + 1, w)
        pairs = [level[i:i + 2] for i in range(0, len(level), 2)]
        level = [Signal(width, name=f"{name}_l{k}_{i}", reset_less=True)
                 for i in range(len(pairs))]
        domain = m.d.sync if k % LEVELS_PER_CLOCK == 0 else m.d.comb
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
    counted in stages, so that no clock's path runs through more than two levels of
    the adder trees: each kind of outcome is summed over its flags by a tree of adders,
    :data:`LEVELS_PER_CLOCK` levels per clock (:func:`popcount`; every kind's tree as
    deep as the widest's, :func:`tree_clocks`: L clocks); the next clock forms the
    cycle's errors (``bad + |acknowledged - delivered|``) and its lost messages
    (``sent - acknowledged``). If ``ran`` was high at the prepare (a cycle had run), the
    counters are then swept, one a clock, from the errors (word 6) down to the cycles
    (word 0): counter k is read at clock L + 8 - k after the prepare, its increment
    registered at the same clock, and written back, plus its increment, at clock
    L + 9 - k (the first sweep after a reset adds to 0 instead: the memory is not
    reset). A prepare's sums hold for a period, so periods must be at least
    :data:`SWEEP_CLOCKS` clocks (the offered messages, word 1, are read 6 clocks after
    the errors). Every ``report_cycles`` counted cycles, the sweep also sends each new
    value on ``o_report`` (:data:`REPORT_WORD`, in the clock it is written: the
    errors' at clock L + 3, the cycles' at L + 9, with ``last``).

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
        latched = {key: Signal(len(getattr(self.flags, key)), name=f"latched_{key}",
                               reset_less=True)
                   for key in (*SOURCE_OUTCOMES, *WIRE_OUTCOMES)}
        # the latched flags, the adder trees and the stage after them hold no state a
        # reset must clear (a cycle is counted only if ``ran`` at its prepare, a period
        # after the reset at least), so they take no reset: no reset net reaches them.
        # The trees are plain pipeline registers (no enable: the latched outcomes hold
        # from one prepare to the next, so the sums hold the cycle's for a period from
        # clock L + 1 on); the sweep starts from a flip-flop, not a decode of the
        # period's clock
        counted = Signal(self._clocks + 1, name="counted")  # bit k: clock k + 1 after
        m.d.sync += counted.eq(Cat(self.prepare & self.ran, counted[:-1]))
        with m.If(self.prepare):
            m.d.sync += [f.eq(getattr(self.flags, key)) for key, f in latched.items()]
        sums = {key: popcount(m, list(flags), f"count_{key}", self._clocks)
                for key, flags in latched.items()}
        adds = {"cycles": Const(1, 1), **sums, **self._derived(m, sums)}
        self._sweep(m, counted[-1], [adds[name] for name in COUNTERS])
        return m

    @staticmethod
    def _derived(m, sums: dict) -> dict:
        """The cycle's errors (failed checks and ``|acknowledged - delivered|``) and lost
        messages (``sent - acknowledged``: every message sent is acknowledged or lost),
        registered."""
        w = max(len(v) for v in sums.values()) + 1
        a_n, d_n, bad_n, s_n = (zero_extend(sums[k], w) for k in
                                ("acknowledged", "delivered", "bad", "sent"))
        errors = Signal(w, name="cycle_errors", reset_less=True)
        lost = Signal(w - 1, name="cycle_lost", reset_less=True)
        m.d.sync += [errors.eq((bad_n + Mux(a_n > d_n, a_n - d_n, d_n - a_n)[:w])[:w]),
                     lost.eq((s_n - a_n)[:w - 1])]
        return {"errors": errors, "lost": lost}

    def _sweep(self, m, start, adds: list) -> None:
        """From the clock after ``start``, read each counter, from the last down to word
        0, one a clock; a clock later write it back plus its ``adds`` entry (0 instead of
        the counter in the first sweep after a reset); at a report, send the new value
        on ``o_report``; the error flag from the errors' new value."""
        last = len(COUNTERS) - 1
        read = self.memory.read_port()
        write = self.memory.write_port()
        reading = Signal(name="sweep_reading")
        address = Signal(range(last + 1), name="sweep_read", init=last)
        writing = Signal(name="sweep_writing")
        written = Signal(range(last + 1), name="sweep_write")
        step = Signal(max(len(a) for a in adds), name="sweep_add", reset_less=True)
        fresh = Signal(name="sweep_fresh", init=1)     # no sweep since the reset
        m.d.comb += read.addr.eq(address)
        m.d.sync += [writing.eq(reading), written.eq(address)]
        with m.Switch(address):     # a full case, as lint asks: the last is the default
            for k, add in enumerate(adds[:-1]):
                with m.Case(k):
                    m.d.sync += step.eq(add)
            with m.Default():
                m.d.sync += step.eq(adds[-1])
        with m.If(reading):
            m.d.sync += address.eq(address - 1)
            with m.If(equals(address, 0)):
                m.d.sync += reading.eq(0)
        with m.If(start):       # after the last read of a sweep, if the period is short
            m.d.sync += [reading.eq(1), address.eq(last)]
        value = Signal(32, name="sweep_value")
        m.d.comb += [value.eq(Mux(fresh, 0, read.data) + step),
                     write.addr.eq(written), write.data.eq(value), write.en.eq(writing)]
        final = writing & equals(written, 0)
        with m.If(final):
            m.d.sync += fresh.eq(0)
        with m.If(writing & equals(written, last)):
            m.d.sync += self.error.eq(value.any())
        reporting = Signal(name="sweep_reporting")   # the writes follow the reads
        m.d.sync += reporting.eq(self._reporting(m, start))
        o = self.o_report
        m.d.comb += [o.valid.eq(writing & reporting), o.payload.index.eq(written),
                     o.payload.value.eq(value), o.payload.last.eq(final)]

    def _reporting(self, m, start):
        """Whether the sweep that ``start`` begins is a report's (every
        ``report_cycles``-th), from the clock after ``start``, with its reads."""
        R = self._report_cycles
        left = Signal(range(R), name="report_left", init=R - 1)
        reporting = Signal(name="report_reads")
        with m.If(start):
            m.d.sync += [reporting.eq(~left.any()), left.eq(Mux(left.any(), left - 1, R - 1))]
        return reporting
