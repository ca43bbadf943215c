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
from amaranth.hdl import Cat
from amaranth.sim import Simulator

from ..golden.cycle import start_latency
from ..golden.errors import FatnetInputError
from ..hdl.harness import PackedHarness, endpoint_layout, endpoint_ports

from .family import SimFamily, runtime_faults
from .masks import mask_refusal
from .plan import compare_cycle, pack_words, plans as make_plans, unpack_words
from .rows import join_rows, split_rows

__all__ = ["PortBench", "HarnessBench", "run_cycles_amaranth", "run_cycles_harness_amaranth",
           "check_mask_width"]


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


class _CompiledBench:
    """A network's design compiled once for Amaranth's simulator (the costly part: seconds
    for a mid-sized network) and run on one list of plans after another. Before every run
    but the first, the simulator is reset (every signal and memory to its initial value,
    the clock and the testbench restarted), so each run is exactly a run on a new build.
    Subclasses drive and capture one cycle (:meth:`_cycle`)."""

    def __init__(self, net, top, core, *, family: SimFamily):
        self.net, self.family = net, family
        self._settle, self._status = _status_hooks(net, family, core)
        self._mask_port = getattr(top, "fault_mask", None)
        self._plans: list = []
        self._results: list = []
        self._runs = 0
        self._sim = Simulator(top)
        self._sim.add_clock(1e-6)
        self._sim.add_testbench(self._bench)

    def run_plans(self, plans, vcd: str | None = None) -> list:
        """The planned cycles one after another from reset: (plan, mismatches) per cycle."""
        if self._runs:
            self._sim.reset()
        self._runs += 1
        self._plans, self._results = plans, []
        if vcd:
            with self._sim.write_vcd(vcd):
                self._sim.run()
        else:
            self._sim.run()
        return self._results

    async def _bench(self, ctx):
        mask_port, settle = self._mask_port, self._settle
        state = {"mask": None if mask_port is None else 0}
        if mask_port is not None:  # the status after reset settles like after a change
            await ctx.tick().repeat(settle)
        for plan in self._plans:
            await _apply_mask(ctx, plan, mask_port, state, settle)
            got_status = _read_status(ctx, self._status)
            got_recv, got_ack = await self._cycle(ctx, plan)
            self._results.append((plan, compare_cycle(plan, got_recv, got_ack, got_status)))

    async def _cycle(self, ctx, plan) -> tuple[dict, dict]:
        raise NotImplementedError


class PortBench(_CompiledBench):
    """The network top driven directly, port by port (no harness: these networks are
    small): every endpoint's ``recv`` and ``send_ack`` wire captured at every bit-time.
    At each bit-time every ``send`` is set at once, then every ``recv`` read, then every
    ``recv_ack`` set (a destination acknowledges from its M bit on) and every
    ``send_ack`` read: the values the clock edge samples, as in the Verilog."""

    def __init__(self, net, *, family: SimFamily):
        dut = family.hardware.top(net)
        self._dut = dut
        ports = [port for _, port in endpoint_ports(dut)]
        self._send = Cat(port.send for port in ports)
        self._recv = Cat(port.recv for port in ports)
        self._recv_ack = Cat(port.recv_ack for port in ports)
        self._send_ack = Cat(port.send_ack for port in ports)
        self._layout = endpoint_layout(dut)
        self._recv_layout = endpoint_layout(dut, "recv")
        self._start_latency = start_latency(net)
        super().__init__(net, dut, dut, family=family)

    async def _cycle(self, ctx, plan):
        T = plan.length
        W, Wr = len(self._send), len(self._recv)
        drive = pack_words(plan.drive, self._layout, T)
        ctx.set(self._dut.start, 1)
        ctx.set(self._send, 0)
        ctx.set(self._recv_ack, 0)
        await ctx.tick()
        ctx.set(self._dut.start, 0)
        if self._start_latency:   # the start tree: inputs idle, outputs ignored
            await ctx.tick().repeat(self._start_latency)
        recv_words, ack_words, acking = 0, 0, 0
        for t in range(T):
            ctx.set(self._send, (drive >> (t * W)) & ((1 << W) - 1))
            recv = ctx.get(self._recv)
            acking |= recv
            ctx.set(self._recv_ack, acking)
            recv_words |= recv << (t * Wr)
            ack_words |= ctx.get(self._send_ack) << (t * W)
            await ctx.tick()
        return (unpack_words(recv_words, self._recv_layout, T),
                unpack_words(ack_words, self._layout, T))


class HarnessBench(_CompiledBench):
    """The network in the packed harness, driven exactly as the cocotb test drives it:
    per cycle the stimulus rows written into the ``stim`` memory, a ``start`` pulse,
    ``D + T`` clocks (D the start latency), the rows of the two capture memories read and
    unpacked by the harness's layouts."""

    def __init__(self, net, *, family: SimFamily):
        h = PackedHarness(net, family.hardware.top(net))
        self._h = h
        self._start_latency = start_latency(net)
        super().__init__(net, h, h.core, family=family)

    async def _cycle(self, ctx, plan):
        h, net = self._h, self.net
        T, layout = net.cycle_length, h.layout
        W, k, rows = h.word_width, h.bit_times_per_row, h.rows
        for r, value in enumerate(split_rows(pack_words(plan.drive, layout, T), W, k, rows)):
            ctx.set(h.stim[r], value)
        ctx.set(h.start, 1)
        await ctx.tick()
        ctx.set(h.start, 0)
        await ctx.tick().repeat(self._start_latency + T)
        assert not ctx.get(h.busy)
        recv = join_rows([ctx.get(h.recv_cap[r]) for r in range(rows)], h.recv_width, k, T)
        ack = join_rows([ctx.get(h.ack_cap[r]) for r in range(rows)], W, k, T)
        return unpack_words(recv, h.recv_layout, T), unpack_words(ack, layout, T)


def run_cycles_amaranth(net, ms, cycles, vcd: str | None = None, masks=None, *,
                        family: SimFamily):
    """Run the given cycles one after another: the model's own ``CycleResult`` s, or
    (tests) sequences of message indices, each run through the model once; ``masks``:
    one run-time fault mask per cycle (splitter networks); ``family``: the family's
    hooks (:class:`~fatnet.sim.family.SimFamily`). A new build of the network top each
    call (:class:`PortBench` runs several on one build).

    Returns a list of (plan, mismatches) per cycle.
    """
    plans = make_plans(net, ms, cycles, masks, family=family)  # refusals before building
    return PortBench(net, family=family).run_plans(plans, vcd)


def run_cycles_harness_amaranth(net, ms, cycles, masks=None, *, family: SimFamily):
    """The same cycles through the packed harness (:class:`HarnessBench`), exactly as the
    cocotb test drives it, after setting a changed fault mask and waiting for the status
    to settle. Returns (plan, mismatches) per cycle."""
    plans = make_plans(net, ms, cycles, masks, family=family)  # refusals before building
    return HarnessBench(net, family=family).run_plans(plans)
