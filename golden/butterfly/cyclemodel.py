"""Cycle-exact bit-serial, circuit-switched model of a splitter network: what the
hardware does, bit-time for bit-time.

The network is a fabric of the family-agnostic engine :mod:`fatnet.golden.cycle`, with
the fat-tree's framing and timing (docs/hardware.md "Timing"):

* A message is ``M = 1``, then one field per level (the destination's address bits, MSB
  first: at a splitter level the one bit that picks up (0) or down (1); at the
  complete 4 x 4 level of the modified network the two bits that pick one of 4 rows;
  at its matching level -1 no bit, any of the 4 matchings will do), then the payload
  (:func:`fatnet.golden.bitstream.frame`).
* Switch ``(level, row)``: its input wires are the source's one wire at level 0 and
  otherwise its incoming edges in the golden order (``SplitterNetwork.in_edges``: by
  source row, then slot). A message arriving with M at ``t`` has its field read at
  ``t + 1 .. t + k``; at ``t + k`` it claims the first free edge of the chosen
  direction (slot order; edges into faulty or declared-faulty switches are never
  taken), inputs claiming in one bit-time served in input order (lowest wins); the
  switch strips its field and puts M' in the slot of the last field bit; the output
  is registered, so M' reaches the next switch at ``t + k + 1`` and every later bit
  spends one bit-time per level (zero-load latency: levels + message bits).
* Link pipelining (``link_stages`` = s): every link between two switches (levels 1 ..
  lg N - 1 receive them; the sources' and the outputs' wires are not pipelined) has s
  registers in each direction at the receiving switch, so M reaches the next switch s
  bit-times later and the acknowledgment spends s more on the way back.
* Stuck links (``stuck_wires``, ``--stuck-link LEVEL:ROW:WIRE:0|1``): input wire WIRE
  of switch (LEVEL, ROW), LEVEL 1 .. lg N - 1, held at 0 or 1 whatever drives it, a
  fault no status register knows of. A message whose edge leads onto it is lost there
  and keeps its edge to the end of the cycle; a wire stuck at 1 feeds its switch a
  phantom stream of ones (the engine's rules, :mod:`fatnet.golden.cycle`).
* A message that finds no free edge is lost, not acknowledged; its source retries in a
  later cycle. The destination raises the acknowledgment on its delivery wire when M
  arrives; it travels back one register per level (and s per pipelined link), so the
  source sees it ``ack_latency`` bit-times later, and it stays to the end of the cycle.
* Channels and switches are both ``(level, row)``: the channel of a switch is its
  bundle of input wires; ``(depth, row)`` is output ``row``'s bundle of delivery wires.

Conservation: every message of a run is delivered exactly once or reported lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..bitstream import frame, int_to_bits
from ..checks import check_int
from ..cycle import MAX_LINK_STAGES, MAX_START_STAGES, CycleResult, Fabric, run_cycle
from ..errors import ParameterError
from ..messages import MessageSet
from ..runner import ENGINES, ChannelUsage, RunReport, check_engine, drive_online
from .cyclebatch import run_online
from .faults import apply_faults

__all__ = ["CircuitNetwork", "SplitterFabric", "ENGINES", "run_circuit", "masked_network",
           "run_masked"]

MAX_PAYLOAD_BITS = 1024


@dataclass(frozen=True)
class _CompleteStage:
    """A switch direction as one on-line stage: every input reaches every edge."""

    inputs: int
    outputs: int
    decision_width: int = 0

    @cached_property
    def adjacency(self) -> list[list[int]]:
        return [list(range(self.outputs))] * self.inputs


class CircuitNetwork:
    """A golden splitter network as a bit-serial, circuit-switched network.

    Parameters
    ----------
    network : SplitterNetwork
        Topology, edge order and fault map (:mod:`fatnet.golden.butterfly.topology`).
    payload_bits : int
        Data bits of every message (0 .. 1024).
    spec : ButterflySpec, optional
        The validated options the network was built from (the manifest records them:
        the seed given, the fault options); None when it was built otherwise.
    link_stages : int
        Registers on every switch-to-switch link, each way (0 .. 8; module docstring).
    start_stages : int
        Register stages of the start strobe's tree to the switches (0 .. 4): bit-time 0
        is the clock ``1 + start_stages`` after the strobe
        (:func:`fatnet.golden.cycle.start_latency`); the bit-times do not change.
    stuck_wires : dict, optional
        ``(level, row, wire)`` -> 0 or 1: input wire ``wire`` of switch ``(level, row)``
        (levels 1 .. depth - 1) stuck at that value (module docstring); an error
        about one names it a stuck link (``stuck_links ...``), as the fat-tree does.
    """

    #: The family's folder in every layer (the hardware is ``fatnet.hdl.butterfly``).
    family = "butterfly"

    def __init__(self, network, payload_bits: int = 8, spec=None, link_stages: int = 0,
                 start_stages: int = 0, stuck_wires=None):
        for name, value, high in (("payload_bits", payload_bits, MAX_PAYLOAD_BITS),
                                  ("link_stages", link_stages, MAX_LINK_STAGES),
                                  ("start_stages", start_stages, MAX_START_STAGES)):
            check_int(name, value, 0, high)
        self.link_stages = int(link_stages)
        self.start_stages = int(start_stages)
        self.network = network
        self.spec = spec
        self.payload_bits = int(payload_bits)
        self.n_inputs = network.inputs
        self.depth = network.depth
        self.blocked = network.blocked()
        self.rank = network.in_edge_rank()
        # in_degree[level, row]: input wires of every switch (1 at level 0: the source)
        self.in_degree = np.ones((self.depth + 1, self.n_inputs), dtype=np.int64)
        for i in range(self.depth):
            heads = network.heads[i]
            self.in_degree[i + 1] = np.bincount(heads[heads >= 0],
                                                minlength=self.n_inputs)
        #: address bits each level reads: 0 (matching), 1 (splitter), 2 (complete 4x4)
        self.field_widths = [int(network.group_mask[i]).bit_length()
                             for i in range(self.depth)]
        self.stuck_wires = {}
        for (level, row, wire), value in dict(stuck_wires or {}).items():
            self.stuck_wires[self.check_stuck_link(level, row, wire, value)] = value
        self._stages: dict[tuple[int, int], tuple] = {}

    def check_stuck_link(self, level, row, wire, value) -> tuple[int, int, int]:
        """``(level, row, wire)`` of a stuck link, checked against this network;
        one-line :class:`~fatnet.golden.errors.ParameterError` otherwise."""
        if self.depth < 2:
            raise ParameterError(f"stuck_links needs a switch-to-switch link: the "
                                 f"{self.n_inputs}-input network has none (inputs >= 4)")
        if value not in (0, 1):
            raise ParameterError(f"stuck_links value must be 0 or 1, got {value!r}")
        for name, v, low, high in (("level", level, 1, self.depth - 1),
                                   ("row", row, 0, self.n_inputs - 1)):
            if not (isinstance(v, (int, np.integer)) and low <= v <= high):
                raise ParameterError(f"stuck_links {name} must be in [{low}, {high}], "
                                     f"got {v!r}")
        degree = int(self.in_degree[level, row])
        if not (isinstance(wire, (int, np.integer)) and 0 <= wire < degree):
            raise ParameterError(f"stuck_links wire must be in [0, {degree - 1}] (switch "
                                 f"({level}, {row}) has {degree} input wires), got {wire!r}")
        return int(level), int(row), int(wire)

    # ------------------------------------------------------------------ timing
    @property
    def header_bits(self) -> int:
        """Address bits after M (lg N for every kind)."""
        return sum(self.field_widths)

    @property
    def link_registers(self) -> int:
        """Registers a path's pipelined links hold each way: s per link between levels."""
        return self.link_stages * (self.depth - 1)

    @property
    def arrival(self) -> int:
        """Bit-time the M bit reaches its output: per level its field, then a register;
        then the pipelined links."""
        return self.header_bits + self.depth + self.link_registers

    @property
    def status_settle_clocks(self) -> int:
        """Clocks the hardware's fault-status registers take to settle after the
        run-time fault mask changes: one per level, and the s registers each pipelined
        link puts on the status it carries back (lg N + s (lg N - 1))."""
        return self.depth + self.link_registers

    @property
    def ack_latency(self) -> int:
        """Bit-times from the destination's acknowledgment to the source's: one per level,
        and the pipelined links'."""
        return self.depth + self.link_registers

    @property
    def cycle_length(self) -> int:
        """Bit-times in a delivery cycle: M's arrival, payload or acknowledgment, one more."""
        return self.arrival + max(self.payload_bits, self.ack_latency) + 1

    # ------------------------------------------------------------------ streams
    def fields(self, dst: int) -> list[list[int]]:
        """Per level, the address bits a message for output ``dst`` carries."""
        net = self.network
        return [int_to_bits(int(net.group_of(i, dst)), w)
                for i, w in enumerate(self.field_widths)]

    def encode(self, dst: int, payload: int) -> list[int]:
        """The stream a source drives for a message to output ``dst``."""
        if not 0 <= dst < self.n_inputs:
            raise ParameterError(f"destination must be an output in [0, "
                                 f"{self.n_inputs - 1}], got {dst}")
        return frame(self.fields(dst), payload, self.payload_bits)

    def stage(self, level: int, row: int) -> tuple:
        key = (int(self.in_degree[level, row]), int(self.network.edges_per_group[level]))
        if key not in self._stages:
            self._stages[key] = (_CompleteStage(*key),)
        return self._stages[key]


