"""Off-line switch settings: the paths a one-cycle message set takes through every node.

For one delivery cycle, the messages each source injects are put on its channel's wires
in message order; then every node output's concentrator is set, in the order the
messages reach them (U outputs from the leaves up to the root, then L and R outputs from
the root down), by matching its occupied inputs to disjoint paths through its stages
(:func:`fatnet.golden.fattree.concentrator.route_cascade`). The result is the decision bits
every message carries (paper, Section IV).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from .concentrator import follow, route_cascade
from .topology import DOWN, EXT, PORT_U, UP

__all__ = ["Settings", "assign_injection_wires", "set_switches"]


@dataclass
class Settings:
    """Switch settings of one delivery cycle.

    Attributes
    ----------
    wire : dict
        Message index -> injection wire on its source's channel.
    decisions : dict
        Message index -> per hop, the tuple of stage edge indices.
    unroutable : list
        (message index, reason) for messages that cannot go in this cycle: more
        messages at a source than its channel has wires, or no disjoint path through a
        concentrator. They are not injected; the caller sends them in a later cycle.
    """

    wire: dict = field(default_factory=dict)
    decisions: dict = field(default_factory=dict)
    unroutable: list = field(default_factory=list)

    @property
    def routed(self) -> list[int]:
        return sorted(self.decisions)


def assign_injection_wires(net, ms, idx) -> tuple[dict, list]:
    """Wires for the messages a cycle injects: each source's messages in index order.

    Local messages (src == dst) take no wire. Returns (wire per message, overflow list).
    """
    used: dict[int, int] = defaultdict(int)
    wire, overflow = {}, []
    for m in sorted(int(i) for i in idx):
        s, d = int(ms.src[m]), int(ms.dst[m])
        if s == d:
            continue
        heap, direction = (0, DOWN) if s == EXT else (net.tree.leaf_heap(s), UP)
        if used[s] >= net.tree.cap[direction, heap]:
            overflow.append((m, f"source {'ext' if s == EXT else s} has only "
                                f"{net.tree.cap[direction, heap]} wires"))
            continue
        wire[m] = used[s]
        used[s] += 1
    return wire, overflow


def _processing_order(net, node: int, port: int) -> tuple[int, int, int]:
    """U outputs bottom-up first, then L/R outputs top-down: each concentrator's inputs
    are settled before it is."""
    level = (node + 1).bit_length() - 1
    return (0, -level, node) if port == PORT_U else (1, level, node)


def set_switches(net, ms, idx) -> Settings:
    """Settings that route the messages ``idx`` of message set ``ms`` in one cycle."""
    settings = Settings()
    wire, overflow = assign_injection_wires(net, ms, idx)
    settings.unroutable.extend(overflow)
    hops = {m: net.tree.hops(int(ms.src[m]), int(ms.dst[m])) for m in wire}
    requests = defaultdict(list)  # (node, out_port) -> [(message, hop index)]
    for m, hs in hops.items():
        for q, h in enumerate(hs):
            requests[(h.node, h.out_port)].append((m, q))
    current = dict(wire)  # message -> wire it occupies on its current channel
    progress = {m: 0 for m in hops}  # message -> index of the hop to be set next
    edges: dict[int, list[tuple | None]] = {m: [None] * len(hs) for m, hs in hops.items()}
    dropped = set()
    for key in sorted(requests, key=lambda k: _processing_order(net, *k)):
        node, port = key
        casc = net.cascades[key]
        by_input = {}
        for m, q in requests[key]:
            if m in dropped:
                continue
            assert progress[m] == q, "concentrators processed out of order"
            x = net.concentrator_input(node, port, hops[m][q].in_port, current[m])
            by_input[x] = (m, q)
        routes = route_cascade(casc, sorted(by_input))
        for x, (m, q) in by_input.items():
            if x not in routes:
                dropped.add(m)
                settings.unroutable.append(
                    (m, f"no free path through node {node} port {'ULR'[port]}"))
                continue
            edges[m][q] = tuple(routes[x])
            current[m] = follow(casc, x, routes[x])
            progress[m] = q + 1
    for m in hops:
        if m not in dropped:
            settings.wire[m] = wire[m]
            settings.decisions[m] = edges[m]
    return settings
