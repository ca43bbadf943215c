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

The fabric is a :class:`Fabric`: a protocol whose required members the fabric
defines (``online``, ``head``, ``branch``, ``stages``, ``stage_input``, ``out_wire``,
``registers``, ``port_name``) and whose optional ones (``field_width``: 1 branch bit,
``link_delay``: no link registers, ``usable``: every output, ``stuck_wires``: none) it
takes from the protocol by subclassing it, unless it has its own.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol, runtime_checkable

import numpy as np

from .bitstream import bits_to_int
from .errors import ParameterError

__all__ = ["Fabric", "Network", "StartTree", "StuckWires", "checked_stuck_links",
           "stuck_wires", "Occupancy",
           "Outcome", "CycleResult", "run_cycle", "MAX_LINK_STAGES", "MAX_START_STAGES",
           "start_latency", "TerminalWaves"]

#: Most registers a pipelined link may hold each way (``--link-stages``, every family).
MAX_LINK_STAGES = 8
#: Most register stages the start strobe may pass on its way to the switches
#: (``--start-stages``): a tree of fan-out 16 reaches 65,536 switches in 4.
MAX_START_STAGES = 4


class Fabric(Protocol):
    """What the cycle engine asks of a network (see the module docstring for the timing).

    Channel, switch and port ids are opaque to the engine (any hashable, ordered
    values). A fabric subclasses this protocol to take the defaults of the optional
    members (:meth:`field_width`, :meth:`link_delay`, :meth:`usable`,
    :attr:`stuck_wires`); the others it must define.
    """

    #: Whether the stages take the first free output of their input (no decision bits).
    online: bool
    #: ``(*channel, wire)`` -> 0 or 1: channel wires stuck at a value (default: none).
    stuck_wires: Mapping[tuple, int] = MappingProxyType({})

    def head(self, channel, wire: int) -> tuple | None:
        """The ``(switch, in_port)`` a channel wire feeds, or None for a destination."""
        ...

    def branch(self, switch, in_port, value: int):
        """The out_port the branch bits ``value`` select."""
        ...

    def stages(self, switch, out_port) -> Sequence:
        """The branch's cascade of stages (each with ``adjacency`` and
        ``decision_width``)."""
        ...

    def stage_input(self, switch, out_port, in_port, wire: int) -> int:
        """The input index of the first stage a switch input's wire enters."""
        ...

    def out_wire(self, switch, out_port, output: int) -> tuple:
        """The ``(channel, wire)`` a last-stage output drives."""
        ...

    def registers(self, switch, out_port) -> int:
        """Registers the branch puts on a stream, ``max(1, stages)``."""
        ...

    def port_name(self, out_port) -> str:
        """A name of an out_port, for reports."""
        ...

    def field_width(self, switch, in_port) -> int:
        """Branch bits ``k`` a switch input reads (default 1)."""
        return 1

    def link_delay(self, channel) -> int:
        """Registers on a channel's link, each way (default 0)."""
        return 0

    def usable(self, switch, out_port, stage: int, output: int) -> bool:
        """Whether a stage output may be claimed (default: every one)."""
        return True


@runtime_checkable
class Network(Protocol):
    """What every family's golden network has, for the engines of every layer."""

    #: The registered family's name (:class:`fatnet.api.registry.Family`).
    family: str
    #: Bit-times of one delivery cycle.
    cycle_length: int
    #: Data bits of every message.
    payload_bits: int


@runtime_checkable
class StartTree(Protocol):
    """A network whose start strobe passes ``start_stages`` registers to the switches."""

    start_stages: int


@runtime_checkable
class StuckWires(Protocol):
    """A network with channel wires stuck at a value (``--stuck-link``): ``(*channel,
    wire)`` -> 0 or 1, the keys of its fabric's :attr:`Fabric.stuck_wires`."""

    stuck_wires: Mapping[tuple, int]


def checked_stuck_links(links, check) -> tuple:
    """A spec's stuck links, ``((*wire), value)`` pairs, each checked by ``check(*wire,
    value)`` (which returns the pair, or raises one line), sorted, each once; a wire
    named at 0 and at 1 is refused in one line rather than one of them dropped."""
    out = sorted({check(*key, value) for key, value in links})
    if len({key for key, _ in out}) != len(out):
        raise ParameterError(f"stuck_links names one wire twice, at 0 and at 1: {out}")
    return tuple(out)


