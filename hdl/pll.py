"""The boards' PLL settings for ``fatnet board --clock``: pure arithmetic, one search
per vendor, each returning the primitive's parameters and the frequency they give.

Each search walks the primitive's divider ranges, keeps the settings whose
phase-frequency detector (PFD) and VCO stay in the ranges the vendor documents, and
returns the setting whose output is nearest the request, in the order of the vendor's
own calculator so that the same request gives the same parameters:

* iCE40 (``SB_PLL40_*``, simple feedback), as ``icepll`` computes: PFD 10-133 MHz,
  VCO 533-1066 MHz, output 16-275 MHz; ``f_out = f_in (DIVF + 1) / ((DIVR + 1)
  2^DIVQ)``; FILTER_RANGE from the PFD frequency.
* ECP5 (``EHXPLLL``, feedback from CLKOP), as ``ecppll`` computes: PFD 3.125-400 MHz,
  VCO 400-800 MHz, output 10-400 MHz; ``f_out = f_in CLKFB_DIV / CLKI_DIV``, ``f_vco =
  f_out CLKOP_DIV``; ties go to the VCO nearest 600 MHz.
* Xilinx 7-series (``MMCME2_BASE``, Artix-7 speed grade -1, DS181): PFD 10-450 MHz,
  VCO 600-1200 MHz, output 4.69-464 MHz (the BUFG's limit); ``f_out = f_in M / (D O)``
  with integer M (CLKFBOUT_MULT_F, 2-64), D (DIVCLK_DIVIDE, 1-106), O
  (CLKOUT0_DIVIDE_F, 1-128); the fractional steps of M and O are not used.
* Gowin ``rPLL`` (GW1NR-9 C6/I5), as Apicula's ``gowin_pll`` computes: PFD 3-400 MHz,
  VCO 400-1200 MHz, output 3.125-600 MHz; ``f_out = f_in (FBDIV_SEL + 1) / (IDIV_SEL +
  1)``, ``f_vco = f_out ODIV_SEL``.

:func:`choose_pll` applies the rule of ``--clock``: the oscillator's own frequency needs
no PLL; any other request must lie in the PLL's output range and be reached within
:data:`CLOCK_TOLERANCE` by the nearest achievable frequency, which is then the clock.
This module imports no Amaranth: the command line checks ``--clock`` before it builds
anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..golden.errors import ParameterError

__all__ = ["CLOCK_TOLERANCE", "PLLS", "Pll", "PllSetting", "choose_pll", "ice40_candidates",
           "ecp5_candidates", "xilinx7_candidates", "gowin_candidates"]

#: The largest relative distance between the requested clock and the achieved one:
#: 0.5 %, so that the UART's divisor, the report period and the timing constraint all
#: follow the achieved clock (they are computed from it) while a request like 33.3 MHz
#: is still met by a PLL whose steps are coarse.
CLOCK_TOLERANCE = 0.005

# Relative slack in range checks and ties, so that 533.0000001 MHz from float
# arithmetic counts as 533.
_EPS = 1e-9


@dataclass(frozen=True)
class PllSetting:
    """One PLL setting: the primitive's parameters and the frequencies they give."""

    vendor: str           # a key of PLLS
    primitive: str        # the cell the board top instantiates
    input_mhz: float
    output_mhz: float     # the achieved clock
    pfd_mhz: float
    vco_mhz: float
    parameters: dict = field(default_factory=dict)   # the primitive's, by name

    def as_json(self) -> dict:
        """The setting for ``board.json``."""
        return {"primitive": self.primitive, "input_mhz": self.input_mhz,
                "output_mhz": self.output_mhz, "pfd_mhz": self.pfd_mhz,
                "vco_mhz": self.vco_mhz, "parameters": dict(self.parameters)}


@dataclass(frozen=True)
class Pll:
    """A vendor's PLL: its documented ranges (MHz) and its legal settings."""

    vendor: str           # its key in PLLS
    name: str             # for messages, e.g. "iCE40 SB_PLL40"
    primitive: str        # the cell the board top instantiates
    pfd: tuple            # (min, max)
    vco: tuple
    output: tuple
    candidates: Callable[[float], list]  # input MHz -> every legal (output, PFD, VCO, parameters)
    prefer: Callable | None = None  # among equally near settings, the smaller prefer(cand) wins

    def search(self, input_mhz: float, request_mhz: float) -> PllSetting | None:
        """The setting nearest ``request_mhz`` (:func:`_nearest`), or None when no
        setting is legal."""
        return _nearest(self.vendor, self.primitive, input_mhz, request_mhz,
                        self.candidates(input_mhz), self.prefer)

    def fastest_at_most(self, input_mhz: float, ceiling_mhz: float) -> float | None:
        """The fastest frequency this PLL makes from ``input_mhz`` at or below
        ``ceiling_mhz`` (for a clock under a measured Fmax), or None if it makes none."""
        return max((cand[0] for cand in self.candidates(input_mhz)
                    if cand[0] <= ceiling_mhz * (1 + _EPS)), default=None)


