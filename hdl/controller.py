"""The delivery-cycle controller, shared by every network top.

A one-clock ``start`` strobe makes the next clock bit-time 0; ``bit_time`` then counts
and ``busy`` stays high for the cycle's ``length`` bit-times; afterwards ``bit_time``
stays at ``length`` (saturates) until the next strobe. The same strobe clears every
switch, so each top wires ``start`` to its switches' ``clear`` itself.
"""

from __future__ import annotations

from amaranth import Const
from amaranth.lib.wiring import In, Out

__all__ = ["add_cycle_controller", "controller_members", "controller_meaning"]

#: What the controller's members mean, for the manifest ({T}: the cycle length).
MEANING = {
    "start": "strobe: the next clock cycle is bit-time 0 of a delivery cycle",
    "bit_time": "bit-time in the delivery cycle (counts from 0, saturates at {T})",
    "busy": "delivery cycle in progress (bit-times 0 .. {T_1})",
}


def controller_members(length: int) -> dict:
    """The controller's members of a network top's signature, in the order every top
    lists them first: ``start`` (in), ``bit_time`` (out, 0 .. ``length``), ``busy``."""
    return {"start": In(1), "bit_time": Out(range(length + 1)), "busy": Out(1)}


def controller_meaning(name: str, length: int) -> str | None:
    """What a controller member means (None for another port)."""
    text = MEANING.get(name)
    return None if text is None else text.format(T=length, T_1=length - 1)


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
            at_last = ~(bit_time ^ Const(last, len(bit_time))).any()
        else:
            at_last = bit_time == last
        with m.If(at_last):
            m.d.sync += busy.eq(0)
