"""The fat-tree's waveform groups: the controller's members of the network top's
signature, the leaves (a group each), then one group per node (heap order, root first)
holding a group per port (``U``, ``L``, ``R``: the members of the node's signature)."""

from __future__ import annotations

from ...golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from ...hdl.fattree.network import NodeSignature, network_signature
from ...hdl.signatures import port_rows
from ..waves import WaveGroup, controller_group, terminal_group

__all__ = ["wave_groups", "hop_field_labels", "interior_wires"]


def wave_groups(net, top: str = "fattree_harness", core: str = "fattree") -> list[WaveGroup]:
    """Every group shown, from the signatures of the network top and of its nodes."""
    root = f"{top}.{core}"
    top_rows = port_rows(network_signature(net))
    groups = [controller_group(top_rows, top, root), terminal_group(top_rows, root)]
    for node in range(net.n - 1):
        level = (node + 1).bit_length() - 1
        sig = NodeSignature(net.port_width(node, p) for p in (PORT_U, PORT_L, PORT_R))
        rows = port_rows(sig)
        ports = []
        for p in (PORT_U, PORT_L, PORT_R):
            member = "ulr"[p]
            ports.append(WaveGroup.of(PORT_NAMES[p],
                                      [(f"{root}.node_{node}.{r['name']}", r["width"])
                                       for r in rows if r["path"][0] == member]))
        groups.append(WaveGroup.of(f"node_{node} (level {level})", groups=ports))
    return groups


def hop_field_labels(net, src: int, dst: int) -> list[list[str]]:
    """Per node on the path, a label per bit of its field (as
    :func:`fatnet.golden.fattree.bitstream.hop_fields` frames it): the turn bit
    ``addr@n<node>``, then off-line the decision bits of every stage of the concentrator
    the message enters there, ``dec@n<node>.s<stage>``."""
    offline = net.spec.mode == "offline"
    out = []
    for hop in net.tree.hops(src, dst):
        labels = [f"addr@n{hop.node}"]
        if offline:
            for s, stage in enumerate(net.cascades[(hop.node, hop.out_port)].stages):
                labels += [f"dec@n{hop.node}.s{s}"] * stage.decision_width
        out.append(labels)
    return out


def interior_wires(net) -> dict:
    """Channel wire ``(direction, heap, wire)`` -> [(data signal, ack signal, bit)] of
    the node ports it runs between (relative to the network top): channel ``h`` UP
    leaves node ``h`` by its ``U`` port and enters its parent by ``L`` or ``R``; DOWN
    the other way round."""
    from ...golden.fattree.topology import DOWN, UP
    out = {}
    nodes = net.n - 1
    for h in range(2 * net.n - 1):
        width = int(net.tree.cap[0, h])
        for d in (UP, DOWN):
            sides = []
            if h < nodes:  # node h's U port
                sides.append((f"node_{h}", "u", "o" if d == UP else "i"))
            if h > 0:  # the parent's L or R port
                sides.append((f"node_{(h - 1) // 2}", "l" if h % 2 else "r",
                              "i" if d == UP else "o"))
            for w in range(width):
                out[(d, h, w)] = [(f"{n}.{p}__{io}__data", f"{n}.{p}__{io}__ack", w)
                                  for n, p, io in sides]
    return out