class SplitterFabric(Fabric):
    """A :class:`CircuitNetwork` seen by the cycle engine; see the module docstring."""

    online = True

    def __init__(self, circuit: CircuitNetwork):
        self.c = circuit
        self.net = circuit.network
        # a faulty switch drives and acknowledges nothing: a wire stuck at 1 into it feeds
        # no phantom (no message is routed into it), so it is left out
        self.stuck_wires = {k: v for k, v in circuit.stuck_wires.items()
                            if not (v and circuit.blocked[k[0], k[1]])}

    def head(self, channel, wire):
        return None if channel[0] == self.c.depth else (channel, wire)

    def field_width(self, switch, in_port):
        return self.c.field_widths[switch[0]]

    def branch(self, switch, in_port, value):
        return value

    def stages(self, switch, group):
        return self.c.stage(*switch)

    def stage_input(self, switch, group, in_port, wire):
        return in_port

    def _slot(self, switch, group, output):
        level, row = switch
        return int(self.net.edges_per_group[level]) * group + output

    def out_wire(self, switch, group, output):
        level, row = switch
        k = self._slot(switch, group, output)
        target = int(self.net.heads[level, row, k])
        return (level + 1, target), int(self.c.rank[level, row, k])

    def usable(self, switch, group, stage, output):
        level, row = switch
        target = int(self.net.heads[level, row, self._slot(switch, group, output)])
        return target >= 0 and not self.c.blocked[level + 1, target]

    @staticmethod
    def registers(switch, group):
        return 1

    def link_delay(self, channel):
        """The links into levels 1 .. depth - 1 are pipelined; sources and outputs not."""
        return self.c.link_stages if 0 < channel[0] < self.c.depth else 0

    @staticmethod
    def port_name(group):
        return {0: "up", 1: "down"}.get(group, f"group {group}")


