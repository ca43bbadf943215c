"""Fat-tree topology: levels, channels, message paths, turn bits and load factors.

Conventions (shared with the hardware; docs/fattree.md "Model conventions")
------------------------------------------------------------------
* ``n = 2^L`` leaves (processors). Levels run from 0 (the root) to L (the processors).
* Nodes and channels use heap numbering: the node or leaf at level ``k`` and position
  ``p`` has heap index ``h = 2^k - 1 + p``; its children are ``2h + 1`` (left) and
  ``2h + 2`` (right). Leaf ``i`` is heap ``2^L - 1 + i``.
* Channel ``h`` is the pair of channels between heap ``h`` and its parent: ``UP`` (child
  to parent) and ``DOWN`` (parent to child). Channel 0 is the root's external channel:
  UP leaves the root towards the external interface, DOWN enters the root from it.
  A channel has the level of the node beneath it, so channel 0 is at level 0 and the
  processors' own channels are at level L.
* The external interface is the endpoint :data:`EXT` (-1). A message from a leaf to
  EXT climbs to the root and leaves through channel 0 UP; one from EXT enters through
  channel 0 DOWN. For the purpose of paths, EXT acts as a least common ancestor at
  level -1.
* A message (i, i) never enters the network: it is delivered locally and uses no channel.
* Turn bits, one per node on the path, in the order the nodes consume them: at a node
  entered from a child, 1 = go up (U), 0 = cross to the other child; at a node entered
  from its parent, 0 = left child, 1 = right child (the destination's address bit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from ..messages import EXT
from .spec import DOWN, UP, FatTreeSpec  # channel directions, defined with the spec

__all__ = ["EXT", "UP", "DOWN", "PORT_U", "PORT_L", "PORT_R", "PORT_NAMES",
           "BRANCHES", "Hop", "FatTree", "out_port_for"]

#: Node ports.
PORT_U, PORT_L, PORT_R = 0, 1, 2
PORT_NAMES = ("U", "L", "R")


#: For each input port, the output port its turn bit 0 and turn bit 1 lead to: from the
#: parent (U), 0 = left and 1 = right; from a child, 0 = cross and 1 = up. The hardware's
#: selectors are wired from this table too.
BRANCHES = {PORT_U: (PORT_L, PORT_R), PORT_L: (PORT_R, PORT_U), PORT_R: (PORT_L, PORT_U)}


def out_port_for(in_port: int, turn: int) -> int:
    """The output port a node sends a message to, from its input port and turn bit."""
    return BRANCHES[in_port][turn]


@dataclass(frozen=True)
class Hop:
    """One node on a message's path.

    Attributes
    ----------
    node : int
        Heap index of the node.
    level : int
        Level of the node (0 = root).
    in_port, out_port : int
        ``PORT_U``, ``PORT_L`` or ``PORT_R``.
    bit : int
        The turn bit the node consumes.
    in_channel, out_channel : tuple of (int, int)
        (heap index, direction) of the channel the message arrives on and leaves by.
    """

    node: int
    level: int
    in_port: int
    out_port: int
    bit: int
    in_channel: tuple
    out_channel: tuple


class FatTree:
    """The topology of a fat-tree spec: capacities per channel, paths, loads.

    Parameters
    ----------
    spec : FatTreeSpec
        The validated instance description.
    """

    def __init__(self, spec: FatTreeSpec):
        self.spec = spec
        self.n = spec.leaves
        self.L = spec.levels
        self.num_channels = 2 ** (self.L + 1) - 1
        self.level_of = np.zeros(self.num_channels, dtype=np.int64)
        for k in range(self.L + 1):
            self.level_of[2 ** k - 1: 2 ** (k + 1) - 1] = k
        caps = np.asarray(spec.capacities, dtype=np.int64)
        # Nominal capacity of every channel, indexed [direction, heap].
        self.cap = np.stack([caps[self.level_of], caps[self.level_of]])

    # ------------------------------------------------------------------ indexing
    @staticmethod
    def heap(level: int, pos: int) -> int:
        return (1 << level) - 1 + pos

    def leaf_heap(self, leaf: int) -> int:
        return (1 << self.L) - 1 + leaf

    def capacity(self, level: int) -> int:
        return int(self.spec.capacities[level])

    def check_endpoint(self, name: str, value: int, allow_ext: bool = True) -> None:
        if value == EXT and allow_ext:
            return
        if not (0 <= value < self.n):
            extra = " or 'ext'" if allow_ext else ""
            raise ParameterError(
                f"{name} must be a leaf index in [0, {self.n - 1}]{extra}, got {value}")

    # ------------------------------------------------------------------ paths
    def lca_level(self, src, dst):
        """Level of the least common ancestor; -1 through EXT, L for a local message.

        Works on scalars and on numpy arrays alike.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        x = np.where((src < 0) | (dst < 0), 0, src ^ dst)
        # bit length of x without floating point: count shifts
        bl = np.zeros_like(x)
        y = x.copy()
        while np.any(y):
            nz = y > 0
            bl += nz
            y = y >> 1
        lvl = self.L - bl
        lvl = np.where((src < 0) | (dst < 0), -1, lvl)
        return lvl if lvl.ndim else int(lvl)

    def hops(self, src: int, dst: int) -> list[Hop]:
        """The nodes a message visits, in order, with the turn bit each consumes."""
        self.check_endpoint("source", src)
        self.check_endpoint("destination", dst)
        if src == EXT and dst == EXT:
            raise ParameterError("a message cannot go from 'ext' to 'ext'")
        L = self.L
        k_lca = self.lca_level(src, dst)
        out: list[Hop] = []
        if src != EXT:
            # Climb: nodes at levels L-1 .. max(k_lca, 0).
            for k in range(L - 1, max(k_lca, 0) - 1, -1):
                node = self.heap(k, src >> (L - k))
                child = self.heap(k + 1, src >> (L - k - 1))
                in_port = PORT_L if child == 2 * node + 1 else PORT_R
                if k > k_lca:  # go up (for EXT destinations also at the root)
                    out.append(Hop(node, k, in_port, PORT_U, 1, (child, UP), (node, UP)))
                else:  # the LCA: cross to the other child
                    other = PORT_R if in_port == PORT_L else PORT_L
                    nxt = 2 * node + (1 if other == PORT_L else 2)
                    out.append(Hop(node, k, in_port, other, 0, (child, UP), (nxt, DOWN)))
        if dst != EXT:
            # Descend: nodes at levels k_lca+1 .. L-1 (from EXT: 0 .. L-1).
            for k in range(k_lca + 1, L):
                node = self.heap(k, dst >> (L - k))
                bit = (dst >> (L - 1 - k)) & 1
                child = 2 * node + 1 + bit
                out.append(Hop(node, k, PORT_U, PORT_R if bit else PORT_L, bit,
                               (node, DOWN), (child, DOWN)))
        return out

    def address_bits(self, src: int, dst: int) -> list[int]:
        """The turn bits of a message, in the order the nodes consume them."""
        return [h.bit for h in self.hops(src, dst)]

    def path_channels(self, src: int, dst: int) -> list[tuple[int, int]]:
        """Every channel (heap, direction) the message occupies, source to destination."""
        if src == dst:
            return []
        hops = self.hops(src, dst)
        return [hops[0].in_channel] + [h.out_channel for h in hops] if hops else []

    # ------------------------------------------------------------------ loads
    def channel_incidence(self, src, dst):
        """For message arrays, the (message index, direction, heap) of every channel use.

        Returns three int64 arrays of equal length.
        """
        src = np.asarray(src, dtype=np.int64)
        dst = np.asarray(dst, dtype=np.int64)
        lca = self.lca_level(src, dst)
        idx = np.arange(len(src))
        msgs, dirs, heaps = [], [], []
        for k in range(self.L + 1):
            on = lca < k
            up = on & (src >= 0)
            down = on & (dst >= 0)
            base = (1 << k) - 1
            shift = self.L - k
            msgs.append(idx[up])
            dirs.append(np.full(up.sum(), UP))
            heaps.append(base + (src[up] >> shift))
            msgs.append(idx[down])
            dirs.append(np.full(down.sum(), DOWN))
            heaps.append(base + (dst[down] >> shift))
        return np.concatenate(msgs), np.concatenate(dirs), np.concatenate(heaps)

    def load(self, src, dst) -> np.ndarray:
        """load(M, c) for every channel, as an array indexed [direction, heap]."""
        _, dirs, heaps = self.channel_incidence(src, dst)
        flat = np.bincount(dirs * self.num_channels + heaps,
                           minlength=2 * self.num_channels)
        return flat.reshape(2, self.num_channels)

    def load_factor(self, src, dst, cap: np.ndarray | None = None) -> float:
        """lambda(M) = max over channels of load(M, c) / cap(c)."""
        cap = self.cap if cap is None else cap
        if len(np.asarray(src)) == 0:
            return 0.0
        return float((self.load(src, dst) / cap).max())

    def is_one_cycle(self, src, dst, cap: np.ndarray | None = None) -> bool:
        cap = self.cap if cap is None else cap
        return bool((self.load(src, dst) <= cap).all())
