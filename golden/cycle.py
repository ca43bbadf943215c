"""The claim / register / acknowledge engine of one delivery cycle, for every family.

A circuit-switched, bit-serial network is, for this engine, a *fabric* of switches
joined by channels of parallel wires. Channel ids and switch ids are opaque to the
engine (any hashable, ordered values); the fabric answers the questions below, and the
engine runs every message of one delivery cycle through it, bit-time for bit-time.

Timing (bit-times from the start of the delivery cycle; docs/hardware.md "Timing"):

* Every source drives its stream from bit-time 0 (M bit at 0) on its wire of its
  source channel (:func:`fatnet.golden.bitstream.frame`).
* A switch input sees M at ``t`` and its field of ``k`` branch bits (``k`` = 1 for a
  fat-tree node or a splitter, 0 where a switch has one branch, 2 for a 4-way one) at
  ``t + 1 .. t + k``; it puts M' into the chosen branch's stage cascade at ``t + k``
  (in the slot of the last bit it consumed).
* A stage with decision width ``w`` that sees M at ``tau`` reads ``w`` decision bits
  (off-line) and claims its chosen output at ``tau + w``; on-line stages have
  ``w = 0`` and take the first free output of their input, in edge order. A claim
  succeeds if the output is free (and usable: a fabric may mask outputs, e.g. edges
  into faulty switches); claims at one stage in one bit-time are served in increasing
  input index. A claimed output stays connected until the cycle ends. A message whose
  claim fails is lost there; its stream goes no further.
* Every stage's outputs are registered (the last is the switch's output register; a
  branch without stages has just that one), so what a stage emits at ``t`` enters the
  next stage, or the next channel, at ``t + 1``: a switch holds every stream bit for
  ``max(1, stages)`` bit-times.
* Link pipelining: a fabric may put ``link_delay(channel)`` registers on a channel
  between its driver and the switch it feeds, both ways (the forward wire and its
  acknowledgment). A channel wire's waveform is the one the fed switch sees: M is
  there ``link_delay`` bit-times after the driving stage emits it.
* Acknowledgment: the destination drives the reverse wire of its delivery wire from
  the bit-time M arrives; each switch passes it back through the same number of
  registers (``registers``), and each pipelined link through its ``link_delay``, so
  the source sees it their sum later.

The fabric interface (duck-typed):

``online`` : bool
``head(channel, wire)`` -> (switch, in_port) the wire feeds, or None for a destination.
``branch(switch, in_port, value)`` -> the out_port the branch bits select.
``field_width(switch, in_port)`` -> ``k`` (optional; default 1).
``stages(switch, out_port)`` -> the cascade's stages (``adjacency``, ``decision_width``).
``stage_input(switch, out_port, in_port, wire)`` -> input index of the first stage.
``out_wire(switch, out_port, output)`` -> (channel, wire) a last-stage output drives.
``registers(switch, out_port)`` -> ``max(1, stages)``.
``port_name(out_port)`` -> a name for reports.
``link_delay(channel)`` -> registers on the channel's link (optional; default 0).
``usable(switch, out_port, stage, output)`` -> bool (optional; default: every output).
``stuck_wires`` : dict ``(*channel, wire)`` -> 0 or 1 (optional; default: none).

Stuck wires (a fault the network does not know of, ``--stuck-link``): a channel wire
in the fabric's ``stuck_wires`` carries its value whatever drives it, and the switch it
feeds sees only that. A stream routed onto it goes no further (lost there); the output
that drove it stays claimed to the end of the cycle.

* Stuck at 0: the fed switch holds nothing for that wire, so its reverse wire stays
  low and the lost stream is never acknowledged.
* Stuck at 1: the fed switch sees a *phantom*, a stream of ones whose M bit is there at
  bit-time ``link_delay(channel)`` (the link's registers are cleared with the cycle),
  and routes it like any message: its branch and decision bits are all ones, it claims
  and holds outputs, it may be delivered, and a destination acknowledges it. Phantoms
  are kept apart from the messages (``CycleResult.phantoms``, keys -1, -2, ...) and
  are in the waveforms. The phantom's acknowledgment comes back on the stuck wire's
  reverse wire, and the switch that drove the wire passes it on to whichever of its
  inputs holds that output: a stream lost there is acknowledged when both the
  connection and the phantom's acknowledgment are there, ``registers`` later
  (``max(A + s, t - s) + registers``, with A the phantom's acknowledgment, s the link's
  registers and t the bit-time the stream's M reached the wire), then back as usual.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

import numpy as np

from .bitstream import bits_to_int

__all__ = ["Occupancy", "Outcome", "CycleResult", "run_cycle", "MAX_LINK_STAGES",
           "MAX_START_STAGES", "start_latency"]

#: Most registers a pipelined link may hold each way (``--link-stages``, every family).
MAX_LINK_STAGES = 8
#: Most register stages the start strobe may pass on its way to the switches
#: (``--start-stages``): a tree of fan-out 16 reaches 65,536 switches in 4.
MAX_START_STAGES = 4


def start_latency(network) -> int:
    """Clocks the start strobe spends in the network's start tree (``start_stages`` of a
    network that has one, else 0): bit-time 0 of a delivery cycle is the clock
    ``1 + start_latency`` after the strobe, and every driver and checker maps clocks to
    bit-times with it. The model's bit-times do not change."""
    return int(getattr(network, "start_stages", 0))


