"""The hypercube's testbench hooks (:class:`~fatnet.sim.family.TestbenchFamily`).

Ports are the top's nodes ``node__0`` .. ``node__{2^k - 1}`` (named as the signature names
them, :func:`fatnet.hdl.signatures.endpoint_name`). The model's channel ``("rank", r, x)``
(:class:`~fatnet.golden.hypercube.bitserial.RouterChain`) is node ``x``'s rank-``r``
router input: ``("rank", 0, x)`` is node ``x``'s send wire (its reverse is ``send_ack``),
``("rank", k, x)`` its recv wire; the ranks between are the routers' registers, which
Algorithm 1's ``--stuck-link RANK:NODE:WIRE:0|1`` holds (Algorithm 2's, e-cube's and
Valiant's cycles name the two port channels only). No run-time faults (no
:class:`~fatnet.sim.family.RuntimeFaults` hooks).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ...golden.hypercube.circuit import Alg1Circuit, Alg2Circuit, StoreForwardCircuit
from ...hdl.hypercube.network import network_signature
from ...hdl.hypercube.router import router_signature
from ...hdl.signatures import endpoint_name, port_rows
from ..waves import WaveGroup, controller_group, terminal_group
from ..family import BuildParams

__all__ = ["port_name", "label", "recv_port", "ack_port", "destination_acknowledges", "site",
           "prepare", "simulate", "batches_cycles", "run_cycles", "build_params",
           "wave_groups", "hop_field_labels", "interior_wires"]


def port_name(net, endpoint) -> str:
    return endpoint_name("node", int(endpoint))


def label(net, src, dst) -> str:
    return f"node {int(src)} -> node {int(dst)}"


def recv_port(net, key):
    _, r, x, wire = key
    return (port_name(net, x), wire) if r == net.k else None


def destination_acknowledges(net) -> bool:
    # Algorithm 1 passes recv_ack back k clocks later; Algorithm 2, e-cube and Valiant
    # acknowledge when the network has delivered (recv_ack is not used)
    return net.destination_acknowledges


def ack_port(net, key):
    _, r, x, wire = key
    return (port_name(net, x), wire) if r == 0 else None


def site(net, port: str, kind: str, wire: int) -> str:
    x = int(port.rsplit("__", 1)[1])
    return _bench(net).site(net, x, kind)


def prepare(net, ms, idx, mask=None):
    net.check_messages(ms)
    return net.injections(ms, idx)


def simulate(net, ms, prepared):
    return net.simulate_cycle(ms, prepared)


def batches_cycles(net) -> bool:
    """Algorithm 1's router chains run independent cycles in batches; the other
    algorithms' batched runs plan whole on-line runs instead."""
    return isinstance(net, Alg1Circuit)


def run_cycles(net, cycle, src, dst):
    """Many delivery cycles of Algorithm 1 at once (:class:`~fatnet.sim.family.CycleBatch`)
    on the batched engine (:func:`fatnet.golden.hypercube.cyclebatch.run_cycles_streamed`:
    a node's one ``recv`` wire, its acknowledgment at ``3f``, or through the phantom of a
    link stuck at 1 that it was lost on)."""
    import importlib

    import numpy as np

    from ...golden.hypercube.cyclebatch import DELIVERED, run_cycles_streamed
    from ..family import CycleBatch, cycles_one_by_one
    if np.any(src == dst):
        return cycles_one_by_one(importlib.import_module(__package__), net, cycle, src, dst)
    arrays = run_cycles_streamed(net.chain, cycle, src, dst)
    delivered = arrays.status == DELIVERED
    return CycleBatch(delivered, np.where(delivered, 0, -1), arrays.ack_time)


def build_params(net) -> BuildParams:
    from ...golden.hypercube import bitserial, circuit
    return BuildParams(net.params(), (circuit.__file__, bitserial.__file__))


def wave_groups(net, top: str = "hypercube_harness",
                core: str = "hypercube") -> list[WaveGroup]:
    """The controller, the nodes' ports (a group per node), then one group per node
    (its algorithm's registers)."""
    root = f"{top}.{core}"
    return _bench(net).wave_groups(net, top, root, port_rows(network_signature(net)))


def _alg1_wave_groups(net, top, root, rows) -> list[WaveGroup]:
    """Algorithm 1: the controller, the nodes' ports, then one group per node (its
    routers rank by rank: the members of the router's signature and its collision
    flag)."""
    router_rows = port_rows(router_signature())
    groups = [controller_group(rows, top, root), terminal_group(rows, root)]
    for x in range(net.nodes):
        routers = []
        for r in range(net.k):
            name = f"rt_{r}_{x}"
            sigs = [(f"{root}.{name}.{row['name']}", row["width"]) for row in router_rows]
            sigs.append((f"{root}.collision_{r}_{x}", 1))
            routers.append(WaveGroup.of(f"{name} (dimension {net.order[r]})", sigs))
        groups.append(WaveGroup.of(f"node_{x}", groups=routers))
    return groups


def _alg2_wave_groups(net, top, root, rows) -> list[WaveGroup]:
    """Algorithm 2: the controller and the sequencer, the nodes' ports, then one group
    per node (its ports, buffers and valid bits)."""
    from ...hdl.hypercube.alg2 import node_signature
    t_max = max(length for *_, length in net.phases) - 1
    node_rows = port_rows(node_signature(net.k, t_max))
    seq = [(f"{root}.{name}", w) for name, w in (("phase", max(1, len(net.phases).bit_length())),
                                                 ("phase_t", max(1, t_max.bit_length())),
                                                 ("iteration", max(1, (net.k - 1).bit_length())))]
    groups = [controller_group(rows, top, root, seq), terminal_group(rows, root)]
    for x in range(net.nodes):
        sigs = [(f"{root}.node_{x}.{r['name']}", r["width"]) for r in node_rows
                if not r["name"].startswith(("xo", "xi"))]
        sigs += [(f"{root}.node_{x}.{name}", w) for name, w in
                 (("valid_a", 1), ("buf_a", net.M), ("valid_b", 1), ("buf_b", net.M))]
        groups.append(WaveGroup.of(f"node_{x}", sigs))
    return groups


