"""The fat-tree's waveform groups: the controller's members of the network top's
signature, one group per node (heap order, root first) holding a group per port (``U``,
``L``, ``R``: the members of the node's signature), then the endpoints."""

from __future__ import annotations

from ...golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from ...hdl.fattree.network import NodeSignature, network_signature
from ...hdl.signatures import port_rows

__all__ = ["wave_groups"]


def wave_groups(net, top: str = "fattree_harness", core: str = "fattree"):
    """``[(group title, [(path, width) or (subgroup title, [(path, width)])])]`` of
    every signal shown, from the signatures of the network top and of its nodes."""
    root = f"{top}.{core}"
    top_rows = port_rows(network_signature(net))
    controller = [(f"{top}.clk", 1)] + [(f"{root}.{r['name']}", r["width"])
                                       for r in top_rows if r["endpoint"] is None]
    groups = [("controller", controller)]
    for node in range(net.n - 1):
        level = (node + 1).bit_length() - 1
        sig = NodeSignature(net.port_width(node, p) for p in (PORT_U, PORT_L, PORT_R))
        rows = port_rows(sig)
        ports = []
        for p in (PORT_U, PORT_L, PORT_R):
            member = "ulr"[p]
            ports.append((PORT_NAMES[p], [(f"{root}.node_{node}.{r['name']}", r["width"])
                                          for r in rows if r["path"][0] == member]))
        groups.append((f"node_{node} (level {level})", ports))
    groups.append(("endpoints", [(f"{root}.{r['name']}", r["width"])
                                 for r in top_rows if r["endpoint"] is not None]))
    return groups