@dataclass(frozen=True)
class Occupancy:
    """A channel wire a message's stream runs on: its M bit is there at ``time``, and
    the bits after it are the source stream from index ``offset + 1`` on."""

    channel: tuple
    wire: int
    time: int
    offset: int

    @property
    def key(self) -> tuple:
        """``(*channel, wire)``: the wire's key in the waveforms and ``stuck_wires``."""
        return (*self.channel, self.wire)


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
    # (the switch's own and its out channel's link registers)
    hop_registers: list = field(default_factory=list)
    arrival: int | None = None  # bit-time of the M bit on the destination wire
    ack_time: int | None = None  # bit-time the source's reverse wire rises
    lost_at: tuple | None = None  # (switch, port name, stage, reason)

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
    """All outcomes of one delivery cycle, with the wires' waveforms on demand.

    ``injections`` is what the cycle was run from (message -> (wire, stream)), so a
    testbench can drive exactly what the model ran without running it again.
    """

    length: int
    outcomes: dict
    injections: dict = field(default_factory=dict)
    #: (*channel, wire) -> value: the fabric's ``stuck_wires``
    stuck: dict = field(default_factory=dict)
    #: -1, -2, ... -> Outcome of each wire stuck at 1's stream of ones (``src`` and
    #: ``dst`` None; ``path[0]`` the stuck wire)
    phantoms: dict = field(default_factory=dict)

    def _streams(self):
        """Every outcome, the messages' then the phantoms'."""
        return [*self.outcomes.values(), *self.phantoms.values()]

    def with_status(self, status: str) -> list[int]:
        return sorted(m for m, o in self.outcomes.items() if o.status == status)

    @property
    def delivered(self) -> list[int]:
        return self.with_status("delivered") + self.with_status("local")

    @property
    def lost(self) -> list[int]:
        return self.with_status("lost")

    def waveforms(self) -> dict:
        """Forward bits of every wire that carries anything: (*channel, wire) -> uint8
        array of ``length`` bit-times (a stuck wire: 0, or its phantom's ones)."""
        out = {key: np.zeros(self.length, dtype=np.uint8) for key in self.stuck}
        for o in self._streams():
            for q, occ in enumerate(o.path):
                key = occ.key
                if key in self.stuck and not (o.message < 0 and q == 0):
                    continue      # the fed switch sees the stuck value, not this stream
                bits = [1] + o.stream[occ.offset + 1:]
                wave = out.setdefault(key, np.zeros(self.length, dtype=np.uint8))
                end = min(self.length, occ.time + len(bits))
                wave[occ.time:end] = bits[:end - occ.time]
        return out

    def ack_waveforms(self) -> dict:
        """Reverse (acknowledgment) bits of every wire whose ack rises: same keys. Hop q
        of a path sees it ``sum(hop_registers[:q])`` before the source."""
        out = {}
        for o in self._streams():
            if o.ack_time is None:
                continue
            # a stream lost on a wire stuck at 1: that wire's reverse is the phantom's
            path = o.path if o.status == "delivered" else o.path[:-1]
            for q, occ in enumerate(path):
                wave = np.zeros(self.length, dtype=np.uint8)
                wave[o.ack_time - sum(o.hop_registers[:q]):] = 1
                out[occ.key] = wave
        return out


