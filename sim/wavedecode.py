"""Decoded message traces in the waveform dump: beside every message wire, the message it
carries and the phase of that message at every bit-time.

The testbench's dump is a VCD. :func:`decode_into_vcd` adds two string-valued variables
(VCD ``$var string``, shown by GTKWave as text) per wire of every endpoint signal
(``send``, ``recv``, ``send_ack``, ``recv_ack``) and of every interior signal the family
can place (a fat-tree node's ports, a splitter switch's input and edges), in the same
scope as the wire's signal: ``<signal>__msg_w<wire>`` names the message for its whole
life on the wire (one label, so it reads at any zoom) and ``<signal>__phase_w<wire>``
names what the wire carries of it at each bit-time. Both come from the model's own cycle
result (:class:`~fatnet.golden.cycle.CycleResult`)::

    message trace           phase trace
    m12:leaf__0->leaf__6    M            message 12, source leaf__0, destination leaf__6
                            addr@n3      the address (turn) bit node 3 reads
                            dec@n3.s0    off-line fat-tree: a decision bit, stage 0, node 3
                            addr@L1      splitter networks: the address bit level 1 reads
                            pay7         payload bit 7 (MSB first)
                            ack          the wire's acknowledgment is up for the message
    -                       -            idle

A lost message's label ends in ``(lost)``. Every wire's stream follows the framing of
:mod:`fatnet.golden.bitstream`: a fresh M bit where the stream enters the wire (the
Occupancy's time), then the source stream from the bit after the last field a switch
before it consumed; the family's ``hop_field_labels`` hook names the fields.

Timeline. Delivery cycles are found in the dump itself: every rising edge of the
harness's ``clk`` at which its ``start`` is 1 is a start strobe, and bit-time ``t`` of
that cycle is the clock period from ``D + t`` periods after that edge (``D`` the
network's start latency, :func:`fatnet.golden.cycle.start_latency`; the controller's
``bit_time`` is ``t`` there: :mod:`fatnet.hdl.controller`), with the period the testbench's
own :data:`fatnet.sim.cocotb_runner.PERIOD_NS`. The number of strobes must be the number
of model cycles.

Family hooks (``fatnet.sim.<family>``): ``port_name``, ``recv_port`` (the planner's
:class:`~fatnet.sim.family.Naming`) and the :class:`~fatnet.sim.family.Waves` ones:
``hop_field_labels(net, src, dst)`` (per switch on the path, a label per field bit) and
``interior_wires(net)`` (channel wire key -> [(data signal, ack signal, bit)] relative
to the network top; empty where the family places none).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..golden.cycle import CycleResult, start_latency
from .family import SimFamily, Waves, waves_of

__all__ = ["decode_into_vcd", "read_vcd", "VcdData", "cycle_labels", "traced_signals",
           "cycle_starts", "dump_end", "message_label", "trace_name", "phase_trace_name",
           "IDLE", "WaveDecodeError"]

IDLE = "-"


class WaveDecodeError(ValueError):
    """A dump the decoder cannot line up with the model's cycles."""


def trace_name(signal: str, wire: int) -> str:
    """The decoded message trace of ``signal``'s wire ``wire`` (same scope as the
    signal): one label per message life."""
    return f"{signal}__msg_w{wire}"


def phase_trace_name(signal: str, wire: int) -> str:
    """The decoded phase trace of ``signal``'s wire ``wire``: a label per bit-time."""
    return f"{signal}__phase_w{wire}"


def message_label(net, message: int, outcome, family: SimFamily) -> str:
    """The label of a message for its whole life on a wire: ``m<id>:<src>-><dst>``
    (terminals as the network names them), ``(lost)`` appended for a lost one. A VCD
    string value holds no blank, hence the colon."""
    fam = family.testbench
    lost = "(lost)" if outcome.status == "lost" else ""
    return (f"m{message}:{fam.port_name(net, outcome.src)}->"
            f"{fam.port_name(net, outcome.dst)}{lost}")


# ------------------------------------------------------------------------- VCD reading
_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "fs": 1e-15}
_DEFAULT_TIMESCALE = 1e-12  # a VCD without $timescale: ps, as GTKWave assumes


