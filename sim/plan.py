"""What the testbenches drive and expect for delivery cycles, from the golden model.

A :class:`CyclePlan` holds, for one delivery cycle, the bit every source drives on every
injection wire at every bit-time, and what the model says every leaf's and the external
channel's output and acknowledgment wires carry. Plans are made from the model's own
:class:`CycleResult` s (:func:`plan_result`, :func:`plans`), so what the model ran is
what the testbench drives and expects. :func:`compare_cycle` is the one comparison of
captured wires with a plan, used by the cocotb runner and the Amaranth-simulator bench
alike: it names the port, wire, node, bit-time and message of every difference.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

import numpy as np

from ..golden.errors import FatnetInputError
from ..golden.fattree.bitstream import encode
from ..golden.cycle import CycleResult
from ..golden.fattree.switching import assign_injection_wires, set_switches
from ..golden.messages import endpoint_name

__all__ = ["CyclePlan", "plan_cycle", "plan_result", "plans", "cycle_injections", "Mismatch",
           "compare_cycle", "compare_status", "describe_wire", "port_key", "pack_words",
           "unpack_words", "family"]


def family(net):
    """The family's planner hooks (``fatnet.sim.<net.family>``; see
    :mod:`fatnet.sim.fattree.ports` for the interface)."""
    return importlib.import_module(f".{net.family}", __package__)


def port_key(net, endpoint: int) -> str:
    return family(net).port_name(net, endpoint)


@dataclass
class CyclePlan:
    """Drive and expect arrays for one delivery cycle.

    ``drive[port]``: uint8 array [bit-time, wire] for the port's ``send`` wires.
    ``expect_recv[port]`` (recv wires) and ``expect_send_ack[port]`` (send wires): what
    the network's ``recv`` and ``send_ack`` wires must carry. ``owner[(port, kind,
    wire)]`` is the message on a wire (``kind`` "send" or "recv"), ``label[message]``
    says where it goes and ``site[port]`` (or ``site[(port, kind, wire)]``) which node
    or switch drives the port's wires, for reports. Families with run-time faults add
    the cycle's fault ``mask`` (an integer of ``mask_width`` bits, None for no mask)
    and ``expect_status``, the settled status registers the model predicts ((levels,
    rows) bool).
    """

    length: int
    drive: dict
    expect_recv: dict
    expect_send_ack: dict
    result: CycleResult
    owner: dict = field(default_factory=dict)
    label: dict = field(default_factory=dict)
    site: dict = field(default_factory=dict)
    mask: int | None = None
    mask_width: int = 0
    expect_status: np.ndarray | None = None


def boundary_node(net, port: str) -> str:
    """The fat-tree node whose registered outputs drive a top-level port's wires."""
    from .fattree.ports import boundary_node as bn
    return bn(net, port)


def describe_wire(plan: "CyclePlan", port: str, kind: str, wire: int) -> str:
    """``leaf3.recv[0] (node 8 port R; message 7, leaf1 -> leaf3)``, for reports."""
    m = plan.owner.get((port, "recv" if kind == "recv" else "send", wire))
    who = f"message {m}, {plan.label[m]}" if m is not None else "no message expected"
    where = plan.site.get((port, kind, wire)) or plan.site.get(port)
    return f"{port}.{kind}[{wire}] ({where}; {who})"


def _zeros(net, length, which):
    col = 1 if which == "send" else 2
    return {e[0]: np.zeros((length, e[col]), dtype=np.uint8)
            for e in family(net).endpoints(net)}


