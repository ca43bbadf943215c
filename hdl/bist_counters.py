"""The self-testing top's counters: each delivery cycle's outcomes, counted in stages
into the seven 32-bit counters (:data:`fatnet.golden.bist.COUNTERS`), and the report
strobe."""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import COUNTERS
from .bist_report import COUNTS
from .logic import zero_extend

__all__ = ["BistCounters", "popcount", "count_four", "outcome_flags", "tree_clocks",
           "count_clocks", "LEVELS_PER_CLOCK", "SOURCE_OUTCOMES", "WIRE_OUTCOMES"]

#: The count's clocks besides its adder trees': latch the outcomes, form the errors, add
#: to the counters.
_STAGES = 3
#: The adder trees' levels per clock. The first two levels count four flags into three
#: bits, each a function of the four (one LUT4 deep); later pairs of levels are two
#: short carry chains. A register after every level would cost the logic of each level
#: apart (more LUTs, and a flip-flop per bit and level). :func:`popcount` takes two.
LEVELS_PER_CLOCK = 2

#: The outcomes of a cycle, one flag per terminal: a new message, a message sent, one
#: acknowledged, one lost (sent and not acknowledged).
SOURCE_OUTCOMES = ("offered", "sent", "acknowledged", "lost")
#: The outcomes of a cycle, one flag per recv wire: a complete payload that passes its
#: check, one that fails it.
WIRE_OUTCOMES = ("delivered", "bad")


def tree_clocks(flags: int) -> int:
    """The clocks of the adder tree that counts ``flags`` flags (>= 1): its levels (each
    adds the level before in pairs), :data:`LEVELS_PER_CLOCK` per clock; at least one."""
    levels = (flags - 1).bit_length()
    return max(1, -(-levels // LEVELS_PER_CLOCK))


def count_clocks(flags: int) -> int:
    """Clocks from a prepare to the counters holding the cycle that ended, the widest
    outcome having ``flags`` flags: latch the outcomes, the adder tree's clocks
    (:func:`tree_clocks`), form the errors, add. A period is at least this."""
    return _STAGES + tree_clocks(flags)


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
    """The count of each delivery cycle, in stages, and the report strobe.

    A cycle's outcome flags are taken at its ``prepare`` (the clock that ends it) and
    counted in stages, so that no clock's path runs through more than two levels of
    the adder trees: each kind of outcome is summed over its flags by a tree of adders,
    :data:`LEVELS_PER_CLOCK` levels per clock (:func:`popcount`; every kind's tree as
    deep as the widest's, :func:`tree_clocks`),
    the next clock forms the cycle's errors (``bad + |acknowledged - delivered|``), the
    next adds to the counters, if ``ran`` was high at the prepare (a cycle had run). A
    cycle is in the counters from the ``latency``-th clock after its prepare
    (:func:`count_clocks`); prepares must be at least that far apart. Every
    ``report_cycles`` counted cycles, ``report`` is high for one clock: the clock the
    counters first hold the report's cycle.

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
        Clocks from a prepare to the counters holding its cycle
        (:func:`count_clocks` of the widest outcome's flags).
    prepare : Signal
        The clock that ends a cycle: its flags are taken.
    ran : Signal
        A cycle has run (the flags taken at a prepare are counted).
    flags : wiring.PureInterface
        The cycle's outcome flags (:func:`outcome_flags`).
    counts : wiring.PureInterface
        The counters (:data:`fatnet.hdl.bist_report.COUNTS`).
    report : Signal
        A report's counters are in ``counts`` (one clock).
    """

    def __init__(self, terminals: int, wires: int, report_cycles: int):
        for name, value in (("terminals", terminals), ("wires", wires),
                            ("report_cycles", report_cycles)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        self._report_cycles = report_cycles
        self._clocks = tree_clocks(max(terminals, wires))
        self.latency = count_clocks(max(terminals, wires))
        super().__init__({"prepare": In(1), "ran": In(1),
                          "flags": In(outcome_flags(terminals, wires)),
                          "counts": Out(COUNTS), "report": Out(1)})

    def elaborate(self, platform):
        m = Module()
        ended = Signal(name="ended")      # the latched cycle ran
        latched = {key: Signal(len(getattr(self.flags, key)), name=f"latched_{key}",
                          reset_less=True)
                   for key in (*SOURCE_OUTCOMES, *WIRE_OUTCOMES)}
        # the latched flags, the adder trees and the errors hold no state a reset must
        # clear (a cycle is counted only if ``ran`` at its prepare, a period after the
        # reset at least), so they take no reset: no reset net reaches them.
        # The adder trees and the errors are plain pipeline registers (no enable: the
        # latched outcomes hold from one prepare to the next, so the sums hold the
        # cycle's from clock tree_clocks + 1 on and the errors from the clock after); the
        # counters add at the clock after that, strobed by a flip-flop rather than a
        # decode of the period's clock (an enable or a decode, merged into the adders'
        # first LUTs, would lie on the longest path)
        stage = Signal(self.latency - 1, name="stage")   # bit k: clock k + 1 after a prepare
        m.d.sync += stage.eq(Cat(self.prepare, stage[:-1]))
        with m.If(self.prepare):
            m.d.sync += ended.eq(self.ran)
            m.d.sync += [f.eq(getattr(self.flags, key)) for key, f in latched.items()]
        sums = {key: popcount(m, list(flags), f"count_{key}", self._clocks)
                for key, flags in latched.items()}
        errors = self._errors(m, sums)
        adds = {"cycles": Const(1, 32), "errors": errors,
                **{name: sums[name] for name in COUNTERS if name in sums}}
        self._add(m, stage[-1] & ended, adds)
        return m

    @staticmethod
    def _errors(m, sums: dict):
        """The cycle's errors, registered: failed checks and ``|acknowledged -
        delivered|``."""
        w = max(len(v) for v in sums.values()) + 1
        a_n, d_n, bad_n = (zero_extend(sums[k], w) for k in ("acknowledged", "delivered", "bad"))
        errors = Signal(w, name="cycle_errors", reset_less=True)
        m.d.sync += errors.eq((bad_n + Mux(a_n > d_n, a_n - d_n, d_n - a_n)[:w])[:w])
        return errors

    def _add(self, m, add, adds: dict):
        """At ``add``, each counter plus its cycle's count; the report strobe."""
        R = self._report_cycles
        left = Signal(range(R), name="report_left", init=R - 1)
        report = Signal(name="report_now")
        m.d.comb += report.eq(0)
        with m.If(add):
            m.d.sync += [getattr(self.counts, name).eq(
                (getattr(self.counts, name) + zero_extend(adds[name], 32))[:32])
                for name in COUNTERS]
            last = ~left.any()
            m.d.sync += left.eq(Mux(last, R - 1, left - 1))
            m.d.comb += report.eq(last)
        m.d.sync += self.report.eq(report)
