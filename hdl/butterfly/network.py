"""Amaranth hardware of splitter networks (butterflies, dilated butterflies,
multibutterflies), built from the golden :class:`CircuitNetwork`.

Every structural choice (which edge leads where, the input-wire order of every switch,
the fault map) comes from :mod:`fatnet.golden.butterfly`; the behaviour is the one
:mod:`fatnet.golden.butterfly.cyclemodel` predicts, bit-time for bit-time. A switch does
what the fat-tree's :class:`~fatnet.hdl.switches.Selector` and one on-line masked
:class:`~fatnet.hdl.switches.StageSwitch` per direction would (every input wire to every
edge of that direction): it reads the address bit after M, strips it, claims the first
free edge of that direction (lowest input wire first), registers the output, and passes
the acknowledgment back through one register. It keeps only the registers that behaviour
needs (per input wire ``seen`` and ``waiting``, per edge its holder), 12 flip-flops for
the 2x2 switch instead of the 20 of the composed components; the two are equivalent at
every port (README, "The splitter switch").

Faults. A switch is *faulty* when its bit of the golden fault map or of the run-time
``fault_mask`` input is set: it drives nothing and acknowledges nothing. Every switch
keeps a *bad* status register, ``faulty | (all edges of some direction lead to bad
switches)`` (Sec. III-C: "each switch simply checks its up and down output neighbors"),
so the status settles backward one level per clock after the mask changes: every status
register holds its final value from the ``depth`` (lg N)-th rising edge on; an edge into a
bad switch is masked out of arbitration and never taken. With ``--link-stages s`` the
status of the next level comes back through s registers too (the links' long wires end
in registers), so it settles in lg N + s (lg N - 1) clocks
(``CircuitNetwork.status_settle_clocks``), and the registers reset to their settled
value under the built-in faults. The
settled status equals the golden propagation (:func:`fatnet.golden.butterfly.faults.propagate`).
"""

from __future__ import annotations

import operator
from functools import reduce

import numpy as np

from amaranth import Cat, ClockSignal, Const, Instance, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...golden.checks import is_integer
from ...golden.errors import ParameterError
from ..controller import (add_cycle_controller, controller_meaning, controller_members,
                          start_tree)
from ..signatures import ChannelSignature, EndpointSignature
from ..switches import link_registers

__all__ = ["SplitterSwitch", "ButterflyNetworkHW", "switch_key", "network_signature",
           "port_meaning"]


