"""The enumeration's serial adders in hardware (hdl/hypercube/enumerator.py) on Amaranth's
simulator against the golden bit-serial enumeration
(:func:`fatnet.golden.hypercube.enumeration.enumerate_bitserial`): every rank's ``t`` and
``o`` register at every bit-time, for the whole cube and for the free dimensions of
Algorithm 2's subcubes, and the last rank's offsets against direct counting."""

import numpy as np
import pytest
from amaranth.sim import Simulator

from fatnet.golden.hypercube.enumeration import enumerate_bitserial
from fatnet.hdl.hypercube.enumerator import EnumerationArray, Enumerator


def run_array(k, dims, members):
    """Every rank's (t, o) registers at every bit-time after the start strobe:
    ``regs[tau][j][x] = (t, o)``."""
    dut = EnumerationArray(k, dims)
    T = 2 * len(dims) + 1
    regs = []

    async def bench(ctx):
        ctx.set(dut.member, int(sum(1 << x for x in np.flatnonzero(members))))
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        ctx.set(dut.member, 0)
        for _ in range(T + 2):
            regs.append([[(ctx.get(t), ctx.get(o)) for t, o in rank] for rank in dut.ranks])
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return regs


CASES = [(1, (0,)), (2, (0, 1)), (3, (0, 1, 2)), (3, (1, 2)), (3, (2,)), (4, (2, 3)),
         (4, (3, 0, 1)), (2, ())]


@pytest.mark.parametrize("k,dims", CASES, ids=[f"k{k}-dims{''.join(map(str, d)) or '-'}"
                                               for k, d in CASES])
@pytest.mark.parametrize("seed", range(3))
def test_every_register_at_every_bit_time_is_the_models(k, dims, seed):
    rng = np.random.default_rng([seed, k, len(dims)])
    members = rng.random(1 << k) < rng.random()
    if seed == 2:
        members[:] = True            # the widest count: t of the last rank is 2^len(dims)
    want = enumerate_bitserial(k, members, dims=dims)
    regs = run_array(k, dims, members)
    ranks, width = len(dims) + 1, len(dims) + 1
    for j in range(ranks):
        for x in range(1 << k):
            for bit in range(width):
                tau = j + bit           # bit l of rank j during bit-time j + l
                assert want["bit_times"][j, bit] == tau
                got_t, got_o = regs[tau][j][x]
                assert got_t == (int(want["t"][j, x]) >> bit) & 1, (seed, j, x, bit)
                assert got_o == (int(want["o"][j, x]) >> bit) & 1, (seed, j, x, bit)
    # the last rank's o is the offset among the members of the subcube before the node,
    # the subcube's nodes ordered by their bits dims[0] (least significant), dims[1], ...
    # (node order when dims increase, as in Algorithm 2)
    free = sum(1 << d for d in dims)

    def key(y):
        return sum(((y >> d) & 1) << j for j, d in enumerate(dims))

    for x in range(1 << k):
        below = sum(1 for y in range(1 << k) if members[y] and key(y) < key(x)
                    and (y & ~free) == (x & ~free))
        got = sum(regs[len(dims) + b][-1][x][1] << b for b in range(width))
        assert got == below, (seed, x)


def test_a_fixed_dimension_adds_nothing():
    """The cell with ``fixed`` set passes its own values on, registered."""
    dut = Enumerator(True)
    seen = []

    async def bench(ctx):
        ctx.set(dut.fixed, 1)
        for first, t_in, o_in, across in ((1, 1, 0, 1), (0, 1, 1, 1), (0, 0, 1, 1)):
            ctx.set(dut.first, first)
            ctx.set(dut.t_in, t_in)
            ctx.set(dut.o_in, o_in)
            ctx.set(dut.t_across, across)
            await ctx.tick()
            seen.append((ctx.get(dut.t), ctx.get(dut.o), ctx.get(dut.first_out)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [(1, 0, 1), (1, 1, 0), (0, 1, 0)]


def test_bad_parameters():
    with pytest.raises(ValueError, match="high must be a bool"):
        Enumerator(0)
    with pytest.raises(ValueError, match="dims"):
        EnumerationArray(3, (0, 0))
    with pytest.raises(ValueError, match="dims"):
        EnumerationArray(2, (2,))
