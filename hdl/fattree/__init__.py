"""Fat-tree hardware: nodes and whole networks built from the golden FatTreeNetwork.

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from .manifest import manifest_fields
from .network import (FatTreeNetworkHW, FatTreeNode, leaf_signature, network_signature,
                      port_meaning, port_signature)

__all__ = ["check_buildable", "size_text", "FatTreeNetworkHW", "FatTreeNode", "leaf_signature",
           "port_signature", "top",
           "network_signature", "port_meaning", "manifest_fields"]


def check_buildable(net) -> None:
    """Every golden fat-tree is built in hardware: nothing to refuse."""


def size_text(net) -> str:
    """The network's size as the options name it, for messages."""
    return f"leaves {net.n}"


def top(net, library=None) -> FatTreeNetworkHW:
    """The network top of a golden fat-tree (``library``: generation only)."""
    return FatTreeNetworkHW(net, library=library)
