"""What the testbenches drive and expect for delivery cycles, from the golden model.

A :class:`CyclePlan` holds, for one delivery cycle, the bit every source drives on every
injection wire at every bit-time, and what the model says every leaf's and the external
channel's output and acknowledgment wires carry. Plans are made from the model's own
:class:`CycleResult` s (:func:`plan_result`, :func:`plans`), so what the model ran is
what the testbench drives and expects. :func:`compare_cycle` is the one comparison of
captured wires with a plan, used by the cocotb runner and the Amaranth-simulator bench
alike: it names the port, wire, node, bit-time and message of every difference.

Every function here is handed the family (a :class:`~fatnet.sim.family.SimFamily`): its
testbench hooks say which port and wire a model waveform is, and its hardware hooks give
the endpoints (the network top's signature, the one port map).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from ..golden.cycle import CycleResult
from ..golden.errors import FatnetInputError
from ..hdl.harness import packed_layout
from .family import SimFamily, fault_mask_width, runtime_faults

__all__ = ["CyclePlan", "Sites", "TerminalWires", "terminal_wires", "plan_cycle",
           "plan_result", "plans", "endpoint_layouts", "Mismatch", "compare_cycle",
           "compare_status", "describe_wire", "pack_words", "unpack_words", "packed_bits",
           "stream_rows", "word_rows", "bulk_words"]


@dataclass
class CyclePlan:
    """Drive and expect arrays for one delivery cycle.

    ``drive[port]``: uint8 array [bit-time, wire] for the port's ``send`` wires.
    ``expect_recv[port]`` (recv wires) and ``expect_send_ack[port]`` (send wires): what
    the network's ``recv`` and ``send_ack`` wires must carry. ``owner[(port, kind,
    wire)]`` is the message on a wire (``kind`` "send" or "recv"), ``label[message]``
    says where it goes and ``site[(port, kind, wire)]`` which node or switch drives an
    output wire (``kind`` "recv" or "send_ack"), for reports. Families with run-time faults add
    the cycle's fault ``mask`` (an integer of ``mask_width`` bits, None for no mask)
    and ``expect_status``, the settled status registers the model predicts (a bool
    array, e.g. (levels, rows)), with ``status_site`` naming what an index belongs to.
    """

    length: int
    drive: dict
    expect_recv: dict
    expect_send_ack: dict
    result: CycleResult
    owner: dict = field(default_factory=dict)
    label: dict = field(default_factory=dict)
    site: Mapping = field(default_factory=dict)
    mask: int | None = None
    mask_width: int = 0
    expect_status: np.ndarray | None = None
    status_site: Callable[[tuple], str] | None = None


class Sites(Mapping):
    """``(port, kind, wire) -> `` the node or switch that drives an output wire (the
    family's ``site`` hook), for every ``recv`` and ``send_ack`` wire of a plan; each
    named only when a report asks for it (most plans are never reported on)."""

    def __init__(self, net, testbench, arrays: dict):
        self._net, self._tb = net, testbench
        self._keys = [(p, kind, w) for kind, by_port in arrays.items()
                      for p, a in by_port.items() for w in range(a.shape[1])]
        self._known = set(self._keys)

    def __getitem__(self, key):
        if key not in self._known:
            raise KeyError(key)
        return self._tb.site(self._net, *key)

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)


def describe_wire(plan: "CyclePlan", port: str, kind: str, wire: int) -> str:
    """``leaf__3.recv[0] (node 8 port R; message 7, leaf__1 -> leaf__3)``, for reports."""
    m = plan.owner.get((port, "recv" if kind == "recv" else "send", wire))
    who = f"message {m}, {plan.label[m]}" if m is not None else "no message expected"
    return f"{port}.{kind}[{wire}] ({plan.site.get((port, kind, wire))}; {who})"


def _zeros(layout, length) -> dict:
    """Per endpoint of a packed ``layout``, a zero [bit-time, wire] array."""
    return {port: np.zeros((length, width), dtype=np.uint8) for port, _, width in layout}


def plan_cycle(net, ms, idx, mask=None, *, family: SimFamily) -> CyclePlan:
    """Convenience for tests: run messages ``idx`` through the model as one cycle
    (once; under the run-time fault ``mask`` if given) and plan the result."""
    tb = family.testbench
    res = tb.simulate(net, ms, tb.prepare(net, ms, idx, mask))
    return plan_result(net, ms, res, mask, family=family)


def endpoint_layouts(net, family: SimFamily) -> tuple[list, list]:
    """The packed send and recv layouts of ``net``'s endpoints (the top's signature)."""
    return (packed_layout(net, hardware=family.hardware),
            packed_layout(net, "recv", hardware=family.hardware))


class TerminalWires:
    """The model's waveform keys that are terminals' wires: ``key in wires`` says
    whether a key ``(*channel, wire)`` is one, ``wires[key]`` its ``(port, wire)``; each
    key is looked up once through the family's hook (``recv_port`` or ``ack_port``)."""

    def __init__(self, net, to_port):
        self._net, self._to_port, self._seen = net, to_port, {}

    def __contains__(self, key) -> bool:
        hit = self._seen.get(key, False)
        if hit is False:
            hit = self._seen[key] = self._to_port(self._net, key)
        return hit is not None

    def __getitem__(self, key) -> tuple[str, int]:
        if key not in self:
            raise KeyError(key)
        return self._seen[key]


