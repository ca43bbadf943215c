"""Speed of the hypercube family's circuit model (benchmark figures, not timed tests).

Run as ``python bench/hypercube_model_speed.py`` from the repository's root. It prints
each figure with the work that produces it and its goal, in CPU seconds of this process:

* the on-line run of 100,000 messages through the 4-cube's hardware model
  (:meth:`fatnet.golden.hypercube.circuit.HypercubeCircuit.run`, what ``fatnet sim`` and
  the soak run) on the batched engine, per algorithm: Algorithm 1 with random
  destinations, Algorithm 2 and e-cube with rounds of random permutations (a cycle of
  theirs routes a partial permutation); goal 2 s. With ``--full`` also the scalar
  engine on the same work (minutes);
* model message-hops per second per core on batched work: Algorithm 1's router chains
  (:func:`fatnet.golden.hypercube.cyclebatch.run_cycles_streamed`) on 256 independent
  delivery cycles of random destinations through the 10-cube, and the bulk waveforms
  of the 4-cube (:func:`fatnet.golden.hypercube.cyclebatch.expected_waves`) on 100,000
  cycles, in cycles per second (goal 10^6 hops/s);
* ``fatnet route hypercube --dimension 4 --algorithm ecube|valiant --messages FILE``,
  CPU time of the whole command, on a file of 100,000 messages with random sources and
  destinations (the ``traffic`` stream of ``--seed``; ``--messages FILE`` keeps it):
  one store-and-forward run of thousands of steps on the batched engine
  (:func:`fatnet.golden.hypercube.store_forward.route`); goal 2 s. With ``--full`` also
  :func:`~fatnet.golden.hypercube.store_forward.route` on the scalar engine on the same
  messages (a minute);
* ``fatnet experiment kuszmaul --seed 0`` (the tables at their defaults), CPU time of
  the command; ``--skip-experiment`` leaves it out.

``--record`` also writes the figures into ``bench/results/hypercube_model_speed.json``
(:mod:`bench.figures`'s ``record``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fatnet.golden.hypercube.api import circuit
from fatnet.golden.hypercube.cyclebatch import expected_waves, run_cycles_streamed
from fatnet.golden.hypercube.store_forward import ALGORITHMS as BASELINES, route
from fatnet.golden.messages import MessageSet
from fatnet.golden.seeds import generator

# a sibling script of bench/ (on sys.path as the running script's folder)
from figures import record_entry

__all__ = ["main"]

ALGORITHMS = ("alg1", "alg2", "ecube")
HOP_GOAL = 1e6
MESSAGES = 100_000


def _fatnet() -> str:
    """The ``fatnet`` beside this Python (the project's venv), else the one on PATH."""
    here = Path(sys.executable).with_name("fatnet")
    return str(here) if here.exists() else (shutil.which("fatnet") or "fatnet")


def _traffic(net, messages: int, seed: int) -> MessageSet:
    """Algorithm 1: random destinations from every node in turn; the others: rounds of
    random permutations (every node sends once a round)."""
    n = net.nodes
    rng = generator(seed, "traffic")
    src = np.tile(np.arange(n), messages // n)
    if net.algorithm == "alg1":
        dst = rng.integers(0, n, size=src.size)
    else:
        dst = np.concatenate([rng.permutation(n) for _ in range(messages // n)])
    return MessageSet.from_pairs(src, dst, net.payload_bits, seed)


def online_run(algorithm: str, engine: str, seed: int = 0) -> float:
    """CPU seconds of the on-line run of :data:`MESSAGES` messages on the 4-cube."""
    net = circuit(4, algorithm)
    ms = _traffic(net, MESSAGES, seed)
    start = time.process_time()
    report = net.run(ms, max_cycles=10 ** 7, engine=engine)
    cpu = time.process_time() - start
    assert report.delivered == len(ms), (algorithm, engine)
    print(f"  {algorithm}, 4-cube, {len(ms):,} messages on-line, {engine} engine: "
          f"{report.cycles:,} cycles in {cpu:.2f} s CPU (goal 2 s)")
    return cpu


def chain_hops(k: int = 10, cycles: int = 256, seed: int = 0) -> float:
    """Message-hops per CPU second of Algorithm 1's batched router chains: ``cycles``
    independent cycles, every node sending to a random node (a hop: a rank passed)."""
    net = circuit(k)
    n = net.nodes
    dst = generator(seed, "traffic").integers(0, n, size=cycles * n)
    label, src = np.repeat(np.arange(cycles), n), np.tile(np.arange(n), cycles)
    start = time.process_time()
    arrays = run_cycles_streamed(net.chain, label, src, dst)
    cpu = time.process_time() - start
    hops = int(arrays.hops.sum())
    rate = hops / cpu
    print(f"  Algorithm 1's router chains, {k}-cube: {cycles * n:,} messages in {cycles} "
          f"cycles, {hops:,} hops in {cpu:.2f} s CPU: {rate:,.0f} hops/s "
          f"(goal {HOP_GOAL:,.0f})")
    return rate


def wave_cycles(cycles: int = 100_000, seed: int = 0) -> float:
    """Cycles per CPU second of the bulk waveforms of the 4-cube's Algorithm 1 (every
    wire of every rank, forward and back, every bit-time), 20,000 cycles a call."""
    net = circuit(4)
    ms = _traffic(net, cycles * net.nodes, seed)
    label = np.repeat(np.arange(cycles), net.nodes)
    start = time.process_time()
    for a in range(0, label.size, 20_000 * net.nodes):
        b = a + 20_000 * net.nodes
        expected_waves(net, label[a:b], ms.src[a:b], ms.dst[a:b], ms.payload[a:b])
    cpu = time.process_time() - start
    rate = cycles / cpu
    print(f"  bulk waveforms, Algorithm 1 on the 4-cube: {cycles:,} cycles "
          f"({cycles * net.cycle_length:,} bit-times) in {cpu:.2f} s CPU: {rate:,.0f} "
          f"cycles/s")
    return rate


def _command_cpu(argv: list) -> float:
    """CPU seconds (user + system) of the command ``argv``, run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def experiment_figure() -> float:
    """CPU seconds of ``fatnet experiment kuszmaul --seed 0`` (its children's)."""
    cpu = _command_cpu([_fatnet(), "experiment", "kuszmaul", "--seed", "0"])
    print(f"  fatnet experiment kuszmaul --seed 0: {cpu:.1f} s CPU")
    return cpu


def random_messages(k: int, count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``count`` messages with random sources and destinations on the k-cube, from the
    ``traffic`` stream of ``seed``."""
    rng = generator(seed, "traffic")
    return rng.integers(0, 1 << k, count), rng.integers(0, 1 << k, count)


def write_message_file(path: str, k: int, count: int, seed: int) -> None:
    """:func:`random_messages` as a message file ``{"messages": [[src, dst], ...]}``."""
    src, dst = random_messages(k, count, seed)
    with open(path, "w") as f:
        json.dump({"messages": np.stack([src, dst], 1).tolist()}, f)


def route_command_figures(path: str, full: bool, seed: int) -> dict:
    """CPU seconds of ``fatnet route hypercube --dimension 4 --algorithm A --messages
    FILE`` per store-and-forward algorithm, and with ``full`` of the scalar engine's
    run of the same messages (``{engine: {algorithm: seconds}}``)."""
    out: dict = {"batched": {}, "scalar": {}}
    for algorithm in BASELINES:
        argv = [_fatnet(), "route", "hypercube", "--dimension", "4", "--algorithm",
                algorithm, "--messages", path]
        cpu = out["batched"][algorithm] = _command_cpu(argv)
        print(f"  fatnet route hypercube --dimension 4 --algorithm {algorithm} --messages "
              f"FILE ({MESSAGES:,} messages): {cpu:.2f} s CPU (goal 2 s)")
        if full:
            src, dst = random_messages(4, MESSAGES, seed)
            start = time.process_time()
            run = route(4, src, dst, algorithm=algorithm, engine="scalar")
            cpu = out["scalar"][algorithm] = time.process_time() - start
            print(f"    the same run on the scalar engine ({run.steps:,} steps): "
                  f"{cpu:.2f} s CPU")
    return out


def _record(entry: str, figure: str, command: str, values: dict) -> None:
    record_entry("hypercube_model_speed", entry, values, figure=figure, command=command)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/hypercube_model_speed.py",
                                description=__doc__.splitlines()[0])
    p.add_argument("--full", action="store_true",
                   help="also run the scalar engine on the 100,000 messages (minutes)")
    p.add_argument("--skip-experiment", action="store_true",
                   help="leave out fatnet experiment kuszmaul")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the 100,000-message file (default 0)")
    p.add_argument("--messages", metavar="FILE",
                   help="the 100,000-message file to write and route (default: a temporary "
                   "file)")
    p.add_argument("--record", action="store_true",
                   help="write the figures into bench/results/hypercube_model_speed.json")
    args = p.parse_args(argv)
    print("hypercube model speed (CPU time)")
    engines = ("batched", "scalar") if args.full else ("batched",)
    runs = {e: {a: online_run(a, e) for a in ALGORITHMS} for e in engines}
    hops, waves = chain_hops(), wave_cycles()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.messages or os.path.join(tmp, "messages.json")
        write_message_file(path, 4, MESSAGES, args.seed)
        routes = route_command_figures(path, args.full, args.seed)
    experiment = None if args.skip_experiment else experiment_figure()
    if args.record:
        for engine, cpus in runs.items():
            _record(f"online-4-cube-{engine}", f"on-line run, 4-cube, 100,000 messages, "
                    f"{engine} engine (CPU s)", "python bench/hypercube_model_speed.py"
                    + (" --full" if engine == "scalar" else ""),
                    {a: round(v, 2) for a, v in cpus.items()})
        _record("hops-per-core", "model message-hops per second per core, batched work "
                "(Algorithm 1, 10-cube); bulk waveforms, 4-cube cycles per second",
                "python bench/hypercube_model_speed.py",
                {"alg1_chains_10_cube": int(hops), "waves_4_cube_cycles": int(waves)})
        command = ("fatnet route hypercube --dimension 4 --algorithm ecube|valiant "
                   "--messages FILE (python bench/hypercube_model_speed.py writes FILE)")
        for engine, cpus in routes.items():
            if cpus:
                _record(f"route-file-4-cube-{engine}", f"store-and-forward route of "
                        f"{MESSAGES:,} random messages from a file, 4-cube, {engine} engine "
                        f"(CPU s{', whole command' if engine == 'batched' else ', the run'})",
                        command if engine == "batched"
                        else "python bench/hypercube_model_speed.py --full",
                        {a: round(v, 2) for a, v in cpus.items()})
        if experiment is not None:
            _record("kuszmaul", "the Kuszmaul tables at their defaults (CPU s)",
                    "fatnet experiment kuszmaul --seed 0", {"cpu_s": round(experiment, 1)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
