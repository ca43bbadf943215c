"""Enumeration (Kuszmaul 1990, Definition 4 and Theorem 2) on the complete butterfly.

The enumeration of a set ``S`` of nodes (Definition 4) gives the ``n``-th smallest member
the number ``n`` (1-based): ``E_S(x) = #{y in S : y <= x}`` for ``x`` in ``S``.

**Subcubes.** A subcube is named here by the mask of its *fixed* address bits: the
subcube of node ``x`` for mask ``F`` is ``{y : y & F == x & F}``; its free bits
``~F & (2**k - 1)`` vary. Enumerating *within* subcubes means enumerating ``S`` ∩ each
subcube separately, nodes ordered by their integer value (which, inside one subcube, is
the order of their free bits read as a number). ``fixed_mask = 0`` is the whole cube.
Both of the paper's readings of "i-subcube" are masks: Definition 5's (same in bits
``0 .. i-1``) is ``low_bits(i)``, the one the Theorem 2 proof needs (the ``(k - r)``-subcube
of rank ``r`` varies in bits ``0 .. r-1``) is ``high_bits(k, r)``.

**The recurrences, corrected** (``reading="corrected"``, the default; ranks ``0 .. k``,
rank ``j >= 1`` combines across dimension ``j - 1``)::

    t[0, i] = s(i)                       o[0, i] = 0
    t[j, i] = t[j-1, i] + t[j-1, i ^ 2**(j-1)]
    o[j, i] = o[j-1, i]                            if bit j-1 of i is 0
    o[j, i] = o[j-1, i] + t[j-1, i ^ 2**(j-1)]     if bit j-1 of i is 1

Invariant: ``t[r, i]`` counts the members of the group ``G_r(i) = {y : y >> r == i >> r}``
(the ``2**r`` nodes that agree with ``i`` in bits ``r .. k-1``) and ``o[r, i]`` counts the
members ``y`` of ``G_r(i)`` with ``y < i`` (strictly: an *offset*, 0-based). So
``E_S(i) = o[k, i] + 1`` for ``i`` in ``S``, and ``o[k, i]`` is the 0-based index a packing
sends ``i``'s message to. A rank ``j`` whose dimension ``j - 1`` is fixed (in
``fixed_mask``) passes ``t`` and ``o`` on unchanged, which restricts the groups to the
subcubes.

**The recurrences as printed** (``reading="literal"``): ranks ``0 .. k - 1``, rank
``j >= 1`` combines across ``i ^ 2**j`` (so dimension 0 is never combined and there is
no rank for the last dimension), ``o[0, i] = 0``, and the result is read, as the printed
invariant says (``o`` counts ``j <= i``, i.e. it *is* the enumeration), as
``E(i) = o[k-1, i]``. docs/papers.md (Errata) says what this gets wrong.

**Bit-serial pipeline** (:func:`enumerate_bitserial`, :func:`enumeration_timing`): every
value travels LSB first on ``W = k + 1`` bits (``t[k, i]`` can be ``2**k``). Rank 0
presents bit ``l`` of ``t[0]`` (``s`` then zeros) and of ``o[0]`` (zeros) during bit-time
``l``. Rank ``j >= 1`` has, per node, two serial adders (one for ``t``, one for ``o``),
each a full adder with a carry flip-flop (cleared for bit 0) and a registered sum output:
during bit-time ``j - 1 + l`` it adds bit ``l`` of its inputs (rank ``j - 1``'s
registers, its own and its partner's across dimension ``j - 1``) and its carry; the sum
bit is in rank ``j``'s register during bit-time ``j + l``. So **bit ``l`` of rank ``j``
appears at bit-time ``j + l``**, the last bit of rank ``k`` at bit-time ``2k``, and the
whole enumeration of the k-cube takes ``2k + 1`` bit-times (bit-times ``0 .. 2k``). On
the cube, node ``i`` holds every rank's adders for column ``i`` (``2k`` serial adders);
dimension ``d``'s wire carries ``t[d, i]`` LSB first during bit-times ``d .. d + W - 1``.
A fixed dimension's rank is still registered (it only adds zero), so the timing does not
depend on ``fixed_mask``.

Pure Python + numpy; vectorised over nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..checks import is_integer
from ..errors import ParameterError
from .cube import check_dimension

__all__ = ["READINGS", "low_bits", "high_bits", "subcube_base", "subcube_node",
           "check_members", "recurrences", "enumerate_set", "enumerate_within",
           "offsets_within", "totals_within", "enumerate_direct", "EnumerationTiming",
           "enumeration_timing", "enumerate_bitserial"]

#: The readings of the printed recurrences :func:`recurrences` accepts.
READINGS = ("corrected", "literal")


def low_bits(i: int) -> int:
    """The mask of bits ``0 .. i-1``: Definition 5's ``i``-subcube (same in those bits)."""
    return (1 << int(i)) - 1


