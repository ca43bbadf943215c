"""Speed of the butterfly family's model (benchmark figures, not timed tests).

Run as ``python bench/butterfly_model_speed.py`` from the repository's root. It prints
each figure with the command that produces it and its goal:

* ``fatnet route KIND --inputs 8 --problems P --allow-loss`` for the butterfly, the
  dilated butterfly and the multibutterfly, wall time of the whole command: P = 12,500
  (100,000 messages; goal 2 s) and, with ``--full``, P = 100,000 (800,000 messages);
* ``fatnet experiment leighton-maggs --table all`` (N = 1024, the paper's trial counts),
  wall time (goal 60 s on the 2-core machine) and CPU time (user + system of the
  command and its worker processes, which the machine's other jobs do not inflate as
  they do the wall time), with the load average while it ran; ``--skip-experiment``
  leaves it out;
* model message-hops per second per core (CPU time of this process) on batched work:
  the batched cycle-exact circuit model
  (:func:`fatnet.golden.butterfly.cyclebatch.run_cycles_streamed`) on 256 independent
  delivery cycles of random destinations through each 1024-input network, and
  store-and-forward (:func:`fatnet.golden.butterfly.store_forward.route_store_forward`)
  of 50 trials of 10 problems through 1024-input multibutterflies (goal 10^6); beside
  the circuit model, the scalar engine's rate on 4 of the cycles.

``--record`` also writes the figures into ``bench/results/butterfly_model_speed.json``
(:mod:`bench.figures`'s ``record``).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from fatnet.golden.butterfly import api as bf
from fatnet.golden.butterfly.cyclebatch import DELIVERED, BatchedCircuit, run_cycles_streamed
from fatnet.golden.butterfly.cyclemodel import simulate_cycle
from fatnet.golden.butterfly.patterns import make_problems
from fatnet.golden.butterfly.store_forward import route_store_forward
from fatnet.golden.butterfly.topology import make_network
from fatnet.golden.messages import MessageSet
from fatnet.golden.seeds import generator

# a sibling script of bench/ (on sys.path as the running script's folder)
from figures import record_entry

__all__ = ["main"]

KINDS = ("butterfly", "dilated-butterfly", "multibutterfly")
HOP_GOAL = 1e6


def _fatnet() -> str:
    """The ``fatnet`` beside this Python (the project's venv), else the one on PATH."""
    here = Path(sys.executable).with_name("fatnet")
    return str(here) if here.exists() else (shutil.which("fatnet") or "fatnet")


def _wall(argv: list[str]) -> float:
    """Wall seconds of one command (its output discarded; a failure stops the bench)."""
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def route_figures(problems: int) -> dict:
    """Wall seconds of ``fatnet route`` of each kind at 8 inputs."""
    out = {}
    for kind in KINDS:
        argv = [_fatnet(), "route", kind, "--inputs", "8", "--problems", str(problems),
                "--allow-loss"]
        out[kind] = _wall(argv)
        print(f"  {' '.join(['fatnet'] + argv[1:])}: {out[kind]:.2f} s "
              f"({8 * problems:,} messages; goal 2 s for 100,000)")
    return out


def _children_cpu() -> float:
    """User + system seconds of this process's finished children (and theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def experiment_figure() -> dict:
    """Wall and CPU seconds of the tables, and the 1-minute load average after them."""
    argv = [_fatnet(), "experiment", "leighton-maggs", "--table", "all"]
    cpu = _children_cpu()
    wall = _wall(argv)
    cpu = _children_cpu() - cpu
    load = os.getloadavg()[0]
    print(f"  fatnet experiment leighton-maggs --table all: {wall:.1f} s wall, {cpu:.1f} s "
          f"CPU (goal 60 s wall; load average {load:.1f} on {os.cpu_count()} cores)")
    return {"wall_s": round(wall, 1), "cpu_s": round(cpu, 1), "load": round(load, 1)}


def _traffic(kind: str, cycles: int, inputs: int, seed: int):
    """A network of ``kind`` and ``cycles`` cycles of random destinations from every
    input: (circuit, messages, cycle of each message)."""
    circuit = bf.build_circuit(bf.spec_from_options(kind, inputs))
    dst = generator(seed, "traffic").integers(0, inputs, size=cycles * inputs)
    ms = MessageSet.from_pairs(np.tile(np.arange(inputs), cycles), dst,
                               circuit.payload_bits, seed)
    return circuit, ms, np.repeat(np.arange(cycles), inputs)


def cycle_hops(kind: str, cycles: int = 256, inputs: int = 1024, seed: int = 0) -> float:
    """Message-hops per CPU second of the batched circuit model: ``cycles``
    independent delivery cycles, every input sending to a random output."""
    circuit, ms, label = _traffic(kind, cycles, inputs, seed)
    start = time.process_time()
    arrays = run_cycles_streamed(BatchedCircuit(circuit), label, ms.src, ms.dst)
    cpu = time.process_time() - start
    hops = int(arrays.hops.sum())
    delivered = int((arrays.status == DELIVERED).sum())
    rate = hops / cpu
    print(f"  circuit model, {kind} {inputs}: {cycles * inputs:,} messages in {cycles} "
          f"cycles ({delivered:,} delivered), {hops:,} hops in {cpu:.2f} s CPU: "
          f"{rate:,.0f} hops/s (goal {HOP_GOAL:,.0f}); the scalar engine "
          f"{scalar_cycle_hops(kind, inputs=inputs, seed=seed):,.0f} hops/s")
    return rate


def scalar_cycle_hops(kind: str, cycles: int = 4, inputs: int = 1024, seed: int = 0) -> float:
    """The same work on the scalar engine (the specification), a few cycles."""
    circuit, ms, label = _traffic(kind, cycles, inputs, seed)
    start = time.process_time()
    hops = sum(o.hops for c in range(cycles)
               for o in simulate_cycle(circuit, ms, np.flatnonzero(label == c))
               .outcomes.values())
    return hops / (time.process_time() - start)


def store_forward_hops(trials: int = 50, problems: int = 10, inputs: int = 1024,
                       seed: int = 0) -> float:
    """Message-hops per CPU second of store-and-forward routing (Table II's "10")."""
    nets = [make_network("multibutterfly", inputs, 2, rng=generator(seed, "wiring", t),
                         wiring="butterfly-plus-maps") for t in range(trials)]
    probs = np.stack([make_problems("random-destinations", inputs, problems,
                                    rng=generator(seed, "traffic", t)) for t in range(trials)])
    start = time.process_time()
    res = route_store_forward(nets, probs)
    cpu = time.process_time() - start
    hops = int(res.delivered.sum()) * nets[0].depth
    rate = hops / cpu
    print(f"  store-and-forward, multibutterfly {inputs}, {trials} trials x {problems} "
          f"problems: {hops:,} hops in {cpu:.2f} s CPU: {rate:,.0f} hops/s "
          f"(goal {HOP_GOAL:,.0f})")
    return rate


def _record(entry: str, figure: str, command: str, values: dict,
            machine: str | None = None) -> None:
    record_entry("butterfly_model_speed", entry, values, figure=figure, command=command,
                 machine=machine)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/butterfly_model_speed.py",
                                description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true",
                   help="also route 100,000 problems (800,000 messages) per kind")
    p.add_argument("--skip-experiment", action="store_true",
                   help="leave out the Leighton-Maggs tables (minutes)")
    p.add_argument("--record", action="store_true",
                   help="write the figures into bench/results/butterfly_model_speed.json")
    args = p.parse_args(argv)
    print("butterfly model speed (wall time of commands; CPU time of this process)")
    routes = {12500: route_figures(12500)}
    if args.full:
        routes[100000] = route_figures(100000)
    experiment = None if args.skip_experiment else experiment_figure()
    hops = {kind: cycle_hops(kind) for kind in KINDS}
    sf = store_forward_hops()
    if args.record:
        for problems, walls in routes.items():
            _record(f"route-8-{problems}", f"fatnet route, 8 inputs, {8 * problems:,} messages "
                    "(wall s)", f"fatnet route KIND --inputs 8 --problems {problems} "
                    "--allow-loss", {k: round(v, 2) for k, v in walls.items()})
        if experiment is not None:
            _record("leighton-maggs-1024", "Tables I-III at N = 1024, the paper's trials "
                    "(one process per core)", "fatnet experiment leighton-maggs --table all",
                    experiment, machine=f"2-core development machine, shared with other "
                    f"jobs (load average {experiment['load']} after the run)")
        _record("hops-per-core", "model message-hops per second per core, batched work",
                "python bench/butterfly_model_speed.py",
                {**{f"circuit_{k}": int(v) for k, v in hops.items()},
                 "store_forward_multibutterfly": int(sf)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