class SplitterSwitch(wiring.Component):
    """One splitter switch: ``inputs`` wires in, ``edges`` wires out per direction.

    Parameters
    ----------
    inputs : int
        Input wires (the golden in-degree; 1 for an input switch).
    edges : int
        Edges per direction (the multiplicity d).
    link_stages : int
        Registers on the incoming links, each way (``--link-stages``; 0: none): the
        input wires are registered this many times before the switch reads them, and
        the acknowledgment as many more times after its own register. They are cleared
        with the switch, so a place-and-route tool can pack them with its flip-flops.
        With two or more, ``waiting`` is computed one clock early from the register
        before the last (``inputs`` more flip-flops; the same behaviour at every port).

    Members
    -------
    clear : ``In(1)``
        Start of a delivery cycle: drop every connection.
    faulty : ``In(1)``
        The switch is faulty: it drives nothing and acknowledges nothing.
    i : ``In(ChannelSignature(inputs))``
        Incoming edges (in golden order) and their acknowledgments (registered).
    up, down : ``Out(ChannelSignature(edges))``
        Outgoing edges (registered) and the acknowledgments coming back.
    up_bad, down_bad : ``In(edges)``
        Per edge: the switch it leads to is faulty or declared faulty; never claimed.

    Raises
    ------
    ValueError
        If ``inputs`` or ``edges`` is not a positive integer, or ``link_stages`` is
        negative.
    """

    def __new__(cls, inputs: int, edges: int, link_stages: int = 0):
        # refused before the component exists, so Amaranth has no unused one to report
        for name, v, low in (("inputs", inputs, 1), ("edges", edges, 1),
                             ("link_stages", link_stages, 0)):
            if not is_integer(v, numpy=False) or v < low:
                raise ValueError(f"{name} must be an integer >= {low}, not {v!r}")
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, inputs: int, edges: int, link_stages: int = 0):
        self._inputs = inputs
        self._edges = edges
        self._link_stages = link_stages
        super().__init__({
            "clear": In(1), "faulty": In(1),
            "i": In(ChannelSignature(inputs)),
            "up": Out(ChannelSignature(edges)), "down": Out(ChannelSignature(edges)),
            "up_bad": In(edges), "down_bad": In(edges),
        })

    def elaborate(self, platform):
        # The fat-tree's Selector and an on-line masked StageSwitch per direction, merged
        # and reduced to the registers they need (the same behaviour at every port,
        # bit-time for bit-time; README, "The splitter switch"). Per input wire: ``seen`` (M has
        # arrived this cycle) and ``waiting`` (M arrived in the previous bit-time, so this
        # bit is the address bit); per edge: which input wire holds it, one-hot. The
        # selector's branch registers and the stages' ``seen`` registers are not kept:
        # an input claims in the bit-time after M and only then, so the claim is
        # ``waiting & (address bit == direction)``, and a held edge (set only by a claim)
        # forwards ``holder & i.data``, which is all those registers were read for.
        m = Module()
        r, d = self._inputs, self._edges
        s = self._link_stages
        seen = Signal(r, name="seen")
        waiting = Signal(r, name="waiting")
        if s >= 2:
            # ``waiting`` a clock ahead, from the register before the last:
            # ahead = (the next i) & ~(the next seen) = before & ~(seen | i), and 0 in
            # the clock after a clear (which clears i and seen), so every port carries
            # what it did before. Why: the register before the last then feeds logic in
            # this switch too, so the last one costs the placer wire anywhere but next
            # to the switch's logic; with nothing to draw it in, it was placed 9 to 17
            # tiles away at 256 inputs, and its two LUT levels were the critical path
            # (docs/figures.md). With one stage the register before the last is the
            # sending switch's output register, which is left as it was.
            before = link_registers(m, self.i.data, s - 1, self.clear, "link")
            i = link_registers(m, before, 1, self.clear, "link", first=s - 1)
            ahead = Signal(r, name="waiting_ahead")
            with m.If(self.clear):
                m.d.sync += ahead.eq(0)
            with m.Else():
                m.d.sync += ahead.eq(before & ~(seen | i))
            next_waiting = ahead
        else:
            i = link_registers(m, self.i.data, s, self.clear, "link")
            next_waiting = i & ~seen
        off = Signal(name="off")  # outputs and acknowledgments forced low
        m.d.comb += off.eq(self.clear | self.faulty)
        acks = []  # per edge: the acknowledgment back to the input wire holding it
        held = []  # every edge's one-hot holder register
        grants = []
        for g, (name, out, bad) in enumerate((("up", self.up, self.up_bad),
                                              ("down", self.down, self.down_bad))):
            # conn[j][x]: input wire x holds edge j of this direction
            conn = [Signal(r, name=f"{name}_conn{j}") for j in range(d)]
            req = Signal(r, name=f"{name}_req")
            m.d.comb += req.eq(waiting & (i if g else ~i))
            # an edge is free when nobody holds it and it leads to no bad switch; the
            # lowest claiming input takes the first free edge, the next the next one
            free = [~conn[j].any() & ~bad[j] for j in range(d)]
            grant = [[None] * r for _ in range(d)]
            for x in range(r):
                for j in range(d):
                    first = free[j] & ~Cat(free[:j]).any() if j else free[j]
                    gxj = Signal(name=f"{name}_g{x}_{j}")
                    m.d.comb += gxj.eq(req[x] & first)
                    grant[j][x] = gxj
                free = [free[j] & ~grant[j][x] for j in range(d)]
            for j in range(d):
                gj = Cat(grant[j])
                with m.If(off):
                    m.d.sync += out.data[j].eq(0)
                with m.Else():
                    m.d.sync += out.data[j].eq((conn[j] & i).any() | gj.any())
                held.append(conn[j])
                grants.append(gj)
                acks.append(conn[j] & out.ack[j].replicate(r))
        ack = Signal(r, name="ack_out") if self._link_stages else self.i.ack
        with m.If(off):
            m.d.sync += ack.eq(0)
        with m.Else():
            m.d.sync += ack.eq(reduce(operator.or_, acks))
        if self._link_stages:
            m.d.comb += self.i.ack.eq(
                link_registers(m, ack, self._link_stages, self.clear, "link_ack"))
        with m.If(self.clear):
            m.d.sync += [seen.eq(0), waiting.eq(0)] + [c.eq(0) for c in held]
        with m.Else():
            m.d.sync += [seen.eq(seen | i), waiting.eq(next_waiting)]
            m.d.sync += [c.eq(c | g) for c, g in zip(held, grants)]
        return m


