"""The delivery-cycle controller, shared by every network top.

A one-clock ``start`` strobe makes the next clock bit-time 0; ``bit_time`` then counts
and ``busy`` stays high for the cycle's ``length`` bit-times; afterwards ``bit_time``
stays at ``length`` (saturates) until the next strobe. The same strobe clears every
switch, so each top wires ``start`` to its switches' ``clear`` itself, directly or
through a *start tree* (:func:`start_tree`): D register stages, so that no net of the
strobe spans the chip (fan-out at most 16 from D = ceil(log16 loads) on). The tree
delays the whole cycle by D clocks (the controller's start comes out of
the tree as well): bit-time 0 is the clock D + 1 after the strobe.
"""

from __future__ import annotations

import math
import re

from amaranth import Signal
from amaranth.lib.wiring import In, Out

from .logic import equals

__all__ = ["add_cycle_controller", "controller_members", "controller_meaning",
           "start_tree", "bit_time_zero", "cleared_when", "keep_start_tree"]

#: The start tree's registers are named ``start_s<stage>_<index>``; the self-testing
#: top's copies of its period's strobes ``strobe<copy>_<strobe>``.
_TREE_Q = re.compile(r"^\s*connect \\Q \\(start_s\d+_\d+|strobe\d+_\w+)\s*$")


def keep_start_tree(text: str) -> str:
    """The RTLIL ``text`` with ``attribute \\keep 1`` on the start tree's flip-flop
    cells (and on the self-testing top's copies of its period's strobes, for the same
    reason). The registers of a stage are identical, and Yosys's ``opt_merge`` would merge
    them back into one register driving one net: it honours ``keep`` on a cell, not on
    the wire Amaranth gives a signal's attribute to. Every RTLIL the generator turns into
    Verilog and every board build's goes through here; the Verilog carries the
    attribute to any later synthesis."""
    if "start_s" not in text and "strobe" not in text:    # nothing to mark
        return text
    lines = text.split("\n")
    marked, cell = [], None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        if stripped.startswith("cell "):
            cell = i
        elif stripped == "end":
            cell = None
        elif cell is not None and _TREE_Q.match(line):
            marked.append(cell)
    for i in reversed(marked):
        indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
        lines.insert(i, f"{indent}attribute \\keep 1")
    return "\n".join(lines)


#: What the controller's members mean, for the manifest ({T}: the cycle length, {D}:
#: the start tree's stages).
MEANING = {
    "start": "strobe: {D1} is bit-time 0 of a delivery cycle",
    "bit_time": "bit-time in the delivery cycle (counts from 0, saturates at {T})",
    "busy": "delivery cycle in progress (bit-times 0 .. {T_1})",
}


def controller_members(length: int) -> dict:
    """The controller's members of a network top's signature, in the order every top
    lists them first: ``start`` (in), ``bit_time`` (out, 0 .. ``length``), ``busy``."""
    return {"start": In(1), "bit_time": Out(range(length + 1)), "busy": Out(1)}


def controller_meaning(name: str, length: int, start_stages: int = 0) -> str | None:
    """What a controller member means (None for another port)."""
    text = MEANING.get(name)
    after = ("the next clock cycle" if not start_stages else
             f"the clock cycle {start_stages + 1} after it (start_latency_clocks = "
             f"{start_stages}, + 1)")
    return None if text is None else text.format(T=length, T_1=length - 1, D1=after)


def bit_time_zero(start_stages: int) -> str:
    """When bit-time 0 is, for a manifest's timing text."""
    if not start_stages:
        return "bit-time 0 is the clock after the start strobe"
    return (f"bit-time 0 is the clock start_latency_clocks + 1 = {start_stages + 1} after "
            f"the start strobe (the strobe passes {start_stages} register stages of the "
            f"start tree, spec.start_stages, before it reaches the switches and the "
            f"controller; the whole cycle, bit_time and busy included, runs that much "
            f"later)")


def cleared_when(start_stages: int, what: str) -> str:
    """Which clock clears every switch (``what``), for a manifest's timing text."""
    if not start_stages:
        return f"the clock of the start strobe clears every {what}"
    return (f"the clock {start_stages} after the start strobe (the clock before bit-time "
            f"0) clears every {what}")


def start_tree(m, start, loads: int, stages: int) -> tuple[list, object]:
    """The start strobe for ``loads`` switches through ``stages`` register stages.

    The fan-out is ``f = ceil(loads^(1/stages))`` (at least 2): the last stage holds one
    register per ``f`` loads, each stage before it one per ``f`` registers of the next,
    down to one register at stage 1, so every switch sees the strobe exactly ``stages``
    clocks late and no register drives more than ``f`` others (``f`` + 1 for the one that
    also drives the controller). Enough stages for ``f`` <= 16: ``ceil(log16(loads))``.
    Every register has its own name, ``start_s<stage>_<i>``, by
    which :func:`keep_start_tree` marks its flip-flop ``keep``: synthesis would
    otherwise merge the identical registers of a stage into one net.

    Returns
    -------
    (list, Value)
        Per load its delayed strobe (``start`` itself when ``stages`` is 0), and the
        delayed strobe for the cycle controller.
    """
    if stages == 0:
        return [start] * loads, start
    f = max(2, math.ceil(loads ** (1 / stages) - 1e-9))
    while f ** stages < loads:        # (float roots can fall short by one)
        f += 1
    counts = [max(1, math.ceil(loads / f))]
    for _ in range(stages - 1):
        counts.insert(0, max(1, math.ceil(counts[0] / f)))
    level = [start]
    for j, count in enumerate(counts, 1):
        nxt = []
        for i in range(count):
            r = Signal(name=f"start_s{j}_{i}", attrs={"keep": 1})
            m.d.sync += r.eq(level[i // f])
            nxt.append(r)
        level = nxt
    return [level[i // f] for i in range(loads)], level[0]


def add_cycle_controller(m, start, bit_time, busy, length: int) -> None:
    """Drive ``bit_time`` (width >= bits of ``length``) and ``busy`` from ``start``.

    Parameters
    ----------
    m : amaranth.Module
    start, bit_time, busy : Signal
        The top's controller members (:class:`EndpointSignature` tops have them all).
    length : int
        Bit-times in a delivery cycle (>= 1).
    """
    if length < 1:
        raise ValueError(f"length must be >= 1, not {length}")
    with m.If(start):
        m.d.sync += [bit_time.eq(0), busy.eq(1)]
    with m.Elif(busy):
        m.d.sync += bit_time.eq(bit_time + 1)
        last = length - 1
        if last.bit_length() < len(bit_time):
            # a length of 2^k: Yosys would print bit_time == last with a constant
            # narrower than bit_time, which Verilator's lint reports (WIDTHEXPAND), so
            # the comparison is written as a reduction over bit_time's width
            at_last = equals(bit_time, last)
        else:
            at_last = bit_time == last
        with m.If(at_last):
            m.d.sync += busy.eq(0)
