"""The enumeration's serial adders (Kuszmaul 1990, Definition 4 and Theorem 2), as the
golden :func:`fatnet.golden.hypercube.enumeration.enumerate_bitserial` runs them.

:class:`Enumerator` is one rank ``j >= 1`` at one node ``x``: two serial adders, one for
``t`` and one for ``o``, LSB first, each a full adder with a carry flip-flop (cleared for
bit 0) and a registered sum. Rank ``j`` combines dimension ``d``: it adds its own rank
``j - 1`` values and the partner's ``t`` across dimension ``d`` (to ``o`` only at a node
whose bit ``d`` is 1: the partner is below it). A fixed dimension adds zero.

:class:`EnumerationArray` wires a whole k-cube: per node a rank-0 register (the member
flag during bit 0, then zeros) and one :class:`Enumerator` per dimension of ``dims`` in
order, rank ``j`` taking rank ``j - 1``'s registers (its own and the partner's across
``dims[j - 1]``). Bit ``l`` of rank ``j`` is in rank ``j``'s registers during bit-time
``j + l`` after the start strobe, and the last rank's ``o`` is each node's rank among the
members of its subcube (spanned by ``dims``) below it: ``2 len(dims) + 1`` bit-times for
``len(dims) + 1``-bit values, the model's timing.
"""

from __future__ import annotations

from amaranth import Const, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

__all__ = ["Enumerator", "EnumerationArray"]


class Enumerator(wiring.Component):
    """One rank of the enumeration at one node: the ``t`` and ``o`` serial adders.

    Parameters
    ----------
    high : bool or None
        The node's bit of the rank's dimension: the partner's ``t`` is added to ``o``
        only when it is 1. None: it is the input ``high``.

    Members
    -------
    high : ``In(1)``
        Only with ``high=None``: the node's bit of the rank's dimension.
    first : ``In(1)``
        The inputs carry bit 0 this bit-time: the carries start from 0.
    fixed : ``In(1)``
        The rank's dimension is fixed: add nothing (the values pass on, registered).
    t_in, o_in : ``In(1)``
        This node's rank ``j - 1`` values, one bit per bit-time, LSB first.
    t_across : ``In(1)``
        The partner's rank ``j - 1`` ``t``, across the rank's dimension.
    t, o : ``Out(1)``
        This rank's values (registered sums), one bit-time after their inputs.
    first_out : ``Out(1)``
        ``first``, registered: the next rank's ``first``.

    Raises
    ------
    ValueError
        If ``high`` is not a bool.
    """

    def __new__(cls, high):
        if high is not None and not isinstance(high, bool):
            raise ValueError(f"high must be a bool or None, not {high!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, high):
        self._high = high
        super().__init__({
            **({"high": In(1)} if high is None else {}),
            "first": In(1), "fixed": In(1), "t_in": In(1), "o_in": In(1),
            "t_across": In(1), "t": Out(1), "o": Out(1), "first_out": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        t_carry = Signal(name="t_carry")
        o_carry = Signal(name="o_carry")
        b_t = Signal(name="b_t")
        b_o = Signal(name="b_o")
        ct = Signal(name="ct")
        co = Signal(name="co")
        m.d.comb += [b_t.eq(self.t_across & ~self.fixed),
                     b_o.eq(b_t & (self.high if self._high is None else Const(int(self._high), 1))),
                     ct.eq(t_carry & ~self.first), co.eq(o_carry & ~self.first)]
        st = Signal(2, name="st")
        so = Signal(2, name="so")
        m.d.comb += [st.eq(self.t_in + b_t + ct), so.eq(self.o_in + b_o + co)]
        m.d.sync += [self.t.eq(st[0]), t_carry.eq(st[1]), self.o.eq(so[0]),
                     o_carry.eq(so[1]), self.first_out.eq(self.first)]
        return m


class EnumerationArray(wiring.Component):
    """The enumeration of a set of nodes of the k-cube within the subcubes spanned by
    ``dims`` (module docstring).

    Parameters
    ----------
    k : int
        The cube's dimension (>= 1).
    dims : sequence of int
        The dimensions the ranks combine, in order (distinct, in ``[0, k - 1]``; may be
        empty: every node is its own subcube).

    Members
    -------
    start : ``In(1)``
        Strobe: the next clock is bit-time 0; ``member`` is read then.
    member : ``In(2**k)``
        The set: bit ``x`` is node ``x``'s flag.
    t, o : ``Out(2**k)``
        Per node, the last rank's values, bit ``l`` during bit-time ``len(dims) + l``.

    Attributes
    ----------
    ranks : list of list of (Signal, Signal)
        ``ranks[j][x]``: node ``x``'s rank-``j`` ``(t, o)`` registers.
    """

    def __new__(cls, k: int, dims):
        # refused before the component exists, so Amaranth has no unused one to report
        dims = tuple(int(d) for d in dims)
        if not isinstance(k, int) or k < 1 or len(set(dims)) != len(dims) or any(
                not 0 <= d < k for d in dims):
            raise ValueError(f"k must be >= 1 and dims distinct dimensions in [0, k - 1], "
                             f"got k={k!r}, dims={dims!r}")
        return super().__new__(cls, src_loc_at=1)

    def __init__(self, k: int, dims):
        dims = tuple(int(d) for d in dims)
        self._k, self._dims = k, dims
        n = 1 << k
        super().__init__({"start": In(1), "member": In(n), "t": Out(n), "o": Out(n)})
        self.ranks = [[(Signal(name=f"t_{j}_{x}"), Signal(name=f"o_{j}_{x}"))
                       for x in range(n)] for j in range(len(dims) + 1)]

    def elaborate(self, platform):
        m = Module()
        n = 1 << self._k
        first = Signal(name="first0")
        m.d.sync += first.eq(self.start)
        for x in range(n):
            t0, o0 = self.ranks[0][x]
            m.d.sync += [t0.eq(self.start & self.member[x]), o0.eq(0)]
        firsts = [first]
        for j, d in enumerate(self._dims, start=1):
            nxt = None
            for x in range(n):
                cell = m.submodules[f"en_{j}_{x}"] = Enumerator(bool((x >> d) & 1))
                t_prev, o_prev = self.ranks[j - 1][x]
                m.d.comb += [cell.first.eq(firsts[-1]), cell.fixed.eq(0),
                             cell.t_in.eq(t_prev), cell.o_in.eq(o_prev),
                             cell.t_across.eq(self.ranks[j - 1][x ^ (1 << d)][0]),
                             self.ranks[j][x][0].eq(cell.t), self.ranks[j][x][1].eq(cell.o)]
                nxt = cell.first_out
            firsts.append(nxt)
        last = self.ranks[-1]
        for x in range(n):
            m.d.comb += [self.t[x].eq(last[x][0]), self.o[x].eq(last[x][1])]
        return m
