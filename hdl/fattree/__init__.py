"""Fat-tree hardware: nodes and whole networks built from the golden FatTreeNetwork."""

from .network import FatTreeNetworkHW, FatTreeNode, leaf_signature, port_signature

__all__ = ["FatTreeNetworkHW", "FatTreeNode", "leaf_signature", "port_signature"]
