"""Speed of the fat-tree model on its batched engine (benchmark figures, not timed tests).

Run as ``python bench/fattree_model_speed.py`` from the repository's root. Each figure is
printed with the command that runs the same work (``fatnet route`` prints its wall time
as "s of model time"); the figures are this process's CPU time, one core's work, which
a shared machine does not inflate as it does the wall time (printed too):

* routing a file of 100,000 messages (``--messages``, written from ``--seed``: random
  sources and destinations among the 4 leaves and ``ext``) on the 4-leaf tree of root
  capacity 3, off-line (the scheduler's part and the engine's part apart) and on-line
  (``--max-cycles 40000``: every message delivered);
* one on-line random permutation on 1024 leaves, root capacity 102 (building the
  network, which verifies its concentrators, apart from routing);
* message-hops per second of CPU time (one core) of the batched engine on batched work:
  16,384 random messages on 256 leaves (root capacity 64) in their off-line schedule's
  cycles (Theorem 1), run as one batch off-line (switch settings included, concentrator
  routings remembered from a first run) and on-line.

``--scalar`` also times the scalar engine (the specification) on the same runs, for
the ratio; its off-line and on-line runs of the 100,000-message file take minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

from fatnet.golden.fattree import batchrun
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.route import run
from fatnet.golden.fattree.schedule import schedule
from fatnet.golden.fattree.spec import FatTreeSpec
from fatnet.golden.messages import EXT, MessageSet, load_message_file, make_pattern
from fatnet.golden.runner import ChannelUsage, RunReport
from fatnet.golden.seeds import generator

__all__ = ["main", "write_message_file"]

FILE_MESSAGES = 100_000


def write_message_file(path: str, leaves: int, count: int, seed: int) -> None:
    """``count`` messages with random endpoints among the leaves and ``ext`` (never
    ``ext`` to ``ext``), drawn from the ``traffic`` stream of ``seed``."""
    rng = generator(seed, "traffic", 1)
    src = rng.integers(EXT, leaves, count)
    dst = rng.integers(EXT, leaves, count)
    both = (src == EXT) & (dst == EXT)
    dst[both] = rng.integers(0, leaves, int(both.sum()))

    def name(e):
        return "ext" if e == EXT else int(e)
    with open(path, "w") as f:
        json.dump({"messages": [[name(s), name(d)] for s, d in zip(src, dst)]}, f)


def _timed(fn):
    """(CPU seconds of this process, wall seconds, fn's value): on a shared machine the
    CPU time is the figure (one core's work; numpy runs on one thread here)."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c0, time.perf_counter() - t0, out


def _figure(label: str, cpu: float, wall: float, command: str, extra: str = "") -> None:
    print(f"{label}: {cpu:.2f} s of CPU ({wall:.2f} s wall){extra}\n"
          f"    command: {command}")


def _file_runs(path: str, scalar: bool) -> None:
    cmd = f"fatnet route fat-tree --leaves 4 --root-capacity 3 --messages {path}"
    for mode, options, flags in (("offline", {}, ""),
                                 ("online", {"max_cycles": 40000},
                                  " --mode online --max-cycles 40000")):
        net = FatTreeNetwork(FatTreeSpec.universal(4, 3, mode=mode))
        ms = load_message_file(path, 4, 8, 0)
        cpu, wall, report = _timed(lambda: run(net, ms, **options))
        extra = (f" ({report.delivered + report.local} of {len(ms)} delivered in "
                 f"{report.cycles} cycles)")
        if mode == "offline":
            extra += _offline_parts(net, ms)
        _figure(f"{FILE_MESSAGES:,} messages, {mode}", cpu, wall, cmd + flags, extra)
        if scalar:
            s_cpu, s_wall, _ = _timed(lambda: run(net, ms, engine="scalar", **options))
            _figure(f"    the same on the scalar engine ({s_cpu / cpu:.1f}x the CPU time)",
                    s_cpu, s_wall, "python bench/fattree_model_speed.py --scalar")


def _offline_parts(net, ms) -> str:
    """The off-line run's two parts timed apart: the schedule, then the switch setting
    and the cycles of every scheduled cycle on the batched engine."""
    sched, _, cycles = _timed(lambda: schedule(net.tree, ms.src, ms.dst,
                                               cap=net.effective_cap))
    cycles = [c.tolist() for c in cycles]
    report = RunReport("offline", len(ms))
    usage = ChannelUsage(lambda channel: 0, [1] * (net.L + 1))   # counts unused here
    engine, _, _ = _timed(lambda: batchrun.drive_offline_batched(
        net, ms, report, usage, cycles, lambda retry: [retry], False, None))
    return f"; the schedule {sched:.2f} s, the switch setting and cycles {engine:.2f} s"


def _large_permutation(scalar: bool) -> None:
    cmd = ("fatnet route fat-tree --leaves 1024 --root-capacity 102 --mode online "
           "--pattern random-permutation --seed 1")
    build, _, net = _timed(lambda: FatTreeNetwork(FatTreeSpec.universal(
        1024, 102, mode="online", seed=1)))
    ms = make_pattern(1024, "random-permutation", 1, 8)
    cpu, wall, report = _timed(lambda: run(net, ms))
    _figure("1024 leaves, one on-line permutation", cpu, wall, cmd,
            f" ({report.cycles} cycles; building the network {build:.2f} s of CPU)")
    if scalar:
        s_cpu, s_wall, _ = _timed(lambda: run(net, ms, engine="scalar"))
        _figure(f"    the same on the scalar engine ({s_cpu / cpu:.1f}x the CPU time)",
                s_cpu, s_wall, "python bench/fattree_model_speed.py --scalar")


def _hops_per_second(seed: int) -> None:
    for mode in ("offline", "online"):
        net = FatTreeNetwork(FatTreeSpec.universal(256, 64, mode=mode))
        rng = generator(seed, "traffic", 2)
        k = 16384
        ms = MessageSet.from_pairs(rng.integers(0, 256, k), rng.integers(0, 256, k), 8,
                                   seed)
        cycles = [c.tolist() for c in schedule(net.tree, ms.src, ms.dst,
                                               cap=net.effective_cap, method="theorem1")]
        batchrun.run_cycles(net, ms, cycles)   # concentrator routings remembered
        t0 = time.process_time()
        tallies = batchrun.run_cycles(net, ms, cycles)
        cpu = time.process_time() - t0
        # every occupancy past a message's source channel is one hop
        hops = sum(int(t.used.sum()) - t.delivered - len(t.lost) for t in tallies)
        print(f"message-hops per second per core, {mode}, 256 leaves: "
              f"{hops / cpu:,.0f} ({hops:,} hops of {k:,} messages in {len(cycles)} "
              f"cycles, {cpu:.2f} s of CPU)\n"
              f"    command: python bench/fattree_model_speed.py")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/fattree_model_speed.py",
                                description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0, help="seed of the message file and "
                   "of the random messages (default 0)")
    p.add_argument("--messages", help="the 100,000-message file to write and route "
                   "(default: a temporary file)")
    p.add_argument("--scalar", action="store_true",
                   help="time the scalar engine too (minutes)")
    args = p.parse_args(argv)
    print(f"fat-tree model speed, batched engine (batches of at most "
          f"{batchrun.BATCH_MESSAGES:,} streams), seed {args.seed}")
    with tempfile.TemporaryDirectory() as tmp:
        path = args.messages or os.path.join(tmp, "messages.json")
        write_message_file(path, 4, FILE_MESSAGES, args.seed)
        print(f"message file: {path} (written by python bench/fattree_model_speed.py "
              f"--seed {args.seed} --messages FILE)")
        _file_runs(path, args.scalar)
    _large_permutation(args.scalar)
    _hops_per_second(args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