def run_cycle(fabric, length: int, messages: dict, injections: dict,
              local=()) -> CycleResult:
    """Run one delivery cycle through a fabric.

    Parameters
    ----------
    fabric
        See the module docstring.
    length : int
        Bit-times in the cycle (the waveforms' length).
    messages : dict
        Message index -> (source, destination, source channel), for every injected
        and local message.
    injections : dict
        Message index -> (wire, stream): the wire of its source channel it is driven
        on and its bit stream.
    local : iterable of int
        Messages delivered without the network (source == destination).
    """
    online = fabric.online
    usable = getattr(fabric, "usable", None)
    field_width = getattr(fabric, "field_width", None)
    link_delay = getattr(fabric, "link_delay", None)
    stuck_wires = dict(getattr(fabric, "stuck_wires", None) or {})
    outcomes: dict[int, Outcome] = {}
    for m in local:
        s, d, _ = messages[m]
        outcomes[m] = Outcome(m, s, d, "local")
    claimed: set = set()
    events: list = []  # (claim time, stage, switch, port, input, message, stream index)
    occ_cache: dict = {}

    def occupancy(*key):
        return occ_cache.setdefault(key, Occupancy(*key))

    def lose(o: Outcome, switch, port, stage, reason):
        o.status = "lost"
        o.lost_at = (switch, fabric.port_name(port), stage, reason)

    def arrive(o: Outcome, channel, wire: int, t: int, pos: int):
        """M bit on a channel wire at bit-time t; stream index of that M is pos."""
        head = fabric.head(channel, wire)
        value = stuck_wires.get((*channel, wire))
        own = o.message < 0 and len(o.path) == 1   # a phantom on its own wire
        if value is not None and not own:   # the fed switch sees only the value
            o.status = "lost"
            o.lost_at = (head and head[0], f"input wire {wire}", -1,
                         f"its wire is stuck at {value}")
            if value == 1:
                on_phantom.append(o)
            return
        if head is None:
            o.status = "delivered"
            o.arrival = t
            o.ack_time = t + sum(o.hop_registers)
            return
        switch, in_port = head
        k = 1 if field_width is None else field_width(switch, in_port)
        if pos + k >= len(o.stream):
            return lose(o, switch, in_port, -1, "stream ended before its branch bits")
        out_port = fabric.branch(switch, in_port, bits_to_int(o.stream[pos + 1:pos + 1 + k]))
        x = fabric.stage_input(switch, out_port, in_port, wire)
        enter_stage(o, switch, out_port, 0, x, t + k, pos + k)

    def enter_stage(o, switch, port, j, x, tau, pos):
        """M' at input x of stage j of a switch's branch at bit-time tau."""
        stages = fabric.stages(switch, port)
        if j == len(stages):  # tau already counts the last stage's register
            channel, wire = fabric.out_wire(switch, port, x)
            delay = 0 if link_delay is None else link_delay(channel)
            t = (tau if stages else tau + 1) + delay
            o.path.append(occupancy(channel, wire, t, pos))
            o.hop_registers.append(fabric.registers(switch, port) + delay)
            arrive(o, channel, wire, t, pos)
            return
        w = 0 if online else stages[j].decision_width
        heapq.heappush(events, (tau + w, j, switch, port, x, o.message, pos))

    # every wire stuck at 1 feeds its switch a stream of ones from the cycle's start
    phantoms: dict[int, Outcome] = {}
    phantom_of: dict = {}
    on_phantom: list = []      # streams lost on a wire stuck at 1
    for key in sorted(k for k, v in stuck_wires.items() if v == 1):
        *channel, wire = key
        channel = tuple(channel)
        t = 0 if link_delay is None else link_delay(channel)
        m = -1 - len(phantoms)
        o = phantoms[m] = phantom_of[key] = Outcome(m, None, None, "lost", [1] * length)
        o.path.append(occupancy(channel, wire, t, 0))
        arrive(o, channel, wire, t, 0)

    for m in sorted(injections):
        wire, stream = injections[m]
        s, d, channel = messages[m]
        o = outcomes[m] = Outcome(m, s, d, "lost", list(stream))
        o.path.append(occupancy(channel, wire, 0, 0))
        arrive(o, channel, wire, 0, 0)

    while events:
        t, j, switch, port, x, m, pos = heapq.heappop(events)
        o = outcomes[m] if m >= 0 else phantoms[m]
        stage = fabric.stages(switch, port)[j]
        edges = stage.adjacency[x]
        if online:
            free = [e for e in edges if (switch, port, j, e) not in claimed
                    and (usable is None or usable(switch, port, j, e))]
            if not free:
                lose(o, switch, port, j, "every output of its input is taken")
                continue
            out = free[0]
        else:
            w = stage.decision_width
            if pos + w >= len(o.stream):
                lose(o, switch, port, j, "stream ended inside its decision bits")
                continue
            choice = bits_to_int(o.stream[pos + 1:pos + 1 + w])
            if choice >= len(edges):
                lose(o, switch, port, j, f"decision {choice} names no edge "
                                         f"(input {x} has {len(edges)})")
                continue
            out = edges[choice]
            if (switch, port, j, out) in claimed or (
                    usable is not None and not usable(switch, port, j, out)):
                lose(o, switch, port, j, f"output {out} already taken")
                continue
            pos += w
        claimed.add((switch, port, j, out))
        enter_stage(o, switch, port, j + 1, out, t + 1, pos)

    # acknowledged through the phantom, once both are there (a phantom may itself be
    # lost on another wire stuck at 1: one pass per phantom settles every chain)
    for _ in range(len(phantoms)):
        for o in on_phantom:
            occ = o.path[-1]
            ack = phantom_of[occ.key].ack_time
            if ack is not None:   # the last hop's registers less the stuck link's s
                s = 0 if link_delay is None else link_delay(occ.channel)
                o.ack_time = max(ack + s, occ.time - s) - s + sum(o.hop_registers)
    return CycleResult(length, outcomes, dict(injections), stuck_wires, phantoms)
