"""Soak: messages through each family's generated Verilog on Verilator, every wire of
every cycle compared with the model in hardware.

``python bench/soak.py [--messages 100000000] [--networks fat-tree butterfly
hypercube] [--chunk-cycles 8000] [--seed 1] [--reference]`` (``make soak``). Per network
(the 16-input butterfly, Algorithm 1 on the 4-cube, the 16-leaf universal fat-tree,
off-line) the cycles run chunk after chunk through cocotb on Verilator, the checking
harness built once (:mod:`fatnet.hdl.checker`): the model's expected ``recv`` and
``send_ack`` words of every bit-time of every cycle go into the harness's memories with
the stimulus, a batch of cycles at a time, and the harness compares every wire in
hardware; Python runs per batch, never per clock.

Where the family's benchmarks' record has a soak model
(:class:`fatnet.cli.family.SoakModel`: every family), a chunk's cycles are independent:
at full load (the butterfly, the hypercube), every terminal offering a fresh random
message each cycle except where a message lost in an earlier chunk is offered again;
scheduled (the off-line fat-tree), each cycle a random one-cycle set, delivered whole
(:func:`bulk_chunks`). The family's batched engine gives every terminal wire of the
whole chunk in one call, packed straight into the harness's words: no Python per
message or per cycle. Otherwise, and with
``--reference``, the co-simulation benchmark's checked workload
(:func:`cosim.checked_workload`) runs, every cycle planned from the model's cycle results
(:func:`planned_chunks`). The model works on the next chunk while the simulator runs
this one (a thread: the simulator is another process), so the two cores overlap. Memory
is bounded by the chunk: one chunk is simulated while at most one more is modelled, each
held whole, then dropped.

Every message is delivered exactly once (losses are offered again; a scheduled message
the model does not deliver stops the soak), and since the RTL
equals the model on every wire, the RTL does too; the soak counts the deliveries of the
model (a message is in one chunk's cycles at a time, its lost copies carried to the
next; the reference path checks its results deliver none twice). It stops at the first
mismatch, printing the harness's first difference (cycle, bit-time, wires), on the
reference path every differing wire of the failing cycles, the seed, the command to
replay it and the simulator's log, and prints per network the messages, the cycles, the
clocks, the wall time and the CPU time (this process and the simulator's). On a terminal
a progress bar on stderr counts the messages of the network under way; ``-v`` prints
each chunk as a line and lets the simulator's output through instead of into its log.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fatnet import api
from fatnet.cli.family import SoakModel, bench_families

# a sibling script of bench/ (on sys.path as the running script's folder)
from cosim import bench_network, checked_workload

__all__ = ["NETWORKS", "DEFAULT_MESSAGES", "CHUNK_CYCLES", "SHAPE", "Chunk", "soak_network",
           "planned_chunks", "bulk_chunks", "soak", "main"]

#: ``make soak``'s messages per network.
DEFAULT_MESSAGES = 100_000_000

#: Delivery cycles per chunk (one cocotb run): the memory bound. A chunk of the soaked
#: networks holds its messages, the model's arrays (the reference path: its cycle
#: results and plans) and the checking harness's words and rows, a few hundred MB at
#: most, two chunks at a time.
CHUNK_CYCLES = 8000

#: The checking harness's shape (:data:`fatnet.hdl.checker.SHAPES`): few, wide rows a
#: batch, since a soak's time is its batches' writes, not its one build.
SHAPE = "wide"

#: The soaked networks: per kind of a family with the benchmarks' record
#: (:class:`fatnet.cli.family.BenchCommands`), its soak size (the network and its
#: workload are the co-simulation benchmark's).
NETWORKS = {kind: bench.soak_size for kind, bench in bench_families().items()}


def soak_network(name: str):
    """The golden network the soak of ``name`` (a kind of :data:`NETWORKS`) runs."""
    return bench_network(name, NETWORKS[name])


@dataclass
class Chunk:
    """One chunk of the soak, modelled and ready to simulate."""

    #: The seed it was drawn from.
    seed: int
    #: Its delivery cycles.
    cycles: int
    #: The messages the model delivered in it (each once).
    delivered: int
    #: ``simulate(build_root, replay, log)`` -> the runner's result (a simulator run).
    simulate: Callable[..., Any]


def _ahead(make: Callable[[int], Chunk]):
    """``make(0)``, ``make(1)``, ... made one ahead on a thread (the model of the next
    chunk runs while the simulator, another process, runs this one)."""
    import queue
    import threading
    ready: queue.Queue = queue.Queue(maxsize=1)   # one chunk ahead: memory stays bounded
    stop = threading.Event()

    def produce():
        chunk = 0
        while not stop.is_set():
            try:
                item: Chunk | Exception = make(chunk)
            except Exception as e:  # noqa: BLE001 - handed to the consumer, raised there
                item = e
            while not stop.is_set():
                try:
                    ready.put(item, timeout=0.2)
                    break
                except queue.Full:
                    continue
            chunk += 1

    worker = threading.Thread(target=produce, daemon=True)
    worker.start()
    try:
        while True:
            item = ready.get()
            if isinstance(item, Exception):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()


def planned_chunks(name: str, net, chunk_cycles: int, seed: int, shape: str = SHAPE):
    """The reference path: chunk ``i`` is the checked workload
    (:func:`cosim.checked_workload`) drawn from seed ``seed + i``, every cycle planned
    from the model's :class:`~fatnet.golden.cycle.CycleResult` s; run on the checking
    harness of ``shape``."""
    from fatnet.sim.cocotb_runner import run

    def make(i: int) -> Chunk:
        ms, results, _ = checked_workload(net, chunk_cycles, seed + i)
        delivered = _count_once(name, i, seed + i, results)
        return Chunk(seed + i, len(results), delivered, lambda build_root, replay, log: run(
            net, ms, results, family=api.family_of(net), sim="verilator",
            build_root=build_root, seed=seed + i, replay=replay, log=log, shape=shape))
    return _ahead(make)


def bulk_chunks(net, model: SoakModel, chunk_cycles: int, seed: int, shape: str = SHAPE):
    """The bulk path (the family's :class:`~fatnet.cli.family.SoakModel`): chunk ``i``'s
    cycles are independent, drawn from seed ``seed + i``. At full load every terminal
    offers a fresh random message in each, but where a message lost in an earlier chunk
    is offered again (its source's first cycles), so every message is delivered once;
    scheduled cycles (an off-line network's) are delivered whole, a message the model
    does not deliver stops the soak. The whole chunk's terminal wires come from one
    call of the batched engine and go straight into the harness's packed words."""
    from fatnet.sim.cocotb_runner import run_words
    from fatnet.sim.plan import bulk_words, endpoint_layouts
    family = api.family_of(net)
    layouts = endpoint_layouts(net, family)
    carried = [np.zeros(0, dtype=np.int64)] * 3

    def make(i: int) -> Chunk:
        nonlocal carried
        drawn = model.draw(net, chunk_cycles, np.random.default_rng(seed + i))
        src, dst, payload = (np.asarray(a, dtype=np.int64) for a in drawn[:3])
        scheduled = len(drawn) > 3
        if scheduled:
            cycle = np.asarray(drawn[3], dtype=np.int64)
        else:
            carried = _offer_again(src, dst, payload, carried, chunk_cycles)
            cycle = np.repeat(np.arange(chunk_cycles), src.size // chunk_cycles)
        waves = model.waves(net, cycle, src, dst, payload)
        lost = ~waves.delivered
        if scheduled and lost.any():
            m = int(np.flatnonzero(lost)[0])
            raise RuntimeError(f"the model did not deliver message {src[m]} -> {dst[m]} "
                               f"of scheduled cycle {cycle[m]} in chunk {i} (seed "
                               f"{seed + i}; {int(lost.sum())} such messages)")
        carried = [np.concatenate([c, a[lost]]) for c, a in zip(carried, (src, dst, payload))]
        words = bulk_words(net, waves, family=family, layouts=layouts)
        return Chunk(seed + i, waves.drive.shape[0], int(waves.delivered.sum()),
                     lambda build_root, replay, log: run_words(
                         net, words, family=family, sim="verilator", build_root=build_root,
                         seed=seed + i, replay=replay, log=log, shape=shape))
    return _ahead(make)


def _offer_again(src, dst, payload, carried: list, cycles: int) -> list:
    """Put the ``carried`` (src, dst, payload) messages in place of fresh ones (in
    place): a source's ``r``-th carried message in its cycle ``r``. The ones that do
    not fit (more than ``cycles`` at one source) stay carried: returned."""
    c_src, c_dst, c_payload = carried
    terminals = src.size // cycles
    order = np.argsort(c_src, kind="stable")
    by_src = c_src[order]
    rank = np.empty(c_src.size, dtype=np.int64)
    rank[order] = np.arange(c_src.size) - np.searchsorted(by_src, by_src, "left")
    fits = rank < cycles
    at = rank[fits] * terminals + c_src[fits]
    dst[at], payload[at] = c_dst[fits], c_payload[fits]
    return [a[~fits] for a in carried]


def soak(name: str, messages: int, chunk_cycles: int, seed: int, build_root: Path,
         progress=None, log: bool = True, reference: bool = False, shape: str = SHAPE
         ) -> dict:
    """At least ``messages`` delivered messages of network ``name`` through the RTL.
    ``progress(done, total, what)``, if given, is called before each chunk (messages
    delivered so far, of ``messages``); ``log`` as in :func:`fatnet.sim.cocotb_runner.run`;
    ``reference``: the per-cycle path even where the family has the bulk one; ``shape``:
    the checking harness's (:data:`SHAPE` unless a short run builds faster on another)."""
    import resource

    net = soak_network(name)
    model = bench_families()[name].soak
    delivered = cycles = clocks = chunk = 0
    t0, cpu0 = time.perf_counter(), _cpu_seconds(resource)
    chunks = (bulk_chunks(net, model, chunk_cycles, seed, shape) if model and not reference
              else planned_chunks(name, net, chunk_cycles, seed, shape))
    path = " --reference" if reference or not model else ""
    try:
        while delivered < messages:
            if progress is not None:
                progress(min(delivered, messages), messages,
                         f"{name}: chunk {chunk + 1}, {cycles:,} cycles so far")
            # a chunk's messages follow from the chunks before (lost ones are offered
            # again): the replay runs the soak up to this chunk
            replay = (f"python bench/soak.py --networks {name} --seed {seed} "
                      f"--messages {delivered + 1} --chunk-cycles {chunk_cycles}{path}"
                      if model and not reference else
                      f"python bench/soak.py --networks {name} --seed {seed + chunk} "
                      f"--messages 1 --chunk-cycles {chunk_cycles}{path}")
            try:
                item = next(chunks)
            except RuntimeError as e:     # the model refused the chunk
                why = str(e) if str(e).startswith(f"{name}:") else f"{name}: {e}"
                raise RuntimeError(f"{why}; replay: {replay}") from e
            res = item.simulate(build_root, replay, log)
            if not res.passed:
                where = f"; log: {res.log}" if res.log else ""
                raise RuntimeError(f"{name}: RTL differs from the model in chunk {chunk} "
                                   f"(seed {item.seed}; replay: {replay}{where}):\n"
                                   + "\n".join(res.failures[:10]))
            delivered += item.delivered
            cycles += item.cycles
            clocks += res.clocks
            chunk += 1
    finally:
        chunks.close()
    return {"network": name, "messages": delivered, "cycles": cycles, "clocks": clocks,
            "chunks": chunk, "seconds": round(time.perf_counter() - t0, 1),
            "cpu_seconds": round(_cpu_seconds(resource) - cpu0, 1)}


def _cpu_seconds(resource) -> float:
    """CPU seconds of this process and of its finished children (the simulators)."""
    own, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF,
                                                     resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _count_once(name: str, chunk: int, seed: int, results) -> int:
    """The messages the chunk's cycles delivered, refusing one delivered twice (the
    workload's last run may be cut at the chunk's end: what was delivered counts)."""
    times = Counter(m for r in results for m in r.delivered)
    twice = [m for m, k in times.items() if k > 1]
    if twice:
        raise RuntimeError(f"{name}: messages delivered twice in chunk {chunk} (seed "
                           f"{seed}): {twice[:10]}")
    return len(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python bench/soak.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--messages", type=int, default=DEFAULT_MESSAGES,
                    help=f"delivered messages per network (default {DEFAULT_MESSAGES:,})")
    ap.add_argument("--networks", nargs="+", choices=sorted(NETWORKS),
                    default=sorted(NETWORKS), help="networks (default all)")
    ap.add_argument("--chunk-cycles", type=int, default=CHUNK_CYCLES,
                    help=f"delivery cycles per cocotb run, the memory bound (default "
                         f"{CHUNK_CYCLES:,})")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first chunk")
    ap.add_argument("--build-dir", default=None, help="builds (default a temporary one)")
    ap.add_argument("--reference", action="store_true",
                    help="plan every cycle from the model's cycle results (the reference "
                         "path; default where the family has it: its batched engine's "
                         "waves in bulk)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="each chunk as a line, the simulator's output on the terminal")
    args = ap.parse_args(argv)
    for name, value in (("messages", args.messages), ("chunk-cycles", args.chunk_cycles)):
        if value < 1:
            ap.error(f"{name} must be an integer >= 1, got {value}")
    print(f"Soak (python bench/soak.py): {args.messages:,} messages per network "
          f"through its Verilog on Verilator, every wire compared with the model", flush=True)
    # the command line's progress display (this module's main is a command line)
    from fatnet.cli.progress import Progress
    # a temporary build directory is removed after a pass only: a failure keeps its log
    root = Path(args.build_dir or tempfile.mkdtemp(prefix="fatnet-soak-"))
    for name in args.networks:
        try:
            with Progress("soak", args.verbose, "messages") as progress:
                r = soak(name, args.messages, args.chunk_cycles, args.seed, root,
                         progress, log=not args.verbose, reference=args.reference)
        except RuntimeError as e:
            print(f"soak: FAIL: {e}", file=sys.stderr)
            return 1
        print(f"{name}: {r['messages']:,} messages in {r['cycles']:,} delivery cycles "
              f"({r['clocks']:,} clocks), every wire equal to the model, none lost or "
              f"delivered twice; {r['seconds']} s wall, {r['cpu_seconds']} s CPU",
              flush=True)
    if not args.build_dir:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
