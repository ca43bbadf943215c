"""``fatnet demo``: what a new user came for, in under a minute.

For a small network of each family (the registry's ``demo`` entry: one kind per family),
it runs three steps through the Python API (:mod:`fatnet.api`), printing before each the
command that does it on the command line:

1. ``fatnet route <kind> ...``: the golden model routes the traffic, cycle by cycle, as
   the hardware does (:func:`fatnet.api.route`);
2. ``fatnet gen <kind> ... -o DIR/<kind>``: Verilog, harness, lint waivers, manifest
   (:func:`fatnet.api.generate`);
3. ``fatnet sim <kind> ... --waves DIR/<kind>/waves``: co-simulation against the model
   (Icarus when it is installed, else Verilator), with a waveform and its ``.gtkw``
   (:func:`fatnet.api.cosimulate`, on the model's run of step 1).

``--model-only`` runs step 1 alone (no Amaranth, no simulator).
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import time
from pathlib import Path

from .. import api
from ..api.registry import demo_kinds, get_family
from ..golden.errors import ParameterError
from .options import output_directory, seed

__all__ = ["SUMMARY", "add_arguments", "options", "run"]

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


def options(params: dict) -> list[str]:
    """Plain parameters as the command line's options (``root_capacity=8`` is
    ``--root-capacity 8``)."""
    return [text for name, value in params.items()
            for text in (f"--{name.replace('_', '-')}", str(value))]


def run(args) -> int:
    """Run the demo's steps through the API (:mod:`fatnet.api`), one family at a time,
    each after the command that does it on the command line; the exit status is the
    first failing step's, else 0."""
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
        status = _show(kind, args, sim, out / kind)
        if status:
            return status
        if not args.model_only:
            opened += sorted((out / kind / "waves").glob("*.gtkw"))
    print(f"\ndemo: {', '.join(kinds)} done in {time.perf_counter() - t0:.0f} s"
          + ("" if args.model_only else f" (model, Verilog in {out}/<kind>, {sim} "
             "co-simulation against the model)"))
    for gtkw in opened:
        print(f"open the waves: gtkwave {gtkw}")
    return 0


def _show(kind: str, args, sim: str, where: Path) -> int:
    """One kind's steps: the model's run, then (unless ``--model-only``) its Verilog and
    the co-simulation with waves; the exit status of the first that fails, else 0."""
    from .main import generated_line, report_cosimulation, simulator_failed
    from .progress import Progress
    demo = get_family(kind).kinds[kind].demo
    network = dict(demo.network)
    if args.seed is not None:
        network["seed"] = args.seed
    seed = network.get("seed", 0)   # the command line's one --seed: network and traffic
    line = [*options(network), *options(demo.traffic)]
    _command("route", kind, line)
    net = api.network(kind, **network)
    ms = api.messages(net, seed=seed, **demo.traffic)
    report = api.route(net, ms)
    # in the words of the fat-tree's route
    print(f"messages: {len(ms)}  delivered: {report.delivered} (+{report.local} local)  "
          f"lost: {len(report.lost)}  delivery cycles: {report.cycles} of "
          f"{net.cycle_length} bit-times")
    if args.model_only:
        return 0
    _command("gen", kind, [*options(network), "-o", str(where)])
    with Progress("fatnet gen", args.verbose) as progress:
        made = api.generate(net, where, progress=progress)
    print(generated_line(made, where))
    replay = _command("sim", kind, [*line, "--sim", sim, "--waves", str(where / "waves")])
    from ..sim.cocotb_runner import SimulatorError
    try:
        with Progress("fatnet sim", args.verbose) as progress:
            # the model's run above is the one the RTL is compared with
            done = api.cosimulate(net, ms, model=report, sim=sim, seed=seed,
                                  waves=where / "waves", replay=replay,
                                  log=not args.verbose, progress=progress)
    except SimulatorError as e:
        return simulator_failed(e)
    status = report_cosimulation(net, done, seed, replay)
    if status:
        print(f"demo: step failed with status {status}: {replay}")
    return status


def _command(verb: str, kind: str, line: list[str]) -> str:
    """Print the command line that does a step (``$ fatnet route ...``); returns it."""
    command = f"fatnet {shlex.join([verb, kind, *line])}"
    print(f"\n$ {command}", flush=True)
    return command
