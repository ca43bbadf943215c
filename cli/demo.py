"""``fatnet demo``: what a new user came for, in under a minute.

For a small network of each family (the registry's ``demo`` entry: one kind per family),
it runs the steps a user would type, printing each command before its output:

1. ``fatnet route <kind> ...``: the golden model routes the traffic;
2. ``fatnet gen <kind> ... -o DIR/<kind>``: Verilog, harness, lint waivers, manifest;
3. ``fatnet sim <kind> ... --waves DIR/<kind>/waves``: co-simulation against the model
   (Icarus when it is installed, else Verilator), with a waveform and its ``.gtkw``.

``--model-only`` runs step 1 alone (no Amaranth, no simulator).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import time
from pathlib import Path

from ..golden.errors import ParameterError
from .options import output_directory, seed
from .registry import demo_kinds, get_family

__all__ = ["SUMMARY", "add_arguments", "run"]

SUMMARY = ("the main job on defaults: a small network of each family routed by the model, "
           "its Verilog generated and co-simulated, waves written")


def add_arguments(p: argparse.ArgumentParser) -> None:
    kinds = demo_kinds()
    # choices are checked in run(): argparse refuses an empty list against choices
    p.add_argument("kinds", nargs="*", metavar="kind",
                   help=f"the families to show: {', '.join(kinds)} (default all)")
    p.add_argument("--model-only", action="store_true",
                   help="route with the golden model only: no Verilog, no simulator")
    p.add_argument("--sim", choices=("icarus", "verilator"), default=None,
                   help="simulator (default icarus when iverilog is installed, else "
                        "verilator)")
    p.add_argument("--seed", type=seed, default=None, metavar="S",
                   help="seed of every step's random choices (wiring, traffic, payloads); "
                        "default each kind's own demo seed, so the demo is the same every run")
    p.add_argument("-o", "--output", type=output_directory("output"), default="build/demo",
                   help="where the Verilog and waves go (default build/demo)")


def _with_seed(argv: tuple[str, ...], seed: int) -> tuple[str, ...]:
    """``argv`` with its ``--seed`` (if any) replaced by ``seed``."""
    kept = list(argv)
    if "--seed" in kept:
        at = kept.index("--seed")
        del kept[at:at + 2]
    return (*kept, "--seed", str(seed))


def run(args, main) -> int:
    """Run the demo's steps through ``main`` (the command line itself), one family at a
    time; the exit status is the first failing step's, else 0."""
    unknown = [k for k in args.kinds if k not in demo_kinds()]
    if unknown:
        raise ParameterError(f"kind must be one of {', '.join(demo_kinds())}, got "
                             f"{unknown[0]!r}")
    sim = args.sim or ("icarus" if shutil.which("iverilog") else "verilator")
    kinds = args.kinds or demo_kinds()
    out = Path(args.output)
    opened = []
    t0 = time.perf_counter()
    for kind in kinds:
        network, traffic = get_family(kind).kinds[kind].demo
        if args.seed is not None:
            network = _with_seed(network, args.seed)
        steps = [["route", kind, *network, *traffic]]
        if not args.model_only:
            where = out / kind
            steps += [["gen", kind, *network, "-o", str(where)],
                      ["sim", kind, *network, *traffic, "--sim", sim,
                       "--waves", str(where / "waves")]]
        for argv in steps:
            print(f"\n$ fatnet {shlex.join(argv)}", flush=True)
            # each step shows its own progress; the simulator's output is in its log
            # (on the terminal with -v)
            status = main(argv + ["-v"] * bool(args.verbose))
            if status:
                print(f"demo: step failed with status {status}: fatnet {shlex.join(argv)}")
                return status
        if not args.model_only:
            opened += sorted((out / kind / "waves").glob("*.gtkw"))
    print(f"\ndemo: {', '.join(kinds)} done in {time.perf_counter() - t0:.0f} s"
          + ("" if args.model_only else f" (model, Verilog in {out}/<kind>, {sim} "
             "co-simulation against the model)"))
    for gtkw in opened:
        print(f"open the waves: gtkwave {gtkw}")
    return 0
