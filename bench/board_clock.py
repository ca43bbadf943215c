"""The self-test beside its network on a board: each one's LUTs and flip-flops, the
board's routed Fmax against the network alone's in the same device and tools.

    python bench/board_clock.py --board B --kind KIND --sizes N [N ...] [--record]

from the repository's root. Each size is ``fatnet board KIND <size options> --board B
-o DIR --bitstream --network-fmax`` (the size options as the size search's: the
smallest payload the self-test accepts), at the board's oscillator: the self-testing
top built to the bitstream, and the network alone with registered ports
(:class:`fatnet.hdl.parts.NetworkAlone`) in its place. Printed per size, and with
``--record`` written into ``bench/results/board_clock.json`` (rendered into
docs/boards.md by ``python bench/figures.py``): the network's and the self-test's
Yosys LUT and flip-flop cells, the board's share of them, both Fmax, their ratio and
each one's critical path (nextpnr's). A YoWASP tool's first call compiles it, which
takes minutes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from fatnet.api.board import board as board_build
from fatnet.hdl.board import BOARDS

# sibling scripts of bench/ (on sys.path as the running script's folder)
from boards import BENCH, option_arguments
from figures import record_entry

__all__ = ["command_of", "values_of", "measure", "main"]


def command_of(board: str, kind: str, size: int) -> str:
    """The command that measures one size."""
    return f"python bench/board_clock.py --board {board} --kind {kind} --sizes {size}"


def values_of(manifest: dict, board: str, kind: str, size: int, options: str) -> dict:
    """The figures of one build from its ``board.json`` (``manifest``)."""
    parts, alone = manifest["parts"], manifest["network_fmax"]
    if parts is None or alone is None or not manifest["fmax_mhz"]:
        raise RuntimeError(f"{board} {kind} {options}: the build has no figures "
                           f"(parts {parts}, network alone {alone})")
    values = {"board": board, "kind": kind, "size": size, "options": options,
              "terminals": manifest["terminals"],
              "network_lut": parts["network"]["luts"], "network_ff": parts["network"]["ffs"],
              "self_test_lut": parts["self_test"]["luts"],
              "self_test_ff": parts["self_test"]["ffs"],
              "capacity": BOARDS[board].logic[0] if BOARDS[board].logic else 0,
              "fmax_mhz": manifest["fmax_mhz"], "critical_path": manifest["critical_path"],
              "network_fmax_mhz": alone["fmax_mhz"],
              "network_critical_path": alone["critical_path"]}
    values["ratio"] = round(values["fmax_mhz"] / values["network_fmax_mhz"], 2)
    return values


def measure(board: str, kind: str, size: int) -> dict:
    """Build one size with the network alone beside it; its figures."""
    params = BENCH[kind].options(size)
    with tempfile.TemporaryDirectory() as tmp:
        built = board_build(kind, board, Path(tmp), bitstream=True, network_fmax=True,
                            predict=0, no_fit_check=True, **params)
        return values_of(built.manifest, board, kind, size,
                         " ".join(option_arguments(params)))


def show(v: dict) -> None:
    """Print one size's figures."""
    share = (lambda luts: f" ({luts / v['capacity']:.0%})") if v["capacity"] else str
    print(f"{v['board']} {v['kind']} {v['options']}: network {v['network_lut']:,} LUT"
          f"{share(v['network_lut'])}, {v['network_ff']:,} FF; self-test "
          f"{v['self_test_lut']:,} LUT{share(v['self_test_lut'])}, {v['self_test_ff']:,} FF; "
          f"Fmax {v['fmax_mhz']} MHz against the network's {v['network_fmax_mhz']} MHz "
          f"({v['ratio']}); board's critical path {v['critical_path']}; the network's "
          f"{v['network_critical_path']}", flush=True)


def main(argv=None) -> int:
    """Measure each size; print (and record) its figures."""
    parser = argparse.ArgumentParser(prog="bench/board_clock.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--board", default="icebreaker",
                        choices=sorted(b for b, spec in BOARDS.items() if spec.nextpnr))
    parser.add_argument("--kind", default="butterfly", choices=sorted(BENCH))
    parser.add_argument("--sizes", type=int, nargs="+", default=[16])
    parser.add_argument("--record", action="store_true",
                        help="write the figures into bench/results/board_clock.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print("a YoWASP tool's first call compiles it, which takes minutes", flush=True)
    for size in args.sizes:
        values = measure(args.board, args.kind, size)
        show(values)
        if args.record:
            record_entry("board_clock", f"{args.board}-{args.kind}-{size}", values,
                         figure=f"the board's Fmax against the network alone's, "
                                f"{args.kind} {values['options']} on the {args.board}",
                         command=command_of(args.board, args.kind, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
