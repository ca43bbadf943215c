"""Cycle-exact model of one delivery cycle of the fat-tree hardware.

Timing (bit-times from the start of the delivery cycle; README "Timing"):

* Every source drives its stream from bit-time 0 (M bit at 0).
* A node's selector sees M at ``t`` and the turn bit at ``t + 1``; it puts M' for the
  chosen branch into that branch's concentrator at ``t + 1`` (the turn bit's slot).
* A concentrator stage with decision width ``w`` that sees M at ``tau`` reads its
  decision bits at ``tau + 1 .. tau + w`` (off-line) and claims the chosen output at
  ``tau + w``, where it emits M'. On-line stages have ``w = 0``: they claim at ``tau``.
* A claim succeeds if the output is still free; claims at one stage at the same bit-time
  are served in increasing input index. A claimed output stays connected to its input
  until the delivery cycle ends. A message whose claim fails (or whose decision names an
  edge its input does not have) is lost there; its stream goes no further.
* On-line arbitration: the input takes its first edge (in edge order) whose output is free.
* Every stage's outputs are registered (the last stage's register is the node's output
  register; a node output without stages has just that one): what a stage emits at
  ``t`` enters the next stage, or the next channel, at ``t + 1``. So a node holds every
  stream bit for ``max(1, stages)`` bit-times and payload bits keep their spacing.
* Acknowledgment: the destination drives the reverse wire of its delivery wire to 1
  from the bit-time the M bit arrives. The reverse path has a register between
  concentrator stages and one at the node's input port, so it spends the same
  ``max(1, stages)`` bit-times in each node as the stream: the source's reverse wire
  rises that sum (``FatTreeNetwork.ack_latency``) later and stays 1 to the cycle's end.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from ..bitstream import bits_to_int
from .topology import DOWN, EXT, PORT_L, PORT_R, PORT_U, UP, out_port_for

__all__ = ["Occupancy", "Outcome", "CycleResult", "simulate_cycle"]


@dataclass(frozen=True)
class Occupancy:
    """A channel wire a message's stream runs on: its M bit is there at ``time``, and
    the bits after it are the source stream from index ``offset + 1`` on."""

    heap: int
    direction: int
    wire: int
    time: int
    offset: int


@dataclass
class Outcome:
    """What happened to one message in one delivery cycle."""

    message: int
    src: int
    dst: int
    status: str  # "delivered", "lost" or "local"
    stream: list = field(default_factory=list)
    path: list = field(default_factory=list)  # Occupancy, source channel first
    # registers each hop puts on the way back (acknowledgment), source side first
    hop_registers: list = field(default_factory=list)
    arrival: int | None = None  # bit-time of the M bit on the destination wire
    ack_time: int | None = None  # bit-time the source's reverse wire rises
    lost_at: tuple | None = None  # (node, port name, stage, reason)

    @property
    def hops(self) -> int:
        return len(self.path) - 1

    @property
    def delivered_payload(self) -> int | None:
        """The payload bits as they arrive at the destination."""
        if self.status != "delivered":
            return None
        last = self.path[-1]
        return bits_to_int(self.stream[last.offset + 1:])


@dataclass
class CycleResult:
    """All outcomes of one delivery cycle, with the wires' waveforms on demand."""

    length: int
    outcomes: dict

    def with_status(self, status: str) -> list[int]:
        return sorted(m for m, o in self.outcomes.items() if o.status == status)

    @property
    def delivered(self) -> list[int]:
        return self.with_status("delivered") + self.with_status("local")

    @property
    def lost(self) -> list[int]:
        return self.with_status("lost")

    def waveforms(self) -> dict:
        """Forward bits of every wire that carries anything: (direction, heap, wire) ->
        uint8 array of ``length`` bit-times."""
        out = {}
        for o in self.outcomes.values():
            for occ in o.path:
                bits = [1] + o.stream[occ.offset + 1:]
                wave = out.setdefault((occ.direction, occ.heap, occ.wire),
                                      np.zeros(self.length, dtype=np.uint8))
                end = min(self.length, occ.time + len(bits))
                wave[occ.time:end] = bits[:end - occ.time]
        return out

    def ack_waveforms(self) -> dict:
        """Reverse (acknowledgment) bits of every wire whose ack rises: same keys."""
        out = {}
        for o in self.outcomes.values():
            if o.status != "delivered":
                continue
            for q, occ in enumerate(o.path):
                wave = np.zeros(self.length, dtype=np.uint8)
                wave[o.arrival + sum(o.hop_registers[q:]):] = 1
                out[(occ.direction, occ.heap, occ.wire)] = wave
        return out


def _channel_to_leaf(net, heap: int) -> int | None:
    first_leaf = (1 << net.L) - 1
    return heap - first_leaf if heap >= first_leaf else None


