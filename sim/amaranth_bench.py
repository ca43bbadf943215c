"""Delivery cycles on Amaranth's own simulator: fast checks of small networks.

The bench drives the network top directly (no harness: these networks are small) from
the same plans as the cocotb runner, captures every endpoint's ``recv`` and ``send_ack``
wire at every bit-time into the same per-port [bit-time, wire] arrays, and compares them
with :func:`fatnet.sim.plan.compare_cycle`, the one comparison. It serves every family
with hardware, through the family's hooks (:class:`~fatnet.sim.family.SimFamily`).

Run-time faults (splitter networks): a plan that carries a fault mask has it set on the
top's ``fault_mask`` input before its start strobe, with the clocks the status registers
take to settle (the family's ``status_settle_clocks``) and one more, and the settled
status registers are compared with the model's propagation as well.
"""

from __future__ import annotations

import numpy as np
from amaranth.sim import Simulator

from ..golden.cycle import start_latency
from ..golden.errors import FatnetInputError
from ..hdl.harness import PackedHarness, endpoint_ports

from .family import SimFamily, runtime_faults
from .masks import mask_refusal
from .plan import compare_cycle, pack_words, plans as make_plans, unpack_words
from .rows import join_rows, split_rows

__all__ = ["run_cycles_amaranth", "run_cycles_harness_amaranth", "check_mask_width"]


def _bits(value: int, width: int) -> np.ndarray:
    return np.array([(value >> w) & 1 for w in range(width)], dtype=np.uint8)


def check_mask_width(port_width: int, plan) -> None:
    """A testbench's refusal of a fault mask wider or narrower than the network's."""
    if plan.mask is None:
        return
    why = mask_refusal(port_width, plan.mask_width, plan.mask)
    if why:
        raise FatnetInputError(why)


async def _apply_mask(ctx, plan, mask_port, state, settle):
    """Set the cycle's fault mask if it changed and let the status settle (``settle``
    clocks)."""
    if mask_port is None:
        return False
    check_mask_width(len(mask_port), plan)
    value = plan.mask or 0
    if state.get("mask") == value:
        return False
    ctx.set(mask_port, value)
    state["mask"] = value
    await ctx.tick().repeat(settle)
    return True


def _read_status(ctx, signals):
    if signals is None:
        return None
    return np.array([[ctx.get(s) for s in level] for level in signals], dtype=np.uint8)


def _status_hooks(net, family: SimFamily, dut) -> tuple[int, object]:
    """The clocks a changed fault mask takes to settle, plus one, and the top ``dut``'s
    status registers (None for a family without run-time faults)."""
    faults = runtime_faults(family)
    if faults is None:
        return 1, None
    return faults.status_settle_clocks(net) + 1, faults.status_signals(net, dut)


def run_cycles_amaranth(net, ms, cycles, vcd: str | None = None, masks=None, *,
                        family: SimFamily):
    """Run the given cycles one after another: the model's own ``CycleResult`` s, or
    (tests) sequences of message indices, each run through the model once; ``masks``:
    one run-time fault mask per cycle (splitter networks); ``family``: the family's
    hooks (:class:`~fatnet.sim.family.SimFamily`).

    Returns a list of (plan, mismatches) per cycle.
    """
    plans = make_plans(net, ms, cycles, masks, family=family)  # refusals before building
    dut = family.hardware.top(net)
    settle, status = _status_hooks(net, family, dut)
    ports = dict(endpoint_ports(dut))
    mask_port = getattr(dut, "fault_mask", None)
    D = start_latency(net)
    results = []

    async def bench(ctx):
        state = {"mask": None if mask_port is None else 0}
        if mask_port is not None:  # the status after reset settles like after a change
            await ctx.tick().repeat(settle)
        for plan in plans:
            await _apply_mask(ctx, plan, mask_port, state, settle)
            got_status = _read_status(ctx, status)
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
            if D:   # the start tree: inputs idle, outputs ignored
                await ctx.tick().repeat(D)
            for t in range(T):
                for p, port in ports.items():
                    drive = plan.drive[p][t]
                    ctx.set(port.send, int(sum(int(b) << w for w, b in enumerate(drive))))
                    recv = ctx.get(port.recv)
                    acking[p] |= recv  # a destination acknowledges from its M bit on
                    ctx.set(port.recv_ack, acking[p])
                    got_recv[p][t] = _bits(recv, got_recv[p].shape[1])
                    got_ack[p][t] = _bits(ctx.get(port.send_ack), drive.shape[0])
                await ctx.tick()
            results.append((plan, compare_cycle(plan, got_recv, got_ack, got_status)))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return results


def run_cycles_harness_amaranth(net, ms, cycles, masks=None, *, family: SimFamily):
    """The same cycles through the packed harness, exactly as the cocotb test drives it:
    per cycle (after setting a changed fault mask and waiting for the status to settle) the
    stimulus rows written into the ``stim`` memory, a ``start`` pulse, ``D + T`` clocks (D
    the start latency), the
    rows of the two capture memories read and unpacked by the harness's layouts.
    Returns (plan, mismatches) per cycle."""
    plans = make_plans(net, ms, cycles, masks, family=family)  # refusals before building
    h = PackedHarness(net, family.hardware.top(net))
    settle, status = _status_hooks(net, family, h.core)
    T, D, layout, rlayout = net.cycle_length, start_latency(net), h.layout, h.recv_layout
    W, Wr, k, rows = h.word_width, h.recv_width, h.bit_times_per_row, h.rows
    mask_port = getattr(h, "fault_mask", None)
    results = []

    async def bench(ctx):
        state = {"mask": None if mask_port is None else 0}
        if mask_port is not None:
            await ctx.tick().repeat(settle)
        for plan in plans:
            await _apply_mask(ctx, plan, mask_port, state, settle)
            got_status = _read_status(ctx, status)
            for r, value in enumerate(split_rows(pack_words(plan.drive, layout, T), W, k,
                                                 rows)):
                ctx.set(h.stim[r], value)
            ctx.set(h.start, 1)
            await ctx.tick()
            ctx.set(h.start, 0)
            await ctx.tick().repeat(D + T)
            assert not ctx.get(h.busy)
            recv = join_rows([ctx.get(h.recv_cap[r]) for r in range(rows)], Wr, k, T)
            ack = join_rows([ctx.get(h.ack_cap[r]) for r in range(rows)], W, k, T)
            got_recv = unpack_words(recv, rlayout, T)
            got_ack = unpack_words(ack, layout, T)
            results.append((plan, compare_cycle(plan, got_recv, got_ack, got_status)))

    sim = Simulator(h)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return results
