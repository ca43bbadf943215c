"""Bit-serial stream framing, shared by every network family.

A message's stream, one bit per bit-time on one wire, starting at bit-time 0 of a
delivery cycle::

    M=1 | one field per switch on the path (the bits that switch reads), MSB first
        | payload, payload_bits bits, MSB first

Each switch consumes its field and puts a fresh M bit in the slot of the last bit it
consumed, so the stream that leaves a switch is ``1`` followed by the rest, and the
destination receives ``1`` followed by the payload. An idle wire carries 0. What a
field holds is the family's business (a fat-tree node reads a turn bit and, off-line,
decision bits; a butterfly switch reads one address bit); :func:`frame` and
:class:`FieldReader` are the one encoder and reader of the framing, and the hardware
testbenches drive and check streams made by them.
"""

from __future__ import annotations

import numpy as np

from .errors import FatnetInputError

__all__ = ["frame", "FieldReader", "decode_delivered", "int_to_bits", "bits_to_int",
           "bits_array", "StreamError"]


class StreamError(FatnetInputError):
    """A bit stream that is not a well-formed message for this network."""


def int_to_bits(value: int, width: int) -> list[int]:
    """``width`` bits of ``value``, MSB first."""
    if value < 0 or value >> width:
        raise ValueError(f"value {value} does not fit in {width} bits")
    return [(value >> (width - 1 - i)) & 1 for i in range(width)]


def bits_array(values, width: int) -> np.ndarray:
    """:func:`int_to_bits` of many values at once: an int64 array ``(len(values),
    width)``, MSB first (numpy shifts up to 62 bits, Python integers beyond)."""
    if width <= 62:
        column = np.asarray(values, dtype=np.int64).reshape(-1, 1)
        return (column >> np.arange(width - 1, -1, -1, dtype=np.int64)) & 1
    return np.array([int_to_bits(int(v), width) for v in values],
                    dtype=np.int64).reshape(len(values), width)


def bits_to_int(bits) -> int:
    v = 0
    for b in bits:
        v = (v << 1) | int(b)
    return v


def frame(fields, payload: int, payload_bits: int) -> list[int]:
    """A source stream: the M bit, every switch's field in path order, the payload.

    Parameters
    ----------
    fields : iterable of sequence of int
        Per switch on the path, the bits it reads (MSB first).
    payload : int
        ``payload_bits`` bits of data.
    """
    bits = [1]
    for f in fields:
        bits += [int(b) for b in f]
    return bits + int_to_bits(payload, payload_bits)


class FieldReader:
    """Reads a source stream back field by field, as the switches on its path do.

    Parameters
    ----------
    bits : sequence of int
        The whole stream, M bit first; a stream that does not start with 1 is refused.
    """

    def __init__(self, bits):
        self.bits = [int(b) for b in bits]
        if not self.bits or self.bits[0] != 1:
            raise StreamError("stream does not start with an M bit of 1")
        self.pos = 1

    def take(self, width: int) -> int:
        """The next ``width`` bits as an integer (MSB first)."""
        if self.pos + width > len(self.bits):
            raise StreamError(f"stream ends at bit {len(self.bits)} inside its header")
        v = bits_to_int(self.bits[self.pos:self.pos + width])
        self.pos += width
        return v

    def payload(self, payload_bits: int) -> int:
        """The payload, which must end the stream."""
        v = self.take(payload_bits)
        if self.pos != len(self.bits):
            raise StreamError(f"stream has {len(self.bits) - self.pos} bits after its "
                              f"payload")
        return v


def decode_delivered(payload_bits: int, bits) -> int:
    """The payload of a stream as it arrives at its destination (M bit, then
    ``payload_bits`` payload bits)."""
    bits = [int(b) for b in bits]
    if len(bits) != 1 + payload_bits or bits[0] != 1:
        raise StreamError(f"a delivered stream is 1 M bit and {payload_bits} "
                          f"payload bits, got {len(bits)} bits starting {bits[:1]}")
    return bits_to_int(bits[1:])
