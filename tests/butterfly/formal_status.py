"""The splitter network's fault-status registers against the golden fault propagation
(docs/formal.md, "The status registers"): a whole :class:`ButterflyNetworkHW` with its
run-time ``fault_mask``, its terminals, its start strobe and its reset free at every
clock. Once the mask has held its value for ``status_settle_clocks`` clocks, every
switch's *bad* register equals what :func:`fatnet.golden.butterfly.faults.propagate`
declares for that mask (faulty, or declared faulty by Sec. IV's "all" rule).

The golden value of a switch depends only on the faults of the switches its edges reach
(its cone): it is tabulated from the golden model over every fault pattern of its cone
(a few to a few thousand patterns), the rest of the mask left free.
"""

from __future__ import annotations

import numpy as np
from amaranth import Cat, Const, Elaboratable, Module, Mux, ResetSignal, Signal
from amaranth.hdl import Assert, Cover

from fatnet.golden.butterfly.faults import propagate
from fatnet.hdl.butterfly.network import ButterflyNetworkHW

__all__ = ["StatusProof", "cone", "golden_table"]


def cone(net, level: int, row: int) -> list[tuple[int, int]]:
    """The interior switches (levels 1 .. depth - 1) that switch ``(level, row)`` is or
    reaches along its edges, sorted."""
    depth = net.num_levels - 1
    found, frontier = set(), {(level, row)}
    while frontier:
        found |= {s for s in frontier if 1 <= s[0] < depth}
        frontier = {(i + 1, int(t)) for i, r in frontier if i < depth
                    for t in net.heads[i, r] if t >= 0}
    return sorted(found)


def golden_table(net, level: int, row: int, members: list) -> int:
    """Bit v: the golden status of switch ``(level, row)`` when the faulty switches of
    its cone are those of ``members`` whose bit is set in v (the others fault-free)."""
    table = 0
    for v in range(1 << len(members)):
        faulty = np.zeros((net.num_levels, net.inputs), dtype=bool)
        for k, (i, r) in enumerate(members):
            faulty[i, r] = bool(v >> k & 1)
        if propagate(net, faulty).unusable()[level, row]:
            table |= 1 << v
    return table


class StatusProof(Elaboratable):
    """A whole network's status registers against the golden propagation.

    Parameters
    ----------
    circuit : fatnet.golden.butterfly.cyclemodel.CircuitNetwork
        A network without built-in faults (every fault comes from the mask).
    covers : bool
        The cover statements instead of the assertions.

    Raises
    ------
    ValueError
        If the network has built-in faults.
    """

    def __init__(self, circuit, *, covers: bool = False):
        if circuit.network.faults is not None and circuit.network.faults.faulty.any():
            raise ValueError("the status proof takes a network without built-in faults")
        self._c = circuit
        self._covers = covers
        self.top = ButterflyNetworkHW(circuit)
        self.ports = [self.top.fault_mask, self.top.start]
        self.ports += [p for t in self.top.term for p in (t.send, t.recv_ack)]

    def _age(self, m):
        """Clocks since the mask took its value (a reset counts as a change), saturating
        at the settle time."""
        settle = self._c.status_settle_clocks
        mask = self.top.fault_mask
        past = Signal(len(mask), name="spec_past_mask")
        past_rst = Signal(name="spec_past_rst", init=1)
        held = Signal(range(settle + 1), name="spec_age_reg", init=0)
        age = Signal(range(settle + 1), name="spec_age")
        same = (mask == past) & ~past_rst
        m.d.comb += age.eq(Mux(same, Mux(held == settle, settle, held + 1), 0))
        m.d.sync += [past.eq(mask), held.eq(age)]
        # the reset itself: registered outside the domain's reset
        m.d.sync += past_rst.eq(ResetSignal())
        return age

    def elaborate(self, platform):
        m = Module()
        m.submodules.net = top = self.top
        c = self._c
        net, depth, n = c.network, c.depth, c.n_inputs
        age = self._age(m)
        settled = age == c.status_settle_clocks
        for level in range(depth):
            for row in range(n):
                members = cone(net, level, row)
                bits = Cat(top.fault_mask[(i - 1) * n + r] for i, r in members)
                table = golden_table(net, level, row, members)
                want = (Const(table, 1 << len(members)).bit_select(bits, 1) if members
                        else Const(table & 1, 1))
                status = top.status[level][row]
                if self._covers:
                    if level == 0 and table:
                        m.d.comb += Cover(settled & status,
                                          f"input switch {row} bad by propagation")
                    continue
                m.d.comb += Assert(~settled | (status == want),
                                   f"status of switch ({level}, {row})")
        return m
