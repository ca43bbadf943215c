"""The splitter networks' waveform groups, from the signatures: the controller's members
of the network top (``start``, ``bit_time``, ``busy``, ``fault_mask``), then one group
per level (inputs first) holding one group per switch (``sw_<level>_<row>``: the members
of its :class:`~fatnet.hdl.butterfly.SplitterSwitch` signature, ``clear``, ``faulty``,
``i``, ``up``, ``down``, ``up_bad``, ``down_bad``, and its status register ``bad``);
the terminals (a group each) come right after the controller."""

from __future__ import annotations

from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ...hdl.butterfly.network import network_signature, switch_key
from ...hdl.signatures import ChannelSignature, port_rows
from ..waves import WaveGroup, controller_group, terminal_group

__all__ = ["wave_groups", "switch_signature", "hop_field_labels", "interior_wires"]


def switch_signature(inputs: int, edges: int, link_stages: int = 0) -> wiring.Signature:
    """The signature of ``SplitterSwitch(inputs, edges, link_stages)`` (without
    elaborating one; the link registers add no port)."""
    return wiring.Signature({
        "clear": In(1), "faulty": In(1),
        "i": In(ChannelSignature(inputs)),
        "up": Out(ChannelSignature(edges)), "down": Out(ChannelSignature(edges)),
        "up_bad": In(edges), "down_bad": In(edges),
    })


def wave_groups(net, top: str = "butterfly_harness",
                core: str = "butterfly") -> list[WaveGroup]:
    root = f"{top}.{core}"
    top_rows = port_rows(network_signature(net))
    groups = [controller_group(top_rows, top, root), terminal_group(top_rows, root)]
    rows_of = {}
    for level in range(net.depth):
        switches = []
        for row in range(net.n_inputs):
            key = switch_key(net, level, row)
            if key not in rows_of:
                rows_of[key] = port_rows(switch_signature(*key))
            name = f"sw_{level}_{row}"
            sigs = [(f"{root}.{name}.{r['name']}", r["width"]) for r in rows_of[key]]
            sigs.append((f"{root}.bad_{level}_{row}", 1))
            switches.append(WaveGroup.of(f"{name} (row {row})", sigs))
        groups.append(WaveGroup.of(f"level_{level}", groups=switches))
    return groups


def hop_field_labels(net, src: int, dst: int) -> list[list[str]]:
    """Per level, a label per address bit the level's switch reads (``addr@L<level>``;
    ``.0``, ``.1`` for a two-bit field), as :meth:`CircuitNetwork.fields` frames them."""
    return [[f"addr@L{i}" if w == 1 else f"addr@L{i}.{b}" for b in range(w)]
            for i, w in enumerate(net.field_widths)]


def interior_wires(net) -> dict:
    """Channel wire ``(level, row, wire)`` -> [(data signal, ack signal, bit)] (relative
    to the network top): the edge of the switch at ``level - 1`` that drives it (its
    ``up`` or ``down`` slot whose head is ``row`` with in-edge rank ``wire``) and switch
    ``(level, row)``'s input ``wire``."""
    out: dict[tuple, list] = {}
    heads, D = net.network.heads, net.depth
    for level in range(D):
        e = int(net.network.edges_per_group[level])
        for src in range(net.n_inputs):
            for k in range(heads[level].shape[1]):
                row = int(heads[level][src, k])
                if row < 0:
                    continue
                side = f"sw_{level}_{src}.{'up' if k < e else 'down'}"
                key = (level + 1, row, int(net.rank[level][src, k]))
                out.setdefault(key, []).append((f"{side}__data", f"{side}__ack", k % e))
    for level in range(D):
        for row in range(net.n_inputs):
            for w in range(int(net.in_degree[level, row])):
                sw = f"sw_{level}_{row}.i"
                out.setdefault((level, row, w), []).append((f"{sw}__data", f"{sw}__ack", w))
    return out
