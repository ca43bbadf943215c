"""The fat-tree's fields of the generated manifest (:func:`fatnet.hdl.gen.manifest`)."""

from __future__ import annotations

from ...golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from ..controller import bit_time_zero, cleared_when
from .network import node_key

__all__ = ["manifest_fields", "SPEC_FIELDS"]

#: The manifest's ``spec`` (:meth:`FatTreeSpec.to_dict`), each key documented.
SPEC_FIELDS = {
    "kind": "fat-tree",
    "leaves": "n: processors (leaves), a power of two; levels 0 (root) .. L = lg n",
    "capacities": "wires per channel, per level, root (level 0, the external channel) "
                  "first, leaves (level L) last",
    "profile": "how the capacities were chosen (universal, constant or explicit)",
    "root_capacity": "the universal fat-tree's root capacity W (null otherwise)",
    "concentrator": "pippenger (random bipartite stages) or crossbar (one complete stage)",
    "mode": "offline (streams carry decision bits from a schedule) or online (every "
            "stage takes its first free output)",
    "payload_bits": "data bits of every message",
    "seed": "the --seed given: every concentrator's random stages derive from it",
    "link_stages": "s, the --link-stages given: registers on every node-to-node link, "
                   "each way (not on the leaves' or the external channel)",
    "start_stages": "the --start-stages given: register stages of the start strobe's tree "
                    "to the nodes (= start_latency_clocks)",
    "stuck_links": "the --stuck-link faults built in, sorted: [direction, heap, wire, "
                   "value], wire `wire` of heap `heap`'s up or down channel held at "
                   "`value` (0 or 1) whatever drives it; no node knows of it (empty: none)",
}


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
    T, s = net.cycle_length, net.spec.link_stages
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
            "stage_edges": [[list(row) for row in st.adjacency] for st in c.stages],
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
            f"one bit-time per clock; {bit_time_zero(net.start_stages)}. "
            f"Sources drive M at bit-time 0. At a node, M out = M in + 1 (turn bit) + W "
            f"+ max(1, k), W = the decision bits of the output's concentrator shape "
            f"({w_bits}), k = its stages (node_outputs says which shape); every later "
            f"bit spends max(1, k) bit-times in the node. Each link between two nodes "
            f"holds s = spec.link_stages = {s} registers each way (cleared with the node "
            f"it enters): a path of h nodes adds s (h - 1) bit-times to every bit and to "
            f"the acknowledgment. A destination raises recv_ack "
            f"in the clock its M bit arrives (one clock later delays send_ack by one); "
            f"the source sees send_ack A = sum of max(1, k) over the path's nodes + "
            f"s (h - 1) later. "
            f"Delivery cycle = the longest path's M arrival + max(payload_bits, A) + 1 = "
            f"{T} bit-times; bit_time "
            f"counts 0 .. {T - 1} while busy, then stays at {T} until the next start. "
            f"After busy falls nothing is cleared until the next start strobe: every "
            f"connection made in the cycle stays, so recv keeps carrying the connected "
            f"source's send bits and send_ack the destination's recv_ack, each delayed as "
            f"in the cycle (both 0 if the sources drive 0 and the destinations drop "
            f"recv_ack); {cleared_when(net.start_stages, 'node')}, so both read 0 "
            f"from bit-time 0."),
        "message_format": (
            "one bit per bit-time, MSB first in every field: M = 1, then per node on the "
            "path its turn bit (entered from a child: 1 = go up, 0 = cross to the other "
            "child; entered from the parent: 0 = left, 1 = right) followed, off-line, by "
            "the decision bits of every stage of the concentrator it enters there (stage "
            "by stage, each the index of the edge the message takes among its input's "
            "edges in stage_edges), then the payload. A message climbs to the least "
            "common ancestor of source and destination and descends; one to ext climbs "
            "with 1s through the root, one from ext (on ext.send) descends from the "
            "root; a message to its own leaf is not sent through the network. Each node "
            "strips what it reads: the destination receives M = 1 and the payload. Wire "
            "order: a concentrator's inputs are the other two ports' wires (U out: L then "
            "R; L out: U then R; R out: U then L), lower index = higher priority."),
        "concentrator_shapes": shapes,
        "node_outputs": node_outputs,
        "fields": {
            "spec": "the options the network was built from; spec.<name> below",
            **{f"spec.{k}": v for k, v in SPEC_FIELDS.items()},
            "capacities": "wires per channel, per level, root first (= spec.capacities)",
            "timing": "latency per node, acknowledgment, the delivery cycle and what the "
                      "outputs carry after busy falls",
            "message_format": "what a source drives: turn bits, decision bits, payload, "
                              "and the concentrators' input-wire order",
            "concentrator_shapes": "every distinct concentrator (inputs -> outputs): "
                "stage output sizes, decision bits per stage and in all (0 on-line), "
                "stage_edges[stage][input] = the outputs of that input's edges in edge "
                "order (the decision value is the position in this list), "
                "guarantee = any that many inputs reach distinct outputs",
            "node_outputs": "per node (heap order): the index in concentrator_shapes of "
                "the concentrator on its U, L and R output, and the Verilog module",
            "effective_capacities": "per level (root first), the fewest messages a "
                "channel of that level is guaranteed to carry: min(capacity, guarantee "
                "of the concentrator feeding it); off-line schedules use these",
        },
    }
