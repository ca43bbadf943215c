"""Delivery cycles on Amaranth's own simulator: fast checks of small networks."""

from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from ..hdl.fattree import FatTreeNetworkHW

from .plan import compare_cycle, plan_cycle

__all__ = ["run_cycles_amaranth"]


def _ports(dut, net):
    ports = {f"leaf{i}": dut.leaf[i] for i in range(net.n)}
    ports["ext"] = dut.ext
    return ports


def _bits(value: int, width: int) -> np.ndarray:
    return np.array([(value >> w) & 1 for w in range(width)], dtype=np.uint8)


def run_cycles_amaranth(net, ms, cycles, vcd: str | None = None):
    """Run the given cycles (lists of message indices) one after another.

    Returns a list of (plan, mismatches) per cycle.
    """
    dut = FatTreeNetworkHW(net)
    plans = [plan_cycle(net, ms, c) for c in cycles]
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