@dataclass
class VcdData:
    """A VCD's variables (full dotted path -> (id, width, type)) and, for the variables
    asked for, their value changes (path -> [(time, value string)])."""

    timescale: float
    vars: dict
    changes: dict = field(default_factory=dict)

    def value_at(self, path: str, time: int):
        """The value of ``path`` at ``time`` (the last change at or before it)."""
        out = None
        for t, v in self.changes[path]:
            if t > time:
                break
            out = v
        return out

    def bit_at(self, path: str, bit: int, time: int) -> str:
        """Bit ``bit`` (0: LSB) of a wire's value at ``time``: '0', '1', 'x' or 'z'."""
        v = self.value_at(path, time)
        if v is None:
            return "x"
        v = v.rjust(self.vars[path][1], v[0] if v[0] in "xz" else "0")
        return v[len(v) - 1 - bit]


def _iter_header_items(lines):
    """The header's items, each the list of its tokens through its ``$end``, read line by
    line up to and including the line that holds ``$enddefinitions`` (one pass: linear
    in the header; a reader that stops early reads no further)."""
    item = []
    for line in lines:
        tokens = line.split()
        for token in tokens:
            item.append(token)
            if token == "$end":
                yield item
                item = []
        if "$enddefinitions" in tokens:
            break
    if item:
        raise WaveDecodeError(f"a VCD header item without $end: {' '.join(item[:4])}")


def _header_items(lines) -> list[list[str]]:
    """Every item of the header (:func:`_iter_header_items`)."""
    return list(_iter_header_items(lines))


def _item_kind(item) -> tuple:
    """(kind, payload) of a header item: ``scope`` (name), ``upscope`` (None), ``var``
    ((type, width, id, name)), ``timescale`` (seconds), ``other`` (None)."""
    head = item[0]
    if head == "$scope":
        return "scope", item[2]
    if head == "$upscope":
        return "upscope", None
    if head == "$var":
        return "var", (item[1], int(item[2]), item[3], item[4])
    if head == "$timescale":
        text = "".join(item[1:-1])
        num = "".join(ch for ch in text if ch.isdigit()) or "1"
        return "timescale", int(num) * _UNITS[text[len(num):]]
    return "other", None


def _walk_header(items):
    """Yield (kind, payload, tokens of the item) for every header item
    (:func:`_item_kind`)."""
    for item in items:
        yield (*_item_kind(item), item)


def _declarations(items) -> tuple[dict, float]:
    """The header's variables (full dotted path -> (id, width, type)) and timescale (s)."""
    scope, vars_, ts = [], {}, _DEFAULT_TIMESCALE
    for kind, payload, _ in _walk_header(items):
        if kind == "scope":
            scope.append(payload)
        elif kind == "upscope":
            scope.pop()
        elif kind == "var":
            typ, width, ident, name = payload
            vars_[".".join(scope + [name])] = (ident, width, typ)
        elif kind == "timescale":
            ts = payload
    return vars_, ts


def _values(lines):
    """(time, id, value) of every value change of a VCD body."""
    time = 0
    for line in lines:
        s = line.strip()
        if not s or s[0] == "$":
            continue
        c = s[0]
        if c == "#":
            time = int(s[1:])
        elif c in "bBrRsS":
            value, ident = s[1:].split()
            yield time, ident, value
        else:
            yield time, s[1:], c


def dump_end(path, tail: int = 1 << 16) -> float:
    """The last time of a VCD in GTKWave's time units (the timescale's unit: ``10ps``
    counts ps, a tick is 10 of them). Reads the header up to its ``$timescale`` and the
    file's tail only."""
    with open(path) as f:
        ts = next((payload for kind, payload in map(_item_kind, _iter_header_items(f))
                   if kind == "timescale"), _DEFAULT_TIMESCALE)
    unit = 10.0 ** (3 * math.floor(math.log10(ts) / 3 + 1e-9))
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - tail))
        lines = f.read().splitlines()[(1 if tail < size else 0):]  # a line cut in two
        times = [ln for ln in lines if ln.startswith(b"#")]
    if not times:
        if tail < size:
            return dump_end(path, size)
        return 0.0
    return round(int(times[-1][1:]) * ts / unit, 6)


