"""Delivery cycles on Amaranth's own simulator: fast checks of small networks.

The bench drives the network top directly (no harness: these networks are small) from
the same plans as the cocotb runner, captures every endpoint's ``recv`` and ``send_ack``
wire at every bit-time into the same per-port [bit-time, wire] arrays, and compares them
with :func:`fatnet.sim.plan.compare_cycle`, the one comparison.
"""

from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from ..hdl.fattree import FatTreeNetworkHW
from ..hdl.harness import PackedHarness

from .plan import compare_cycle, pack_words, plans as make_plans, unpack_words

__all__ = ["run_cycles_amaranth", "run_cycles_harness_amaranth"]


def _ports(dut, net):
    ports = {f"leaf{i}": dut.leaf[i] for i in range(net.n)}
    ports["ext"] = dut.ext
    return ports


def _bits(value: int, width: int) -> np.ndarray:
    return np.array([(value >> w) & 1 for w in range(width)], dtype=np.uint8)


def run_cycles_amaranth(net, ms, cycles, vcd: str | None = None):
    """Run the given cycles one after another: the model's own ``CycleResult`` s, or
    (tests) sequences of message indices, each run through the model once.

    Returns a list of (plan, mismatches) per cycle.
    """
    dut = FatTreeNetworkHW(net)
    plans = make_plans(net, ms, cycles)
    ports = _ports(dut, net)
    results = []

    async def bench(ctx):
        for plan in plans:
            T = plan.length
            got_recv = {p: np.zeros_like(a) for p, a in plan.expect_recv.items()}
            got_ack = {p: np.zeros_like(a) for p, a in plan.expect_send_ack.items()}
            acking = {p: 0 for p in ports}
            ctx.set(dut.start, 1)
            for p, port in ports.items():
                ctx.set(port.send, 0)
                ctx.set(port.recv_ack, 0)
            await ctx.tick()
            ctx.set(dut.start, 0)
            for t in range(T):
                for p, port in ports.items():
                    drive = plan.drive[p][t]
                    ctx.set(port.send, int(sum(int(b) << w for w, b in enumerate(drive))))
                    recv = ctx.get(port.recv)
                    acking[p] |= recv  # a destination acknowledges from its M bit on
                    ctx.set(port.recv_ack, acking[p])
                    got_recv[p][t] = _bits(recv, drive.shape[0])
                    got_ack[p][t] = _bits(ctx.get(port.send_ack), drive.shape[0])
                await ctx.tick()
            results.append((plan, compare_cycle(plan, got_recv, got_ack)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return results


def run_cycles_harness_amaranth(net, ms, cycles):
    """The same cycles through the packed harness, exactly as the cocotb test drives it:
    per cycle one stimulus word, a ``start`` pulse, ``T`` clocks, the two capture
    registers unpacked by the harness's layout. Returns (plan, mismatches) per cycle."""
    h = PackedHarness(net)
    plans = make_plans(net, ms, cycles)
    T, layout = net.cycle_length, h.layout
    results = []

    async def bench(ctx):
        for plan in plans:
            ctx.set(h.stim, pack_words(plan.drive, layout, T))
            ctx.set(h.start, 1)
            await ctx.tick()
            ctx.set(h.start, 0)
            await ctx.tick().repeat(T)
            assert not ctx.get(h.busy)
            got_recv = unpack_words(ctx.get(h.recv_cap), layout, T)
            got_ack = unpack_words(ctx.get(h.ack_cap), layout, T)
            results.append((plan, compare_cycle(plan, got_recv, got_ack)))

    sim = Simulator(h)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return results
