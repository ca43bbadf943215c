"""The delivery-cycle controller (fatnet.hdl.controller) in Amaranth's simulator against
its documented timing: a one-clock ``start`` strobe makes the next clock bit-time 0;
``bit_time`` counts 0 .. length - 1 with ``busy`` high, then stays at ``length`` with
``busy`` low until the next strobe; ``bit_time`` is as wide as ``length`` needs (the
manifest's width, ``max(1, length.bit_length())``)."""

from __future__ import annotations

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from fatnet.hdl.controller import add_cycle_controller


def simulate(length: int, starts: list[int]) -> list[tuple[int, int]]:
    """Drive ``start`` with ``starts[c]`` before clock c; returns (bit_time, busy)
    seen after every clock."""
    m = Module()
    start, busy = Signal(), Signal()
    bit_time = Signal(max(1, length.bit_length()))
    add_cycle_controller(m, start, bit_time, busy, length)
    seen = []

    async def bench(ctx):
        for s in starts:
            ctx.set(start, s)
            await ctx.tick()
            seen.append((ctx.get(bit_time), ctx.get(busy)))

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


def one_cycle(length: int, idle_after: int) -> list[tuple[int, int]]:
    """What the clocks after a one-clock strobe show, from the documentation."""
    return [(t, 1) for t in range(length)] + [(length, 0)] * idle_after


@pytest.mark.parametrize("length", [1, 2, 5, 7, 8, 16])
def test_strobe_count_saturate_and_restart(length):
    idle = 3
    starts = [0, 0] + [1] + [0] * (length + idle - 1) + [1] + [0] * (length + idle - 1)
    seen = simulate(length, starts)
    # before any strobe: not busy, not counting
    assert seen[:2] == [(0, 0), (0, 0)], f"length {length}"
    assert seen[2:] == one_cycle(length, idle) * 2, f"length {length}"


@pytest.mark.parametrize("length", [3, 6])
def test_strobe_in_the_middle_of_a_cycle_restarts_it(length):
    # strobe at bit-time 1 of a running cycle: the next clock is bit-time 0 again
    starts = [1, 0, 1] + [0] * (length + 1)
    seen = simulate(length, starts)
    assert seen == [(0, 1), (1, 1)] + one_cycle(length, 2), f"length {length}"


def test_held_start_keeps_bit_time_zero():
    # every clock after a clock with start high is bit-time 0: counting starts when
    # the strobe falls
    length = 4
    seen = simulate(length, [1, 1, 1] + [0] * (length + 1))
    assert seen == [(0, 1), (0, 1)] + one_cycle(length, 2)


def test_length_must_be_positive(never_elaborated):
    with never_elaborated():
        m = Module()  # never elaborated: the controller refuses the length
        with pytest.raises(ValueError):
            add_cycle_controller(m, Signal(), Signal(4), Signal(), 0)
        del m
