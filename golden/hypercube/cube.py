"""The k-dimensional hypercube and its conventions (Kuszmaul 1990, Sec. II).

* Nodes are the integers ``0 .. 2**k - 1``; dimension ``i`` (``0 .. k - 1``) joins node
  ``x`` and node ``x ^ (1 << i)``: address bit ``i`` (bit 0 the least significant) is
  dimension ``i``'s.
* A routing is a partial map source -> destination, given as two integer arrays ``src``
  and ``dst`` of equal length (one message per entry). Algorithms 1 and 2 take partial
  permutations (no source and no destination twice); the store-and-forward baselines
  take any map (several messages per source or destination: H-relations).
* A message's relative address is ``src ^ dst``: bit ``i`` set means it must cross
  dimension ``i``. Crossing dimension ``i`` clears that bit.

Everything here is plain data (numpy arrays, ints); the model never imports hardware.
"""

from __future__ import annotations

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError

__all__ = ["MIN_DIMENSION", "MAX_DIMENSION", "check_dimension", "check_routing", "neighbour",
           "relative", "hamming"]

#: The dimensions the model accepts (the command line's range).
MIN_DIMENSION, MAX_DIMENSION = 1, 20


def check_dimension(k) -> int:
    """``k`` as an int, or one line naming the parameter and the accepted range."""
    if not is_integer(k) or not (
            MIN_DIMENSION <= int(k) <= MAX_DIMENSION):
        raise ParameterError(f"dimension must be an integer in [{MIN_DIMENSION}, "
                             f"{MAX_DIMENSION}], got {k!r}")
    return int(k)


def check_routing(k: int, src, dst, *, injective: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(src, dst)`` as int64 arrays, checked: equal length, every node in
    ``[0, 2**k - 1]``, and (``injective``) no source and no destination twice, which
    Algorithms 1 and 2 need. A bad routing is one line naming what repeats or is out of
    range."""
    k = check_dimension(k)
    src = np.asarray(src, dtype=np.int64).reshape(-1)
    dst = np.asarray(dst, dtype=np.int64).reshape(-1)
    if src.shape != dst.shape:
        raise ParameterError(f"routing must give one destination per source: "
                             f"{src.size} sources, {dst.size} destinations")
    n = 1 << k
    for what, arr in (("source", src), ("destination", dst)):
        bad = np.flatnonzero((arr < 0) | (arr >= n))
        if bad.size:
            m = int(bad[0])
            raise ParameterError(f"message {m}: {what} must be a node in [0, {n - 1}], "
                                 f"got {int(arr[m])}")
    if injective:
        for what, arr in (("source", src), ("destination", dst)):
            values, first, counts = np.unique(arr, return_index=True, return_counts=True)
            twice = np.flatnonzero(counts > 1)
            if twice.size:
                node = int(values[twice[0]])
                ms = np.flatnonzero(arr == node)[:2].tolist()
                raise ParameterError(
                    f"routing must be a partial permutation: {what} {node} repeats "
                    f"(messages {ms[0]} and {ms[1]})")
    return src, dst


def neighbour(x, i: int):
    """The node(s) across dimension ``i`` from ``x`` (int or array)."""
    return x ^ (1 << i)


def relative(src, dst):
    """Relative addresses: bit ``i`` set where the message must cross dimension ``i``."""
    return np.bitwise_xor(src, dst)


def hamming(src, dst) -> np.ndarray:
    """Dimensions each message must cross (its distance alone, in store-and-forward
    steps)."""
    r = np.asarray(relative(src, dst), dtype=np.uint64)
    out = np.zeros(r.shape, dtype=np.int64)
    while r.any():
        out += (r & np.uint64(1)).astype(np.int64)
        r >>= np.uint64(1)
    return out


class Hypercube:
    """The k-cube as the golden network of ``fatnet <verb> hypercube`` (a description,
    not a model run): ``k``, ``nodes = 2**k``, ``links`` (undirected, ``k * 2**(k-1)``),
    ``directed_links`` (``k * 2**k``) and ``family = "hypercube"``. The hardware's
    network, with its ``cycle_length``, is the subclass
    :class:`~fatnet.golden.hypercube.circuit.HypercubeCircuit`."""

    family = "hypercube"

    def __init__(self, k):
        self.k = check_dimension(k)

    def __repr__(self):
        return f"Hypercube(k={self.k})"

    def __eq__(self, other):
        return isinstance(other, Hypercube) and other.k == self.k

    def __hash__(self):
        return hash(("hypercube", self.k))

    @property
    def nodes(self) -> int:
        return 1 << self.k

    @property
    def links(self) -> int:
        return self.k << (self.k - 1)

    @property
    def directed_links(self) -> int:
        return self.k << self.k


__all__ += ["Hypercube"]