class _Channel:
    """``data`` and ``ack`` of one channel of a :class:`_SwitchInstance`."""

    __slots__ = ("data", "ack")

    def __init__(self, prefix: str, width: int):
        self.data = Signal(width, name=f"{prefix}__data")
        self.ack = Signal(width, name=f"{prefix}__ack")


class _SwitchInstance:
    """What :class:`fatnet.hdl.modules.ModuleInstance` would make of a
    :class:`SplitterSwitch`'s signature, built directly: the same port signals (named as
    ``wiring`` names them: ``i__data``), connected in the same order, to an
    :class:`~amaranth.hdl.Instance` of the library's module.

    Why: the top holds one instance per switch (10240 at 1024 inputs). Creating each
    through ``Signature.create`` and a component's elaboration cost about a tenth of the
    top's conversion; plain signals give Amaranth exactly the same instance, port
    signals and names, so the Verilog is byte-identical.
    """

    __slots__ = ("clear", "faulty", "i", "up", "down", "up_bad", "down_bad", "instance")

    def __init__(self, module: str, inputs: int, edges: int):
        self.clear = Signal(name="clear")
        self.faulty = Signal(name="faulty")
        self.i = _Channel("i", inputs)
        self.up = _Channel("up", edges)
        self.down = _Channel("down", edges)
        self.up_bad = Signal(edges, name="up_bad")
        self.down_bad = Signal(edges, name="down_bad")
        # ModuleInstance's port order: clk, rst, then the signature's members in order,
        # each with its flow as seen from outside the switch
        self.instance = Instance(
            module, ("i", "clk", ClockSignal()), ("i", "rst", ResetSignal()),
            ("i", "clear", self.clear), ("i", "faulty", self.faulty),
            ("i", "i__data", self.i.data), ("o", "i__ack", self.i.ack),
            ("o", "up__data", self.up.data), ("i", "up__ack", self.up.ack),
            ("o", "down__data", self.down.data), ("i", "down__ack", self.down.ack),
            ("i", "up_bad", self.up_bad), ("i", "down_bad", self.down_bad))


def switch_key(circuit, level: int, row: int) -> tuple:
    """What makes two switches identical: input wires, edges per direction, and the
    registers on its incoming links (the input switches' come from the terminals: none)."""
    return (int(circuit.in_degree[level, row]), int(circuit.network.edges_per_group[level]),
            circuit.link_stages if level else 0)


def network_signature(circuit) -> wiring.Signature:
    """The signature of a network's top (:class:`ButterflyNetworkHW`): the one port map
    the manifest, the harness packing and the waveform groups derive from."""
    depth, n = circuit.depth, circuit.n_inputs
    recv = {int(x) for x in circuit.in_degree[depth]}
    if len(recv) != 1:
        raise ValueError(f"outputs of unequal in-degree {sorted(recv)}")
    return wiring.Signature({
        **controller_members(circuit.cycle_length),
        "fault_mask": In(max(1, (depth - 1) * n)),
        "term": Out(EndpointSignature(1, recv_width=recv.pop())).array(n),
    })


#: What the splitter network's own plain port means, for the manifest.
FAULT_MASK_MEANING = (
    "run-time faults, one bit per interior switch: bit (level - 1) * N + row (bit 0 the "
    "LSB) marks switch (level, row), level 1 .. lg N - 1 = {D_1}, row 0 .. N - 1 = {N_1}, "
    "faulty on top of the built-in faults; change it while busy is low, the status "
    "registers settle in {settle} clocks (status_settle_clocks)")


def port_meaning(circuit, row: dict) -> str:
    """What one top-level port (a :func:`fatnet.hdl.signatures.port_rows` row) means."""
    if row["endpoint"] is not None:
        path = row["path"]
        member = path[-1]
        who = (f"input {path[1]}" if member.startswith("send")
               else f"output {path[1]}")
        return EndpointSignature.MEANING[member].format(who=who)
    meaning = controller_meaning(row["name"], circuit.cycle_length, circuit.start_stages)
    if meaning is not None:
        return meaning
    return FAULT_MASK_MEANING.format(D=circuit.depth, D_1=circuit.depth - 1,
                                     N_1=circuit.n_inputs - 1,
                                     settle=circuit.status_settle_clocks)


