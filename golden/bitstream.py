"""The bit-serial message format (paper, Fig. 2) and its encoder and decoder.

A message's stream, one bit per bit-time on one wire, starting at bit-time 0 of a
delivery cycle::

    M=1 | per node on the path: turn bit, then (off-line mode) the decision bits of
          every stage of the concentrator it enters there, each stage's field MSB first
        | payload, payload_bits bits, MSB first

Each node consumes its turn bit and decision bits and puts a fresh M bit in the slot of
the last bit it consumed, so the stream that leaves a node is ``1`` followed by the rest,
and the destination receives ``1`` followed by the payload. An idle wire carries 0.
The hardware testbenches drive and check streams made by these same functions.
"""

from __future__ import annotations

from .errors import FatnetInputError
from .fattree import EXT, PORT_L, PORT_R, PORT_U, out_port_for

__all__ = ["encode", "decode", "decode_delivered", "int_to_bits", "bits_to_int",
           "StreamError"]


class StreamError(FatnetInputError):
    """A bit stream that is not a well-formed message for this network."""


def int_to_bits(value: int, width: int) -> list[int]:
    """``width`` bits of ``value``, MSB first."""
    if value < 0 or value >> width:
        raise ValueError(f"value {value} does not fit in {width} bits")
    return [(value >> (width - 1 - i)) & 1 for i in range(width)]


def bits_to_int(bits) -> int:
    v = 0
    for b in bits:
        v = (v << 1) | int(b)
    return v


def encode(net, src: int, dst: int, payload: int, decisions=None) -> list[int]:
    """The bit stream a source drives for message (src, dst).

    Parameters
    ----------
    net : FatTreeNetwork
    src, dst : int
        Leaf indices or ``EXT``.
    payload : int
        ``net.spec.payload_bits`` bits of data.
    decisions : sequence of tuple of int, optional
        Off-line mode: per hop, the edge index chosen at every stage of the concentrator
        (as :func:`fatnet.golden.switching.set_switches` computes them). Ignored on-line.
    """
    hops = net.tree.hops(src, dst)
    bits = [1]
    offline = net.spec.mode == "offline"
    for q, hop in enumerate(hops):
        bits.append(hop.bit)
        if offline:
            stages = net.cascades[(hop.node, hop.out_port)].stages
            if stages and decisions is None:
                raise ValueError("off-line mode needs the decision bits of every hop")
            chosen = decisions[q] if stages else ()
            if len(chosen) != len(stages):
                raise ValueError(f"hop {q}: {len(stages)} stage decisions needed, "
                                 f"got {len(chosen)}")
            for stage, edge in zip(stages, chosen):
                bits += int_to_bits(edge, stage.decision_width)
    bits += int_to_bits(payload, net.spec.payload_bits)
    return bits


def decode(net, src: int, bits) -> tuple[int, list[tuple[int, ...]], int]:
    """Read a source stream back: (destination, decisions per hop, payload).

    The walk follows the turn bits from ``src`` exactly as the nodes do.
    """
    bits = [int(b) for b in bits]
    P = net.spec.payload_bits
    L = net.L
    if not bits or bits[0] != 1:
        raise StreamError("stream does not start with an M bit of 1")
    pos = 1

    def take(width: int) -> int:
        nonlocal pos
        if pos + width > len(bits):
            raise StreamError(f"stream ends at bit {len(bits)} inside its header")
        v = bits_to_int(bits[pos:pos + width])
        pos += width
        return v

    decisions: list[tuple[int, ...]] = []
    if src == EXT:
        node, in_port = 0, PORT_U
    else:
        leaf_heap = (1 << L) - 1 + src
        node, in_port = (leaf_heap - 1) // 2, (PORT_L if leaf_heap % 2 == 1 else PORT_R)
    offline = net.spec.mode == "offline"
    dst = None
    while dst is None:
        out_port = out_port_for(in_port, take(1))
        stages = net.cascades[(node, out_port)].stages if offline else ()
        decisions.append(tuple(take(s.decision_width) for s in stages))
        if out_port == PORT_U:
            if node == 0:
                dst = EXT
            else:
                in_port = PORT_L if node % 2 == 1 else PORT_R
                node = (node - 1) // 2
        else:
            child = 2 * node + (1 if out_port == PORT_L else 2)
            if child >= (1 << L) - 1:
                dst = child - ((1 << L) - 1)
            else:
                node, in_port = child, PORT_U
    payload = take(P)
    if pos != len(bits):
        raise StreamError(f"stream has {len(bits) - pos} bits after its payload")
    return dst, decisions, payload


def decode_delivered(net, bits) -> int:
    """The payload of a stream as it arrives at its destination (M bit, then payload)."""
    bits = [int(b) for b in bits]
    if len(bits) != 1 + net.spec.payload_bits or bits[0] != 1:
        raise StreamError(f"a delivered stream is 1 M bit and {net.spec.payload_bits} "
                          f"payload bits, got {len(bits)} bits starting {bits[:1]}")
    return bits_to_int(bits[1:])
