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

from dataclasses import dataclass, field

import numpy as np

from ..golden.errors import FatnetInputError
from ..golden.fattree.bitstream import encode
from ..golden.fattree.cyclemodel import CycleResult, simulate_cycle
from ..golden.fattree.switching import assign_injection_wires, set_switches
from ..golden.fattree.topology import DOWN, EXT, UP
from ..golden.messages import endpoint_name

__all__ = ["CyclePlan", "plan_cycle", "plan_result", "plans", "cycle_injections", "Mismatch",
           "compare_cycle", "describe_wire", "port_key", "pack_words", "unpack_words"]


def port_key(net, endpoint: int) -> str:
    return "ext" if endpoint == EXT else f"leaf{endpoint}"


@dataclass
class CyclePlan:
    """Drive and expect arrays for one delivery cycle.

    ``drive[port]``: uint8 array [bit-time, wire] for the port's ``send`` wires.
    ``expect_recv[port]`` and ``expect_send_ack[port]``: the same shape, what the
    network's ``recv`` and ``send_ack`` wires must carry. ``owner[(port, kind, wire)]``
    is the message on a wire (``kind`` "send" or "recv"), ``label[message]`` says where
    it goes and ``site[port]`` which node drives the port's wires, for reports.
    """

    length: int
    drive: dict
    expect_recv: dict
    expect_send_ack: dict
    result: CycleResult
    owner: dict = field(default_factory=dict)
    label: dict = field(default_factory=dict)
    site: dict = field(default_factory=dict)


def boundary_node(net, port: str) -> str:
    """The node whose registered outputs drive a top-level port's wires: a leaf's
    ``recv`` and ``send_ack`` come from its parent's L or R port, the external
    channel's from the root's U port."""
    if port == "ext":
        return "node 0 port U"
    heap = (1 << net.L) - 1 + int(port[len("leaf"):])
    return f"node {(heap - 1) // 2} port {'L' if heap % 2 else 'R'}"


def describe_wire(plan: "CyclePlan", port: str, kind: str, wire: int) -> str:
    """``leaf3.recv[0] (node 8 port R; message 7, leaf1 -> leaf3)``, for reports."""
    m = plan.owner.get((port, "recv" if kind == "recv" else "send", wire))
    who = f"message {m}, {plan.label[m]}" if m is not None else "no message expected"
    return f"{port}.{kind}[{wire}] ({plan.site[port]}; {who})"


def _zeros(net, length):
    caps = net.spec.capacities
    ports = {f"leaf{i}": caps[-1] for i in range(net.n)}
    ports["ext"] = caps[0]
    return {p: np.zeros((length, w), dtype=np.uint8) for p, w in ports.items()}


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


def plan_cycle(net, ms, idx) -> CyclePlan:
    """Convenience for tests: run messages ``idx`` through the model as one cycle
    (:func:`cycle_injections`, then the cycle model, once) and plan the result."""
    injections, local = cycle_injections(net, ms, idx)
    return plan_result(net, ms, simulate_cycle(net, ms, injections, local))


def plan_result(net, ms, res: CycleResult) -> CyclePlan:
    """The testbench's view of a cycle the model has already run: what every source
    drives (the result's injections) and what every endpoint's ``recv`` and ``send_ack``
    wires carry (its waveforms). Nothing is simulated again."""
    T = res.length
    drive, recv, ack = _zeros(net, T), _zeros(net, T), _zeros(net, T)
    owner = {}
    label = {m: f"{port_key(net, o.src)} -> {port_key(net, o.dst)}"
             for m, o in res.outcomes.items()}
    for m, (w, bits) in res.injections.items():
        p = port_key(net, int(ms.src[m]))
        drive[p][:len(bits), w] = bits[:T]
        owner[(p, "send", w)] = m
    # A leaf's recv wires are its DOWN channel, its send_ack wires the reverse of its UP
    # channel; for the external interface it is the other way round (channel 0).
    first_leaf = (1 << net.L) - 1
    for waveforms, into, leaf_dir in ((res.waveforms(), recv, DOWN),
                                      (res.ack_waveforms(), ack, UP)):
        for (direction, heap, wire), wave in waveforms.items():
            if direction == leaf_dir and heap >= first_leaf:
                into[f"leaf{heap - first_leaf}"][:, wire] = wave
            elif direction != leaf_dir and heap == 0:
                into["ext"][:, wire] = wave
    for m, o in res.outcomes.items():
        if o.path and o.status == "delivered":
            owner[(port_key(net, o.dst), "recv", o.path[-1].wire)] = m
    site = {p: boundary_node(net, p) for p in drive}
    return CyclePlan(T, drive, recv, ack, res, owner, label, site)


def plans(net, ms, cycles) -> list[CyclePlan]:
    """One plan per cycle: ``cycles`` holds the model's own :class:`CycleResult` s (as
    ``fatnet sim`` and the run drivers keep them) or, for tests, sequences of message
    indices (each run through the model once, see :func:`plan_cycle`). Index cycles are
    all checked first, so a cycle the network cannot carry is refused before any runs."""
    cycles = list(cycles)
    runs = [c if isinstance(c, CycleResult) else cycle_injections(net, ms, c)
            for c in cycles]
    return [plan_result(net, ms, c if isinstance(c, CycleResult)
                        else simulate_cycle(net, ms, *c)) for c in runs]


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
        return f"{self.wire} at bit-time {self.bit_time}: expected {self.expected}, got {self.got}"


def compare_cycle(plan: CyclePlan, got_recv: dict, got_ack: dict) -> list[Mismatch]:
    """Every wire whose observed bits differ from the model, first differing bit-time."""
    out = []
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
