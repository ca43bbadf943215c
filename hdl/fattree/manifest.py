"""The fat-tree's fields of the generated manifest (:func:`fatnet.hdl.gen.manifest`)."""

from __future__ import annotations

from ...golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from .network import node_key

__all__ = ["manifest_fields"]


def _shape_index(net) -> dict:
    return {shape: k for k, shape in enumerate(sorted(net.shapes))}


def manifest_fields(net, modules) -> dict:
    """The fat-tree's part of the manifest: parameters, capacities, timing, concentrator
    shapes and which sits on which node output (see :func:`fatnet.hdl.gen.manifest`).

    Parameters
    ----------
    net : FatTreeNetwork
    modules : list of (name, key)
        The distinct modules emitted (:attr:`ModuleLibrary.modules`).
    """
    caps = net.spec.capacities
    T = net.cycle_length
    online = net.spec.mode == "online"
    index = _shape_index(net)
    shapes = []
    for (r, s), c in sorted(net.shapes.items()):
        shapes.append({
            "index": index[(r, s)], "inputs": r, "outputs": s,
            "stages": [st.outputs for st in c.stages],
            "stage_decision_widths": [0 if online else st.decision_width
                                      for st in c.stages],
            "decision_width": 0 if online else c.decision_width,
            "guarantee": c.guarantee})
    node_module = {}
    for name, key in modules:
        if key[0] == "node":
            node_module[key[1:]] = name
    node_outputs = []
    for h in range(net.n - 1):
        row = {"node": h, "level": (h + 1).bit_length() - 1}
        for p in (PORT_U, PORT_L, PORT_R):
            row[PORT_NAMES[p]] = index[net.concentrator_shape(h, p)]
        if node_module:
            row["module"] = node_module[node_key(net, h)]
        node_outputs.append(row)
    eff = [int(net.effective_cap[:, (1 << k) - 1].min()) for k in range(net.L + 1)]
    w_bits = ("0: on-line, no decision bits" if online
              else "its decision_width in concentrator_shapes")
    return {
        "spec": net.spec.to_dict(),
        "capacities": list(caps),
        "effective_capacities": eff,
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. "
            f"Sources drive M at bit-time 0. At a node, M out = M in + 1 (turn bit) + W "
            f"+ max(1, k), W = the decision bits of the output's concentrator shape "
            f"({w_bits}), k = its stages (node_outputs says which shape); every later "
            f"bit spends max(1, k) bit-times in the node. A destination raises recv_ack "
            f"in the clock its M bit arrives (one clock later delays send_ack by one); "
            f"the source sees send_ack A = sum of max(1, k) over the path's nodes later. "
            f"Delivery cycle = the longest path's M arrival + max(payload_bits, A) + 1 = {T} bit-times; bit_time "
            f"counts 0 .. {T - 1} while busy, then stays at {T} until the next start."),
        "concentrator_shapes": shapes,
        "node_outputs": node_outputs,
        "fields": {
            "concentrator_shapes": "every distinct concentrator (inputs -> outputs): "
                "stage output sizes, decision bits per stage and in all (0 on-line), "
                "guarantee = any that many inputs reach distinct outputs",
            "node_outputs": "per node (heap order): the index in concentrator_shapes of "
                "the concentrator on its U, L and R output, and the Verilog module",
            "effective_capacities": "per level (root first), the fewest messages a "
                "channel of that level is guaranteed to carry: min(capacity, guarantee "
                "of the concentrator feeding it); off-line schedules use these",
        },
    }