def _within(value: float, limits: tuple) -> bool:
    low, high = limits
    return low * (1 - _EPS) <= value <= high * (1 + _EPS)


def _nearest(vendor: str, primitive: str, input_mhz: float, request_mhz: float,
             candidates, prefer=None) -> PllSetting | None:
    """The first of ``candidates`` ((output, PFD, VCO, parameters), legal ones, in the
    vendor tool's order) nearest the request, as the vendors' tools keep the first of
    equals; among equals ``prefer`` (of a candidate, smaller is better) decides."""
    best = None
    for cand in candidates:
        if best is None:
            best = cand
            continue
        gap, best_gap = abs(cand[0] - request_mhz), abs(best[0] - request_mhz)
        tie = abs(gap - best_gap) <= _EPS * request_mhz
        if (gap < best_gap and not tie) or (tie and prefer and prefer(cand) < prefer(best)):
            best = cand
    if best is None:
        return None
    out, pfd, vco, parameters = best
    return PllSetting(vendor, primitive, input_mhz, out, pfd, vco, parameters)


# ------------------------------------------------------------------------------ iCE40
_ICE40_PFD, _ICE40_VCO, _ICE40_OUT = (10.0, 133.0), (533.0, 1066.0), (16.0, 275.0)


def ice40_filter_range(pfd_mhz: float) -> int:
    """The loop filter's FILTER_RANGE for a PFD frequency (icepll's table)."""
    for limit, value in ((17, 1), (26, 2), (44, 3), (66, 4), (101, 5)):
        if pfd_mhz < limit:
            return value
    return 6


def ice40_candidates(input_mhz: float):
    """Every legal setting from ``input_mhz``, in the vendor tool's order:
    (output, PFD, VCO, parameters)."""
    for divr in range(16):
        pfd = input_mhz / (divr + 1)
        if not _within(pfd, _ICE40_PFD):   # the PFD first: it prunes the rest
            continue
        for divf in range(128):
            vco = pfd * (divf + 1)
            for divq in range(1, 7):
                out = vco / 2 ** divq
                if _within(vco, _ICE40_VCO) and _within(out, _ICE40_OUT):
                    yield out, pfd, vco, {
                        "FEEDBACK_PATH": "SIMPLE", "DIVR": divr, "DIVF": divf,
                        "DIVQ": divq, "FILTER_RANGE": ice40_filter_range(pfd)}


# ------------------------------------------------------------------------------- ECP5
_ECP5_PFD, _ECP5_VCO, _ECP5_OUT = (3.125, 400.0), (400.0, 800.0), (10.0, 400.0)


