"""A board build through the API: the self-testing top of a network for an FPGA board,
its files, the model's prediction of its UART reports and, optionally, the bitstream.

``fatnet board`` parses its options and runs the build here (:func:`plan_board`,
:func:`build_planned`), with the options as attributes of one object (``args``);
:func:`board` gives the same build plain parameters: the network's
(:func:`fatnet.api.network`'s) and the self-test's (:data:`BOARD_OPTIONS`), with the
family's board defaults applied where they are left out, exactly as on the command
line.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..golden.errors import ParameterError
from .outputs import staged_dir
from .params import accepted, check_choice, check_fraction, check_int
from .registry import get_family

__all__ = ["BOARD_OPTIONS", "MAX_REPORT_CYCLES", "MAX_PREDICT", "DEFAULT_REPORT_CYCLES",
           "PREDICT_BUDGET", "DEFAULT_PREDICT", "BoardBuild", "board", "plan_board",
           "build_planned", "build_files", "Built", "QuietBuild", "write_core",
           "apply_board_defaults", "default_predict", "check_options", "fit_check",
           "predict_count", "board_doc", "write_build", "measure_build"]

#: Most delivery cycles between two reports (the report counter's 32 bits).
MAX_REPORT_CYCLES = 2 ** 32 - 1
#: Most report lines the model predicts.
MAX_PREDICT = 1000

#: The self-test's parameters besides the network's, with ``fatnet board``'s defaults
#: (a family's board defaults, e.g. the fat-tree's on-line mode, replace the network's).
BOARD_OPTIONS = {"clock": None, "pattern": "random", "load": 1.0, "bist_seed": 0,
                 "report_cycles": None, "predict": None, "stuck_wire": None,
                 "no_fit_check": False, "synth_opts": None, "nextpnr_opts": None,
                 "network_fmax": False}


#: Delivery cycles between reports by default (more when a report line's UART time is
#: longer): short enough that the model predicts a few reports in seconds to a minute.
DEFAULT_REPORT_CYCLES = 5_000
#: The model work ``fatnet board`` predicts by default, in terminal-cycles (terminals
#: times delivery cycles): 3 reports of 8 terminals at 5,000 cycles, about 5 s with
#: random destinations.
PREDICT_BUDGET = 150_000
#: Reports predicted by default when the budget allows.
DEFAULT_PREDICT = 3


class QuietBuild:
    """A board build's progress shown nowhere (:func:`board`'s): the methods the build
    calls, as the command line's display (:class:`fatnet.cli.board.BuildProgress`) has
    them."""

    verbose = False

    def step(self, step, tool=None, first_use=None) -> None:
        """A build step starts (None: the last has ended)."""

    def model(self, cycle: int, report_cycles: int, total: int) -> None:
        """The model's prediction has reached ``cycle`` of ``total``."""

    def echo(self, line: str) -> None:
        """A line the tools printed."""


def write_core(plan, out: Path) -> None:
    """``bist.v`` (the self-testing top alone: ports clk, rst, uart_tx, led_heartbeat,
    led_error; for simulation and other boards) and its Verilator control file."""
    from amaranth.back import verilog

    from ..hdl.bist import bist_lint_waivers
    from ..sim.bist import build_core
    (out / "bist.v").write_text(verilog.convert(build_core(plan), name="bist",
                                                emit_src=False))
    (out / "bist_lint.vlt").write_text(bist_lint_waivers())


def apply_board_defaults(kind: str, args) -> dict:
    """Fill the options the family's ``board_defaults`` name and the command line left
    out; returns those that set a value (option -> value), for board.json."""
    chosen = {}
    for dest, default in get_family(kind).commands.board_defaults(kind).items():
        if getattr(args, dest) is None:
            setattr(args, dest, default.value(args))
            if getattr(args, dest) is not None:    # a default may be "none here"
                chosen[dest] = getattr(args, dest)
    return chosen


