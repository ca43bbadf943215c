"""The fat-tree's terminal wires of many delivery cycles in bulk, and the soak's cycles.

:func:`terminal_waves` gives what every terminal wire of many independent delivery
cycles carries, bit-time for bit-time (:class:`~fatnet.golden.cycle.TerminalWaves`),
from the batched engine (:func:`fatnet.golden.fattree.batchrun.inject` on
:func:`fatnet.golden.fattree.batch.run_batch`) and :func:`encode_streams`, the
source streams of many messages as one array (bit for bit
:func:`fatnet.golden.fattree.bitstream.encode`). Each cycle equals the scalar engine's
:class:`~fatnet.golden.cycle.CycleResult` of the same messages at the terminals: the
injections, :meth:`~fatnet.golden.cycle.CycleResult.waveforms` and
:meth:`~fatnet.golden.cycle.CycleResult.ack_waveforms`, in both switch-setting modes,
with link stages and wires stuck at 0 or 1 (their phantoms).

:func:`one_cycle_sets` draws random one-cycle sets (every channel's load within its
effective capacity), what an off-line tree's cycles carry: the switch setter routes
them whole and none of their messages is lost on a tree without stuck wires.
"""

from __future__ import annotations

import numpy as np

from ..bitstream import bits_array
from ..cycle import TerminalWaves
from ..errors import ParameterError
from ..messages import EXT
from .batch import BATCH_MESSAGES, geometry
from .batchrun import inject
from .topology import DOWN, UP

__all__ = ["encode_streams", "terminal_waves", "one_cycle_sets"]


def _hops(g, src: np.ndarray, dst: np.ndarray):
    """Per message and hop (``max_hops`` columns, in path order): the node's level,
    whether it sends the message up, its turn bit, whether the hop exists
    (:meth:`fatnet.golden.fattree.topology.FatTree.hops`)."""
    L = g.L
    lca = np.asarray(g.net.tree.lca_level(src, dst), dtype=np.int64).reshape(-1)
    climb = np.where(src == EXT, 0, L - np.maximum(lca, 0))
    q = np.arange(g.max_hops)[None, :]
    climbing = q < climb[:, None]
    level = np.where(climbing, L - 1 - q, lca[:, None] + 1 + q - climb[:, None])
    up = climbing & (level > lca[:, None])
    valid = climbing | ((dst[:, None] != EXT) & (level < L))
    down_bit = (dst[:, None] >> np.clip(L - 1 - level, 0, None)) & 1
    bit = np.where(climbing, up, down_bit).astype(np.int64)
    return np.where(valid, level, 0), up, bit, valid


def _stage_widths(g) -> np.ndarray:
    """Decision widths [level, up?, stage] of the concentrators (0 past the last
    stage; all 0 on-line: the stream carries turn bits only)."""
    widths = np.zeros((g.L, 2, max(1, g.max_stages)), dtype=np.int64)
    if not g.online:
        for (k, up), casc in g.cascade.items():
            for j, stage in enumerate(casc.stages):
                widths[k, int(up), j] = stage.decision_width
    return widths


def encode_streams(net, src, dst, payload, choices=None) -> tuple[np.ndarray, np.ndarray]:
    """The source streams of many messages (:func:`~.bitstream.encode` of each).

    Parameters
    ----------
    net : FatTreeNetwork
    src, dst : array of int
        Endpoints (leaves or ``EXT``), none local.
    payload : array of int
        ``payload_bits`` bits each (Python integers beyond 62 bits).
    choices : ndarray of int, shape (messages, max_hops, stages), optional
        Off-line: every hop's edge at every stage (as the switch setter gives them);
        needed where a hop has stages (:class:`~fatnet.golden.errors.ParameterError`
        otherwise, as the encoder refuses it).

    Returns
    -------
    (streams, lengths)
        uint8 ``(messages, longest)``, zero past each stream's end, and the lengths.
    """
    g = geometry(net)
    src, dst = (np.asarray(a, dtype=np.int64).reshape(-1) for a in (src, dst))
    M = src.size
    level, up, bit, valid = _hops(g, src, dst)
    width = _stage_widths(g)[level, up.astype(np.int64)] * valid[:, :, None]
    field = np.where(valid, 1 + width.sum(axis=2), 0)
    start = 1 + np.cumsum(field, axis=1) - field         # each hop's turn bit
    head = 1 + field.sum(axis=1)
    pb = net.spec.payload_bits
    lengths = head + pb
    streams = np.zeros((M, int(lengths.max(initial=1))), dtype=np.uint8)
    streams[:, 0] = 1
    rows = np.broadcast_to(np.arange(M)[:, None], valid.shape)
    streams[rows[valid], start[valid]] = bit[valid]
    if width.any():
        if choices is None:
            raise ParameterError("off-line mode needs the decision bits of every hop")
        _decision_bits(streams, rows, start + 1, width, np.asarray(choices, np.int64))
    if pb:
        streams[np.arange(M)[:, None], head[:, None] + np.arange(pb)] = bits_array(
            payload, pb)
    return streams, lengths