def ecp5_candidates(input_mhz: float):
    """Every legal setting from ``input_mhz``, in the vendor tool's order:
    (output, PFD, VCO, parameters)."""
    for clki_div in range(1, 129):
        pfd = input_mhz / clki_div
        if not _within(pfd, _ECP5_PFD):   # the PFD first: it prunes the rest
            continue
        for clkfb_div in range(1, 81):
            out = pfd * clkfb_div
            for clkop_div in range(1, 129):
                vco = out * clkop_div
                if _within(vco, _ECP5_VCO) and _within(out, _ECP5_OUT):
                    yield out, pfd, vco, {
                        "FEEDBK_PATH": "CLKOP", "CLKI_DIV": clki_div,
                        "CLKFB_DIV": clkfb_div, "CLKOP_DIV": clkop_div,
                        # 180 degrees, as ecppll means it (the phase does not
                        # matter here: nothing else is clocked from the oscillator)
                        "CLKOP_CPHASE": clkop_div // 2, "CLKOP_FPHASE": 0}


# ---------------------------------------------------------------------- Xilinx 7-series
_XC7_PFD, _XC7_VCO, _XC7_OUT = (10.0, 450.0), (600.0, 1200.0), (4.69, 464.0)


def xilinx7_candidates(input_mhz: float):
    """Every legal setting from ``input_mhz``, in the vendor tool's order:
    (output, PFD, VCO, parameters)."""
    for divclk in range(1, 107):
        pfd = input_mhz / divclk
        if not _within(pfd, _XC7_PFD):   # the PFD first: it prunes the rest
            continue
        for mult in range(2, 65):
            vco = pfd * mult
            for outdiv in range(1, 129):
                out = vco / outdiv
                if _within(vco, _XC7_VCO) and _within(out, _XC7_OUT):
                    yield out, pfd, vco, {
                        "DIVCLK_DIVIDE": divclk, "CLKFBOUT_MULT_F": float(mult),
                        "CLKOUT0_DIVIDE_F": float(outdiv),
                        "CLKIN1_PERIOD": round(1000 / input_mhz, 3)}


# ------------------------------------------------------------------------------ Gowin
_GOWIN_PFD, _GOWIN_VCO, _GOWIN_OUT = (3.0, 400.0), (400.0, 1200.0), (3.125, 600.0)
#: rPLL's ODIV_SEL values (UG286).
GOWIN_ODIV = (2, 4, 8, 16, 32, 48, 64, 80, 96, 112, 128)


def gowin_candidates(input_mhz: float):
    """Every legal setting from ``input_mhz``, in the vendor tool's order:
    (output, PFD, VCO, parameters)."""
    for idiv in range(64):
        pfd = input_mhz / (idiv + 1)
        if not _within(pfd, _GOWIN_PFD):   # the PFD first: it prunes the rest
            continue
        for fbdiv in range(64):
            out = input_mhz * (fbdiv + 1) / (idiv + 1)
            for odiv in GOWIN_ODIV:
                vco = out * odiv
                if _within(vco, _GOWIN_VCO) and _within(out, _GOWIN_OUT):
                    yield out, pfd, vco, {
                        "FCLKIN": f"{input_mhz:g}", "IDIV_SEL": idiv,
                        "FBDIV_SEL": fbdiv, "ODIV_SEL": odiv}


#: The PLLs, by the vendor key that :class:`~fatnet.hdl.board.Board` names. Each is
#: searched as its vendor's tool searches: the first of the nearest settings, and the
#: ECP5's among equals the VCO nearest 600 MHz, as ecppll.
PLLS = {
    "ice40": Pll("ice40", "iCE40 SB_PLL40", "SB_PLL40", _ICE40_PFD, _ICE40_VCO, _ICE40_OUT,
                 ice40_candidates),
    "ecp5": Pll("ecp5", "ECP5 EHXPLLL", "EHXPLLL", _ECP5_PFD, _ECP5_VCO, _ECP5_OUT,
                ecp5_candidates, prefer=lambda cand: abs(cand[2] - 600)),
    "xilinx7": Pll("xilinx7", "7-series MMCME2_BASE", "MMCME2_BASE", _XC7_PFD, _XC7_VCO,
                   _XC7_OUT, xilinx7_candidates),
    "gowin": Pll("gowin", "Gowin rPLL", "rPLL", _GOWIN_PFD, _GOWIN_VCO, _GOWIN_OUT,
                 gowin_candidates),
}


def choose_pll(vendor: str, board: str, oscillator_mhz: float,
               request_mhz: float) -> PllSetting | None:
    """The PLL setting for ``--clock request_mhz`` on ``board``: None for the
    oscillator's own frequency (no PLL), else the nearest achievable setting, or a
    one-line :class:`ParameterError` naming ``--clock``, the accepted range and the
    nearest achievable frequency when the request is outside the PLL's output range or
    farther than :data:`CLOCK_TOLERANCE` from every achievable one."""
    if request_mhz == oscillator_mhz:
        return None
    pll = PLLS[vendor]
    low, high = pll.output
    setting = pll.search(oscillator_mhz, min(max(request_mhz, low), high))
    nearest = f"{setting.output_mhz:.4g} MHz" if setting else "none"
    if not (low <= request_mhz <= high) or setting is None or \
            abs(setting.output_mhz - request_mhz) > CLOCK_TOLERANCE * request_mhz:
        raise ParameterError(
            f"--clock must be {oscillator_mhz:g} MHz (the oscillator) or in {low:g}-{high:g} "
            f"MHz within {CLOCK_TOLERANCE:.1%} of a frequency the {pll.name} makes from it "
            f"on {board}, got {request_mhz:g}; nearest achievable {nearest}")
    return setting