def read_vcd(path, names=None) -> VcdData:
    """A VCD's variables and the value changes of ``names`` (full paths; None: all)."""
    with open(path) as f:
        vars_, ts = _declarations(_header_items(f))
        return VcdData(ts, vars_, _body_changes(f, vars_, names))


def _body_changes(lines, vars_: dict, names=None) -> dict:
    """The value changes (path -> [(time, value)]) of ``names`` (None: all) in the body
    lines of a VCD whose variables are ``vars_``."""
    wanted = vars_ if names is None else {n: vars_[n] for n in names}
    by_id: dict[str, list[str]] = {}
    for n, (ident, _, _) in wanted.items():
        by_id.setdefault(ident, []).append(n)
    changes: dict[str, list] = {n: [] for n in wanted}
    for t, ident, value in _values(lines):
        for n in by_id.get(ident, ()):
            changes[n].append((t, value))
    return changes


# ------------------------------------------------------------------------- the timeline
def cycle_starts(vcd: VcdData, clk: str, start: str, period: int) -> list[int]:
    """Times of the start strobes: rising edges of ``clk`` at which ``start`` (sampled
    before the edge) is 1; consecutive rising edges must be ``period`` apart."""
    starts, level, edges = [], "0", []
    st = vcd.changes[start]
    k = 0
    for t, v in vcd.changes[clk]:
        while k < len(st) and st[k][0] < t:
            level = st[k][1]
            k += 1
        if v == "1":
            edges.append(t)
            if level == "1":
                starts.append(t)
    gaps = {b - a for a, b in zip(edges, edges[1:])}
    if gaps - {period}:
        raise WaveDecodeError(f"clock edges {sorted(gaps)} apart in the dump, the "
                              f"testbench's period is {period}")
    return starts


# ------------------------------------------------------------------------- the decoding
def _endpoint_signals(net, family) -> dict:
    """(port, kind) -> signal name under the network top, from its signature."""
    from ..hdl.signatures import port_rows
    out = {}
    for r in port_rows(family.hardware.network_signature(net)):
        if r["endpoint"] is not None:
            out[(r["endpoint"], r["path"][-1])] = (r["name"], r["width"])
    return out


def _waves(family: SimFamily) -> Waves:
    """The family's :class:`~fatnet.sim.family.Waves` hooks (refused without them)."""
    hooks = waves_of(family)
    if hooks is None:
        raise WaveDecodeError("the family has no wave hooks (hop_field_labels, "
                              "interior_wires)")
    return hooks


def _stream_labels(net, o, family: SimFamily) -> list[str]:
    """One label per bit of the source stream of outcome ``o``: M, fields, payload."""
    labels = ["M"]
    for hop in _waves(family).hop_field_labels(net, o.src, o.dst):
        labels += list(hop)
    pay = len(o.stream) - len(labels)
    if pay < 0:
        raise WaveDecodeError(f"message {o.message}: a stream of {len(o.stream)} bits "
                              f"is shorter than its {len(labels)} header bits")
    return labels + [f"pay{pay - 1 - i}" for i in range(pay)]


def traced_signals(net, *, family: SimFamily) -> tuple[dict, dict, dict]:
    """What can be decoded: ``(endpoints, interior, signals)``: (port, kind) -> (signal,
    width); the family's ``interior_wires``; and every signal (under the network top)
    with a decoded trace per wire -> its width, in display order."""
    ends = _endpoint_signals(net, family)
    inner = _waves(family).interior_wires(net)
    signals = dict(ends.values())
    for wires in inner.values():
        for data, ack, bit in wires:
            for s in (data, ack):
                signals[s] = max(signals.get(s, 0), bit + 1)
    return ends, inner, signals


