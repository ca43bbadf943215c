"""``fatnet board <kind> [the kind's network options] --board B ... -o DIR``: the
self-testing top of any family's network on an FPGA board (:mod:`fatnet.hdl.board`,
:mod:`fatnet.hdl.bist`), the model's prediction of its UART reports
(:mod:`fatnet.sim.bist`) and, with ``--bitstream``, the bitstream from the YoWASP
tools."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..golden.bist import PATTERNS, report_line
from ..golden.errors import ParameterError
from .options import add_seed_option, bounded_int, fraction, output_directory

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
                   help="the clock in MHz (default and, for now, only: the board's "
                        "oscillator; the PLL is not built yet)")
    p.add_argument("--pattern", choices=PATTERNS, default="random",
                   help="destinations: random (every other terminal) or a fixed "
                        "pattern (default random)")
    p.add_argument("--load", type=fraction("load"), default=1.0,
                   help="offered load: the chance a terminal with no message waiting "
                        "offers one in a cycle, in [0, 1] (default 1)")
    if "--seed" not in p._option_string_actions:   # some kinds take a network seed
        add_seed_option(p, "seed of the generators (default 0)")
    p.add_argument("--report-cycles", type=bounded_int("report-cycles", 1), default=None,
                   metavar="R",
                   help="delivery cycles between UART reports (default: about one second)")
    p.add_argument("--predict", type=bounded_int("predict", 0), default=0, metavar="N",
                   help="print the model's first N report lines (default 0: the model "
                        "runs every delivery cycle in Python, a few hundred to a few "
                        "thousand a second, so a one-second report of a board at 12 MHz "
                        "takes minutes; use --report-cycles to report more often)")
    p.add_argument("-o", "--output", type=output_directory("output"), required=True,
                   help="output directory")
    p.add_argument("--bitstream", action="store_true",
                   help="run the YoWASP tools to the bitstream (iCE40, ECP5)")


def cmd_board(kind: str, args) -> int:
    from ..hdl.board import BAUD, BOARDS, baud_divisor, build_board, check_tools
    from ..hdl.gen import check_generable
    from ..sim.bist import build_core, make_plan, predict
    from .registry import get_family
    fam = get_family(kind)
    board = BOARDS[args.board]
    clock = board.clock_mhz if args.clock is None else args.clock
    if clock != board.clock_mhz:
        raise ParameterError(f"clock must be {board.clock_mhz:g} MHz on {args.board} (the "
                             f"oscillator; the PLL is not built yet), got {args.clock:g}")
    if args.bitstream and board.bitstream is not None:
        check_tools(args.board)
    net = fam.commands.network_from_args(kind, args)
    check_generable(net, hardware=fam.hardware)
    divisor = baud_divisor(clock)
    period = net.cycle_length + 2
    report_cycles = args.report_cycles or max(1, round(clock * 1e6 / period))
    plan = make_plan(net, fam, pattern=args.pattern, load=args.load, seed=args.seed,
                     report_cycles=report_cycles, baud_divisor=divisor)
    out = Path(args.output)
    lines = [report_line(r) for r in predict(plan, args.predict * report_cycles)]
    out.mkdir(parents=True, exist_ok=True)
    write_core(plan, out)
    products = build_board(build_core(plan), args.board, out, bitstream=args.bitstream)
    doc = {"board": args.board, "clock_mhz": clock, "kind": kind,
           "network": fam.testbench.build_params(net)[0], "pattern": args.pattern,
           "load": args.load, "seed": args.seed, "terminals": plan.terminals,
           "payload_bits": plan.payload_bits, "cycle_length_bits": plan.cycle_length,
           "bist_period_clocks": period, "report_cycles": report_cycles,
           "report_seconds": report_cycles * period / (clock * 1e6),
           "uart": f"{BAUD} baud 8N1 (divisor {divisor})", "predicted_reports": lines}
    (out / "board.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
    print(f"wrote the {args.board} build of the self-testing {kind} ({plan.terminals} "
          f"terminals, delivery cycle {plan.cycle_length} bit-times, a report every "
          f"{report_cycles} cycles = {doc['report_seconds']:.2f} s) to {out}")
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
            for ln in [ln for ln in text if "_LC:" in ln or "TRELLIS_COMB:" in ln] + fmax:
                print("nextpnr: " + ln.split("Info:", 1)[-1].strip())
    for i, ln in enumerate(lines):
        print(f"report {i + 1} predicted: {ln}")
    return 0
