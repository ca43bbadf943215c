"""The self-testing top's generators' states, kept for every terminal in one memory and
stepped by one shared engine (:class:`DrawEngine`): each terminal keeps only its next
draw (:func:`draw_fields`), in a register the engine writes.

The states and draws are :mod:`fatnet.golden.bist`'s bit for bit: terminal s's state
starts at its first state, and each draw it takes moves it on by the m steps of
:func:`fatnet.golden.bist.draw_steps`, here one jump (the m steps' linear map over
GF(2), :func:`jump`); the draw a terminal takes at a prepare is read from its state
then.
"""

from __future__ import annotations

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from ..golden.bist import (ALWAYS_OFFERS, LFSR_BITS, OFFER_BITS, draw, draw_steps,
                           jump_images)
from .bist_config import BistConfig
from .logic import below, equals

__all__ = ["DrawEngine", "draw_fields", "draw_value", "draw_const", "jump", "draw_lanes",
           "DRAW_DELAY"]

#: Clocks from a pass's first read to the terminals' draw registers taking the first
#: word's draws: the memory's read, its word registered (a block RAM's output is slow
#: on the ECP5 and the Gowin), then the registered draws.
DRAW_DELAY = 3


def draw_fields(config: BistConfig) -> tuple[int, int]:
    """(offer bits, address bits) of a draw the terminals keep: the offer's bit unless
    every draw offers or none does (threshold 256 or 0), and the n bits of ``v`` (0
    read as 1: the destination is the source XOR them) for the ``random`` pattern (a
    fixed pattern's destination is a constant)."""
    offers = int(0 < config.offer_threshold < ALWAYS_OFFERS)
    return offers, config.n if config.pattern == "random" else 0


def draw_value(config: BistConfig, state) -> Value:
    """The draw a state gives, as the terminals keep it (:func:`draw_fields`): the
    offer's bit (the state's bits 0 .. 7 below the threshold), then ``v`` (0 read as
    1)."""
    offers, address = draw_fields(config)
    fields = [below(state[:OFFER_BITS], config.offer_threshold)] if offers else []
    if address:
        v = state[OFFER_BITS:OFFER_BITS + address]
        fields.append(Mux(v.any(), v, Const(1, address)))
    return Cat(*fields)


def draw_const(config: BistConfig, state: int) -> int:
    """:func:`draw_value` of a state known when the top is built (a first state), from
    the model's :func:`fatnet.golden.bist.draw` (terminal 0's random destination is
    ``v``, 0 read as 1)."""
    offers, address = draw_fields(config)
    _, offer, v = draw(state, 0, config.n, config.offer_threshold, "random")
    v = v if address else 0
    return (v << 1 | int(offer)) if offers else v


def jump(state: Value, steps: int) -> Value:
    """The state ``steps`` steps of :func:`fatnet.golden.bist.lfsr_step` after
    ``state``: each bit the XOR of the bits of ``state`` whose image has it
    (:func:`fatnet.golden.bist.jump_images`)."""
    images = jump_images(steps)
    return Cat(*(Cat(Const(0, 1), *(state[b] for b in range(LFSR_BITS)
                                    if images[b] >> i & 1)).xor()
                 for i in range(LFSR_BITS)))


def draw_lanes(terminals: int, period: int) -> int:
    """k, the terminals the engine steps a clock (a power of two): the fewest with which
    a pass over the W = N / k words (read at clocks 1 .. W after a prepare, taken by
    the terminals :data:`DRAW_DELAY` clocks later) ends at least a clock before the
    period's last (W + 1 + DRAW_DELAY at most the period's last clock)."""
    lanes = 1
    while terminals // lanes + 1 + DRAW_DELAY > period - 1:
        lanes *= 2
    return lanes


