"""Fat-tree hardware: nodes and whole networks built from the golden FatTreeNetwork.

The names below are the family's hooks for generation (:mod:`fatnet.hdl.gen`).
"""

from amaranth import Cat, Const, Mux

from ...golden.errors import ParameterError
from .manifest import manifest_fields
from .network import (FatTreeNetworkHW, FatTreeNode, leaf_signature, network_signature,
                      port_meaning, port_signature)

__all__ = ["check_buildable", "size_text", "FatTreeNetworkHW", "FatTreeNode", "leaf_signature",
           "port_signature", "top",
           "network_signature", "port_meaning", "manifest_fields", "bist_header"]


def check_buildable(net) -> None:
    """Every golden fat-tree is built in hardware: nothing to refuse."""


def size_text(net) -> str:
    """The network's size as the options name it, for messages."""
    return f"leaves {net.n}"


def top(net, library=None) -> FatTreeNetworkHW:
    """The network top of a golden fat-tree (``library``: generation only)."""
    return FatTreeNetworkHW(net, library=library)


def bist_header(net, source, destination):
    """The self-test's header (:meth:`~fatnet.hdl.family.HardwareFamily.bist_header`),
    on-line mode, a function of ``source XOR destination`` and the destination's low
    bits: with h the bit length of ``source XOR destination`` (their lowest common
    ancestor is h levels above the leaves), h - 1 ones (up), a 0 (across, at the
    ancestor), then the destination's low h - 1 bits, most significant first (the turns
    down): 2h - 1 bits, the longest 2L - 1 (where the destination is the source, to
    which no terminal sends, the sibling's header, h = 1: one Mux level less). Off-line
    mode is refused: its headers carry the concentrators' decision bits, set from the
    whole cycle's messages."""
    if net.spec.mode != "online":
        raise ParameterError(f"mode must be online for the self-testing top, got "
                             f"{net.spec.mode}: off-line headers carry the decision bits "
                             f"of the whole cycle's schedule (--mode online)")
    L = net.L
    if len(destination) != L:
        raise ValueError(f"the destination has L = {L} bits, got {len(destination)}")
    width = 2 * L - 1
    differ = Const(source, L) ^ destination

    def header(h):
        return Cat(Const(0, 2 * (L - h)), destination[:h - 1], Const(0, 1),
                   Const((1 << (h - 1)) - 1, h - 1))

    bits, length = header(1), Const(1, width.bit_length())
    for h in range(2, L + 1):   # the highest bit that differs decides: its Mux is outermost
        bits = Mux(differ[h - 1], header(h), bits)
        length = Mux(differ[h - 1], Const(2 * h - 1, len(length)), length)
    return bits, length
