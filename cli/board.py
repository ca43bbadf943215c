"""``fatnet board <kind> [the kind's network options] --board B ... -o DIR``: the
self-testing top of any family's network on an FPGA board (:mod:`fatnet.hdl.board`,
:mod:`fatnet.hdl.bist`), the model's prediction of its UART reports
(:mod:`fatnet.sim.bist`) and, with ``--bitstream``, the bitstream from the YoWASP
tools. With ``--listen PORT`` nothing is built: the board's report lines are read from a
serial port and compared with the model's (:mod:`fatnet.cli.listen`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..golden.bist import PATTERNS, STUCK_WIRE_SYNTAX, period_clocks, report_line
from ..golden.cycle import start_latency
from ..golden.errors import ParameterError
from .options import add_seed_option, bounded_int, fraction, output_directory
from .outputs import staged_dir

__all__ = ["add_board_options", "cmd_board", "write_core"]


def write_core(plan, out: Path) -> None:
    """``bist.v`` (the self-testing top alone: ports clk, rst, uart_tx, led_heartbeat,
    led_error; for simulation and other boards) and its Verilator control file."""
    from amaranth.back import verilog

    from ..hdl.bist import bist_lint_waivers
    from ..sim.bist import build_core
    (out / "bist.v").write_text(verilog.convert(build_core(plan), name="bist",
                                                emit_src=False))
    (out / "bist_lint.vlt").write_text(bist_lint_waivers())


def add_board_options(p: argparse.ArgumentParser) -> None:
    from ..hdl.board import BOARDS
    p.add_argument("--board", required=True, choices=sorted(BOARDS),
                   help="the board: " + ", ".join(sorted(BOARDS)))
    p.add_argument("--clock", type=float, default=None, metavar="MHZ",
                   help="the clock in MHz (default: the board's oscillator; any other "
                        "through the board's PLL, within 0.5 %% of a frequency it makes)")
    p.add_argument("--pattern", choices=PATTERNS, default="random",
                   help="destinations: random (every other terminal) or a fixed "
                        "pattern (default random)")
    p.add_argument("--load", type=fraction("load"), default=1.0,
                   help="offered load: the chance a terminal with no message waiting "
                        "offers one in a cycle, in [0, 1] (default 1)")
    if "--seed" not in p._option_string_actions:   # some kinds take a network seed
        add_seed_option(p, "seed of the generators (default 0)")
    p.add_argument("--report-cycles", type=bounded_int("report-cycles", 1, 2 ** 32 - 1),
                   default=None, metavar="R",
                   help="delivery cycles between UART reports (default: about one second)")
    p.add_argument("--predict", type=bounded_int("predict", 0, 1000), default=0, metavar="N",
                   help="print the model's first N report lines (default 0: the model "
                        "runs every delivery cycle in Python, a few hundred to a few "
                        "thousand a second, so a one-second report of a board at 12 MHz "
                        "takes minutes; use --report-cycles to report more often)")
    p.add_argument("--stuck-wire", default=None, metavar="SPEC",
                   help=f"fault injection: hold one wire between the top and a terminal's "
                        f"port at a value, {STUCK_WIRE_SYNTAX} (e.g. 5:recv:data:1: "
                        f"terminal 5's recv wire 0 stuck at 1; docs/boards.md says what "
                        f"each reports)")
    p.add_argument("-o", "--output", type=output_directory("output"), default=None,
                   help="output directory (required unless --listen)")
    p.add_argument("--bitstream", action="store_true",
                   help="run the YoWASP and Apicula tools to the bitstream (iCE40, ECP5, "
                        "Gowin)")
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
    p.add_argument("--baud", type=bounded_int("baud", 1, 4_000_000), default=None,
                   help="with --listen: the port's baud rate (default the top's, 115200)")
    p.add_argument("--reports", type=bounded_int("reports", 1), default=None, metavar="N",
                   help="with --listen: stop after N lines (default: at Ctrl-C)")


def cmd_board(kind: str, args) -> int:
    from ..hdl.board import (BAUD, BOARDS, TOOL_OPTIONS, baud_divisor, build_board,
                             check_tools, largest_measured, tool_opts_of,
                             utilisation_lines)
    from ..hdl.gen import check_generable
    from ..hdl.pll import choose_pll
    from ..sim.bist import build_core, make_plan, predict, unpredicted
    from .registry import get_family
    fam = get_family(kind)
    board = BOARDS[args.board]
    requested = board.clock_mhz if args.clock is None else args.clock
    pll = choose_pll(board.pll, args.board, board.clock_mhz, requested)
    # everything clocked (the UART's divisor, the report period, the timing constraint)
    # follows the clock the PLL achieves, not the one requested
    clock = board.clock_mhz if pll is None else pll.output_mhz
    if args.bitstream and board.bitstream is not None:
        check_tools(args.board)
    tool_opts = tool_opts_of(vars(args))
    if tool_opts and not board.nextpnr:
        name = next(iter(tool_opts))
        raise ParameterError(f"{name.replace('_', '-')} applies to the boards Yosys and "
                             f"nextpnr build "
                             f"({', '.join(b for b, s in BOARDS.items() if s.nextpnr)}), "
                             f"not {args.board}")
    if args.listen is None and args.output is None:
        raise ParameterError("output is required (-o DIR) unless --listen PORT")
    for name in ("baud", "reports"):
        value = getattr(args, name)
        if value is not None and args.listen is None:
            raise ParameterError(f"{name} is an option of --listen, got {value} without it")
    net = fam.commands.network_from_args(kind, args)
    check_generable(net, hardware=fam.hardware)
    divisor = baud_divisor(clock)
    period = period_clocks(net.cycle_length, start_latency(net))
    report_cycles = args.report_cycles or max(1, round(clock * 1e6 / period))
    plan = make_plan(net, fam, pattern=args.pattern, load=args.load, seed=args.seed,
                     report_cycles=report_cycles, baud_divisor=divisor,
                     stuck_wire=args.stuck_wire)
    if args.listen is not None:       # the same plan as the build; nothing is written
        from .listen import listen
        return listen(plan, args.listen, baud=args.baud or BAUD, reports=args.reports)
    why = unpredicted(plan)
    if args.predict and why is not None:
        raise ParameterError(f"predict must be 0 with stuck-wire {plan.stuck_wire}: {why}")
    out = Path(args.output)
    lines = [report_line(r) for r in predict(plan, args.predict * report_cycles)]
    doc = {"board": args.board, "clock_requested_mhz": requested, "clock_mhz": clock,
           "pll": None if pll is None else pll.as_json(),
           **{name: tool_opts.get(name) for name in TOOL_OPTIONS}, "kind": kind,
           "network": fam.testbench.build_params(net)[0], "pattern": args.pattern,
           "load": args.load, "seed": args.seed, "stuck_wire": args.stuck_wire,
           "terminals": plan.terminals,
           "payload_bits": plan.payload_bits, "cycle_length_bits": plan.cycle_length,
           "bist_period_clocks": period, "report_cycles": report_cycles,
           "report_seconds": report_cycles * period / (clock * 1e6),
           "uart": f"{BAUD} baud 8N1 (divisor {divisor})", "predicted_reports": lines}
    with staged_dir(out) as tmp:      # all or nothing: a failed build writes none
        write_core(plan, tmp)
        products = build_board(build_core(plan), args.board, tmp, bitstream=args.bitstream,
                               pll=pll, hint=largest_measured(args.board, kind),
                               tool_opts=tool_opts)
        (tmp / "board.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    via = "the oscillator" if pll is None else (
        f"{pll.primitive} {', '.join(f'{k}={v}' for k, v in pll.parameters.items())}")
    print(f"wrote the {args.board} build of the self-testing {kind} ({plan.terminals} "
          f"terminals, delivery cycle {plan.cycle_length} bit-times, a report every "
          f"{report_cycles} cycles = {doc['report_seconds']:.2f} s) to {out}; clock "
          f"{clock:.6g} MHz from {via}")
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
    for i, ln in enumerate(lines):
        print(f"report {i + 1} predicted: {ln}")
    return 0