def default_predict(terminals: int, report_cycles: int) -> int:
    """Reports predicted without ``--predict``: :data:`DEFAULT_PREDICT` or as many as
    :data:`PREDICT_BUDGET` allows."""
    return min(DEFAULT_PREDICT, PREDICT_BUDGET // (terminals * report_cycles))


def check_options(args, board) -> None:
    """Refuse options that do not go together (one line each, before any work)."""
    from ..hdl.board import BOARDS, tool_opts_of
    tool_opts = tool_opts_of(vars(args))
    if tool_opts and not board.nextpnr:
        name = next(iter(tool_opts))
        raise ParameterError(f"{name.replace('_', '-')} applies to the boards Yosys and "
                             f"nextpnr build "
                             f"({', '.join(b for b, s in BOARDS.items() if s.nextpnr)}), "
                             f"not {args.board}")
    reading = args.listen is not None or args.check_capture is not None
    if args.listen is not None and args.check_capture is not None:
        raise ParameterError("check-capture reads a file and listen a port: give one")
    if not reading and args.output is None:
        raise ParameterError("output is required (-o DIR) unless --listen PORT or "
                             "--check-capture FILE")
    for name in ("baud", "reports"):
        value = getattr(args, name)
        if value is not None and args.listen is None:
            raise ParameterError(f"{name} is an option of --listen, got {value} without it")
    if getattr(args, "network_fmax", False) and not (args.bitstream and board.nextpnr):
        built = ", ".join(b for b, s in BOARDS.items() if s.nextpnr)
        raise ParameterError(f"network-fmax builds the network alone with the board's "
                             f"tools: it needs --bitstream and a board Yosys and nextpnr "
                             f"build ({built}), got {args.board}"
                             f"{'' if args.bitstream else ' without --bitstream'}")
    if args.program and board.bitstream is None:
        raise ParameterError(f"program needs the bitstream, which Vivado builds for "
                             f"{args.board}, not fatnet: build without --program, run "
                             f"build_bist_top.sh, then load it (docs/boards.md)")


def fit_check(args, kind: str, net) -> str | None:
    """Refuse, before anything is generated, a network whose estimated logic exceeds
    the board's FPGA (unless ``--no-fit-check``); the estimate as a phrase, or None if
    none."""
    from ..hdl.board import estimate_logic
    from ..sim.bist import terminal_count
    fam = get_family(kind)
    key = fam.commands.board_fit_key(kind, args)
    est = estimate_logic(args.board, key, terminal_count(net, fam))
    if est is None:
        return None
    if est.cells > est.capacity and not args.no_fit_check:
        raise ParameterError(
            f"the network does not fit the {args.board}: {est.phrase()}; choose a "
            f"smaller network or another board (--no-fit-check builds it anyway)")
    return est.phrase()


def plan_board(kind: str, args):
    """(network, plan, (clock requested, PLL setting, clock, report period in clocks),
    the defaults the family chose, the logic estimate) of ``fatnet board``'s options
    (or :func:`board`'s parameters) ``args``, the family's board defaults filled into
    it; a build's network is checked to fit before the plan (which runs the model)."""
    from ..hdl.board import BOARDS, baud_divisor
    from ..hdl.gen import check_generable
    from ..hdl.pll import choose_pll
    from ..sim.bist import line_cycles, make_plan, period_of
    fam = get_family(kind)
    chosen = apply_board_defaults(kind, args)
    fam.commands.check_board(kind, args)
    board = BOARDS[args.board]
    requested = board.clock_mhz if args.clock is None else args.clock
    pll = choose_pll(board.pll, args.board, board.clock_mhz, requested)
    # everything clocked (the UART's divisor, the report period, the timing constraint)
    # follows the clock the PLL achieves, not the one requested
    clock = board.clock_mhz if pll is None else pll.output_mhz
    check_options(args, board)
    net = fam.commands.network_from_args(kind, args)
    check_generable(net, hardware=fam.hardware)
    building = args.listen is None and args.check_capture is None
    fit = fit_check(args, kind, net) if building else None
    divisor = baud_divisor(clock)
    period = period_of(net, fam)
    report_cycles = args.report_cycles or max(DEFAULT_REPORT_CYCLES,
                                              line_cycles(divisor, period))
    plan = make_plan(net, fam, pattern=args.pattern, load=args.load,
                     bist_seed=args.bist_seed, report_cycles=report_cycles,
                     baud_divisor=divisor,
                     stuck_wire=args.stuck_wire)
    return net, plan, (requested, pll, clock, period), chosen, fit


@dataclass(frozen=True)
class Built:
    """What :func:`build_planned` wrote: board.json, the build products, the predicted
    report lines and why fewer were predicted than asked (or None)."""

    doc: dict
    products: Any
    lines: list
    note: str | None


def build_planned(kind: str, args, net, plan, clocking, chosen, fit,
                  shown: QuietBuild | None = None) -> Built:
    """Write the board build of a planned network into ``args.output`` (all or nothing;
    with ``args.bitstream``, to the bitstream): the build of ``fatnet board`` and of
    :func:`board`; the steps shown on ``shown``."""
    shown = shown or QuietBuild()
    predict_n, unpredicted_note = predict_count(args, plan)
    doc = board_doc(args, kind, get_family(kind), net, plan, clocking, chosen, fit)
    products, lines = write_build(args, kind, plan, clocking[1], doc, predict_n, shown)
    return Built(doc=doc, products=products, lines=lines, note=unpredicted_note)


def build_files(kind: str, args) -> Built:
    """Plan and build (:func:`build_planned`) from options ``args`` as ``fatnet board``
    parses them, without listening, programming or printing."""
    from ..hdl.board import BOARDS, check_tools
    net, plan, clocking, chosen, fit = plan_board(kind, args)
    if args.bitstream and BOARDS[args.board].bitstream is not None:
        check_tools(args.board)
    return build_planned(kind, args, net, plan, clocking, chosen, fit)


def predict_count(args, plan) -> tuple[int, str | None]:
    """Reports to predict (``--predict``, else :func:`default_predict`) and, when the
    default predicts none, why; refuses a prediction the model cannot make."""
    from ..sim.bist import unpredicted
    why = unpredicted(plan)
    if args.predict and why is not None:
        raise ParameterError(f"predict must be 0 with stuck-wire {plan.stuck_wire}: {why}")
    if args.predict is not None:
        return args.predict, None
    if why is not None:
        return 0, f"not predicted: {why}"
    count = default_predict(plan.terminals, plan.report_cycles)
    return count, None if count else (
        f"not predicted by default for {plan.terminals} terminals at "
        f"{plan.report_cycles} cycles a report (beyond {PREDICT_BUDGET:,} terminal-cycles "
        f"of model time); --predict N computes N")


def _text(value):
    """``value`` as board.json writes it: its text, or null."""
    return None if value is None else str(value)


def board_doc(args, kind, fam, net, plan, clocking, chosen, fit) -> dict:
    """board.json (``predicted_reports`` filled by the build)."""
    from ..hdl.board import BAUD, TOOL_OPTIONS, tool_opts_of
    requested, pll, clock, period = clocking
    tool_opts = tool_opts_of(vars(args))
    return {"board": args.board, "clock_requested_mhz": requested, "clock_mhz": clock,
            "pll": None if pll is None else pll.as_json(),
            **{name: tool_opts.get(name) for name in TOOL_OPTIONS}, "kind": kind,
            "network": fam.testbench.build_params(net).params, "pattern": args.pattern,
            "load": args.load, "bist_seed": args.bist_seed,
            "stuck_wire": _text(args.stuck_wire),
            "board_defaults": chosen, "terminals": plan.terminals,
            "payload_bits": plan.payload_bits, "cycle_length_bits": plan.cycle_length,
            "bist_period_clocks": period, "report_cycles": plan.report_cycles,
            "report_seconds": plan.report_cycles * period / (clock * 1e6),
            "uart": f"{BAUD} baud 8N1 (divisor {plan.baud_divisor})",
            "logic_estimate": fit, "parts": None, "fmax_mhz": None, "critical_path": None,
            "network_fmax": None, "predicted_reports": []}


def write_build(args, kind, plan, pll, doc, predict_n, shown):
    """Write everything into ``-o`` (all or nothing), the model's prediction running
    while the tools run, the steps shown on ``shown`` (:class:`QuietBuild`'s methods);
    returns the build products and the predicted lines."""
    from ..golden.bist import report_line
    from ..hdl.board import build_board, largest_measured, tool_opts_of
    from ..sim.bist import build_core, predict
    lines = []
    out = Path(args.output)
    with staged_dir(out) as tmp:
        def prediction():
            total = predict_n * plan.report_cycles
            reports = predict(plan, total, on_cycle=lambda c: shown.model(
                c, plan.report_cycles, total))
            lines.extend(report_line(r) for r in reports)
        shown.step("generation (bist.v)")
        write_core(plan, tmp)
        products = build_board(build_core(plan), args.board, tmp, bitstream=args.bitstream,
                               pll=pll, hint=largest_measured(args.board, kind),
                               tool_opts=tool_opts_of(vars(args)), on_step=shown.step,
                               echo=shown.echo if shown.verbose else None,
                               meanwhile=prediction if predict_n else None)
        doc["predicted_reports"] = lines
        if products is not None:
            measure_build(args, plan, tmp, doc, shown)
        (tmp / "board.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    return products, lines


def measure_build(args, plan, out: Path, doc: dict, shown) -> None:
    """board.json's figures of a build run to the bitstream in ``out``: the network's and
    the self-test's LUTs and flip-flops (``parts``), the routed Fmax (``fmax_mhz``), its
    critical path (``critical_path``) and, with ``args.network_fmax``, the network
    alone's (``network_fmax``), built in its own directory, its steps shown on
    ``shown``."""
    from ..hdl.board import (BOARDS, NETWORK_ALONE, build_network_alone, routed_fmax,
                             tool_opts_of)
    from ..hdl.parts import read_parts
    from ..hdl.tools import nextpnr_critical_path
    from ..sim.bist import network_ports
    vendor = BOARDS[args.board].pll
    parts = read_parts(out, "bist_top", vendor)
    doc["parts"] = None if parts is None else {k: p.as_json() for k, p in parts.items()}
    log = out / "bist_top.tim"
    text = log.read_text() if log.exists() else ""
    doc["fmax_mhz"], doc["critical_path"] = routed_fmax(text), nextpnr_critical_path(text)
    if not getattr(args, "network_fmax", False):
        return
    network, ports = network_ports(plan)
    alone = build_network_alone(
        network, ports, args.board, out / NETWORK_ALONE,
        tool_opts=tool_opts_of(vars(args)), echo=shown.echo if shown.verbose else None,
        on_step=lambda step, tool=None, first_use=None: shown.step(
            step and f"the network alone: {step}", tool, first_use))
    def over_network(mhz):
        return round(mhz / alone.fmax_mhz, 3) if mhz and alone.fmax_mhz else None
    doc["network_fmax"] = {
        "fmax_mhz": alone.fmax_mhz, "constraint_mhz": alone.constraint_mhz,
        "clock_ratio": over_network(doc["clock_mhz"]),
        "fmax_ratio": over_network(doc["fmax_mhz"]),
        "network": None if alone.network is None else alone.network.as_json(),
        "critical_path": alone.critical_path, "directory": NETWORK_ALONE}


@dataclass(frozen=True)
class BoardBuild:
    """What :func:`board` wrote.

    Attributes
    ----------
    directory : Path
        The build's directory: ``bist.v``, the board's files, ``board.json``.
    board : str
        The board.
    manifest : dict
        ``board.json``: the clock, the network, the self-test's plan, the defaults the
        family chose, the logic estimate, the predicted reports and, with the
        bitstream, the network's and the self-test's LUTs and flip-flops, the routed
        Fmax and (``network_fmax``) the network alone's (docs/boards.md).
    predicted_reports : list of str
        The model's first report lines, as the board prints them on its UART.
    bitstream : Path or None
        The bitstream, when built.
    note : str or None
        Why fewer reports were predicted than asked, if so.
    """

    directory: Path
    board: str
    manifest: dict
    predicted_reports: list
    bitstream: Path | None
    note: str | None

    @property
    def board_defaults(self) -> dict:
        """The parameters the family's board defaults set (``board.json``'s)."""
        return self.manifest["board_defaults"]


def _options(kind: str, params: dict) -> dict:
    """The network's and the self-test's parameters, defaults filled in; unknown names
    and left-out required ones refused in one line."""
    fam = get_family(kind)
    hook = fam.commands.build_network
    network = {name: p.default for name, p in inspect.signature(hook).parameters.items()
               if name in accepted(hook)}
    options = {**network, **BOARD_OPTIONS}
    # the family's board defaults: None until applied from the other parameters
    options.update(dict.fromkeys(fam.commands.board_defaults(kind)))
    names = ", ".join(options)
    for name in params:
        if name not in options:
            raise ParameterError(f"{name} is not a parameter of a {kind} board build: it "
                                 f"takes {names}")
    options.update(params)
    for name, value in options.items():
        if value is inspect.Parameter.empty:
            raise ParameterError(f"{name} is required for a {kind} board build")
    return options


def _check(options: dict) -> None:
    """The self-test's parameters checked as ``fatnet board``'s options are."""
    from ..golden.bist import PATTERNS
    if options["pattern"] is not None:      # None: the family's board default applies
        check_choice("pattern", options["pattern"], PATTERNS)
    check_fraction("load", options["load"])
    if options["report_cycles"] is not None:
        check_int("report_cycles", options["report_cycles"], 1, MAX_REPORT_CYCLES)
    if options["predict"] is not None:
        check_int("predict", options["predict"], 0, MAX_PREDICT)


def board(kind: str, board: str, output, *, bitstream: bool = False,
          **params) -> BoardBuild:
    """Build the self-testing top of a ``kind`` network for ``board`` into the directory
    ``output`` (``fatnet board``): ``params`` are the network's (as
    :func:`fatnet.api.network` takes them) and the self-test's (:data:`BOARD_OPTIONS`);
    ``bitstream`` runs the YoWASP tools to the bitstream.

    A network the board cannot hold (by the estimate from the measured builds; unless
    ``no_fit_check``), or parameters the self-test cannot take, are refused in one
    line before anything is written.
    """
    from ..hdl.board import BOARDS
    check_choice("board", board, sorted(BOARDS))
    options = _options(kind, params)
    _check(options)
    args = SimpleNamespace(**options, board=board, output=str(output), bitstream=bitstream,
                           program=False, listen=None, check_capture=None, baud=None,
                           reports=None, verbose=False)
    built = build_files(kind, args)
    products = None if built.products is None else \
        Path(output) / f"bist_top.{BOARDS[board].bitstream}"
    return BoardBuild(directory=Path(output), board=board, manifest=built.doc,
                      predicted_reports=list(built.lines), bitstream=products,
                      note=built.note)