def simulate_cycle(net, ms, injections: dict, local=()) -> CycleResult:
    """Run one delivery cycle.

    Parameters
    ----------
    net : FatTreeNetwork
    ms : MessageSet
        Supplies sources and destinations (for the report; routing reads the streams).
    injections : dict
        Message index -> (wire, stream): the wire of its source's channel it is driven
        on and the bit stream (from :func:`fatnet.golden.fattree.bitstream.encode`).
    local : iterable of int
        Local messages (src == dst) of this cycle: delivered without the network.
    """
    online = net.spec.mode == "online"
    outcomes: dict[int, Outcome] = {}
    for m in local:
        outcomes[m] = Outcome(m, int(ms.src[m]), int(ms.dst[m]), "local")
    claimed: set = set()
    events: list = []  # (claim time, stage, node, port, input, message, hop state)

    def lose(o: Outcome, node, port, stage, reason):
        o.status = "lost"
        o.lost_at = (node, "ULR"[port], stage, reason)

    def arrive(o: Outcome, node: int, in_port: int, wire: int, t: int, pos: int):
        """M bit at a node input wire at bit-time t; stream index of that M is pos."""
        stream = o.stream
        if pos + 1 >= len(stream):
            return lose(o, node, in_port, -1, "stream ended before the turn bit")
        out_port = out_port_for(in_port, stream[pos + 1])
        x = net.concentrator_input(node, out_port, in_port, wire)
        enter_stage(o, node, out_port, 0, x, t + 1, pos + 1)

    def enter_stage(o, node, port, j, x, tau, pos):
        """M' at input x of stage j of a node's concentrator at bit-time tau."""
        casc = net.cascades[(node, port)]
        if j == len(casc.stages):  # tau already counts the last stage's register
            leave(o, node, port, x, tau if casc.stages else tau + 1, pos)
            return
        w = 0 if online else casc.stages[j].decision_width
        heapq.heappush(events, (tau + w, j, node, port, x, o.message, pos))

    def leave(o, node, port, wire, t, pos):
        heap, direction = net.port_channel(node, port, direction_in=False)
        o.path.append(_occ(heap, direction, wire, t, pos))
        o.hop_registers.append(net.hop_registers(node, port))
        if port == PORT_U and node == 0:
            return deliver(o, t)
        leaf = _channel_to_leaf(net, heap) if direction == DOWN else None
        if leaf is not None:
            return deliver(o, t)
        if port == PORT_U:
            parent = (node - 1) // 2
            arrive(o, parent, PORT_L if node % 2 == 1 else PORT_R, wire, t, pos)
        else:
            arrive(o, heap, PORT_U, wire, t, pos)

    def deliver(o, t):
        o.status = "delivered"
        o.arrival = t
        o.ack_time = t + sum(o.hop_registers)

    occ_cache: dict = {}

    def _occ(*key):
        return occ_cache.setdefault(key, Occupancy(*key))

    for m in sorted(injections):
        wire, stream = injections[m]
        s, d = int(ms.src[m]), int(ms.dst[m])
        o = outcomes[m] = Outcome(m, s, d, "lost", list(stream))
        if s == EXT:
            o.path.append(_occ(0, DOWN, wire, 0, 0))
            arrive(o, 0, PORT_U, wire, 0, 0)
        else:
            heap = net.tree.leaf_heap(s)
            o.path.append(_occ(heap, UP, wire, 0, 0))
            arrive(o, (heap - 1) // 2, PORT_L if heap % 2 == 1 else PORT_R, wire, 0, 0)

    while events:
        t, j, node, port, x, m, pos = heapq.heappop(events)
        o = outcomes[m]
        stage = net.cascades[(node, port)].stages[j]
        edges = stage.adjacency[x]
        if online:
            free = [e for e in edges if (node, port, j, e) not in claimed]
            if not free:
                lose(o, node, port, j, "every output of its input is taken")
                continue
            out = free[0]
        else:
            w = stage.decision_width
            if pos + w >= len(o.stream):
                lose(o, node, port, j, "stream ended inside its decision bits")
                continue
            choice = bits_to_int(o.stream[pos + 1:pos + 1 + w])
            if choice >= len(edges):
                lose(o, node, port, j, f"decision {choice} names no edge "
                                       f"(input {x} has {len(edges)})")
                continue
            out = edges[choice]
            if (node, port, j, out) in claimed:
                lose(o, node, port, j, f"output {out} already taken")
                continue
            pos += w
        claimed.add((node, port, j, out))
        enter_stage(o, node, port, j + 1, out, t + 1, pos)

    return CycleResult(net.cycle_length, outcomes)