class DrawEngine(wiring.Component):
    """Every terminal's generator state in one memory (word w: the states of terminals
    w k .. w k + k - 1), stepped by one engine a word a clock.

    At each prepare it starts a pass: it reads word w at clock 1 + w, registers it at
    clock 2 + w, moves on each terminal there that takes its draw at that prepare
    (``sent``, ``offered``) by one draw's steps (:func:`jump`) and writes the word back
    at clock 3 + w; a clock later the draws the
    new states give are on ``draws`` (lane j: terminal w k + j's) and ``ready`` has
    bit w set, for one clock, for the terminals of word w to take into their draw
    registers (:data:`DRAW_DELAY` clocks after the read). The
    pass after the first prepare since reset (``ran`` low) reads the first states,
    words W .. 2W - 1 of the memory, instead of the states.

    Parameters
    ----------
    config : BistConfig
        The self-test's parameters.

    Attributes
    ----------
    prepare, ran : Signal
        The period's strobes.
    sent, offered : Signal
        Per terminal, its generator's flags since the last prepare: it has a message;
        the message is new. It took its draw at that prepare unless it has a message
        that is not new (one kept).
    draws : Signal
        Per lane, the draw of the word now ready (:func:`draw_value`).
    ready : Signal
        One-hot, the word whose draws are on ``draws`` (registered).
    """

    def __init__(self, config: BistConfig):
        if not isinstance(config, BistConfig):
            raise ValueError(f"config must be a BistConfig, got {config!r}")
        self._config = config
        N = config.terminals
        #: k, the terminals a word holds and a clock steps (:func:`draw_lanes`).
        self.lanes = draw_lanes(N, config.period)
        #: The words of the memory, N / k.
        self.words = max(1, N // self.lanes)
        #: The bits of a draw (:func:`draw_fields`).
        self.width = sum(draw_fields(config))
        super().__init__({"prepare": In(1), "ran": In(1), "sent": In(N), "offered": In(N),
                          "draws": Out(self.width).array(self.lanes),
                          "ready": Out(self.words)})

    def _memory(self, m):
        """The memory of the states, words 0 .. W - 1, and of the first states, words
        W .. 2W - 1 (its contents at configuration, never written), in block RAM (a
        read of a word in the clock it is written never happens)."""
        k, bits = self.lanes, LFSR_BITS
        firsts = [sum(self._config.states[w * k + j] << (j * bits) for j in range(k))
                  for w in range(self.words)]
        m.submodules.states = states = memory.Memory(
            shape=k * bits, depth=2 * self.words, init=firsts + firsts,
            attrs={"ram_style": "block", "no_rw_check": 1})
        return states

    def _took(self, m) -> Signal:
        """Which of the terminals of the word read a clock before took their draws at
        the prepare (``~sent | offered``, steady from the clock after it to the next):
        every terminal's taken into a shift register in the clock after the prepare
        and shifted a word a clock, so that the word read at clock 1 + w has its
        terminals' at clock 2 + w with the word (a flip-flop each, not a choice of
        the word among the terminals' flags)."""
        k = self.lanes
        after_prepare = Signal(name="after_prepare")
        took_all = Signal(self.words * k, name="took_all", reset_less=True)
        m.d.sync += after_prepare.eq(self.prepare)
        with m.If(after_prepare):
            m.d.sync += took_all.eq(~self.sent | self.offered)
        with m.Else():
            m.d.sync += took_all.eq(took_all >> k)
        return took_all[:k]

    def elaborate(self, platform):
        m = Module()
        k, W, bits = self.lanes, self.words, LFSR_BITS
        steps = draw_steps(self._config.n)
        states = self._memory(m)
        read, write = states.read_port(), states.write_port(granularity=bits)
        address = Signal(range(W + 1), name="address", init=W)   # W: no pass
        fresh = Signal(name="fresh")       # the pass after the first prepare since reset
        read_word = Signal(range(max(W, 2)), name="read_word")
        reading = Signal(name="reading")   # the port's data is word read_word's
        with m.If(self.prepare):
            m.d.sync += [address.eq(0), fresh.eq(~self.ran)]
        with m.Elif(address != W):
            m.d.sync += address.eq(address + 1)
        # the pass after the first prepare since reset reads the first states
        m.d.comb += read.addr.eq(Mux(fresh, address + W, address))
        m.d.sync += [read_word.eq(address), reading.eq(address != W)]
        took = self._took(m)
        # the word read is registered before the jump: what goes with it a clock later
        held_word = Signal.like(read_word, name="held_word")
        held = Signal(name="held")         # held_word's states are in the registers
        held_took = Signal(k, name="held_took")
        m.d.sync += [held_word.eq(read_word), held.eq(reading), held_took.eq(took)]
        m.d.comb += write.addr.eq(held_word)
        # one-hot, a shift register: word 0's after the pass's first jump, then the next
        m.d.sync += self.ready.eq(Cat(held & equals(held_word, 0), self.ready[:-1]))
        for j in range(k):
            lane = slice(j * bits, (j + 1) * bits)
            state = Signal(bits, name=f"state_{j}", reset_less=True)
            m.d.sync += state.eq(read.data[lane])
            new = Signal(bits, name=f"new_{j}")
            m.d.comb += [new.eq(jump(state, steps)), write.data[lane].eq(new),
                         write.en[j].eq(held & (held_took[j] | fresh))]
            with m.If(held):
                m.d.sync += self.draws[j].eq(draw_value(self._config, new))
        return m