def check_buildable(circuit) -> None:
    """Refuse, in one line, a golden network the hardware does not build: the modified
    ("*") network (its last levels read two-bit fields), and a built-in fault map
    propagated by another rule than Sec. IV's "all" (the status registers compute "all",
    so any other rule's declared faults would differ from the hardware's).

    Raises
    ------
    ParameterError
        (a ``ValueError``) naming the option and what is accepted.
    """
    if any(w != 1 for w in circuit.field_widths):
        raise ParameterError(
            "modified must be off for gen and sim: the '*' network (complete 4x4 last "
            "levels, level -1) is not built in hardware; accepted: butterfly, "
            "dilated-butterfly and multibutterfly without --modified")
    rule = getattr(circuit.spec, "fault_rule", "all")
    if circuit.network.faults is not None and rule != "all":
        raise ParameterError(
            f"fault-rule must be all for gen and sim (the hardware's status registers "
            f"propagate faults by Sec. IV's rule), got {rule!r}")


class ButterflyNetworkHW(wiring.Component):
    """A whole splitter network: switches at levels 0..depth-1, the terminals, the
    delivery-cycle controller and the fault-status registers.

    Parameters
    ----------
    circuit : fatnet.golden.butterfly.cyclemodel.CircuitNetwork
        Only networks whose every level reads one address bit (not the modified "*":
        :class:`fatnet.golden.errors.ParameterError`, a ``ValueError``).

    Members
    -------
    start : ``In(1)``
        Strobe: the next clock cycle is bit-time 0 of a new delivery cycle.
    bit_time : ``Out(range(T + 1))``
        Bit-time within the delivery cycle (saturates at the cycle length T).
    busy : ``Out(1)``
        High from bit-time 0 until the cycle length has passed.
    fault_mask : ``In(interior switches)``
        Run-time faults, one bit per interior switch (levels 1..depth-1, row-major),
        ORed with the golden fault map the network was built with.
    term : array of ``EndpointSignature(1, recv=in-degree of an output)``
        Terminal r: ``send`` enters input switch r, ``recv`` leaves output row r.

    Attributes
    ----------
    status : list of list of Signal
        ``status[level][row]``, levels 0..depth-1: switch ``(level, row)``'s registered
        *bad* status (``bad_<level>_<row>`` in the Verilog), faulty or declared faulty;
        reset 0. Not a port: testbenches read it in the simulator (it settles
        ``depth`` clocks after ``fault_mask`` changes).
    """

    def __new__(cls, circuit, *, library=None):
        # refused before the component exists, so Amaranth has no unused one to report
        check_buildable(circuit)
        return super().__new__(cls, src_loc_at=1)  # "created at": our caller's line

    def __init__(self, circuit, *, library=None):
        self._c = circuit
        self._library = library
        net = circuit.network
        self._T = circuit.cycle_length
        self._depth = circuit.depth
        self._n = circuit.n_inputs
        # the golden fault map's placed faults are built in; declared faults are not:
        # the status registers compute them, as they do for run-time faults
        self._fixed = (net.faults.faulty if net.faults is not None
                       else np.zeros((self._depth + 1, self._n), dtype=bool))
        super().__init__(network_signature(circuit))
        # with pipelined links the status registers reset to their settled value under
        # the built-in faults, so nothing waits for them to settle after reset (without,
        # they reset to 0 and settle within lg N clocks, as they always have)
        self._settled = (circuit.blocked if circuit.link_stages
                         else np.zeros_like(circuit.blocked))
        self.status = [[Signal(name=f"bad_{i}_{row}", init=int(self._settled[i, row]))
                        for row in range(self._n)] for i in range(self._depth)]

    def _status_link(self, m, bad, settled, name):
        """The status ``bad`` of a switch's targets, through the s registers of the
        pipelined links it comes back on (reset to their ``settled`` values): the long
        wire between two levels ends in a register, not in the switch's arbitration."""
        for k in range(self._c.link_stages):
            held = Signal(len(bad), name=f"bad_link{k}_{name}",
                          init=sum(int(v) << j for j, v in enumerate(settled)))
            m.d.sync += held.eq(bad)
            bad = held
        return bad

    def _switch(self, level: int, row: int):
        """Switch ``(level, row)``: the component itself (simulation), or, for generation,
        a :class:`_SwitchInstance` of the library's module for its key."""
        key = switch_key(self._c, level, row)
        if self._library is None:
            return SplitterSwitch(*key)
        module = self._library.declare(("switch",) + key, lambda: SplitterSwitch(*key),
                                       "switch")
        return _SwitchInstance(module, *key[:2])  # link registers add no port

    def elaborate(self, platform):
        m = Module()
        c, net, D, N = self._c, self._c.network, self._depth, self._n
        clears, start = start_tree(m, self.start, D * N, c.start_stages)
        add_cycle_controller(m, start, self.bit_time, self.busy, self._T)

        # Why the assignments below are gathered into a few wide statements: the top has
        # about ten one-bit assignments per switch (10240 switches at 1024 inputs), and
        # Amaranth's cost per statement (checks when added, visits when lowered and
        # emitted) dominated over its cost per bit. ``Cat(lhs...).eq(Cat(rhs...))`` makes
        # exactly the same per-bit assignments in the same order, creates the same cells
        # in the same order, and meets every signal first in the same order (left-hand
        # sides first, and every right-hand side here is a port or was met before), so
        # Amaranth names everything as before and the Verilog is byte-identical.
        sw = {}
        for i in range(D):
            for row in range(N):
                sw[i, row] = s = self._switch(i, row)
                m.submodules[f"sw_{i}_{row}"] = getattr(s, "instance", s)
        m.d.comb += Cat(sw[key].clear for key in sw).eq(Cat(clears))

        # faulty and bad status: bad[level][row]; outputs (level D) are never bad
        faulty = {}
        bad = {}
        mask_lhs, mask_rhs = [], []
        for i in range(D + 1):
            for row in range(N):
                fixed = int(self._fixed[i, row])
                if 1 <= i < D:
                    f = Signal(name=f"faulty_{i}_{row}")
                    mask_lhs.append(f)
                    mask_rhs.append(self.fault_mask[(i - 1) * N + row] | fixed)
                    faulty[i, row] = f
                else:
                    faulty[i, row] = Const(fixed, 1)
                bad[i, row] = self.status[i][row] if i < D else Const(0, 1)
        if mask_lhs:
            m.d.comb += Cat(mask_lhs).eq(Cat(mask_rhs))
        e_of = [int(net.edges_per_group[i]) for i in range(D)]
        port_lhs, port_rhs = [], []  # each switch's faulty, up_bad and down_bad inputs
        status_next = []
        for i in range(D):
            e = e_of[i]
            for row in range(N):
                s = sw[i, row]
                port_lhs.append(s.faulty)
                port_rhs.append(faulty[i, row])
                dirs_bad = []
                for g, port_bad in ((0, s.up_bad), (1, s.down_bad)):
                    targets = [int(t) for t in net.heads[i, row, g * e:(g + 1) * e]]
                    # one Cat for the port and the reduction (Amaranth emits it once)
                    to = Cat(bad[i + 1, t] for t in targets)
                    if c.link_stages and i + 1 < D:   # along the pipelined links
                        to = self._status_link(m, to, [self._settled[i + 1, t]
                                                       for t in targets], f"{i}_{row}_{g}")
                    port_lhs.append(port_bad)
                    port_rhs.append(to)
                    dirs_bad.append(to.all())
                status_next.append(faulty[i, row] | dirs_bad[0] | dirs_bad[1])
        m.d.comb += Cat(port_lhs).eq(Cat(port_rhs))
        # registered: the status settles backward one level per clock
        m.d.sync += Cat(bad[i, row] for i in range(D) for row in range(N)).eq(
            Cat(status_next))

        # links: edge (i, row, slot) -> input wire rank of switch (i + 1, target)
        inputs = {(i, row): [None] * int(c.in_degree[i, row])
                  for i in range(1, D + 1) for row in range(N)}
        for i in range(D):
            e = e_of[i]
            for row in range(N):
                for g, port in ((0, sw[i, row].up), (1, sw[i, row].down)):
                    for j in range(e):
                        k = g * e + j
                        t = int(net.heads[i, row, k])
                        inputs[i + 1, t][int(c.rank[i, row, k])] = (port, j)
        for (i, row), wires in inputs.items():
            if i < D:
                dst = sw[i, row].i
                data, ack = dst.data, dst.ack
            else:
                term = self.term[row]
                data, ack = term.recv, term.recv_ack
            for w, (port, j) in enumerate(wires):
                # a stuck link (--stuck-link) holds the wire the switch sees
                stuck = c.stuck_wires.get((i, row, w))
                m.d.comb += [data[w].eq(port.data[j] if stuck is None else Const(stuck, 1)),
                             port.ack[j].eq(ack[w])]
        for row in range(N):
            term = self.term[row]
            m.d.comb += [sw[0, row].i.data.eq(term.send), term.send_ack.eq(sw[0, row].i.ack)]
        return m