def _store_forward_wave_groups(net, top, root, rows) -> list[WaveGroup]:
    """e-cube and Valiant: the controller and the step sequencer, the nodes' ports, then
    one group per node (its ports, then per dimension its link queue, the links and the
    staging register)."""
    from ...hdl.hypercube.ecube import SEQUENCER
    k, W = net.k, net.word_bits
    seq = [(f"{root}.step", max(1, (net.steps + 1).bit_length())),
           (f"{root}.step_t", max(1, (net.step_length - 1).bit_length()))]
    seq += [(f"{root}.seq_{name}", 1) for name in SEQUENCER if name != "done"]
    seq.append((f"{root}.done", 1))
    groups = [controller_group(rows, top, root, seq), terminal_group(rows, root)]
    for x in range(net.nodes):
        nd = f"{root}.node_{x}"
        ports = [(f"{nd}.port__{w}", 1) for w in ("send", "send_ack", "recv")]
        ports += [(f"{nd}.inj", W), (f"{nd}.injected", 1), (f"{nd}.dlv", 1 + net.M)]
        dims = []
        for d in range(k):
            sigs = [(f"{nd}.q{d}_full", net.buffer)]
            sigs += [(f"{nd}.q{d}_s{p}", W) for p in range(net.buffer)]
            sigs += [(f"{nd}.xo__{d}__data", 1), (f"{nd}.xo__{d}__ack", 1),
                     (f"{nd}.xi__{d}__data", 1), (f"{nd}.stage{d}", W)]
            dims.append(WaveGroup.of(f"dimension {d}", sigs))
        groups.append(WaveGroup.of(f"node_{x}", groups=[WaveGroup.of("port", ports)] + dims))
    return groups


def hop_field_labels(net, src, dst) -> list[list[str]]:
    """Per hop, the stream's fields its router reads: Algorithm 1's ranks, one address
    bit each (``dim<d>``); the others' one "hop" (the network as a whole): the header
    (Valiant's intermediate node, ``via<b>``, then the destination, ``dst<b>``)."""
    return _bench(net).hop_field_labels(net)


def interior_wires(net) -> dict:
    """Model channel wire ``("rank", r, x, 0)`` -> the router ports that carry it
    (Algorithm 1's; the other algorithms' models name the ports only)."""
    return _bench(net).interior_wires(net)


def _header_labels(net) -> list[list[str]]:
    """The one "hop" of Algorithm 2 and the baselines: their header's bits."""
    bits = range(net.k - 1, -1, -1)
    via = [f"via{b}" for b in bits] if net.via_intermediate else []
    return [via + [f"dst{b}" for b in bits]]


def _alg1_interior_wires(net) -> dict:
    """The register of rank ``r - 1`` (``o``) and the input of rank ``r`` (``i``)."""
    out: dict[tuple, list] = {}
    for x in range(net.nodes):
        for r in range(net.k + 1):
            sigs = []
            if r > 0:
                sigs.append((f"rt_{r - 1}_{x}.o__data", f"rt_{r - 1}_{x}.o__ack", 0))
            if r < net.k:
                sigs.append((f"rt_{r}_{x}.i__data", f"rt_{r}_{x}.i__ack", 0))
            out[("rank", r, x, 0)] = sigs
    return out


@dataclass(frozen=True)
class _Testbench:
    """One algorithm's testbench hooks: where a port's value is made (``site(net, x,
    kind)``), the waves' groups, the stream's fields and the interior wires."""

    site: Callable
    wave_groups: Callable
    hop_field_labels: Callable
    interior_wires: Callable


def _no_interior_wires(net) -> dict:
    return {}


def _alg1_site(net, x: int, kind: str) -> str:
    if kind == "recv":
        return f"node {x}'s rank-{net.k - 1} router register (rt_{net.k - 1}_{x})"
    return f"node {x}'s rank-0 router acknowledgment (rt_0_{x})"


def _alg2_site(net, x: int, kind: str) -> str:
    return f"node {x}'s {'delivery' if kind == 'recv' else 'acknowledgment'} (node_{x})"


def _store_forward_site(net, x: int, kind: str) -> str:
    what = f"delivery register (node_{x}.dlv)" if kind == "recv" else \
        "acknowledgment (the network-empty flag)"
    return f"node {x}'s {what}"


#: Each circuit class's testbench (a subclass takes its nearest base's).
_BENCHES = {
    Alg1Circuit: _Testbench(_alg1_site, _alg1_wave_groups,
                            lambda net: [[f"dim{d}"] for d in net.order],
                            _alg1_interior_wires),
    Alg2Circuit: _Testbench(_alg2_site, _alg2_wave_groups, _header_labels,
                            _no_interior_wires),
    StoreForwardCircuit: _Testbench(_store_forward_site, _store_forward_wave_groups,
                                    _header_labels, _no_interior_wires),
}


def _bench(net) -> _Testbench:
    """The testbench hooks of ``net``'s algorithm."""
    return next(_BENCHES[cls] for cls in type(net).__mro__ if cls in _BENCHES)