def high_bits(k: int, r: int) -> int:
    """The mask of bits ``r .. k-1``: the subcube of ``2**r`` nodes that vary in bits
    ``0 .. r-1`` (the Theorem 2 proof's ``(k - r)``-subcube; an interval of nodes)."""
    return ((1 << int(k)) - 1) ^ ((1 << int(r)) - 1)


def _check_mask(k: int, fixed_mask) -> int:
    if not is_integer(fixed_mask) or not (
            0 <= int(fixed_mask) < (1 << k)):
        raise ParameterError(f"fixed_mask must be an integer in [0, {(1 << k) - 1}] "
                             f"(a mask of the k = {k} address bits), got {fixed_mask!r}")
    return int(fixed_mask)


def subcube_base(k: int, fixed_mask: int, x):
    """The lowest node of the subcube containing ``x`` (free bits cleared): Definition
    6's ``l_x`` for the subcube with fixed bits ``fixed_mask``."""
    return np.asarray(x, dtype=np.int64) & int(fixed_mask)


def subcube_node(k: int, fixed_mask: int, x, index):
    """The ``index``-th (0-based) node, in increasing order, of the subcube containing
    ``x``: ``index``'s bits deposited into the free bit positions, LSB first (a "pdep").
    When the free bits are the low bits this is ``subcube_base + index``; otherwise the
    subcube is not an interval and adding ``index`` to its base would leave it."""
    k = check_dimension(k)
    fixed_mask = _check_mask(k, fixed_mask)
    out = np.asarray(x, dtype=np.int64) & fixed_mask
    index = np.asarray(index, dtype=np.int64)
    src_bit = 0
    for d in range(k):
        if not (fixed_mask >> d) & 1:
            out = out | (((index >> src_bit) & 1) << d)
            src_bit += 1
    return out


def check_members(k: int, members) -> np.ndarray:
    """``members`` as a bool array whose last axis has length ``2**k`` (one entry per
    node; leading axes, if any, are independent sets enumerated at once)."""
    k = check_dimension(k)
    m = np.asarray(members)
    if m.ndim < 1 or m.shape[-1] != (1 << k):
        raise ParameterError(f"members must be a bool array of length 2**k = {1 << k} "
                             f"(per set), got shape {m.shape}")
    if m.dtype != bool:
        if not np.isin(m, (0, 1)).all():
            raise ParameterError("members must be 0/1 or bool, one entry per node")
        m = m.astype(bool)
    return m