def _decision_bits(streams, rows, first, width, choices) -> None:
    """Every stage's decision MSB first after its hop's turn bit (in place)."""
    for j in range(width.shape[2]):
        w = width[:, :, j]
        value = choices[:, :w.shape[1], j]
        for b in range(int(w.max())):
            on = b < w
            streams[rows[on], (first + b)[on]] = (value[on] >> (w[on] - 1 - b)) & 1
        first = first + w


def _terminal_index(g, direction, heap, leaf_direction):
    """Terminal of a channel wire (leaves 0 .. n-1, the external interface n) whose
    leaf side goes ``leaf_direction``; -1 for a wire between nodes."""
    leaf = (direction == leaf_direction) & (heap >= g.first_leaf)
    ext = (direction != leaf_direction) & (heap == 0)
    return np.where(leaf, heap - g.first_leaf, np.where(ext, g.n, -1))


def terminal_waves(net, cycle, src, dst, payload) -> TerminalWaves:
    """Every terminal wire of many independent delivery cycles of ``net`` (cycles
    numbered in the order of their labels ``cycle``): what the sources drive (each
    source's messages of a cycle on wires 0, 1, ... in the order given; off-line with
    the switch setter's decisions), their acknowledgments, the destinations' delivery
    wires (the phantoms of wires stuck at 1 included), and which messages were
    delivered (local ones are, without wires; a message the cycle cannot carry, past
    its source's wires or off-line with no path through a concentrator, is not).

    Terminals ``0 .. n-1`` are the leaves, ``n`` the external interface. Memory: three
    bytes per cycle, bit-time, terminal and wire, besides the engine's batches of at
    most :data:`~fatnet.golden.fattree.batch.BATCH_MESSAGES` streams.
    """
    g = geometry(net)
    cycle, src, dst = (np.asarray(a, dtype=np.int64).reshape(-1) for a in (cycle, src, dst))
    wide = net.spec.payload_bits > 62     # beyond int64: Python integers
    payload = np.asarray(payload, dtype=object if wide else np.int64).reshape(-1)
    labels, cyc = np.unique(cycle, return_inverse=True)
    cyc = cyc.reshape(-1)
    shape = (labels.size, g.length, g.n + 1, int(max(g.caps[0], g.caps[g.L])))
    waves = TerminalWaves(np.zeros(shape, np.uint8), np.zeros(shape, np.uint8),
                          np.zeros(shape, np.uint8), (), (), src == dst,
                          _terminal_channels(g))
    moving = np.flatnonzero(src != dst)
    moving = moving[np.argsort(cyc[moving], kind="stable")]
    for part in _batches(cyc[moving]):
        e = moving[part]
        first = int(cyc[e[0]])
        _fill(g, waves, cyc[e], first, e, src[e], dst[e], payload[e])
    return waves


def _terminal_channels(g) -> tuple:
    """Per terminal: (endpoint, its send wires' channel, its recv wires' channel)."""
    leaves = tuple((x, (UP, g.first_leaf + x), (DOWN, g.first_leaf + x))
                   for x in range(g.n))
    return leaves + ((EXT, (DOWN, 0), (UP, 0)),)


def _batches(cyc: np.ndarray):
    """Slices of the (sorted) cycle labels: whole cycles, at most BATCH_MESSAGES
    messages a slice unless one cycle has more (then that cycle alone)."""
    ends = np.r_[np.flatnonzero(cyc[1:] != cyc[:-1]) + 1, cyc.size]
    start = 0
    while start < cyc.size:
        after = ends[ends > start]
        fit = after[after <= start + BATCH_MESSAGES]
        stop = int(fit[-1] if fit.size else after[0])
        yield slice(start, stop)
        start = stop


