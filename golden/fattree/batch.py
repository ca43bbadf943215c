"""The batched cycle engine of the fat-tree: many delivery cycles as numpy array axes.

The scalar engine (:func:`fatnet.golden.fattree.cyclemodel.simulate_cycle` on
:func:`fatnet.golden.cycle.run_cycle`) is the specification; this engine computes the
same outcomes, message for message, wire for wire and bit-time for bit-time, for streams
made by :func:`fatnet.golden.fattree.bitstream.encode` (well-formed streams: the scalar
engine also takes hand-made ones), with phantoms of wires stuck at 1, link stages and
both switch-setting modes.

Why a level is a few array operations: a stream's bit-times at a node depend only on its
path (no queueing), and claims interact only inside one stage of one concentrator, where
the scalar engine serves them in increasing (bit-time, input). The concentrators form a
fixed order (U outputs from the leaves up, then L and R outputs from the root down, the
order of :func:`fatnet.golden.fattree.switching.set_switches`): every stream reaching a
concentrator has passed every concentrator before it in that order. So the engine takes
the nodes of one level, in every cycle of the batch, at once: per stage it sorts the
claims by (concentrator, bit-time, input) and serves the i-th claim of every
concentrator together, for i = 0, 1, ... (at most the concentrator's inputs).

Memory is bounded by :data:`BATCH_MESSAGES` streams per batch; longer runs are cut into
batches of whole delivery cycles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cycle import CycleResult, Occupancy, Outcome
from .topology import DOWN, EXT, PORT_L, PORT_NAMES, PORT_R, PORT_U, UP

__all__ = ["BATCH_MESSAGES", "Streams", "Geometry", "geometry", "run_batch",
           "set_switches_batch", "cycle_results"]

#: Most streams (messages and phantoms) the drivers put in one batch: the engine's
#: arrays take about 1.6 KiB per stream on a 1024-leaf tree (its path, registers and
#: decisions), so a batch's arrays stay near 100 MiB whatever the run's length.
BATCH_MESSAGES = 1 << 16

#: Loss codes of :attr:`Streams.lost_code`.
_TAKEN_ALL, _TAKEN, _NO_EDGE, _STUCK = 1, 2, 3, 4


class Geometry:
    """A :class:`FatTreeNetwork` as arrays: capacities per level, the cascade of every
    (level, U or L/R) with padded adjacency, stuck wires as sorted integer keys.

    Parameters
    ----------
    net : FatTreeNetwork
    """

    def __init__(self, net):
        self.net = net
        self.L, self.n = net.L, net.n
        self.online = net.spec.mode == "online"
        self.caps = np.asarray(net.spec.capacities, dtype=np.int64)
        self.link_stages = net.spec.link_stages
        self.length = net.cycle_length
        self.first_leaf = (1 << self.L) - 1
        # one cascade per (level, going up?): every node of a level has the same shapes
        self.cascade = {}
        for k in range(self.L):
            for up, port in ((True, PORT_U), (False, PORT_L)):
                casc = net.cascades[((1 << k) - 1, port)]
                assert all(net.cascades[(v, p)] is casc for v in range((1 << k) - 1,
                                                                       (2 << k) - 1)
                           for p in ((PORT_U,) if up else (PORT_L, PORT_R)))
                self.cascade[(k, up)] = casc
        self.stage_arrays = {id(s): _stage_arrays(s) for c in self.cascade.values()
                             for s in c.stages}
        self.max_stages = max((len(c.stages) for c in self.cascade.values()), default=0)
        self.max_hops = 2 * self.L
        self.wire_span = int(self.caps.max())
        stuck = sorted(net.stuck_wires.items())
        self.stuck_keys = np.asarray([self.wire_key(d, h, w) for (d, h, w), _ in stuck],
                                     dtype=np.int64)
        self.stuck_values = np.asarray([v for _, v in stuck], dtype=np.int64)
        #: (direction, heap, wire) of every wire stuck at 1, in the scalar engine's order
        self.phantom_wires = [key for key, v in stuck if v == 1]

    def wire_key(self, direction, heap, wire):
        """One integer per channel wire (scalars or arrays)."""
        return (direction * (2 << self.L) + heap) * self.wire_span + wire

    def link_delay(self, heap):
        """Registers on the link of a channel (:meth:`FatTreeNetwork.link_stages_of`)."""
        return np.where((heap > 0) & (heap < self.n - 1), self.link_stages, 0)


def geometry(net) -> Geometry:
    """The network's :class:`Geometry`, built once and kept on the network."""
    g = net.__dict__.get("_batch_geometry")
    if g is None:
        g = net.__dict__["_batch_geometry"] = Geometry(net)
    return g