def stuck_wires(network) -> Mapping[tuple, int]:
    """The network's stuck wires (none for a network that is no :class:`StuckWires`)."""
    return network.stuck_wires if isinstance(network, StuckWires) else {}


def start_latency(network) -> int:
    """Clocks the start strobe spends in the network's start tree (``start_stages`` of a
    :class:`StartTree` network, else 0): bit-time 0 of a delivery cycle is the clock
    ``1 + start_latency`` after the strobe, and every driver and checker maps clocks to
    bit-times with it. The model's bit-times do not change."""
    return int(network.start_stages) if isinstance(network, StartTree) else 0


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
    src: int | None   # None for a phantom (a wire stuck at 1)
    dst: int | None
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
class TerminalWaves:
    """What the terminals' wires carry in many delivery cycles, bit-time for bit-time
    (a batched engine's answer for a whole batch of cycles; each cycle equals its
    :class:`CycleResult`'s injections, :meth:`~CycleResult.waveforms` and
    :meth:`~CycleResult.ack_waveforms` at the terminals' wires, zeros where those have
    no key).

    Attributes
    ----------
    drive, send_ack : (cycles, length, terminals, wires) uint8
        Every source terminal's injection wires and their acknowledgments;
        ``drive[c, t, s, w]`` is source ``s``'s wire ``w`` at bit-time ``t``.
    recv : (cycles, length, terminals, wires) uint8
        Every destination terminal's delivery wires.
    send_channel, recv_channel : tuple
        The model's key of terminal ``x``'s wire ``w`` is ``(*send_channel, x, w)``
        (``send_ack``) or ``(*recv_channel, x, w)`` (``recv``), unless ``terminals``
        names them.
    delivered : (messages,) bool
        Whether each message (in the order given) was delivered.
    terminals : tuple, optional
        Per terminal ``x``, where its channels are not numbered by ``x`` (terminals
        of different kinds, at different places of the network): (its endpoint, as
        the family numbers its sources, its send wires' channel, its recv wires'
        channel); the keys are then ``(*channel, w)``. None: endpoint ``x``, keys as
        above.
    """

    drive: np.ndarray
    recv: np.ndarray
    send_ack: np.ndarray
    send_channel: tuple
    recv_channel: tuple
    delivered: np.ndarray
    terminals: tuple | None = None

    def endpoint(self, x: int) -> int:
        """Terminal ``x``'s endpoint (a source as the family's messages name it)."""
        return x if self.terminals is None else self.terminals[x][0]

    def send_key(self, x: int, w: int) -> tuple:
        """The model's key of terminal ``x``'s send wire ``w`` (its ``send_ack``)."""
        channel = (*self.send_channel, x) if self.terminals is None else self.terminals[x][1]
        return (*channel, w)

    def recv_key(self, x: int, w: int) -> tuple:
        """The model's key of terminal ``x``'s delivery wire ``w``."""
        channel = (*self.recv_channel, x) if self.terminals is None else self.terminals[x][2]
        return (*channel, w)


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

    def waveforms(self, keys=None) -> dict:
        """Forward bits of every wire that carries anything: (*channel, wire) -> uint8
        array of ``length`` bit-times (a stuck wire: 0, or its phantom's ones).
        ``keys`` (anything ``in`` answers for): only those wires (a testbench wants the
        terminals' alone)."""
        out = {key: np.zeros(self.length, dtype=np.uint8) for key in self.stuck
               if keys is None or key in keys}
        for o in self._streams():
            for q, occ in enumerate(o.path):
                key = occ.key
                if keys is not None and key not in keys:
                    continue
                if key in self.stuck and not (o.message < 0 and q == 0):
                    continue      # the fed switch sees the stuck value, not this stream
                bits = [1] + o.stream[occ.offset + 1:]
                wave = out.setdefault(key, np.zeros(self.length, dtype=np.uint8))
                end = min(self.length, occ.time + len(bits))
                wave[occ.time:end] = bits[:end - occ.time]
        return out

    def ack_waveforms(self, keys=None) -> dict:
        """Reverse (acknowledgment) bits of every wire whose ack rises: same keys. Hop q
        of a path sees it ``sum(hop_registers[:q])`` before the source. ``keys``: only
        those wires, as in :meth:`waveforms`."""
        out = {}
        for o in self._streams():
            if o.ack_time is None:
                continue
            # a stream lost on a wire stuck at 1: that wire's reverse is the phantom's
            path = o.path if o.status == "delivered" else o.path[:-1]
            for q, occ in enumerate(path):
                if keys is not None and occ.key not in keys:
                    continue
                wave = np.zeros(self.length, dtype=np.uint8)
                wave[o.ack_time - sum(o.hop_registers[:q]):] = 1
                out[occ.key] = wave
        return out