def simulate_cycle(circuit: CircuitNetwork, ms: MessageSet, idx) -> CycleResult:
    """One delivery cycle: every message of ``idx`` from its input's one wire.

    Raises ParameterError if two messages of one cycle share an input (an input has
    one wire).
    """
    injections: dict = {}
    messages: dict[int, tuple] = {}
    for m in sorted(int(i) for i in idx):
        s, d = int(ms.src[m]), int(ms.dst[m])
        if not 0 <= s < circuit.n_inputs:
            raise ParameterError(f"message {m}: source must be an input in [0, "
                                 f"{circuit.n_inputs - 1}], got {s}")
        if any(v[0] == s for v in messages.values()):
            raise ParameterError(f"message {m}: input {s} already sends in this cycle "
                                 f"(an input has one wire)")
        injections[m] = (0, circuit.encode(d, ms.payload[m]))
        messages[m] = (s, d, (0, s))
    return run_cycle(SplitterFabric(circuit), circuit.cycle_length, messages, injections)




def run_circuit(circuit: CircuitNetwork, ms: MessageSet, keep_results: bool = False,
                max_cycles: int = 1000, engine: str = "batched", progress=None) -> RunReport:
    """Circuit-switched delivery cycles with retries (on-line): each cycle every input
    sends its oldest undelivered message; lost ones are retried in the next cycle.
    ``engine``: :data:`ENGINES` (messages that name no input or output always run on
    the scalar engine, which refuses them as it meets them); ``progress(done, total,
    what)`` is told the messages delivered as the batched engine runs."""
    check_engine(engine)
    if engine == "batched":
        report = run_online(circuit, ms, keep_results, max_cycles, progress=progress)
        if report is not None:
            return report
    report = RunReport("online", len(ms), cycle_length=circuit.cycle_length)
    usage = ChannelUsage(lambda channel: channel[0], circuit.in_degree.sum(axis=1))
    return drive_online(report, usage, ms, lambda s: 1,
                        lambda idx: (simulate_cycle(circuit, ms, idx), []),
                        keep_results, max_cycles, local_delivery=False)


def masked_network(circuit: CircuitNetwork, bits) -> CircuitNetwork:
    """The network a cycle runs under a run-time fault mask: the built-in placed faults
    and the mask's, propagated together by Sec. IV's rule (the hardware's)."""
    if bits is None or not np.asarray(bits).any():
        return circuit
    net = circuit.network
    faulty = (net.faults.faulty.copy() if net.faults is not None
              else np.zeros((circuit.depth + 1, circuit.n_inputs), dtype=bool))
    faulty[1:circuit.depth] |= np.asarray(bits, dtype=bool)
    return CircuitNetwork(apply_faults(net, faulty), circuit.payload_bits, spec=circuit.spec,
                          link_stages=circuit.link_stages,
                          start_stages=circuit.start_stages,
                          stuck_wires=circuit.stuck_wires)


def run_masked(circuit: CircuitNetwork, ms: MessageSet, masks, max_cycles: int = 1000,
               engine: str = "batched"):
    """:func:`run_circuit` with a run-time fault mask per delivery cycle: cycle ``c`` runs
    under ``masks[c]`` (the last mask after the list). The report's ``masks`` holds the
    mask of every cycle run."""
    check_engine(engine)
    if engine == "batched":
        report = run_online(circuit, ms, True, max_cycles, masks)
        if report is not None:
            return report
    nets = [masked_network(circuit, mk) for mk in masks]
    used: list = []
    report = RunReport("online", len(ms), cycle_length=circuit.cycle_length)
    usage = ChannelUsage(lambda channel: channel[0], circuit.in_degree.sum(axis=1))

    def cycle(idx):
        c = min(len(used), len(masks) - 1)
        used.append(masks[c])
        return simulate_cycle(nets[c], ms, idx), []
    report = drive_online(report, usage, ms, lambda s: 1, cycle, True, max_cycles,
                          local_delivery=False)
    report.masks = used
    return report