def cycle_injections(net, ms, idx) -> tuple[dict, list]:
    """What the sources drive for messages ``idx`` in one cycle: (message -> (wire,
    stream), local messages). Off-line networks get their switch settings; on-line ones
    are injected in message order. A cycle the network cannot carry (more messages at a
    source than it has wires, or off-line, no disjoint paths through some concentrator)
    raises :class:`~fatnet.golden.errors.FatnetInputError` naming the message."""
    idx = sorted(int(i) for i in idx)
    for m in idx:  # endpoints out of range: one clear error before anything runs
        net.tree.check_endpoint(f"message {m} source", int(ms.src[m]))
        net.tree.check_endpoint(f"message {m} destination", int(ms.dst[m]))
    if net.spec.mode == "offline":
        st = set_switches(net, ms, idx)
        injections = {m: (st.wire[m], encode(net, int(ms.src[m]), int(ms.dst[m]),
                                             ms.payload[m], st.decisions[m]))
                      for m in st.routed}
        refused = st.unroutable
    else:
        wires, refused = assign_injection_wires(net, ms, idx)
        injections = {m: (w, encode(net, int(ms.src[m]), int(ms.dst[m]), ms.payload[m]))
                      for m, w in wires.items()}
    if refused:
        m, why = refused[0]
        raise FatnetInputError(
            f"this cycle cannot carry message {m} ({endpoint_name(ms.src[m])} -> "
            f"{endpoint_name(ms.dst[m])}): {why}" + (f" (and {len(refused) - 1} more)"
                                                    if len(refused) > 1 else ""))
    return injections, [m for m in idx if ms.src[m] == ms.dst[m]]


def plan_cycle(net, ms, idx, mask=None) -> CyclePlan:
    """Convenience for tests: run messages ``idx`` through the model as one cycle
    (once; under the run-time fault ``mask`` if given) and plan the result."""
    fam = family(net)
    res = fam.simulate(net, ms, fam.prepare(net, ms, idx, mask))
    return plan_result(net, ms, res, mask)


def plan_result(net, ms, res: CycleResult, mask=None) -> CyclePlan:
    """The testbench's view of a cycle the model has already run: what every source
    drives (the result's injections) and what every endpoint's ``recv`` and ``send_ack``
    wires carry (its waveforms). Nothing is simulated again. ``mask``: the run-time
    fault mask the cycle ran under (the model ``res`` came from must be the network
    with that mask's faults, e.g. :func:`fatnet.sim.butterfly.ports.masked_circuit`)."""
    fam = family(net)
    T = res.length
    drive, recv, ack = _zeros(net, T, "send"), _zeros(net, T, "recv"), _zeros(net, T, "send")
    owner = {}
    label = {m: fam.label(net, o.src, o.dst) for m, o in res.outcomes.items()}
    for m, (w, bits) in res.injections.items():
        p = fam.port_name(net, int(ms.src[m]))
        drive[p][:len(bits), w] = bits[:T]
        owner[(p, "send", w)] = m
    for waveforms, into, to_port in ((res.waveforms(), recv, fam.recv_port),
                                     (res.ack_waveforms(), ack, fam.ack_port)):
        for key, wave in waveforms.items():
            hit = to_port(net, key)
            if hit is not None:
                into[hit[0]][:, hit[1]] = wave
    for m, o in res.outcomes.items():
        if o.path and o.status == "delivered":
            last = o.path[-1]
            hit = fam.recv_port(net, (*last.channel, last.wire))
            if hit is not None:
                owner[(hit[0], "recv", hit[1])] = m
    if net.family == "fattree":
        site = {p: fam.site(net, p, None, None) for p in drive}
    else:
        site = {(p, kind, w): fam.site(net, p, kind, w)
                for kind, arrays in (("recv", recv), ("send_ack", ack))
                for p, a in arrays.items() for w in range(a.shape[1])}
    width = fam.mask_width(net)
    mask_value = None
    if mask is not None:
        if not width:
            raise FatnetInputError(f"a {net.family} network has no run-time fault mask")
        mask_value = fam.mask_int(net, mask)
    status = fam.expected_status(net, mask)
    return CyclePlan(T, drive, recv, ack, res, owner, label, site, mask_value, width, status)