def run_cycle(fabric: Fabric, length: int, messages: dict, injections: dict,
              local=()) -> CycleResult:
    """Run one delivery cycle through a fabric.

    Parameters
    ----------
    fabric : Fabric
        The network, as the module docstring describes it.
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
    cycle = _Cycle(fabric, length)
    for m in local:
        s, d, _ = messages[m]
        cycle.outcomes[m] = Outcome(m, s, d, "local")
    cycle.start_phantoms()   # before the messages: they hold their wires from bit-time 0
    for m in sorted(injections):
        wire, stream = injections[m]
        s, d, channel = messages[m]
        o = cycle.outcomes[m] = Outcome(m, s, d, "lost", list(stream))
        cycle.start(o, channel, wire, 0)
    while cycle.events:
        cycle.claim(*heapq.heappop(cycle.events))
    cycle.acknowledge_through_phantoms()
    return CycleResult(length, cycle.outcomes, dict(injections), cycle.stuck, cycle.phantoms)


class _Cycle:
    """The state of one cycle in :func:`run_cycle`: every stream's outcome, the outputs
    claimed so far and the claims still to be served, in bit-time order (a heap of
    ``(claim time, stage, switch, port, input, message, stream index)``)."""

    def __init__(self, fabric: Fabric, length: int):
        self.fabric = fabric
        self.length = length
        self.stuck: dict = dict(fabric.stuck_wires or {})
        self.outcomes: dict[int, Outcome] = {}
        self.phantoms: dict[int, Outcome] = {}
        self.phantom_of: dict[tuple, Outcome] = {}   # stuck wire key -> its phantom
        self.on_phantom: list[Outcome] = []          # streams lost on a wire stuck at 1
        self.claimed: set = set()
        self.events: list = []
        self._occupancies: dict = {}

    def occupancy(self, channel, wire: int, time: int, offset: int) -> Occupancy:
        key = (channel, wire, time, offset)
        return self._occupancies.setdefault(key, Occupancy(*key))

    def start(self, o: Outcome, channel, wire: int, t: int) -> None:
        """A stream's M bit on its first wire at bit-time ``t``."""
        o.path.append(self.occupancy(channel, wire, t, 0))
        self.arrive(o, channel, wire, t, 0)

    def start_phantoms(self) -> None:
        """Every wire stuck at 1 feeds its switch a stream of ones from the cycle's
        start (its M bit after the link's registers)."""
        for key in sorted(k for k, v in self.stuck.items() if v == 1):
            *channel_ids, wire = key
            channel = tuple(channel_ids)
            m = -1 - len(self.phantoms)
            o = Outcome(m, None, None, "lost", [1] * self.length)
            self.phantoms[m] = self.phantom_of[key] = o
            self.start(o, channel, wire, self.fabric.link_delay(channel))

    def lose(self, o: Outcome, switch, port, stage: int, reason: str) -> None:
        o.status = "lost"
        o.lost_at = (switch, self.fabric.port_name(port), stage, reason)

    def arrive(self, o: Outcome, channel, wire: int, t: int, pos: int) -> None:
        """M bit on a channel wire at bit-time ``t``; ``pos`` is that M's stream index."""
        head = self.fabric.head(channel, wire)
        value = self.stuck.get((*channel, wire))
        own = o.message < 0 and len(o.path) == 1   # a phantom on its own wire
        if value is not None and not own:   # the fed switch sees only the value
            o.status = "lost"
            o.lost_at = (head and head[0], f"input wire {wire}", -1,
                         f"its wire is stuck at {value}")
            if value == 1:
                self.on_phantom.append(o)
        elif head is None:
            o.status = "delivered"
            o.arrival = t
            o.ack_time = t + sum(o.hop_registers)
        else:
            switch, in_port = head
            self.branch(o, switch, in_port, wire, t, pos)

    def branch(self, o: Outcome, switch, in_port, wire: int, t: int, pos: int) -> None:
        """A switch input reads its branch bits and puts M' into the chosen branch."""
        k = self.fabric.field_width(switch, in_port)
        if pos + k >= len(o.stream):
            return self.lose(o, switch, in_port, -1, "stream ended before its branch bits")
        out_port = self.fabric.branch(switch, in_port,
                                      bits_to_int(o.stream[pos + 1:pos + 1 + k]))
        x = self.fabric.stage_input(switch, out_port, in_port, wire)
        self.enter_stage(o, switch, out_port, 0, x, t + k, pos + k)

    def enter_stage(self, o: Outcome, switch, port, j: int, x: int, tau: int,
                    pos: int) -> None:
        """M' at input x of stage j of a switch's branch at bit-time tau."""
        stages = self.fabric.stages(switch, port)
        if j == len(stages):  # tau already counts the last stage's register
            channel, wire = self.fabric.out_wire(switch, port, x)
            delay = self.fabric.link_delay(channel)
            t = (tau if stages else tau + 1) + delay
            o.path.append(self.occupancy(channel, wire, t, pos))
            o.hop_registers.append(self.fabric.registers(switch, port) + delay)
            self.arrive(o, channel, wire, t, pos)
            return
        w = 0 if self.fabric.online else stages[j].decision_width
        heapq.heappush(self.events, (tau + w, j, switch, port, x, o.message, pos))

    def claim(self, t: int, j: int, switch, port, x: int, m: int, pos: int) -> None:
        """Serve one claim: the stream takes an output of stage j or is lost there."""
        o = self.outcomes[m] if m >= 0 else self.phantoms[m]
        stage = self.fabric.stages(switch, port)[j]
        if self.fabric.online:
            out = self._first_free(o, switch, port, j, stage.adjacency[x])
        else:
            out, pos = self._decided(o, switch, port, j, stage, x, pos)
        if out is not None:
            self.claimed.add((switch, port, j, out))
            self.enter_stage(o, switch, port, j + 1, out, t + 1, pos)

    def _free(self, switch, port, j: int, out: int) -> bool:
        return ((switch, port, j, out) not in self.claimed
                and self.fabric.usable(switch, port, j, out))

    def _first_free(self, o: Outcome, switch, port, j: int, edges) -> int | None:
        """On-line: the first free output of the input, in edge order."""
        out = next((e for e in edges if self._free(switch, port, j, e)), None)
        if out is None:
            self.lose(o, switch, port, j, "every output of its input is taken")
        return out

    def _decided(self, o: Outcome, switch, port, j: int, stage, x: int,
                 pos: int) -> tuple[int | None, int]:
        """Off-line: the output the decision bits name, and the stream index after
        them (None if the claim fails)."""
        edges = stage.adjacency[x]
        w = stage.decision_width
        if pos + w >= len(o.stream):
            self.lose(o, switch, port, j, "stream ended inside its decision bits")
            return None, pos
        choice = bits_to_int(o.stream[pos + 1:pos + 1 + w])
        if choice >= len(edges):
            self.lose(o, switch, port, j, f"decision {choice} names no edge "
                                          f"(input {x} has {len(edges)})")
            return None, pos
        out = edges[choice]
        if not self._free(switch, port, j, out):
            self.lose(o, switch, port, j, f"output {out} already taken")
            return None, pos
        return out, pos + w

    def acknowledge_through_phantoms(self) -> None:
        """A stream lost on a wire stuck at 1 is acknowledged through the phantom, once
        both are there (a phantom may itself be lost on another wire stuck at 1: one
        pass per phantom settles every chain)."""
        for _ in range(len(self.phantoms)):
            for o in self.on_phantom:
                occ = o.path[-1]
                ack = self.phantom_of[occ.key].ack_time
                if ack is not None:   # the last hop's registers less the stuck link's s
                    s = self.fabric.link_delay(occ.channel)
                    o.ack_time = max(ack + s, occ.time - s) - s + sum(o.hop_registers)
