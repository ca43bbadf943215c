"""A built fat-tree network: topology, one concentrator cascade per node output, timing.

This is the single description of structure: the golden model routes through it and
the hardware generator instantiates it, wire for wire and edge for edge.

Concentrator inputs (per node output port, in this order; lower index = higher priority
in on-line arbitration):

* ``U`` out: the L input wires, then the R input wires.
* ``L`` out: the U input wires, then the R input wires.
* ``R`` out: the U input wires, then the L input wires.

Every cascade of one shape (inputs, outputs, kind) is built once, from a seed derived from
the spec's seed and that shape, and shared by every node output of that shape: each graph
is verified once, and the hardware instantiates one module per shape.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..seeds import derived_seed
from .concentrator import Cascade, build_cascade
from .topology import DOWN, PORT_L, PORT_R, PORT_U, UP, FatTree
from .spec import FatTreeSpec

__all__ = ["FatTreeNetwork", "cascade_seed"]


def cascade_seed(spec_seed: int, inputs: int, outputs: int, kind: str) -> int:
    """The seed of the cascade of one shape, derived from the network's seed."""
    kind_code = {"pippenger": 1, "crossbar": 2}[kind]
    return derived_seed(spec_seed, "cascade", inputs, outputs, kind_code)


class FatTreeNetwork:
    """A fat-tree spec built into a concrete network.

    Parameters
    ----------
    spec : FatTreeSpec
        Validated description; its ``seed`` fixes every concentrator graph.
    """

    #: The family's folder in every layer (the hardware is ``fatnet.hdl.fattree``).
    family = "fattree"

    def __init__(self, spec: FatTreeSpec):
        self.spec = spec
        self.tree = FatTree(spec)
        self.L = self.tree.L
        self.n = self.tree.n
        self._shapes: dict[tuple[int, int], Cascade] = {}
        # cascades[(node, out_port)] for every internal node and port
        self.cascades: dict[tuple[int, int], Cascade] = {}
        for node in range(2 ** self.L - 1):
            for port in (PORT_U, PORT_L, PORT_R):
                r, s = self.concentrator_shape(node, port)
                self.cascades[(node, port)] = self._cascade(r, s)

    # ------------------------------------------------------------------ structure
    def _cascade(self, r: int, s: int) -> Cascade:
        key = (r, s)
        if key not in self._shapes:
            kind = self.spec.concentrator
            self._shapes[key] = build_cascade(r, s, kind,
                                              cascade_seed(self.spec.seed, r, s, kind))
        return self._shapes[key]

    @property
    def shapes(self) -> dict[tuple[int, int], Cascade]:
        """Every distinct cascade, by (inputs, outputs)."""
        return dict(self._shapes)

    def port_channel(self, node: int, port: int, direction_in: bool) -> tuple[int, int]:
        """The channel (heap, direction) attached to a node port, as input or output."""
        if port == PORT_U:
            return (node, DOWN) if direction_in else (node, UP)
        child = 2 * node + (1 if port == PORT_L else 2)
        return (child, UP) if direction_in else (child, DOWN)

    @property
    def start_stages(self) -> int:
        """Register stages of the start strobe's tree to the nodes (``spec.start_stages``;
        :func:`fatnet.golden.cycle.start_latency`)."""
        return self.spec.start_stages

    @property
    def payload_bits(self) -> int:
        """Data bits of every message (``spec.payload_bits``), as every network has them."""
        return self.spec.payload_bits

    @property
    def stuck_wires(self) -> dict:
        """``(direction, heap, wire)`` -> value of every stuck link (``spec.stuck_links``):
        the cycle engine's key ``(*channel, wire)``."""
        return dict(self.spec.stuck_links)

    def link_stages_of(self, heap: int) -> int:
        """Registers, each way, on the link that carries the channels of ``heap`` (its
        UP and DOWN channels): ``spec.link_stages`` between two nodes, none on a
        processor's channel or the root's external one."""
        return self.spec.link_stages if 0 < heap < self.n - 1 else 0

    def port_width(self, node: int, port: int) -> int:
        heap = node if port == PORT_U else 2 * node + (1 if port == PORT_L else 2)
        return int(self.tree.cap[0, heap])

    def concentrator_inputs(self, out_port: int) -> tuple[int, int]:
        """The two input ports feeding an output port, in concentrator input order."""
        return {PORT_U: (PORT_L, PORT_R), PORT_L: (PORT_U, PORT_R),
                PORT_R: (PORT_U, PORT_L)}[out_port]

    def concentrator_shape(self, node: int, out_port: int) -> tuple[int, int]:
        a, b = self.concentrator_inputs(out_port)
        return (self.port_width(node, a) + self.port_width(node, b),
                self.port_width(node, out_port))

    def concentrator_input(self, node: int, out_port: int, in_port: int, wire: int) -> int:
        a, _ = self.concentrator_inputs(out_port)
        return wire if in_port == a else self.port_width(node, a) + wire

    # ------------------------------------------------------------------ capacities
    @cached_property
    def effective_cap(self) -> np.ndarray:
        """Per channel, how many messages its feeding concentrator is guaranteed to carry.

        Injection channels (the processors' UP channels and the external DOWN channel)
        are driven directly and keep their nominal capacity. For the crossbar this equals
        the nominal capacity; for Pippenger cascades it is the verified guarantee
        (about 3/4 of the wires on randomly wired stages), as in the paper's Section IV.
        """
        cap = self.tree.cap.copy()
        for (node, port), casc in self.cascades.items():
            heap, direction = self.port_channel(node, port, direction_in=False)
            cap[direction, heap] = min(cap[direction, heap], casc.guarantee)
        return cap

    # ------------------------------------------------------------------ timing
    def hop_decision_width(self, node: int, out_port: int) -> int:
        """Decision bits a message carries for one node (0 in on-line mode)."""
        if self.spec.mode == "online":
            return 0
        return self.cascades[(node, out_port)].decision_width

    def hop_registers(self, node: int, out_port: int) -> int:
        """Registers on a node's path to one output: one after every concentrator stage
        (the last is the output register), or just the output register without stages.
        Every stream bit spends this many bit-times in the node, and so does the
        acknowledgment coming back (its registers sit between the same stages, the
        last at the input port), so no path crosses more than one stage per clock."""
        return max(1, len(self.cascades[(node, out_port)].stages))

    def hop_latency(self, node: int, out_port: int) -> int:
        """Bit-times from a message's M bit at a node input to its M bit at the output.

        The selector reads the turn bit one bit-time after M; each concentrator stage
        reads its decision bits; the registers after the stages add one each.
        """
        return (1 + self.hop_decision_width(node, out_port)
                + self.hop_registers(node, out_port))

    def link_registers(self, hops: int) -> int:
        """Registers (each way) on the node-to-node links of a path of ``hops`` nodes:
        ``link_stages`` on each of its ``hops - 1`` links."""
        return self.spec.link_stages * (hops - 1)

    def path_timing(self, src: int, dst: int) -> tuple[int, int, int]:
        """(hops, header bits after M, bit-time of M at the destination) of a path."""
        hops = self.tree.hops(src, dst)
        header = sum(1 + self.hop_decision_width(h.node, h.out_port) for h in hops)
        arrival = (sum(self.hop_latency(h.node, h.out_port) for h in hops)
                   + self.link_registers(len(hops)))
        return len(hops), header, arrival

    def ack_latency(self, src: int, dst: int) -> int:
        """Bit-times from the destination raising its acknowledgment to the source
        seeing it: the registers of every hop and link, passed in reverse."""
        hops = self.tree.hops(src, dst)
        return (sum(self.hop_registers(h.node, h.out_port) for h in hops)
                + self.link_registers(len(hops)))

    @cached_property
    def cycle_length(self) -> int:
        """Bit-times in a delivery cycle: the longest path's M, payload and acknowledgment.

        The longest of the paths from leaf 0 and from EXT (every level's nodes are
        built from the same shapes, so these cover every path length and port mix).
        """
        P = self.spec.payload_bits
        worst = 0
        n = self.n
        # one destination per LCA level (0 -> 2^k), both directions through the root,
        # and both directions through the external channel
        candidates = [(0, 1 << k) for k in range(self.L)] + [(n - 1, 0), (0, -1),
                                                              (n - 1, -1), (-1, 0),
                                                              (-1, n - 1)]
        for s, d in candidates:
            _, _, arrival = self.path_timing(s, d)
            worst = max(worst, arrival + max(P, self.ack_latency(s, d)) + 1)
        return worst

    # ------------------------------------------------------------------ accounting
    def component_counts(self) -> dict:
        """Theorem 4's accounting: switch components per level and in total.

        A node's components are its selectors (one per input wire and branch) and its
        concentrator switch points (one per edge of every stage).
        """
        per_level = []
        for k in range(self.L):
            selectors = edges = 0
            for p in range(2 ** k):
                node = (1 << k) - 1 + p
                for port in (PORT_U, PORT_L, PORT_R):
                    selectors += 2 * self.port_width(node, port)
                    edges += self.cascades[(node, port)].edges()
            per_level.append({"level": k, "nodes": 2 ** k, "selectors": selectors,
                              "switch_edges": edges})
        total = sum(x["selectors"] + x["switch_edges"] for x in per_level)
        return {"per_level": per_level, "total": total}
