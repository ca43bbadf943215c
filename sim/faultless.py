"""The testbench hooks of a family without run-time faults or status registers: a
family's testbench package imports these instead of writing them again (the fat-tree,
the toy family of the tests)."""

from __future__ import annotations

from ..golden.errors import FatnetInputError

__all__ = ["mask_width", "mask_int", "expected_status", "status_settle_clocks",
           "status_paths", "status_signals", "status_site"]


def mask_width(net) -> int:
    return 0


def mask_int(net, mask) -> int:
    raise FatnetInputError(f"a {net.family} network has no run-time fault mask")


def expected_status(net, mask):
    return None


def status_settle_clocks(net) -> int:
    return 0


def status_paths(net, top: str) -> list[str]:
    return []


def status_signals(net, dut):
    return None


def status_site(net, index: tuple) -> str:
    return f"status register {index}"  # there are none: never asked
