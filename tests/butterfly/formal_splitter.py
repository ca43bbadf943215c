"""The splitter switch's properties (docs/formal.md, "The splitter switch"), as an
Amaranth design around one :class:`SplitterSwitch` whose every input is free at every
clock (``clear``, ``faulty``, the input wires, the acknowledgments coming back, the bad
masks, and the domain's reset): nothing is assumed of its environment.

The property keeps its own account of the switch from the ports alone, written from the
documented rule (docs/hardware.md, "The splitter switch"): per input wire ``seen`` (a 1
has arrived in this delivery cycle) and ``waiting`` (it arrived in the previous
bit-time, so this bit is the address bit); per edge the input holding it. Claims are
made by rank, not by the switch's greedy chain: the k-th claiming wire of a direction
(lowest first) takes that direction's k-th edge that is neither held nor bad.
"""

from __future__ import annotations

from amaranth import Cat, Const, Elaboratable, Module, Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Cover

from fatnet.hdl.butterfly.network import SplitterSwitch

__all__ = ["SplitterProof"]

#: Directions by address bit: 0 up, 1 down (the switch's ``up`` and ``down`` ports).
DIRECTIONS = ("up", "down")


def _count(bits) -> object:
    """The number of set bits among ``bits`` (a list of 1-bit values), 0 if empty."""
    total = Const(0, 1)
    for b in bits:
        total = total + b
    return total


