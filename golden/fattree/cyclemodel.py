"""Cycle-exact model of one delivery cycle of the fat-tree hardware.

The fat-tree as a fabric of the family-agnostic engine :mod:`fatnet.golden.cycle`:
switches are nodes (heap index), a node's branch bit is its turn bit, a branch's stages
are the concentrator cascade of that output port, and channels are (direction, heap).

Timing (bit-times from the start of the delivery cycle; docs/hardware.md "Timing"):

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
* Link pipelining (``spec.link_stages`` = s): every node-to-node link (not a
  processor's channel, not the external one) has s registers each way at the node it
  enters, so a stream reaches the next node s bit-times later and the acknowledgment
  spends s more per link on the way back.
"""

from __future__ import annotations

from ..cycle import CycleResult, Fabric, Occupancy, Outcome, run_cycle
from .topology import DOWN, EXT, PORT_L, PORT_NAMES, PORT_R, PORT_U, UP, out_port_for

__all__ = ["Occupancy", "Outcome", "CycleResult", "FatTreeFabric", "simulate_cycle",
           "source_channel"]


def source_channel(net, src: int) -> tuple[int, int]:
    """The channel (direction, heap) a source injects on: a leaf's UP channel, or the
    root's external channel DOWN for ``EXT``."""
    return (DOWN, 0) if src == EXT else (UP, net.tree.leaf_heap(src))


class FatTreeFabric(Fabric):
    """A :class:`FatTreeNetwork` seen by the cycle engine; channels are (direction, heap).

    Parameters
    ----------
    net : FatTreeNetwork
    """

    def __init__(self, net):
        self.net = net
        self.online = net.spec.mode == "online"
        self._first_leaf = (1 << net.L) - 1
        self.stuck_wires = net.stuck_wires

    def head(self, channel, wire):
        direction, heap = channel
        if direction == UP:
            if heap == 0:  # the root's external channel: the EXT destination
                return None
            return (heap - 1) // 2, PORT_L if heap % 2 == 1 else PORT_R
        if heap >= self._first_leaf:  # a leaf's delivery channel
            return None
        return heap, PORT_U

    def branch(self, node, in_port, bit):
        return out_port_for(in_port, bit)

    def stages(self, node, out_port):
        return self.net.cascades[(node, out_port)].stages

    def stage_input(self, node, out_port, in_port, wire):
        return self.net.concentrator_input(node, out_port, in_port, wire)

    def out_wire(self, node, out_port, output):
        heap, direction = self.net.port_channel(node, out_port, direction_in=False)
        return (direction, heap), output

    def registers(self, node, out_port):
        return self.net.hop_registers(node, out_port)

    def link_delay(self, channel):
        return self.net.link_stages_of(channel[1])

    @staticmethod
    def port_name(port):
        return PORT_NAMES[port]


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
    messages = {}
    for m in list(injections) + list(local):
        s, d = int(ms.src[m]), int(ms.dst[m])
        messages[m] = (s, d, source_channel(net, s))
    return run_cycle(FatTreeFabric(net), net.cycle_length, messages, injections, local)
