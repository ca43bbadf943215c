"""The fat-tree's side of the planner, the comparator and the waveform groups.

Every family gives :mod:`fatnet.sim.plan` the same small set of hooks (this module for
``fatnet.sim.fattree``, :mod:`fatnet.sim.butterfly.ports` for splitter networks):

``endpoints(net)``            [(port, send wires, recv wires)] in the top's signature order
``port_name(net, endpoint)``  the port of a golden endpoint (message source/destination)
``label(net, src, dst)``      a message's route, for reports
``recv_port(net, key)``       waveform key (*channel, wire) -> (port, wire) of a ``recv``
                              wire, or None
``ack_port(net, key)``        the same for ``send_ack`` wires (acknowledgment waveforms)
``site(net, port, kind, wire)``  which node drives a port's wire, for reports
``prepare(net, ms, idx, mask)``  check one cycle of message indices (raises on a cycle
                              the network cannot carry); returns what ``simulate`` needs
``simulate(net, ms, prepared)``  run it through the model once: a ``CycleResult``
``mask_width(net)``           bits of the run-time fault mask (0: the family has none)
``expected_status(net, mask)``  the settled status registers the model predicts, or None
``build_params(net)``         (parameters, model source files) of the build key
"""

from __future__ import annotations

from ...golden.fattree.cyclemodel import simulate_cycle
from ...golden.fattree.topology import DOWN, EXT, UP

__all__ = ["endpoints", "port_name", "label", "recv_port", "ack_port", "site", "prepare",
           "simulate", "mask_width", "expected_status", "build_params", "boundary_node"]


def endpoints(net):
    caps = net.spec.capacities
    out = [(f"leaf{i}", caps[-1], caps[-1]) for i in range(net.n)]
    out.append(("ext", caps[0], caps[0]))
    return out


def port_name(net, endpoint: int) -> str:
    return "ext" if endpoint == EXT else f"leaf{endpoint}"


def label(net, src: int, dst: int) -> str:
    return f"{port_name(net, src)} -> {port_name(net, dst)}"


def _port(net, key, leaf_dir):
    # A leaf's recv wires are its DOWN channel, its send_ack wires the reverse of its UP
    # channel; for the external interface it is the other way round (channel 0).
    direction, heap, wire = key
    first_leaf = (1 << net.L) - 1
    if direction == leaf_dir and heap >= first_leaf:
        return f"leaf{heap - first_leaf}", wire
    if direction != leaf_dir and heap == 0:
        return "ext", wire
    return None


def recv_port(net, key):
    return _port(net, key, DOWN)


def ack_port(net, key):
    return _port(net, key, UP)


def boundary_node(net, port: str) -> str:
    """The node whose registered outputs drive a top-level port's wires: a leaf's
    ``recv`` and ``send_ack`` come from its parent's L or R port, the external
    channel's from the root's U port."""
    if port == "ext":
        return "node 0 port U"
    heap = (1 << net.L) - 1 + int(port[len("leaf"):])
    return f"node {(heap - 1) // 2} port {'L' if heap % 2 else 'R'}"


def site(net, port: str, kind: str, wire: int) -> str:
    return boundary_node(net, port)


def prepare(net, ms, idx, mask=None):
    from ..plan import cycle_injections
    return cycle_injections(net, ms, idx)


def simulate(net, ms, prepared):
    return simulate_cycle(net, ms, *prepared)


def mask_width(net) -> int:
    return 0


def expected_status(net, mask):
    return None


def build_params(net):
    from ...golden.fattree import concentrator, network
    return net.spec.to_dict(), [network.__file__, concentrator.__file__]


def mask_int(net, mask) -> int:
    from ...golden.errors import FatnetInputError
    raise FatnetInputError("a fat-tree has no run-time fault mask")