class SplitterProof(Elaboratable):
    """One ``SplitterSwitch(inputs, edges)`` and its properties.

    Parameters
    ----------
    inputs, edges : int
        The switch's input wires and edges per direction.
    link_stages : int
        Registers on its incoming links (``--link-stages``), each way.
    covers : bool
        Add the cover statements (a cover task) instead of the assertions (a proof).
    switch : wiring.Component, optional
        The design under proof, with ``SplitterSwitch``'s signature (default: a new
        ``SplitterSwitch(inputs, edges, link_stages)``); a test hands in a mutant.
    path : str
        Where the ``SplitterSwitch`` is inside ``switch`` (its registers' prefix after
        flattening), ``"sw"`` for the switch itself.

    Attributes
    ----------
    ports : list of Signal
        The top-level ports: the switch's, and the probes.
    probes : dict of str to str
        Probe signal name -> the switch register it reads (``formal_harness.prove``).
    """

    def __init__(self, inputs: int, edges: int, link_stages: int = 0, *,
                 covers: bool = False, switch=None, path: str = "sw"):
        self._r = inputs
        self._d = edges
        self._s = link_stages
        self._covers = covers
        self.sw = (SplitterSwitch(inputs, edges, link_stages) if switch is None
                   else switch)
        sw = self.sw
        names = ["seen", "waiting"] + [f"{g}_conn{j}" for g in DIRECTIONS
                                       for j in range(edges)]
        names += [f"link{k}" for k in range(link_stages)]
        names += [f"link_ack{k}" for k in range(link_stages)]
        names += ["ack_out"] if link_stages else []
        names += ["waiting_ahead"] if link_stages >= 2 else []
        self._probe = {n: Signal(inputs, name=f"probe_{n}") for n in names}
        self.probes = {f"probe_{n}": f"{path}.{n}" for n in names}
        self.ports = [sw.clear, sw.faulty, sw.i.data, sw.i.ack, sw.up.data, sw.up.ack,
                      sw.down.data, sw.down.ack, sw.up_bad, sw.down_bad,
                      *self._probe.values()]

    def _links(self, m, wires, name):
        """``wires`` through ``link_stages`` registers cleared by ``clear`` (the
        documented link registers); kept in ``self._chain``."""
        self._chain = []
        for k in range(self._s):
            held = Signal(len(wires), name=f"{name}{k}")
            with m.If(self.sw.clear):
                m.d.sync += held.eq(0)
            with m.Else():
                m.d.sync += held.eq(wires)
            self._chain.append(held)
            wires = held
        return wires

    def _account(self, m):
        """The switch by the documented rule: ``seen``, ``waiting``, per direction the
        edges' holders and this bit-time's grants, and the expected registered outputs."""
        sw, r, d = self.sw, self._r, self._d
        i = self._links(m, sw.i.data, "spec_link")
        self._i = i
        seen = Signal(r, name="spec_seen")
        waiting = Signal(r, name="spec_waiting")
        off = Signal(name="spec_off")
        m.d.comb += off.eq(sw.clear | sw.faulty)
        conn = {g: [Signal(r, name=f"spec_{g}_conn{j}") for j in range(d)]
                for g in DIRECTIONS}
        grant = {}
        for bit, g in enumerate(DIRECTIONS):
            bad = sw.up_bad if g == "up" else sw.down_bad
            req = Signal(r, name=f"spec_{g}_req")
            m.d.comb += req.eq(waiting & (i if bit else ~i))
            free = [~conn[g][j].any() & ~bad[j] for j in range(d)]
            grant[g] = []
            for j in range(d):
                gj = Signal(r, name=f"spec_{g}_grant{j}")
                m.d.comb += gj.eq(Cat(
                    req[x] & free[j] & (_count(req[:x]) == _count(free[:j]))
                    for x in range(r)))
                grant[g].append(gj)
        if self._s >= 2:   # the switch's register a clock ahead of ``waiting``
            self._ahead = Signal(r, name="spec_ahead")
            with m.If(sw.clear):
                m.d.sync += self._ahead.eq(0)
            with m.Else():
                m.d.sync += self._ahead.eq(self._chain[-2] & ~(seen | i))
        with m.If(sw.clear):
            m.d.sync += [seen.eq(0), waiting.eq(0)]
            m.d.sync += [c.eq(0) for g in DIRECTIONS for c in conn[g]]
        with m.Else():
            m.d.sync += [seen.eq(seen | i), waiting.eq(i & ~seen)]
            m.d.sync += [conn[g][j].eq(conn[g][j] | grant[g][j])
                         for g in DIRECTIONS for j in range(d)]
        return seen, waiting, off, conn, grant

    def elaborate(self, platform):
        m = Module()
        m.submodules.sw = sw = self.sw
        r, d = self._r, self._d
        seen, waiting, off, conn, grant = self._account(m)
        i = self._i
        self._seen = seen
        outs = {"up": sw.up, "down": sw.down}
        # expected registered outputs and acknowledgments: one register each way
        exp = {g: Signal(d, name=f"spec_{g}_out") for g in DIRECTIONS}
        exp_ack = Signal(r, name="spec_ack")
        acks = Const(0, r)
        for g in DIRECTIONS:
            for j in range(d):
                acks = acks | (conn[g][j] & outs[g].ack[j].replicate(r))
        with m.If(off):
            m.d.sync += [exp["up"].eq(0), exp["down"].eq(0), exp_ack.eq(0)]
        with m.Else():
            m.d.sync += [exp[g][j].eq((conn[g][j] & i).any() | grant[g][j].any())
                         for g in DIRECTIONS for j in range(d)]
            m.d.sync += exp_ack.eq(acks)
        ins = self._chain
        port_ack = self._links(m, exp_ack, "spec_link_ack")   # back along the links
        self._ack_chain = self._chain
        self._chain = ins
        self._ack_core = self._probe["ack_out"] if self._s else sw.i.ack
        past_off = Signal(name="spec_past_off")
        m.d.sync += past_off.eq(off)
        tag = self._tagged(m, waiting, conn, grant)
        if self._covers:
            self._add_covers(m, tag, grant, past_off)
            return m
        p = self._probe
        self._link_asserts(m, exp_ack)
        m.d.comb += [
            # the switch's registers hold what the documented rule says they hold
            Assert(p["seen"] == seen, "seen: a 1 has arrived on the wire this cycle"),
            Assert(p["waiting"] == waiting, "waiting: the address bit is on the wire"),
            *[Assert(p[f"{g}_conn{j}"] == conn[g][j], f"{g} edge {j}: its holder")
              for g in DIRECTIONS for j in range(d)],
            # every output and acknowledgment, one register after the rule's value
            Assert(sw.up.data == exp["up"], "up outputs: held input or M' a bit-time later"),
            Assert(sw.down.data == exp["down"],
                   "down outputs: held input or M' a bit-time later"),
            Assert(sw.i.ack == port_ack, "acknowledgments: back along held edges"),
            # a faulty (or clearing) switch drives nothing and acknowledges nothing
            Assert(~past_off | ((sw.up.data == 0) & (sw.down.data == 0)
                                & (self._ack_core == 0)),
                   "faulty or clear: outputs and acknowledgments low"),
        ]
        for g in DIRECTIONS:
            for j in range(d):
                c = conn[g][j]
                m.d.comb += Assert((c & (c - 1)) == 0, f"{g} edge {j}: at most one holder")
                m.d.comb += Assert((c & (~seen | waiting)) == 0,
                                   f"{g} edge {j}: held by a wire past its address bit")
        for x in range(r):
            held = _count([conn[g][j][x] for g in DIRECTIONS for j in range(d)])
            m.d.comb += Assert(held <= 1, f"input {x}: holds at most one edge")
        m.d.comb += Assert((waiting & ~seen) == 0, "waiting only once a 1 has arrived")
        self._tag_asserts(m, tag, past_off)
        return m

    def _link_asserts(self, m, exp_ack):
        """The link registers each way hold the documented delayed wires."""
        p = self._probe
        for k in range(self._s):
            m.d.comb += [
                Assert(p[f"link{k}"] == self._chain[k], f"input link register {k}"),
                Assert(p[f"link_ack{k}"] == self._ack_chain[k],
                       f"acknowledgment link register {k}"),
            ]
        if self._s:
            m.d.comb += Assert(p["ack_out"] == exp_ack, "the acknowledgment register")
        if self._s >= 2:
            m.d.comb += Assert(p["waiting_ahead"] == self._ahead,
                               "waiting, a clock ahead")

    def _tagged(self, m, waiting, conn, grant):
        """An ``AnyConst`` input wire's message: the edge it holds (from the account's
        holders), lost or not, its address bit, and the values a clock ago the
        assertions compare with."""
        sw, r, d = self.sw, self._r, self._d
        x = AnyConst(range(r)) if r > 1 else Const(0, 1)
        if r > 1:
            m.d.comb += Assume(x < r)
        tag = {"x": x}
        i_x = self._i.bit_select(x, 1)
        claim = waiting.bit_select(x, 1)
        got = Cat(grant[g][j].bit_select(x, 1) for g in DIRECTIONS for j in range(d)).any()
        tag["holds"] = Cat(conn[g][j].bit_select(x, 1) for g in DIRECTIONS
                           for j in range(d))
        tag["held"] = tag["holds"].any()
        tag["edge"] = Signal(range(2 * d), name="tag_edge")
        for k in range(2 * d):
            with m.If(tag["holds"][k]):
                m.d.comb += tag["edge"].eq(k)
        for name in ("lost", "new", "addr", "i", "was_held"):
            tag[name] = Signal(name=f"tag_{name}")
        tag["past_ack"] = Signal(2 * d, name="tag_past_ack")
        with m.If(sw.clear):
            m.d.sync += [tag["lost"].eq(0), tag["new"].eq(0)]
        with m.Elif(claim):
            m.d.sync += [tag["lost"].eq(~got), tag["new"].eq(got), tag["addr"].eq(i_x)]
        with m.Else():
            m.d.sync += tag["new"].eq(0)
        m.d.sync += [tag["i"].eq(i_x), tag["was_held"].eq(tag["held"] & ~sw.clear),
                     tag["past_ack"].eq(Cat(sw.up.ack, sw.down.ack))]
        tag["out"] = Cat(sw.up.data, sw.down.data).bit_select(tag["edge"], 1)
        tag["ack"] = self._ack_core.bit_select(x, 1)
        tag["seen"] = self._seen.bit_select(x, 1)
        tag["waiting"] = claim
        return tag

    def _tag_asserts(self, m, tag, past_off):
        """The tagged message: on its address bit's port only, M' in the address bit's
        slot, then its own bits one bit-time later, acknowledged only along its edge;
        or lost, never acknowledged."""
        d = self._d
        held, lost, new = tag["held"], tag["lost"], tag["new"]
        m.d.comb += [
            Assert(~(held & lost), "tagged: held and lost at once"),
            Assert(~(held | lost) | (tag["seen"] & ~tag["waiting"]),
                   "tagged: held or lost only after its M bit and address bit"),
            Assert(~new | held, "tagged: held from the bit-time after its claim"),
            Assert(~held | (tag["edge"] // d == tag["addr"]),
                   "tagged: its edge is in the direction its address bit selects"),
            Assert(~lost | ~tag["ack"], "tagged: a lost message is never acknowledged"),
            Assert(~(held & new) | (tag["out"] == ~past_off),
                   "tagged: M' leaves in the address bit's slot (address bit stripped)"),
            Assert(~(held & ~new & tag["was_held"]) | (tag["out"] == (tag["i"] & ~past_off)),
                   "tagged: its payload leaves unchanged one bit-time later"),
            Assert(~(held & tag["was_held"]) | (tag["ack"] == (
                tag["past_ack"].bit_select(tag["edge"], 1) & ~past_off)),
                "tagged: acknowledged exactly when its edge's destination acknowledged"),
        ]

    def _add_covers(self, m, tag, grant, past_off):
        """Each rule's interesting case is reachable."""
        sw, r, d = self.sw, self._r, self._d
        held, lost = tag["held"], tag["lost"]
        x = tag["x"]
        # one Cover a line: sby reports a cover by its source line
        m.d.comb += [
            Cover(held & ~tag["addr"] & tag["ack"], "delivered up, acknowledged"),
            Cover(held & tag["addr"] & tag["ack"], "delivered down, acknowledged"),
            Cover(held & tag["was_held"] & ~tag["new"] & tag["i"] & ~past_off & tag["out"],
                  "a payload 1 forwarded"),
            Cover(lost & (sw.up_bad.all() | sw.down_bad.all()), "lost: every edge bad"),
            Cover(held & sw.faulty & tag["i"], "faulty while holding a message"),
            Cover(held & sw.i.ack.bit_select(x, 1), "its acknowledgment at the input port"),
        ]
        if d > 1:
            m.d.comb += Cover(held & tag["new"] & (tag["edge"] % d == d - 1),
                              "served by its direction's last edge")
        if r > 1:
            m.d.comb += Cover(lost & ~sw.up_bad.any() & ~sw.down_bad.any(),
                              "lost to contention, no edge bad")
            m.d.comb += Cover(Cat(grant["up"][0].any(), grant["down"][0].any()).all(),
                              "both directions granted in one bit-time")
            m.d.comb += Cover(held & (x == r - 1), "the last input wire delivered")