def _wires_of(net, o, q, ends, inner, fam):
    """The (signal, bit) of the wire hop ``q`` of outcome ``o`` occupies and of its
    reverse (acknowledgment) wire: the source's port at hop 0, a destination's port
    where the family places one, and the interior signals of the channel."""
    occ = o.path[q]
    key = (*occ.channel, occ.wire)
    wires, ack_wires = [], []
    if q == 0:
        port = fam.port_name(net, o.src)
        wires.append((ends[(port, "send")][0], occ.wire))
        ack_wires.append((ends[(port, "send_ack")][0], occ.wire))
    hit = fam.recv_port(net, key)
    if hit is not None:
        wires.append((ends[(hit[0], "recv")][0], hit[1]))
        ack_wires.append((ends[(hit[0], "recv_ack")][0], hit[1]))
    for d, a, b in inner.get(key, ()):
        wires.append((d, b))
        ack_wires.append((a, b))
    return wires, ack_wires


def cycle_labels(net, res, ends=None, inner=None, *, family: SimFamily) -> dict:
    """One delivery cycle decoded: ``{(signal, wire): [(message label, phase) per
    bit-time]}`` for every wire that carries a message or its acknowledgment (the others
    are idle: ``(IDLE, IDLE)``). ``res`` is the model's
    :class:`~fatnet.golden.cycle.CycleResult` (or its plan)."""
    fam = family.testbench
    if ends is None or inner is None:
        ends, inner, _ = traced_signals(net, family=family)
    if not isinstance(res, CycleResult):
        res = res.result  # a CyclePlan
    T = net.cycle_length
    cur: dict[tuple, list] = {}

    def put(keys, t, label, phase):
        for k in keys:
            cur.setdefault(k, [(IDLE, IDLE)] * T)[t] = (label, phase)

    for m, o in sorted(res.outcomes.items()):
        if not o.path:
            continue
        label = message_label(net, m, o, family)
        phases = _stream_labels(net, o, family)
        for q, occ in enumerate(o.path):
            wires, ack_wires = _wires_of(net, o, q, ends, inner, fam)
            for j in range(min(len(o.stream) - occ.offset, T - occ.time)):
                put(wires, occ.time + j, label, "M" if j == 0 else phases[occ.offset + j])
            if o.status == "delivered":
                for t in range(o.arrival + sum(o.hop_registers[q:]), T):
                    put(ack_wires, t, label, "ack")
    return cur


# ------------------------------------------------------------------------- the merge
def _ident(n: int) -> str:
    chars = [chr(c) for c in range(33, 127)]
    out = ""
    while True:
        out = chars[n % 94] + out
        n //= 94
        if not n:
            return out


def decode_into_vcd(net, results, vcd_path, top: str | None = None,
                    core: str | None = None, *, family: SimFamily) -> dict:
    """Add the decoded traces of ``results`` (the model's cycle results, or plans, one
    per delivery cycle the dump holds, in order) to the VCD at ``vcd_path``, in place.

    Returns ``{signal path: [trace paths]}`` (full dotted paths, as GTKWave names them)
    of every decoded trace added: per wire its message trace, then its phase trace.
    Raises :class:`WaveDecodeError` if the dump's start strobes are not one per cycle.
    """
    from .cocotb_runner import PERIOD_NS
    core = core or net.family
    top = top or f"{core}_harness"
    vcd_path = Path(vcd_path)
    results = list(results)
    with open(vcd_path) as f:  # the header once, then the body for the strobes
        items = _header_items(f)
        vars_, ts = _declarations(items)
        # The harness may sit under a simulator's own top scope (Verilator's TOP).
        prefix = next((p[:-len(f"{top}.clk")] for p in vars_
                       if p == f"{top}.clk" or p.endswith(f".{top}.clk")), None)
        if prefix is None:
            raise WaveDecodeError(f"no {top}.clk in {vcd_path}")
        clk, start = f"{prefix}{top}.clk", f"{prefix}{top}.start"
        strobes = VcdData(ts, vars_, _body_changes(f, vars_, [clk, start]))
    period, D = round(PERIOD_NS * 1e-9 / ts), start_latency(net)
    starts = cycle_starts(strobes, clk, start, period)
    if len(starts) != len(results):
        raise WaveDecodeError(f"{len(starts)} start strobes in the dump, {len(results)} "
                              f"cycles in the model's run")
    ends, inner, signals = traced_signals(net, family=family)
    root = f"{prefix}{top}.{core}"
    used = {v[0] for v in vars_.values()}
    counter = [0]

    def fresh():
        while True:
            ident = "~" + _ident(counter[0])
            counter[0] += 1
            if ident not in used:
                return ident

    new_vars: dict[str, list] = {}
    added: dict[str, list[str]] = {}
    ids: dict[tuple, tuple[str, str]] = {}
    for sig, width in signals.items():
        if f"{root}.{sig}" not in vars_:
            continue  # a signal the simulator did not dump (optimised away)
        scope_path, _, leaf = f"{root}.{sig}".rpartition(".")
        for w in range(width):
            ids[(sig, w)] = pair = (fresh(), fresh())
            new_vars.setdefault(scope_path, []).extend(
                zip(pair, (trace_name(leaf, w), phase_trace_name(leaf, w))))
        added[f"{root}.{sig}"] = [name(f"{root}.{sig}", w) for w in range(width)
                                  for name in (trace_name, phase_trace_name)]

    def events():
        """(time, value lines) in time order: every trace idle at 0, then cycle by
        cycle (each starts and ends idle), so only one cycle is held at a time."""
        yield 0, [f"s{IDLE} {ident}" for pair in ids.values() for ident in pair]
        for e0, res in zip(starts, results):
            at = {}
            for k, labels in cycle_labels(net, res, ends, inner, family=family).items():
                if k not in ids:
                    continue
                for ident, texts in zip(ids[k], zip(*labels)):
                    for t, text in _changes(texts):
                        at.setdefault(e0 + (D + t) * period, []).append(
                            f"s{text} {ident}")
            yield from sorted(at.items())

    _rewrite(vcd_path, items, new_vars, events())
    return added


