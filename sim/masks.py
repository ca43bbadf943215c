"""The one refusal of a run-time fault mask of the wrong width, for the planner, the
Amaranth bench and the cocotb test alike (no imports: the simulator process loads it)."""

from __future__ import annotations

__all__ = ["mask_refusal"]


def mask_refusal(port_width: int | None, mask_bits: int, value: int | None = None) -> str | None:
    """Why a fault mask of ``mask_bits`` bits (``value``, when it is an integer that may
    be wider still) is refused for a design whose ``fault_mask`` has ``port_width`` bits
    (None: the design has no ``fault_mask``); None when it is not refused."""
    if port_width is None:
        return (f"the plan sets a fault mask of {mask_bits} bits, but the design has no "
                f"fault_mask input")
    if value is not None and (value < 0 or value >> port_width):
        mask_bits = max(mask_bits, value.bit_length())
    if mask_bits == port_width:
        return None
    shown = "" if value is None else f" ({value:#x})"
    return (f"fault mask of {mask_bits} bits refused{shown}: the design's fault_mask has "
            f"{port_width} bits (one per interior switch); a mask "
            f"{'wider' if mask_bits > port_width else 'narrower'} than the network is not "
            f"applied")