def _stage_arrays(stage) -> tuple[np.ndarray, np.ndarray]:
    """(adjacency padded with -1 to the largest in-degree, in-degree per input)."""
    deg = np.asarray([len(row) for row in stage.adjacency], dtype=np.int64)
    adj = np.full((stage.inputs, max(1, int(deg.max(initial=1)))), -1, dtype=np.int64)
    for x, row in enumerate(stage.adjacency):
        adj[x, :len(row)] = row
    return adj, deg


@dataclass
class Streams:
    """Every stream of a batch (messages, then phantoms) and what became of it.

    Per stream: its cycle in the batch, its message index (phantoms -1, -2, ... as the
    scalar engine numbers them), the leaf its turn bits lead to (``route_dst``; EXT
    climbs to the root) and the LCA level its turn bits turn at; per hop its decision
    value at every stage (-1: all ones, a phantom's). State while it runs: the node and
    input port it waits at, its wire, the bit-time of its M bit there and the stream
    index of that M bit. Records: its path (heap, direction, wire, bit-time, offset),
    the registers of every hop, the outcome.
    """

    cycle: np.ndarray
    message: np.ndarray
    route_dst: np.ndarray
    lca: np.ndarray
    choices: np.ndarray | None
    max_hops: int
    record: bool = True   # keep paths (the switch setter needs none)

    def __post_init__(self):
        E = len(self.cycle)
        self.size = E
        (self.hops, self.node, self.in_port, self.wire, self.time, self.pos,
         self.reg_sum, self.lost_port, self.lost_stage, self.lost_a, self.lost_b,
         self.lost_input) = np.zeros((12, E), dtype=np.int64)
        self.arrival, self.ack, self.lost_node = np.full((3, E), -1, dtype=np.int64)
        self.waiting = np.zeros(E, dtype=bool)   # at a node, not yet through it
        self.status = np.zeros(E, dtype=np.int8)  # 0 lost, 1 delivered
        self.lost_code = np.zeros(E, dtype=np.int8)
        self.path_len = np.zeros(E, dtype=np.int64)
        # per hop: heap, direction, wire, bit-time, offset; the registers it adds
        rows = E if self.record else 0
        self.path = np.zeros((rows, self.max_hops + 1, 5), dtype=np.int64)
        self.regs = np.zeros((rows, self.max_hops), dtype=np.int64)


def _lca(g: Geometry, src, dst) -> np.ndarray:
    """LCA levels of message arrays (:meth:`FatTree.lca_level`), always an array."""
    return np.asarray(g.net.tree.lca_level(src, dst), dtype=np.int64).reshape(-1)