def plans(net, ms, cycles, masks=None) -> list[CyclePlan]:
    """One plan per cycle: ``cycles`` holds the model's own :class:`CycleResult` s (as
    ``fatnet sim`` and the run drivers keep them) or, for tests, sequences of message
    indices (each run through the model once, see :func:`plan_cycle`). Index cycles are
    all checked first, so a cycle the network cannot carry is refused before any runs.
    ``masks`` (families with run-time faults): one fault mask per cycle (None: none);
    an index cycle runs in the model under its mask, a result must have been run so."""
    fam = family(net)
    cycles = list(cycles)
    masks = [None] * len(cycles) if masks is None else list(masks)
    if len(masks) != len(cycles):
        raise FatnetInputError(f"{len(masks)} fault masks for {len(cycles)} cycles")
    if any(mk is not None for mk in masks) and not fam.mask_width(net):
        raise FatnetInputError(f"a {net.family} network has no run-time fault mask")
    runs = [c if isinstance(c, CycleResult) else fam.prepare(net, ms, c, mk)
            for c, mk in zip(cycles, masks)]
    return [plan_result(net, ms, c if isinstance(c, CycleResult)
                        else fam.simulate(net, ms, c), mk) for c, mk in zip(runs, masks)]


# ------------------------------------------------------------------ packed words
def pack_words(arrays: dict, layout, length: int) -> int:
    """Per-port [bit-time, wire] arrays -> one integer of ``length`` packed words:
    bit ``t * W + first + wire`` is port's ``wire`` at bit-time ``t`` (``layout`` is
    the harness's (port, first bit, width) list, ``W`` its total width)."""
    W = sum(w for _, _, w in layout)
    packed = np.zeros((length, W), dtype=np.uint8)
    for port, first, w in layout:
        packed[:, first:first + w] = arrays[port]
    return int.from_bytes(np.packbits(packed.ravel(), bitorder="little").tobytes(),
                          "little")


def unpack_words(value: int, layout, length: int) -> dict:
    """The inverse of :func:`pack_words`: per-port uint8 arrays [bit-time, wire]."""
    W = sum(w for _, _, w in layout)
    nbits = length * W
    raw = np.frombuffer(int(value).to_bytes((nbits + 7) // 8, "little"), dtype=np.uint8)
    bits = np.unpackbits(raw, bitorder="little")[:nbits].reshape(length, W)
    return {port: bits[:, first:first + w].copy() for port, first, w in layout}


@dataclass
class Mismatch:
    wire: str  # describe_wire(): port, kind, wire, node and message
    bit_time: int
    expected: int
    got: int

    def __str__(self):
        when = "" if self.bit_time < 0 else f" at bit-time {self.bit_time}"
        return f"{self.wire}{when}: expected {self.expected}, got {self.got}"


def compare_status(plan: CyclePlan, got_status) -> list[Mismatch]:
    """The settled status registers (``bad``: faulty or declared faulty) against the
    model's propagation of the cycle's faults; one entry per differing switch."""
    if plan.expect_status is None or got_status is None:
        return []
    exp = np.asarray(plan.expect_status, dtype=np.uint8)
    got = np.asarray(got_status, dtype=np.uint8).reshape(exp.shape)
    mask = "no fault mask" if not plan.mask else f"fault mask {plan.mask:#x}"
    return [Mismatch(f"status of switch (level {int(i)}, row {int(r)}) ({mask}; settled "
                     f"before the start strobe)", -1, int(exp[i, r]), int(got[i, r]))
            for i, r in np.argwhere(exp != got)]


def compare_cycle(plan: CyclePlan, got_recv: dict, got_ack: dict,
                  got_status=None) -> list[Mismatch]:
    """Every wire whose observed bits differ from the model, first differing bit-time
    (and, if given, every switch whose settled status differs from the model's)."""
    out = compare_status(plan, got_status)
    for kind, expect, got in (("recv", plan.expect_recv, got_recv),
                              ("send_ack", plan.expect_send_ack, got_ack)):
        for p, exp in expect.items():
            g = got[p]
            diff = np.argwhere(exp != g)
            seen = set()
            for t, w in diff:
                if w in seen:
                    continue
                seen.add(w)
                out.append(Mismatch(describe_wire(plan, p, kind, int(w)), int(t),
                                    int(exp[t, w]), int(g[t, w])))
    return out
