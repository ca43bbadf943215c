"""The packed harness's memory rows (:mod:`fatnet.hdl.harness`): a delivery cycle's
packed vector of ``T`` words split into rows of ``k`` words, and joined back.

Pure Python without imports, so that the cocotb test, which runs inside the simulator,
starts fast.
"""

__all__ = ["split_rows", "join_rows", "split_cycles"]


def split_rows(vector: int, word_width: int, k: int, rows: int) -> list[int]:
    """A cycle's packed vector (word ``t`` at bit ``t * word_width``) as the packed
    harness's memory rows of ``k`` words each (:mod:`fatnet.hdl.harness`)."""
    bits = k * word_width
    mask = (1 << bits) - 1
    return [(vector >> (r * bits)) & mask for r in range(rows)]


def join_rows(rows: list[int], word_width: int, k: int, length: int) -> int:
    """The packed vector of ``length`` words in memory rows (the inverse of
    :func:`split_rows`; words past ``length - 1`` in the last row are dropped)."""
    bits = k * word_width
    out = 0
    for r in reversed(rows):
        out = (out << bits) | r
    return out & ((1 << (length * word_width)) - 1)


def split_cycles(vector: int, word_width: int, cycles: int, length: int) -> list[int]:
    """A batch's packed stream of ``cycles`` cycles of ``length`` words (word ``c *
    length + t`` at bit ``(c * length + t) * word_width``) as one packed vector per
    cycle (:mod:`fatnet.hdl.checker`)."""
    bits = length * word_width
    mask = (1 << bits) - 1
    return [(vector >> (c * bits)) & mask for c in range(cycles)]