def terminal_wires(net, family: SimFamily) -> tuple[TerminalWires, TerminalWires]:
    """The terminals' ``recv`` and ``send_ack`` wires among the model's waveform keys."""
    tb = family.testbench
    return TerminalWires(net, tb.recv_port), TerminalWires(net, tb.ack_port)


def plan_result(net, ms, res: CycleResult, mask=None, *, family: SimFamily,
                layouts: tuple | None = None, ports: tuple | None = None) -> CyclePlan:
    """The testbench's view of a cycle the model has already run: what every source
    drives (the result's injections) and what every endpoint's ``recv`` and ``send_ack``
    wires carry (its waveforms). Nothing is simulated again. ``mask``: the run-time
    fault mask the cycle ran under (the model ``res`` came from must be the network
    with that mask's faults, e.g. :func:`fatnet.sim.butterfly.ports.masked_circuit`).
    ``layouts``: :func:`endpoint_layouts`, and ``ports``: :func:`terminal_wires`, when
    the caller plans many cycles."""
    tb = family.testbench
    T = res.length
    send_layout, recv_layout = layouts or endpoint_layouts(net, family)
    drive, ack = _zeros(send_layout, T), _zeros(send_layout, T)
    recv = _zeros(recv_layout, T)
    owner = {}
    label = {m: tb.label(net, o.src, o.dst) for m, o in res.outcomes.items()}
    for m, (w, bits) in res.injections.items():
        p = tb.port_name(net, int(ms.src[m]))
        drive[p][:len(bits), w] = bits[:T]
        owner[(p, "send", w)] = m
    recv_at, ack_at = ports or terminal_wires(net, family)
    for waveforms, into, at in ((res.waveforms(recv_at), recv, recv_at),
                                (res.ack_waveforms(ack_at), ack, ack_at)):
        for key, wave in waveforms.items():
            port, wire = at[key]
            into[port][:, wire] = wave
    for m, o in res.outcomes.items():
        if o.path and o.status == "delivered":
            last = o.path[-1]
            hit = tb.recv_port(net, (*last.channel, last.wire))
            if hit is not None:
                owner[(hit[0], "recv", hit[1])] = m
    site = Sites(net, tb, {"recv": recv, "send_ack": ack})
    faults = runtime_faults(family)
    if faults is None:
        if mask is not None:
            raise FatnetInputError(f"a {net.family} network has no run-time fault mask")
        return CyclePlan(T, drive, recv, ack, res, owner, label, site)
    mask_value = None if mask is None else faults.mask_int(net, mask)
    status = faults.expected_status(net, mask)
    return CyclePlan(T, drive, recv, ack, res, owner, label, site, mask_value,
                     faults.mask_width(net), status,
                     None if status is None else partial(faults.status_site, net))


def plans(net, ms, cycles, masks=None, *, family: SimFamily) -> list[CyclePlan]:
    """One plan per cycle: ``cycles`` holds the model's own :class:`CycleResult` s (as
    ``fatnet sim`` and the run drivers keep them) or, for tests, sequences of message
    indices (each run through the model once, see :func:`plan_cycle`). Index cycles are
    all checked first, so a cycle the network cannot carry is refused before any runs.
    ``masks`` (families with run-time faults): one fault mask per cycle (None: none);
    an index cycle runs in the model under its mask, a result must have been run so."""
    tb = family.testbench
    cycles = list(cycles)
    masks = [None] * len(cycles) if masks is None else list(masks)
    if len(masks) != len(cycles):
        raise FatnetInputError(f"{len(masks)} fault masks for {len(cycles)} cycles")
    if any(mk is not None for mk in masks) and not fault_mask_width(net, family):
        raise FatnetInputError(f"a {net.family} network has no run-time fault mask")
    runs = [c if isinstance(c, CycleResult) else tb.prepare(net, ms, c, mk)
            for c, mk in zip(cycles, masks)]
    layouts, ports = endpoint_layouts(net, family), terminal_wires(net, family)
    return [plan_result(net, ms, c if isinstance(c, CycleResult)
                        else tb.simulate(net, ms, c), mk, family=family, layouts=layouts,
                        ports=ports)
            for c, mk in zip(runs, masks)]