def _head(g: Geometry, direction, heap):
    """(node, in_port, delivered?) of channel wires: the node a channel feeds."""
    up = direction == UP
    node = np.where(up, (heap - 1) // 2, heap)
    in_port = np.where(up, np.where(heap % 2 == 1, PORT_L, PORT_R), PORT_U)
    end = np.where(up, heap == 0, heap >= g.first_leaf)
    return node, in_port, end


def _out_port(g: Geometry, st: Streams, e: np.ndarray) -> np.ndarray:
    """The output port the turn bit of every waiting stream ``e`` selects."""
    node, ip = st.node[e], st.in_port[e]
    level = np.log2(node + 1).astype(np.int64)
    bit = (st.route_dst[e] >> np.maximum(g.L - 1 - level, 0)) & 1
    down = np.where(bit == 1, PORT_R, PORT_L)
    cross = np.where(ip == PORT_L, PORT_R, PORT_L)
    climb = np.where(level > st.lca[e], PORT_U, cross)
    return np.where(ip == PORT_U, down, climb)


def _arrive(g: Geometry, st: Streams, e, direction, heap, wire, t, pos, own=None,
            faults: bool = True):
    """M bits of streams ``e`` on channel wires: record the occupancy, then the stuck
    value (lost), the destination (delivered) or the next node (waiting). ``own``
    marks phantoms on their own wire; ``faults`` False ignores stuck wires (the switch
    setter does not know of them)."""
    if st.record:
        q = st.path_len[e]
        st.path[e, q] = np.stack([heap, direction, wire, t, pos], axis=1)
        st.path_len[e] = q + 1
    node, in_port, end = _head(g, direction, heap)
    stuck = np.zeros(len(e), dtype=np.int64) - 1
    if faults and len(g.stuck_keys):
        key = g.wire_key(direction, heap, wire)
        at = np.minimum(np.searchsorted(g.stuck_keys, key), len(g.stuck_keys) - 1)
        hit = g.stuck_keys[at] == key
        if own is not None:
            hit &= ~own
        stuck = np.where(hit, g.stuck_values[at], -1)
    lost = stuck >= 0
    st.lost_code[e[lost]] = _STUCK
    st.lost_node[e[lost]] = np.where(end[lost], -1, node[lost])
    st.lost_a[e[lost]] = wire[lost]
    st.lost_b[e[lost]] = stuck[lost]
    done = ~lost & end
    st.status[e[done]] = 1
    st.arrival[e[done]] = t[done]
    st.ack[e[done]] = t[done] + st.reg_sum[e[done]]
    go = ~lost & ~end
    w = e[go]
    st.node[w], st.in_port[w], st.wire[w] = node[go], in_port[go], wire[go]
    st.time[w], st.pos[w] = t[go], pos[go]
    st.waiting[w] = True


def _instances(st: Streams, e, out_port) -> np.ndarray:
    """Dense ids of the concentrators (cycle, node, out port) the streams ``e`` enter."""
    key = (st.cycle[e] * (1 << 40)) + st.node[e] * 4 + out_port
    return np.unique(key, return_inverse=True)[1].reshape(-1)


def _ranks(inst: np.ndarray, claim_time: np.ndarray, x: np.ndarray):
    """The order of the claims (concentrator, bit-time, input) and each claim's rank
    inside its concentrator."""
    order = np.lexsort((x, claim_time, inst))
    s = inst[order]
    start = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    counts = np.diff(np.r_[start, len(s)])
    rank = np.arange(len(s)) - np.repeat(start, counts)
    return order, rank


def _stage(g: Geometry, st: Streams, e, inst, x, tau, pos, j: int, stage):
    """One stage of the concentrators of streams ``e``: who gets which output.

    Returns (out, claim bit-time, ok, pos after its decision bits); the failed
    claims' losses are recorded.
    """
    adj, deg = g.stage_arrays[id(stage)]
    w = 0 if g.online else stage.decision_width
    claim = tau + w
    out = np.full(len(e), -1, dtype=np.int64)
    claimed = np.zeros((int(inst.max(initial=-1)) + 1, stage.outputs), dtype=bool)
    order, rank = _ranks(inst, claim, x)
    choice = np.zeros(0, dtype=np.int64)
    if st.choices is not None:
        choice = st.choices[e, st.hops[e], j]
        choice = np.where(choice < 0, (1 << w) - 1, choice)
    for r in range(int(rank.max(initial=-1)) + 1):
        i = order[rank == r]
        xi, ci = x[i], inst[i]
        if g.online:
            cand = adj[xi]
            free = (cand >= 0) & ~claimed[ci[:, None], np.maximum(cand, 0)]
            ok = free.any(axis=1)
            o = cand[np.arange(len(i)), free.argmax(axis=1)]
            _lose(st, e[i[~ok]], _TAKEN_ALL, j, 0, 0)
        else:
            ch = choice[i]
            edge = ch < deg[xi]
            o = adj[xi, np.minimum(ch, adj.shape[1] - 1)]
            taken = edge & claimed[ci, o]
            ok = edge & ~taken
            _lose(st, e[i[~edge]], _NO_EDGE, j, ch[~edge], deg[xi][~edge])
            st.lost_input[e[i[~edge]]] = xi[~edge]
            _lose(st, e[i[taken]], _TAKEN, j, o[taken], 0)
        claimed[ci[ok], o[ok]] = True
        out[i[ok]] = o[ok]
    return out, claim, out >= 0, pos + w


def _lose(st: Streams, e, code: int, stage: int, a, b) -> None:
    st.lost_code[e] = code
    st.lost_node[e] = st.node[e]
    st.lost_stage[e] = stage
    st.lost_a[e] = a
    st.lost_b[e] = b


def _concentrator_input(g: Geometry, k: int, up: bool, in_port, wire):
    """The cascade input of a node input's wire (U out: L then R wires; L or R out:
    U wires, then the other child's)."""
    first, width = (PORT_L, g.caps[k + 1]) if up else (PORT_U, g.caps[k])
    return np.where(in_port == first, wire, width + wire)


def _through_level(g: Geometry, st: Streams, k: int, up: bool) -> None:
    """Every waiting stream at a node of level ``k`` whose turn bit picks U (``up``) or
    L/R: through the concentrator, onto the out channel."""
    e = np.flatnonzero(st.waiting)
    e = e[np.log2(st.node[e] + 1).astype(np.int64) == k]
    port = _out_port(g, st, e)
    e, port = e[(port == PORT_U) == up], port[(port == PORT_U) == up]
    if not len(e):
        return
    st.waiting[e] = False
    casc = g.cascade[(k, up)]
    x = _concentrator_input(g, k, up, st.in_port[e], st.wire[e])
    tau, pos = st.time[e] + 1, st.pos[e] + 1
    inst = _instances(st, e, port)
    st.lost_port[e] = port
    for j, stage in enumerate(casc.stages):
        out, claim, ok, pos = _stage(g, st, e, inst, x, tau, pos, j, stage)
        e, port, inst, x = e[ok], port[ok], inst[ok], out[ok]
        tau, pos = claim[ok] + 1, pos[ok]
    if not casc.stages:
        tau = tau + 1
    node = st.node[e]
    heap = np.where(port == PORT_U, node, 2 * node + np.where(port == PORT_L, 1, 2))
    direction = np.where(port == PORT_U, UP, DOWN)
    delay = g.link_delay(heap)
    regs = max(1, len(casc.stages)) + delay
    st.regs[e, st.hops[e]] = regs
    st.reg_sum[e] += regs
    st.hops[e] += 1
    _arrive(g, st, e, direction, heap, x, tau + delay, pos)


def _phantoms(g: Geometry, cycles: int):
    """Per cycle, a phantom of every wire stuck at 1: (cycle, id, route_dst, lca,
    channel wire) arrays, in the scalar engine's order."""
    P = len(g.phantom_wires)
    cyc = np.repeat(np.arange(cycles, dtype=np.int64), P)
    ident = np.tile(-1 - np.arange(P, dtype=np.int64), cycles)
    d, h, w = (np.tile(np.asarray([key[i] for key in g.phantom_wires], dtype=np.int64),
                       cycles) for i in range(3))
    level = np.log2(h + 1).astype(np.int64)
    right = ((h - (1 << level) + 2) << (g.L - level)) - 1   # the rightmost leaf below
    route_dst = np.where(d == UP, EXT, right)
    lca = np.where(d == UP, -1, g.L)
    return cyc, ident, route_dst, lca, (d, h, w)


def run_batch(g: Geometry, cycles: int, cycle, message, src, dst, wire,
              choices=None) -> Streams:
    """Run ``cycles`` delivery cycles at once.

    Parameters
    ----------
    g : Geometry
    cycles : int
        Delivery cycles in the batch.
    cycle, message, src, dst, wire : ndarray of int
        Every injected (non-local) message: its cycle in the batch, index, endpoints
        and the wire of its source channel.
    choices : ndarray of int, shape (messages, hops, stages), optional
        Off-line: every message's decision value at every stage of every hop.

    Returns
    -------
    Streams
        The messages (first, in the order given) and the phantoms of every cycle.
    """
    pc, pid, pdst, plca, (pd, ph, pw) = _phantoms(g, cycles)
    N = len(cycle)
    ch = None
    if not g.online:
        ch = np.full((N + len(pc), g.max_hops, max(1, g.max_stages)), -1, dtype=np.int64)
        if N:
            ch[:N] = choices
    st = Streams(np.r_[cycle, pc].astype(np.int64), np.r_[message, pid].astype(np.int64),
                 np.r_[dst, pdst].astype(np.int64), np.r_[_lca(g, src, dst), plca], ch,
                 g.max_hops)
    e = np.arange(N)
    from_ext = src == EXT
    heap = np.where(from_ext, 0, g.first_leaf + src)
    _arrive(g, st, e, np.where(from_ext, DOWN, UP), heap, wire, np.zeros(N, np.int64),
            np.zeros(N, np.int64))
    p = np.arange(N, st.size)
    _arrive(g, st, p, pd, ph, pw, g.link_delay(ph), np.zeros(len(p), np.int64),
            own=np.ones(len(p), dtype=bool))
    for k in range(g.L - 1, -1, -1):
        _through_level(g, st, k, True)
    for k in range(g.L):
        _through_level(g, st, k, False)
    _acknowledge_through_phantoms(g, st, N)
    return st


def _acknowledge_through_phantoms(g: Geometry, st: Streams, N: int) -> None:
    """A stream lost on a wire stuck at 1 is acknowledged through that wire's phantom
    (:meth:`fatnet.golden.cycle._Cycle.acknowledge_through_phantoms`): one pass per
    phantom settles every chain."""
    P = len(g.phantom_wires)
    on = np.flatnonzero((st.lost_code == _STUCK) & (st.lost_b == 1))
    if not P or not len(on):
        return
    last = st.path[on, st.path_len[on] - 1]
    key = g.wire_key(last[:, 1], last[:, 0], last[:, 2])
    pkeys = np.asarray([g.wire_key(*k) for k in g.phantom_wires], dtype=np.int64)
    phantom = N + st.cycle[on] * P + np.searchsorted(pkeys, key)
    s = g.link_delay(last[:, 0])
    for _ in range(P):
        ack = st.ack[phantom]
        st.ack[on] = np.where(ack >= 0, np.maximum(ack + s, last[:, 3] - s) - s
                              + st.reg_sum[on], st.ack[on])


# ---------------------------------------------------------------------- switch setting
def set_switches_batch(g: Geometry, route_of, cycle, message, src, dst, wire):
    """Off-line switch settings of many one-cycle sets at once
    (:func:`fatnet.golden.fattree.switching.set_switches` on every cycle).

    ``route_of(cascade, occupied)`` routes one concentrator
    (:func:`fatnet.golden.fattree.concentrator.route_cascade`, memoised by the caller):
    the occupied inputs as a sorted tuple or a bit mask -> (the output each input
    reaches, -1 if it is not routed; its edge at every stage).
    Returns (choices per message, hop and stage; routed mask).
    """
    N = len(cycle)
    choices = np.full((N, g.max_hops, max(1, g.max_stages)), -1, dtype=np.int64)
    st = Streams(cycle, message, dst, _lca(g, src, dst), choices, g.max_hops, False)
    from_ext = src == EXT
    heap = np.where(from_ext, 0, g.first_leaf + src)
    zero = np.zeros(N, dtype=np.int64)
    _arrive(g, st, np.arange(N), np.where(from_ext, DOWN, UP), heap, wire, zero, zero,
            faults=False)
    routed = np.ones(N, dtype=bool)
    for k, up in [(k, True) for k in range(g.L - 1, -1, -1)] + [(k, False)
                                                                for k in range(g.L)]:
        e = np.flatnonzero(st.waiting)
        e = e[np.log2(st.node[e] + 1).astype(np.int64) == k]
        port = _out_port(g, st, e)
        keep = (port == PORT_U) == up
        e, port = e[keep], port[keep]
        if not len(e):
            continue
        st.waiting[e] = False
        casc = g.cascade[(k, up)]
        x = _concentrator_input(g, k, up, st.in_port[e], st.wire[e])
        out, ok = _route_instances(casc, route_of, _instances(st, e, port), x,
                                   choices, e, st.hops)
        routed[e[~ok]] = False
        e, port, out = e[ok], port[ok], out[ok]
        node = st.node[e]
        heap = np.where(port == PORT_U, node, 2 * node + np.where(port == PORT_L, 1, 2))
        st.hops[e] += 1
        _arrive(g, st, e, np.where(port == PORT_U, UP, DOWN), heap, out, st.time[e],
                st.pos[e], faults=False)
    return choices, routed


def _route_instances(casc, route_of, inst, x, choices, e, hops):
    """Route every concentrator instance's occupied inputs; fill the choices of the
    routed streams; return (output reached, routed?) per stream.

    Instances with the same occupied inputs route the same way: up to 64 inputs, the
    occupied set is a bit mask and each distinct mask is routed once.
    """
    order = np.lexsort((x, inst))
    s_inst, s_x = inst[order], x[order]
    start = np.flatnonzero(np.r_[True, s_inst[1:] != s_inst[:-1]])
    depth = len(casc.stages)
    size = np.diff(np.r_[start, len(order)])
    if casc.inputs <= 64:
        bit = np.left_shift(np.uint64(1), s_x.astype(np.uint64))
        masks, which = np.unique(np.bitwise_or.reduceat(bit, start), return_inverse=True)
        tables = [route_of(casc, mask) for mask in masks.tolist()]
    else:
        which = np.arange(len(start))
        tables = [route_of(casc, tuple(s_x[a:a + n].tolist()))
                  for a, n in zip(start.tolist(), size.tolist())]
    reached = np.stack([t[0] for t in tables])
    u = np.repeat(which.reshape(-1), size)
    out = np.empty(len(e), dtype=np.int64)
    out[order] = reached[u, s_x]
    if depth:
        edges = np.stack([t[1] for t in tables])
        ok = reached[u, s_x] >= 0
        sel = order[ok]
        choices[e[sel], hops[e[sel]], :depth] = edges[u[ok], s_x[ok], :depth]
    return out, out >= 0


# ---------------------------------------------------------------------- results
def cycle_results(g: Geometry, st: Streams, cycles: int, ms, locals_, injections):
    """The batch as :class:`CycleResult` objects, equal to the scalar engine's.

    ``locals_[b]`` lists cycle b's local messages; ``injections[b]`` its injections
    (message -> (wire, stream)).
    """
    net = g.net
    stuck = dict(net.stuck_wires)
    results = []
    for b in range(cycles):
        outcomes = {m: Outcome(m, int(ms.src[m]), int(ms.dst[m]), "local")
                    for m in locals_[b]}
        results.append(CycleResult(g.length, outcomes, dict(injections[b]), dict(stuck),
                                   {}))
    for i in range(st.size):
        b, m = int(st.cycle[i]), int(st.message[i])
        res = results[b]
        if m >= 0:
            o = Outcome(m, int(ms.src[m]), int(ms.dst[m]), "lost",
                        list(res.injections[m][1]))
            res.outcomes[m] = o
        else:
            o = res.phantoms[m] = Outcome(m, None, None, "lost", [1] * g.length)
        _fill_outcome(g, st, i, o)
    for res in results:   # the scalar engine's order: locals, then messages ascending
        res.outcomes = dict(sorted(res.outcomes.items(),
                                   key=lambda kv: (kv[1].status != "local", kv[0])))
        res.phantoms = dict(sorted(res.phantoms.items(), reverse=True))
    return results


def _fill_outcome(g: Geometry, st: Streams, i: int, o: Outcome) -> None:
    n = int(st.path_len[i])
    o.path = [Occupancy((int(d), int(h)), int(w), int(t), int(p))
              for h, d, w, t, p in st.path[i, :n].tolist()]
    o.hop_registers = [int(r) for r in st.regs[i, :int(st.hops[i])]]
    if st.status[i] == 1:
        o.status = "delivered"
        o.arrival = int(st.arrival[i])
    if st.ack[i] >= 0:
        o.ack_time = int(st.ack[i])
    code = int(st.lost_code[i])
    if code == _STUCK:
        node = int(st.lost_node[i])
        o.lost_at = (None if node < 0 else node, f"input wire {int(st.lost_a[i])}", -1,
                     f"its wire is stuck at {int(st.lost_b[i])}")
    elif code:
        a, b = int(st.lost_a[i]), int(st.lost_b[i])
        reason = {_TAKEN_ALL: "every output of its input is taken",
                  _TAKEN: f"output {a} already taken",
                  _NO_EDGE: f"decision {a} names no edge (input {int(st.lost_input[i])} "
                            f"has {b})"}[code]
        o.lost_at = (int(st.lost_node[i]), PORT_NAMES[int(st.lost_port[i])],
                     int(st.lost_stage[i]), reason)