def recurrences(k: int, members, *, reading: str = "corrected",
                fixed_mask: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(t, o)``, each of shape ``(ranks, *batch, 2**k)``: the recurrences computed rank
    by rank (``ranks = k + 1`` corrected, ``k`` literal; ``t[r]`` is rank ``r``).
    ``members`` has shape ``(*batch, 2**k)``. ``reading`` is ``"corrected"`` or
    ``"literal"`` (module docstring); a rank whose dimension is in ``fixed_mask`` passes
    its values on unchanged."""
    k = check_dimension(k)
    s = check_members(k, members)
    fixed_mask = _check_mask(k, fixed_mask)
    if reading not in READINGS:
        raise ParameterError(f"reading must be one of {', '.join(READINGS)}, got {reading!r}")
    n = 1 << k
    i = np.arange(n, dtype=np.int64)
    if reading == "corrected":
        dims = list(range(k))                    # rank j combines dimension j - 1
    else:
        dims = list(range(1, k))                 # rank j combines "i xor 2**j", j = 1..k-1
    t = np.zeros((len(dims) + 1,) + s.shape, dtype=np.int64)
    o = np.zeros_like(t)
    t[0] = s
    for j, d in enumerate(dims, start=1):
        if (fixed_mask >> d) & 1:
            t[j], o[j] = t[j - 1], o[j - 1]
            continue
        across = t[j - 1][..., i ^ (1 << d)]     # the partner's t, across dimension d
        t[j] = t[j - 1] + across
        high = (i >> d) & 1 == 1                 # i > i xor 2**d
        o[j] = o[j - 1] + np.where(high, across, 0)
    return t, o


def enumerate_within(k: int, members, fixed_mask: int = 0, *,
                     reading: str = "corrected") -> np.ndarray:
    """``E`` within each subcube (fixed bits ``fixed_mask``): for a member ``x``, its
    1-based rank among the members of its subcube in increasing node order; 0 for a
    non-member. Int64 array shaped like ``members`` (``(*batch, 2**k)``).
    ``reading="literal"`` gives what the printed recurrences give (wrong; docs/papers.md,
    Errata)."""
    s = check_members(k, members)
    _, o = recurrences(k, s, reading=reading, fixed_mask=fixed_mask)
    e = o[-1] + 1 if reading == "corrected" else o[-1]
    return np.where(s, e, 0)


def enumerate_set(k: int, members, *, reading: str = "corrected") -> np.ndarray:
    """``E_S`` over the whole cube (Definition 4): ``enumerate_within(k, members, 0)``."""
    return enumerate_within(k, members, 0, reading=reading)


def offsets_within(k: int, members, fixed_mask: int = 0) -> np.ndarray:
    """For every node ``x`` (member or not), the number of members of its subcube below
    ``x``: ``o[k, x]``. For a member this is ``E - 1``, the 0-based slot a packing sends
    it to (``subcube_node(k, fixed_mask, x, offset)``). ``members`` may be a batch
    ``(*batch, 2**k)``; the result has its shape."""
    _, o = recurrences(k, members, fixed_mask=fixed_mask)
    return o[-1]


def totals_within(k: int, members, fixed_mask: int = 0) -> np.ndarray:
    """For every node, the number of members in its subcube: ``t[k, x]`` (batches as
    :func:`offsets_within`)."""
    t, _ = recurrences(k, members, fixed_mask=fixed_mask)
    return t[-1]


def enumerate_direct(k: int, members, fixed_mask: int = 0) -> np.ndarray:
    """``E`` within each subcube by direct counting (``O(4**k)``; a reference for
    tests and small cubes; one set, not a batch): for a member ``x``,
    ``#{y member : y & F == x & F, y <= x}``."""
    k = check_dimension(k)
    s = check_members(k, members)
    fixed_mask = _check_mask(k, fixed_mask)
    nodes = np.arange(1 << k, dtype=np.int64)
    same = (nodes[:, None] & fixed_mask) == (nodes[None, :] & fixed_mask)
    below = nodes[None, :] <= nodes[:, None]
    return np.where(s, (same & below & s[None, :]).sum(axis=1), 0).astype(np.int64)


@dataclass(frozen=True)
class EnumerationTiming:
    """The bit-serial enumeration's bit-times on the k-cube (module docstring).

    ``width``: bits per value (``k + 1``); ``ranks``: ``k + 1`` (rank 0 the inputs);
    bit ``l`` of rank ``j`` is in rank ``j``'s register during bit-time ``j + l``;
    ``first_result`` / ``last_result``: bit-times of rank ``k``'s bit 0 and last bit;
    ``total``: bit-times from the first input bit to the last result bit inclusive."""

    k: int
    width: int
    ranks: int
    first_result: int
    last_result: int
    total: int
    serial_adders_per_node: int

    def bit_time(self, rank: int, bit: int) -> int:
        """The bit-time during which bit ``bit`` of rank ``rank``'s ``t`` and ``o`` are in
        its registers (and rank ``rank``'s ``t`` is on dimension ``rank``'s wire)."""
        if not (0 <= rank < self.ranks and 0 <= bit < self.width):
            raise ParameterError(f"rank must be in [0, {self.ranks - 1}] and bit in "
                                 f"[0, {self.width - 1}], got rank {rank}, bit {bit}")
        return rank + bit


def enumeration_timing(k: int) -> EnumerationTiming:
    """The bit-times of the pipelined enumeration of the k-cube: bit ``l`` of rank ``j`` at
    bit-time ``j + l`` (``l = 0 .. k``, ``j = 0 .. k``); results (rank ``k``) from bit-time
    ``k`` to ``2k``; ``2k + 1`` bit-times in all; ``2k`` serial adders per node."""
    k = check_dimension(k)
    w = k + 1
    return EnumerationTiming(k=k, width=w, ranks=k + 1, first_result=k,
                             last_result=k + w - 1, total=k + w, serial_adders_per_node=2 * k)


def enumerate_bitserial(k: int, members, fixed_mask: int = 0, *, dims=None) -> dict:
    """Run the corrected recurrences bit-serially, bit-time by bit-time, with a full adder
    and a carry flip-flop per adder (module docstring). Returns a dict:

    * ``E``: the enumeration within the subcubes (as :func:`enumerate_within`);
    * ``t``, ``o``: shape ``(ranks, 2**k)``, every rank's values reassembled from its bits;
    * ``bit_times``: shape ``(ranks, W)``, the bit-time at which each rank's register held
      each bit (observed, for checking against :func:`enumeration_timing`);
    * ``total``: the number of bit-times run (``2 (ranks - 1) + 1``).

    ``dims``: by default there is a rank for every dimension ``0 .. k - 1`` (``k + 1``
    ranks, ``W = k + 1``; a dimension in ``fixed_mask`` adds zero), as in Theorem 2.
    Given a sequence of dimensions, rank ``j`` combines ``dims[j - 1]`` and there are no
    other ranks: the enumeration within the subcubes spanned by ``dims`` (every other bit
    fixed; ``fixed_mask`` must then be 0; a subcube's nodes counted in the order of their
    bits ``dims[0]`` (least significant), ``dims[1]``, ..., which is node order when
    ``dims`` increase), ``len(dims) + 1`` ranks of
    ``W = len(dims) + 1`` bits, ``2 len(dims) + 1`` bit-times. Algorithm 2's cycle-exact
    model enumerates this way, over the free dimensions of an iteration's subcubes only.
    """
    k = check_dimension(k)
    s = check_members(k, members)
    fixed_mask = _check_mask(k, fixed_mask)
    if dims is None:
        rank_dims = list(range(k))
    else:
        rank_dims = [int(d) for d in dims]
        if fixed_mask or len(set(rank_dims)) != len(rank_dims) or any(
                not 0 <= d < k for d in rank_dims):
            raise ParameterError(f"dims must be distinct dimensions in [0, {k - 1}] (with "
                                 f"fixed_mask 0), got {tuple(dims)!r}")
        fixed_mask = ((1 << k) - 1) & ~sum(1 << d for d in rank_dims)
    n = 1 << k
    ranks = len(rank_dims) + 1
    w = ranks
    nodes = np.arange(n, dtype=np.int64)
    t_reg = np.zeros((ranks, n), dtype=np.int64)   # registered sum bits, one per rank
    o_reg = np.zeros((ranks, n), dtype=np.int64)
    t_carry = np.zeros((ranks, n), dtype=np.int64)  # carry flip-flops (rank 0 unused)
    o_carry = np.zeros((ranks, n), dtype=np.int64)
    t_val = np.zeros((ranks, n), dtype=np.int64)   # reassembled values, for the caller
    o_val = np.zeros((ranks, n), dtype=np.int64)
    seen = np.full((ranks, w), -1, dtype=np.int64)
    total = ranks - 1 + w
    for tau in range(total):
        new_t = np.zeros_like(t_reg)
        new_o = np.zeros_like(o_reg)
        # rank 0: the inputs, bit tau (s is a one-bit number)
        if tau < w:
            new_t[0] = s.astype(np.int64) if tau == 0 else 0
        for j in range(1, ranks):
            bit = tau - j                           # the bit rank j's register gets now
            if not (0 <= bit < w):
                continue
            d = rank_dims[j - 1]
            if bit == 0:                            # first bit: clear the carries
                t_carry[j] = 0
                o_carry[j] = 0
            a_t, a_o = t_reg[j - 1], o_reg[j - 1]   # rank j-1's bit `bit` (bit-time tau-1)
            if (fixed_mask >> d) & 1:
                b_t = np.zeros(n, dtype=np.int64)
                b_o = b_t
            else:
                b_t = a_t[nodes ^ (1 << d)]         # the partner's t, across dimension d
                b_o = np.where((nodes >> d) & 1 == 1, b_t, 0)
            st = a_t + b_t + t_carry[j]
            so = a_o + b_o + o_carry[j]
            new_t[j], t_carry[j] = st & 1, st >> 1
            new_o[j], o_carry[j] = so & 1, so >> 1
        t_reg, o_reg = new_t, new_o
        for j in range(ranks):                      # observe the registers at bit-time tau
            bit = tau - j
            if 0 <= bit < w:
                t_val[j] |= t_reg[j] << bit
                o_val[j] |= o_reg[j] << bit
                seen[j, bit] = tau
    e = np.where(s, o_val[-1] + 1, 0)
    return {"E": e, "t": t_val, "o": o_val, "bit_times": seen, "total": total}

