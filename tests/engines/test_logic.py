"""The width-clean helpers (fatnet.hdl.logic) compute what their names say, for every
value of a few widths, in Amaranth's simulator."""

from __future__ import annotations

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from fatnet.hdl.logic import below, equals, zero_extend


def outputs(width: int, make) -> list[int]:
    """``make(x)`` for every value of a ``width``-bit signal x, as read back."""
    m = Module()
    x = Signal(width)
    out = Signal(len(make(x)))
    m.d.comb += out.eq(make(x))
    seen = []

    async def bench(ctx):
        for v in range(1 << width):
            ctx.set(x, v)
            seen.append(ctx.get(out))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return seen


@pytest.mark.parametrize("width", [1, 3, 4])
def test_equals_is_one_exactly_at_the_constant(width):
    for c in range(1 << width):
        assert outputs(width, lambda x: equals(x, c)) == [int(v == c) for v in range(1 << width)]


@pytest.mark.parametrize("width", [1, 3, 4])
def test_below_compares_with_every_constant_in_and_above_the_range(width):
    for c in range((1 << width) + 2):
        assert outputs(width, lambda x: below(x, c)) == [int(v < c) for v in range(1 << width)]


def test_zero_extend_keeps_the_value_and_makes_the_width():
    assert outputs(3, lambda x: zero_extend(x, 7)) == list(range(8))
    x = Signal(5)
    assert len(zero_extend(x, 9)) == 9 and zero_extend(x, 5) is x
