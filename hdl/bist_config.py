"""The self-testing top's parameters, in one object (:class:`BistConfig`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..golden.bist import (MAX_ADDRESS_BITS, PATTERNS, StuckWire, min_payload_bits,
                           payload_fields, period_clocks)
from .bist_counters import MIN_PERIOD

__all__ = ["BistConfig"]


@dataclass(frozen=True)
class BistConfig:
    """What the self-testing top around a network is built from (the model's plan,
    :func:`fatnet.sim.bist.bist_config`); ValueError, in one line, on values the
    hardware cannot take.

    Parameters
    ----------
    cycle_length : int
        T, the network's delivery cycle in bit-times.
    start_latency : int
        D, the network's start latency (:func:`fatnet.golden.cycle.start_latency`):
        bit-time 0 is the clock D + 1 after the strobe.
    pattern : str
        ``random`` or a fixed pattern (:data:`fatnet.golden.bist.FIXED_PATTERNS`).
    payload_bits : int
        P (>= 2n + 4).
    prefix : int
        Bits the network delivers between the M bit and the payload.
    headers : tuple of dict
        Per terminal (2^n of them, n >= 1), destination -> the header bits it drives
        after the M bit (the destinations it can draw: every other terminal for
        ``random``, one for a fixed pattern): the longest sets the header register's
        width, a fixed pattern's destination is the one key; the bits come from
        ``header``.
    header : callable
        ``header(s, destination)``: terminal s's header for an n-bit destination value,
        ``(bits, length)`` as Amaranth values, the bits left-aligned (the family's
        :meth:`~fatnet.hdl.family.HardwareFamily.bist_header`); it must agree with
        ``headers`` on every destination there.
    states : tuple of int
        Per terminal, the generator's first state.
    offer_threshold : int
        The offer threshold of the offered load (:func:`fatnet.golden.bist.threshold`,
        0 .. 256).
    report_cycles : int
        Completed cycles between reports.
    baud_divisor : int
        Clocks per UART bit (>= 2).
    flip_cycle : int or None
        Fault injection: in this cycle (counted from 0) terminal 0's payload goes out
        with its last bit flipped.
    stuck_wire : fatnet.golden.bist.StuckWire or None
        Fault injection: this wire between the top and a terminal's port (wire 0 of
        its ``send``, ``send_ack``, ``recv`` or ``recv_ack``) is held at its value at
        every clock; the side that reads it sees only that value.
    arrival : int or None
        The bit-time at which every message's M bit reaches its destination's wire,
        where the model delivers each message alone at that one bit-time and its
        payload ends the cycle (``arrival + 1 + prefix + payload_bits`` is T): the
        checkers then take the payload's bit-times from the period's strobes rather
        than count them. None elsewhere.
    """

    cycle_length: int
    start_latency: int
    pattern: str
    payload_bits: int
    prefix: int
    headers: tuple
    header: Callable
    states: tuple
    offer_threshold: int
    report_cycles: int
    baud_divisor: int
    flip_cycle: int | None = None
    stuck_wire: StuckWire | None = None
    arrival: int | None = None

    def __post_init__(self):
        N = len(self.states)
        if N < 2 or N != 1 << (N - 1).bit_length():
            raise ValueError(f"the terminals (states) must be a power of two >= 2, got {N}")
        if self.n > MAX_ADDRESS_BITS:
            raise ValueError(f"the terminals must be at most 2^{MAX_ADDRESS_BITS} (the "
                             f"generator's address bits), got 2^{self.n}")
        if len(self.headers) != N:
            raise ValueError(f"headers must give one table per terminal ({N}), got "
                             f"{len(self.headers)}")
        if self.pattern not in PATTERNS:
            raise ValueError(f"pattern must be one of {', '.join(PATTERNS)}, got "
                             f"{self.pattern!r}")
        if self.payload_bits < min_payload_bits(self.n):
            raise ValueError(f"payload_bits must be >= 2n + 4 = {min_payload_bits(self.n)}, "
                             f"got {self.payload_bits}")
        if self.baud_divisor < 2:
            raise ValueError(f"baud_divisor must be >= 2, got {self.baud_divisor}")
        if self.report_cycles < 1:
            raise ValueError(f"report_cycles must be >= 1, got {self.report_cycles}")
        if self.arrival is not None and self.arrival + 1 + self.prefix + \
                self.payload_bits != self.cycle_length:
            raise ValueError(f"arrival + 1 + prefix + payload_bits must be cycle_length "
                             f"{self.cycle_length}, got arrival {self.arrival}")
        self.check_count()

    def check_count(self) -> None:
        """ValueError, in one line, unless a period is at least the count's shortest
        (:data:`~fatnet.hdl.bist_counters.MIN_PERIOD`)."""
        if self.period < MIN_PERIOD:
            raise ValueError(f"the BIST period must be >= {MIN_PERIOD} clocks, the count's "
                             f"(each kind's sum held until the counters' sweep takes it); "
                             f"cycle_length {self.cycle_length} gives {self.period}")

    @property
    def terminals(self) -> int:
        """2^n, the terminals."""
        return len(self.states)

    @property
    def n(self) -> int:
        """The bits of a terminal's address."""
        return (self.terminals - 1).bit_length()

    @property
    def period(self) -> int:
        """Clocks of one BIST period (:func:`fatnet.golden.bist.period_clocks`)."""
        return period_clocks(self.cycle_length, self.start_latency, self.n)

    @property
    def sequence_bits(self) -> int:
        """q, the bits of the payload's sequence number."""
        return payload_fields(self.payload_bits, self.n)[1]

    @property
    def header_bits(self) -> int:
        """H, the longest header of any terminal (0 if none)."""
        return max((len(h) for hs in self.headers for h in hs.values()), default=0)