def _changes(texts):
    """(bit-time, text) wherever a trace's text changes, starting and ending idle (the
    bit-time after the cycle's last)."""
    prev = IDLE
    for t, text in enumerate((*texts, IDLE)):
        if text != prev:
            yield t, text
            prev = text


def _rewrite(vcd_path: Path, items, new_vars: dict, events) -> None:
    """Write the VCD again with ``new_vars`` declared in their scopes and the value
    changes of ``events`` ((time, lines) in time order) merged into the body."""
    out_path = vcd_path.with_name(vcd_path.name + ".tmp")
    nxt = next(events, None)
    with open(vcd_path) as f, open(out_path, "w") as out:
        for _ in _header_lines(f):
            pass
        scope = []
        for kind, payload, item in _walk_header(items):
            if kind == "scope":
                scope.append(payload)
            elif kind == "upscope":
                for ident, name in new_vars.get(".".join(scope), ()):
                    out.write(f"$var string 1 {ident} {name} $end\n")
                scope.pop()
            out.write(" ".join(_readable_var(item) if kind == "var" else item) + "\n")
        for line in f:
            if line.startswith("#"):
                t = int(line[1:])
                while nxt is not None and nxt[0] < t:
                    out.write(f"#{nxt[0]}\n" + "".join(v + "\n" for v in nxt[1]))
                    nxt = next(events, None)
                out.write(line)
                if nxt is not None and nxt[0] == t:
                    out.write("".join(v + "\n" for v in nxt[1]))
                    nxt = next(events, None)
            else:
                out.write(line)
        while nxt is not None:
            out.write(f"#{nxt[0]}\n" + "".join(v + "\n" for v in nxt[1]))
            nxt = next(events, None)
    os.replace(out_path, vcd_path)


def _readable_var(item: list[str]) -> list[str]:
    """A ``$var`` item GTKWave can read: a name with a colon (Verilator writes Yosys's
    ``$auto$verilog_backend.cc:2355:...`` wires as they are; GTKWave 3.3 reports a parse
    error for each and gives up on the dump after a hundred) is written as a Verilog
    escaped name, ``\\<name>``, as Icarus writes it."""
    name = item[4]
    if ":" in name and not name.startswith("\\"):
        return [*item[:4], "\\" + name, *item[5:]]
    return item


def _header_lines(f):
    """Consume the header's lines of an open VCD (through ``$enddefinitions``)."""
    for line in f:
        yield line
        if "$enddefinitions" in line:
            return