# ------------------------------------------------------------------ packed words
def packed_bits(arrays: dict, layout, length: int) -> np.ndarray:
    """Per-port [bit-time, wire] arrays -> one uint8 array [bit-time, bit] of the packed
    words (``layout``: the harness's (port, first bit, width) list)."""
    W = sum(w for _, _, w in layout)
    packed = np.zeros((length, W), dtype=np.uint8)
    for port, first, w in layout:
        packed[:, first:first + w] = arrays[port]
    return packed


def pack_words(arrays: dict, layout, length: int) -> int:
    """Per-port [bit-time, wire] arrays -> one integer of ``length`` packed words:
    bit ``t * W + first + wire`` is port's ``wire`` at bit-time ``t`` (``layout`` is
    the harness's (port, first bit, width) list, ``W`` its total width)."""
    packed = packed_bits(arrays, layout, length)
    return int.from_bytes(np.packbits(packed.ravel(), bitorder="little").tobytes(),
                          "little")


def stream_rows(cycles: list, layout, length: int, k: int) -> np.ndarray:
    """Several cycles' per-port arrays as the checking harness's rows
    (:mod:`fatnet.hdl.checker`): the cycles' packed words one after the other, ``k``
    words a row, each row little-endian bytes (uint8 array [row, byte]; row ``r`` is
    the integer ``int.from_bytes(rows[r], "little")``)."""
    W = sum(w for _, _, w in layout)
    words = np.concatenate([packed_bits(a, layout, length) for a in cycles]) if cycles \
        else np.zeros((0, W), dtype=np.uint8)
    return word_rows(words, k)


def word_rows(words: np.ndarray, k: int) -> np.ndarray:
    """Packed words (uint8 array [word, bit], one word a bit-time) as the checking
    harness's rows: ``k`` words a row, little-endian bytes (see :func:`stream_rows`)."""
    W = words.shape[1]
    rows = -(-len(words) // k)
    padded = np.zeros((rows * k, W), dtype=np.uint8)
    padded[:len(words)] = words
    return np.packbits(padded.reshape(rows, k * W), axis=1, bitorder="little")


def bulk_words(net, waves, *, family: SimFamily, layouts: tuple | None = None) -> dict:
    """A batched engine's :class:`~fatnet.golden.cycle.TerminalWaves` as the packed
    words of every bit-time of every cycle, the cycles one after the other: uint8
    arrays [cycle x bit-time, bit] of the ``stim``, ``expect_recv`` and ``expect_ack``
    memories (what :func:`stream_rows` makes of the plans of the same cycles). Each
    terminal wire goes where the family's hooks put it (``port_name``, ``recv_port``,
    ``ack_port``); a wire no hook names must carry nothing."""
    tb = family.testbench
    send, recv = layouts or endpoint_layouts(net, family)
    cycles, T = waves.drive.shape[:2]
    out = {}
    for name, wave, layout, to_port in (
            ("stim", waves.drive, send,
             lambda x, w: (tb.port_name(net, waves.endpoint(x)), w)),
            ("expect_recv", waves.recv, recv,
             lambda x, w: tb.recv_port(net, waves.recv_key(x, w))),
            ("expect_ack", waves.send_ack, send,
             lambda x, w: tb.ack_port(net, waves.send_key(x, w)))):
        first = {port: (at, width) for port, at, width in layout}
        flat = wave.reshape(cycles * T, -1)
        terminals, wires = wave.shape[2:]
        bit = np.full(terminals * wires, -1, dtype=np.int64)   # each column's, or -1
        for x in range(terminals):
            for w in range(wires):
                hit = to_port(x, w)
                if hit is not None and hit[0] in first and hit[1] < first[hit[0]][1]:
                    bit[x * wires + w] = first[hit[0]][0] + hit[1]
        stray = np.flatnonzero((bit < 0) & (flat.max(axis=0, initial=0) > 0))
        if stray.size:
            x, w = divmod(int(stray[0]), wires)
            raise FatnetInputError(f"terminal {x} wire {w} of the model's {name} waves "
                                   f"is no port of the network")
        words = np.zeros((cycles * T, sum(w for _, _, w in layout)), dtype=np.uint8)
        mapped = np.flatnonzero(bit >= 0)
        words[:, bit[mapped]] = np.take(flat, mapped, axis=1)
        out[name] = words
    return out


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
    site = plan.status_site
    if plan.expect_status is None or got_status is None or site is None:
        return []
    exp = np.asarray(plan.expect_status, dtype=np.uint8)
    got = np.asarray(got_status, dtype=np.uint8).reshape(exp.shape)
    mask = "no fault mask" if not plan.mask else f"fault mask {plan.mask:#x}"
    return [Mismatch(f"status of {site(tuple(int(x) for x in ix))} ({mask}; "
                     f"settled before the start strobe)", -1, int(exp[tuple(ix)]),
                     int(got[tuple(ix)]))
            for ix in np.argwhere(exp != got)]


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
