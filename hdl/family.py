"""What a network family's hardware package provides to the engines of this layer.

The generator (:mod:`fatnet.hdl.gen`) and the harness (:mod:`fatnet.hdl.harness`) never
look a family up and never branch on one: they are handed the family's hardware hooks,
an object (in practice the package ``fatnet.hdl.<family>``) with the members of
:class:`HardwareFamily`. ``tests/test_families.py`` checks that every registered family
provides them, with these parameters.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from amaranth import Const

if TYPE_CHECKING:
    from .modules import ModuleLibrary

__all__ = ["HardwareFamily", "destination_header"]


@runtime_checkable
class HardwareFamily(Protocol):
    """The hardware hooks of one family; ``net`` is always that family's golden network."""

    def check_buildable(self, net) -> None:
        """Raise :class:`~fatnet.golden.errors.ParameterError` (one line naming the option
        and what is accepted) for a golden network the hardware does not build; called
        before anything is written or simulated."""
        ...

    def size_text(self, net) -> str:
        """The network's size as its options name it (``leaves 1024``), for messages."""
        ...

    def top(self, net, library: ModuleLibrary | None = None) -> Any:
        """The network top (a ``wiring.Component`` whose signature is
        :meth:`network_signature`); ``library`` (a
        :class:`~fatnet.hdl.modules.ModuleLibrary`) when generating Verilog, so that each
        distinct component is emitted once."""
        ...

    def network_signature(self, net) -> Any:
        """The top's ``wiring.Signature``, without building the top: ``start`` (in),
        ``busy`` (out), ``bit_time`` (out), the endpoints as
        :class:`~fatnet.hdl.signatures.EndpointSignature` members (arrays allowed) and any
        other plain inputs, which the harness passes through."""
        ...

    def port_meaning(self, net, row: dict) -> str:
        """One line on what a port carries (``row``: :func:`~fatnet.hdl.signatures.port_rows`)."""
        ...

    def manifest_fields(self, net, modules) -> dict:
        """The family's part of the manifest; its ``fields`` documents every key it adds."""
        ...

    def bist_header(self, net, source: int, destination) -> tuple[Any, Any]:
        """The header terminal ``source`` sends to ``destination`` (an n-bit Amaranth
        value) in the self-testing top, computed in hardware: ``(bits, length)``, two
        Amaranth values. ``bits`` is as wide as the network's longest header, the first
        bit sent its most significant, the header left-aligned (zeros below it);
        ``length`` counts the header's bits. The header is the bits the model's stream
        of that message carries between the M bit and the payload, bit for bit
        (``tests/test_bist_header.py``). Raise
        :class:`~fatnet.golden.errors.ParameterError` (one line) for a network whose
        headers are not a function of the source and the destination."""
        ...


def destination_header(destination) -> tuple[Any, Any]:
    """:meth:`HardwareFamily.bist_header` of a family whose header is the destination's
    bits, most significant first, whatever the source: the destination itself, and its
    width as the length."""
    return destination, Const(len(destination))
