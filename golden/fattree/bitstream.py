"""The fat-tree's message fields (paper, Fig. 2): its encoder and decoder.

A fat-tree node's field is its turn bit followed, in off-line mode, by the decision
bits of every stage of the concentrator the message enters there, each stage's field
MSB first. The framing around the fields (M bit, payload) is the family-agnostic
:mod:`fatnet.golden.bitstream`.
"""

from __future__ import annotations

from ..bitstream import FieldReader, frame, int_to_bits
from .topology import EXT, PORT_L, PORT_R, PORT_U, out_port_for

__all__ = ["encode", "decode", "hop_fields"]


def hop_fields(net, src: int, dst: int, decisions=None) -> list[list[int]]:
    """Per node on the path of (src, dst), the bits it reads: turn bit, decision bits.

    Parameters
    ----------
    net : FatTreeNetwork
    src, dst : int
        Leaf indices or ``EXT``.
    decisions : sequence of tuple of int, optional
        Off-line mode: per hop, the edge index chosen at every stage of the concentrator
        (as :func:`fatnet.golden.fattree.switching.set_switches` computes them).
        Ignored on-line.
    """
    offline = net.spec.mode == "offline"
    fields = []
    for q, hop in enumerate(net.tree.hops(src, dst)):
        bits = [hop.bit]
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
        fields.append(bits)
    return fields


def encode(net, src: int, dst: int, payload: int, decisions=None) -> list[int]:
    """The bit stream a source drives for message (src, dst) (see :func:`hop_fields`)."""
    return frame(hop_fields(net, src, dst, decisions), payload, net.spec.payload_bits)


def decode(net, src: int, bits) -> tuple[int, list[tuple[int, ...]], int]:
    """Read a source stream back: (destination, decisions per hop, payload).

    The walk follows the turn bits from ``src`` exactly as the nodes do.
    """
    reader = FieldReader(bits)
    L = net.L
    decisions: list[tuple[int, ...]] = []
    if src == EXT:
        node, in_port = 0, PORT_U
    else:
        leaf_heap = (1 << L) - 1 + src
        node, in_port = (leaf_heap - 1) // 2, (PORT_L if leaf_heap % 2 == 1 else PORT_R)
    offline = net.spec.mode == "offline"
    dst = None
    while dst is None:
        out_port = out_port_for(in_port, reader.take(1))
        stages = net.cascades[(node, out_port)].stages if offline else ()
        decisions.append(tuple(reader.take(s.decision_width) for s in stages))
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
    return dst, decisions, reader.payload(net.spec.payload_bits)
