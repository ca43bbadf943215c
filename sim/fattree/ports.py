"""The fat-tree's testbench hooks (:class:`~fatnet.sim.family.TestbenchFamily` and the
self-test's :class:`~fatnet.sim.family.SelfTest`; no run-time faults): which port and
wire a model waveform is, what the sources drive in a cycle (switch settings off-line,
injection wires on-line), and reports.

Ports are the network top's endpoints as the signature names them
(:func:`fatnet.hdl.signatures.endpoint_name`): ``leaf__0`` .. ``leaf__{n-1}``, ``ext``.
"""

from __future__ import annotations

from ...golden.errors import FatnetInputError
from ...golden.fattree.bitstream import encode
from ...golden.fattree.cyclemodel import simulate_cycle
from ...golden.fattree.switching import assign_injection_wires, set_switches
from ...golden.fattree.topology import DOWN, EXT, UP
from ...golden.messages import endpoint_name
from ...hdl.signatures import endpoint_name as port
from ..family import BuildParams

__all__ = ["port_name", "label", "recv_port", "ack_port", "destination_acknowledges", "site",
           "prepare", "simulate", "batches_cycles", "run_cycles", "build_params",
           "boundary_node", "cycle_injections"]


def port_name(net, endpoint: int) -> str:
    return "ext" if endpoint == EXT else port("leaf", int(endpoint))


def label(net, src: int, dst: int) -> str:
    return f"{port_name(net, src)} -> {port_name(net, dst)}"


def _port(net, key, leaf_dir):
    # A leaf's recv wires are its DOWN channel, its send_ack wires the reverse of its UP
    # channel; for the external interface it is the other way round (channel 0).
    direction, heap, wire = key
    first_leaf = (1 << net.L) - 1
    if direction == leaf_dir and heap >= first_leaf:
        return port("leaf", heap - first_leaf), wire
    if direction != leaf_dir and heap == 0:
        return "ext", wire
    return None


def recv_port(net, key):
    return _port(net, key, DOWN)


def destination_acknowledges(net) -> bool:
    return True          # the destination's recv_ack, back along the message's path


def ack_port(net, key):
    return _port(net, key, UP)


def boundary_node(net, port_: str) -> str:
    """The node whose registered outputs drive a top-level port's wires: a leaf's
    ``recv`` and ``send_ack`` come from its parent's L or R port, the external
    channel's from the root's U port."""
    if port_ == "ext":
        return "node 0 port U"
    heap = (1 << net.L) - 1 + int(port_.rsplit("__", 1)[1])
    return f"node {(heap - 1) // 2} port {'L' if heap % 2 else 'R'}"


def site(net, port_: str, kind: str, wire: int) -> str:
    return boundary_node(net, port_)


def cycle_injections(net, ms, idx) -> tuple[dict, list]:
    """What the sources drive for messages ``idx`` in one cycle: (message -> (wire,
    stream), local messages). Off-line networks get their switch settings; on-line ones
    are injected in message order. A cycle the network cannot carry (more messages at a
    source than it has wires, or off-line, no disjoint paths through some concentrator)
    raises :class:`~fatnet.golden.errors.FatnetInputError` naming the message."""
    idx = sorted(int(i) for i in idx)
    for m in idx:  # endpoints out of range: one clear error before anything runs
        net.tree.check_endpoint(f"message {m} source", int(ms.src[m]))
        net.tree.check_endpoint(f"message {m} destination", int(ms.dst[m]))
    if net.spec.mode == "offline":
        st = set_switches(net, ms, idx)
        injections = {m: (st.wire[m], encode(net, int(ms.src[m]), int(ms.dst[m]),
                                             ms.payload[m], st.decisions[m]))
                      for m in st.routed}
        refused = st.unroutable
    else:
        wires, refused = assign_injection_wires(net, ms, idx)
        injections = {m: (w, encode(net, int(ms.src[m]), int(ms.dst[m]), ms.payload[m]))
                      for m, w in wires.items()}
    if refused:
        m, why = refused[0]
        raise FatnetInputError(
            f"this cycle cannot carry message {m} ({endpoint_name(ms.src[m])} -> "
            f"{endpoint_name(ms.dst[m])}): {why}" + (f" (and {len(refused) - 1} more)"
                                                    if len(refused) > 1 else ""))
    return injections, [m for m in idx if ms.src[m] == ms.dst[m]]


def prepare(net, ms, idx, mask=None):
    return cycle_injections(net, ms, idx)


def simulate(net, ms, prepared):
    return simulate_cycle(net, ms, *prepared)


def batches_cycles(net) -> bool:
    """On-line trees run independent cycles in batches; an off-line tree's switch
    settings depend on the whole cycle."""
    return net.spec.mode != "offline"


def run_cycles(net, cycle, src, dst):
    """Many on-line delivery cycles at once (:class:`~fatnet.sim.family.CycleBatch`) on
    the batched engine (:func:`fatnet.golden.fattree.batch.run_batch`, each source's
    one message on wire 0)."""
    import importlib

    import numpy as np

    from ...golden.fattree.batch import geometry, run_batch
    from ..family import CycleBatch, cycles_one_by_one
    if np.any(src == dst):
        return cycles_one_by_one(importlib.import_module(__package__), net, cycle, src, dst)
    if src.size and np.unique(cycle * (int(src.max()) + 1) + src).size != src.size:
        raise FatnetInputError("a source sends at most one message in a cycle here")
    cycles = int(cycle.max()) + 1 if cycle.size else 0
    m = src.size
    st = run_batch(geometry(net), cycles, cycle, np.arange(m), src, dst,
                   np.zeros(m, dtype=np.int64))
    delivered = st.status[:m] == 1
    last = st.path[np.arange(m), st.path_len[:m] - 1]
    return CycleBatch(delivered, np.where(delivered, last[:, 2], -1), st.ack[:m].copy())


def build_params(net) -> BuildParams:
    from ...golden.fattree import concentrator, network
    return BuildParams(net.spec.to_dict(), (network.__file__, concentrator.__file__))