def _fill(g, waves: TerminalWaves, cyc, first: int, message, src, dst, payload) -> None:
    """Run one batch of messages (cycle labels ``cyc`` from ``first``) and write its
    terminals' wires into ``waves``."""
    st, wire, deferred, choices = inject(g, int(cyc[-1]) - first + 1, cyc - first,
                                         message, src, dst)
    go = ~deferred
    N = int(go.sum())
    streams, _ = encode_streams(g.net, src[go], dst[go], payload[go], choices)
    T = g.length
    length = min(streams.shape[1], T)
    x_src = np.where(src[go] == EXT, g.n, src[go])
    waves.drive[cyc[go][:, None], np.arange(length), x_src[:, None],
                wire[go][:, None]] = streams[:, :length]
    waves.delivered[message[go]] = st.status[:N] == 1
    _recv(g, waves.recv, st, first, streams, N)
    _acks(g, waves.send_ack, st, first)


def _recv(g, recv, st, first: int, streams, N: int) -> None:
    """The delivery wires: every delivered stream from its M bit on (a fresh M bit,
    then what its nodes left of its stream; a phantom's ones)."""
    i = np.flatnonzero(st.status == 1)
    last = st.path[i, st.path_len[i] - 1]
    heap, direction, wire, t, pos = last.T
    x = _terminal_index(g, direction, heap, DOWN)
    T, (terminals, wires) = g.length, recv.shape[2:]
    span = int((T - t).max(initial=0))
    k = np.arange(span)
    # flat index of (cycle, bit-time, terminal, wire): a bit-time is a fixed stride
    at = ((((st.cycle[i] + first) * T + t) * terminals + x) * wires + wire)[:, None] \
        + k * (terminals * wires)
    value = np.ones(at.shape, dtype=np.uint8)
    message = i < N
    padded = np.zeros((N, max(int(pos.max(initial=0)) + span, streams.shape[1])),
                      dtype=np.uint8)
    padded[:, :streams.shape[1]] = streams
    value[message, 1:] = np.take_along_axis(padded[i[message]], pos[message, None]
                                            + k[1:], axis=1)
    on = t[:, None] + k < T
    recv.reshape(-1)[at[on]] = value[on]


def _acks(g, send_ack, st, first: int) -> None:
    """The sources' reverse wires: 1 from the acknowledgment's bit-time, for every
    stream acknowledged whose first wire is a terminal's (a stream lost on its first
    wire, stuck at 1, hears nothing there: the phantom's acknowledgment is that
    wire's)."""
    i = np.flatnonzero((st.ack >= 0) & ((st.status == 1) | (st.path_len > 1)))
    heap, direction, wire = st.path[i, 0, 0], st.path[i, 0, 1], st.path[i, 0, 2]
    x = _terminal_index(g, direction, heap, UP)
    i, wire, x = i[x >= 0], wire[x >= 0], x[x >= 0]
    T = g.length
    send_ack[(st.cycle[i] + first)[:, None], np.arange(T)[None, :], x[:, None],
             wire[:, None]] = np.arange(T)[None, :] >= st.ack[i][:, None]


def one_cycle_sets(net, cycles: int, rng, offers: int | None = None):
    """Random one-cycle sets of ``net``'s effective capacities: per cycle, ``offers``
    random messages (default four per terminal; endpoints uniform over the leaves and
    the external interface, none local) are taken in turn, each kept if every channel
    of its path still has room in that cycle (the ``k``-th offer of every cycle at
    once).

    Returns
    -------
    (cycle, src, dst)
        The kept messages, by cycle (0 .. ``cycles`` - 1) in the order drawn.
    """
    tree, n = net.tree, net.n
    offers = 4 * (n + 1) if offers is None else offers
    src = rng.integers(EXT, n, (cycles, offers))
    other = rng.integers(EXT, n - 1, src.shape)
    dst = other + (other >= src)                           # any endpoint but src
    cap = np.asarray(net.effective_cap, dtype=np.int64).reshape(-1)
    load = np.zeros((cycles, cap.size), dtype=np.int64)
    kept = np.zeros(src.shape, dtype=bool)
    for k in range(offers):
        c, direction, heap = tree.channel_incidence(src[:, k], dst[:, k])
        channel = direction * tree.num_channels + heap
        full = np.zeros(cycles, dtype=bool)
        full[c[load[c, channel] >= cap[channel]]] = True
        take = ~full[c]
        load[c[take], channel[take]] += 1
        kept[:, k] = ~full
    cycle, offer = np.nonzero(kept)
    return cycle, src[cycle, offer], dst[cycle, offer]
