"""Soak: messages through each family's generated Verilog on Verilator, every wire of
every cycle compared with the model in hardware.

``python bench/soak.py [--messages 100000000] [--networks fat-tree butterfly
hypercube] [--chunk-cycles 8000] [--seed 1]`` (``make soak``). Per network (the 16-leaf
universal fat-tree, off-line; the 16-input butterfly, full load with losses retried;
Algorithm 1 on the 4-cube), the co-simulation benchmark's checked workload
(:func:`cosim.checked_workload`) runs chunk after chunk through cocotb on Verilator, the
checking harness built once (:mod:`fatnet.hdl.checker`): the model's expected ``recv``
and ``send_ack`` words of every bit-time of every cycle go into the harness's memories
with the stimulus, a batch of cycles at a time, and the harness compares every wire in
hardware; Python runs per batch, never per clock. The model works on the next chunk
while the simulator runs this one (a thread: the simulator is another process), so the
two cores overlap. Memory is bounded by the chunk: one chunk is simulated while at most
one more is modelled, each held whole (its messages, the model's cycle results and the
packed rows), then dropped.

The model's run delivers every message exactly once (losses are retried), and since the
RTL equals the model on every wire, the RTL does too; the soak also counts the
deliveries in the model's results and checks each message is delivered once and none
lost. It stops at the first mismatch, printing the harness's first difference (cycle,
bit-time, wires), every differing wire of the failing cycles, the seed, the command to
replay the chunk and the simulator's log, and prints per network the messages, the
cycles, the clocks, the wall time and the CPU time (this process and the simulator's).
On a terminal a progress bar on stderr counts the messages of the network under way;
``-v`` prints each chunk as a line and lets the simulator's output through instead of
into its log.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from fatnet import api
from fatnet.cli.family import bench_families

# a sibling script of bench/ (on sys.path as the running script's folder)
from cosim import bench_network, checked_workload

__all__ = ["NETWORKS", "DEFAULT_MESSAGES", "CHUNK_CYCLES", "soak_network", "soak", "main"]

#: ``make soak``'s messages per network.
DEFAULT_MESSAGES = 100_000_000

#: Delivery cycles per chunk (one cocotb run): the memory bound. A chunk of the soaked
#: networks holds its messages, the model's cycle results and plans and the checking
#: harness's rows, a few hundred MB at most, two chunks at a time.
CHUNK_CYCLES = 8000

#: The soaked networks: per kind of a family with the benchmarks' record
#: (:class:`fatnet.cli.family.BenchCommands`), its soak size (the network and its
#: workload are the co-simulation benchmark's).
NETWORKS = {kind: bench.soak_size for kind, bench in bench_families().items()}


def soak_network(name: str):
    """The golden network the soak of ``name`` (a kind of :data:`NETWORKS`) runs."""
    return bench_network(name, NETWORKS[name])


def _chunks(net, chunk_cycles: int, seed: int):
    """The checked workload's chunks, chunk ``i`` drawn from seed ``seed + i``, made one
    ahead on a thread (the model of the next chunk runs while the simulator, another
    process, runs this one): yields (chunk seed, messages, the model's cycle results)."""
    import queue
    import threading
    ready: queue.Queue = queue.Queue(maxsize=1)   # one chunk ahead: memory stays bounded
    stop = threading.Event()

    def produce():
        chunk = 0
        while not stop.is_set():
            try:
                ms, results, _ = checked_workload(net, chunk_cycles, seed + chunk)
                item = (seed + chunk, ms, results)
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


def soak(name: str, messages: int, chunk_cycles: int, seed: int, build_root: Path,
         progress=None, log: bool = True) -> dict:
    """At least ``messages`` delivered messages of network ``name`` through the RTL.
    ``progress(done, total, what)``, if given, is called before each chunk (messages
    delivered so far, of ``messages``); ``log`` as in :func:`fatnet.sim.cocotb_runner.run`."""
    import resource

    from fatnet.sim.cocotb_runner import run
    net = soak_network(name)
    delivered = cycles = clocks = chunk = 0
    t0, cpu0 = time.perf_counter(), _cpu_seconds(resource)
    chunks = _chunks(net, chunk_cycles, seed)
    try:
        while delivered < messages:
            if progress is not None:
                progress(min(delivered, messages), messages,
                         f"{name}: chunk {chunk + 1}, {cycles:,} cycles so far")
            chunk_seed, ms, results = next(chunks)
            replay = (f"python bench/soak.py --networks {name} --seed {chunk_seed} "
                      f"--messages 1 --chunk-cycles {chunk_cycles}")
            res = run(net, ms, results, family=api.family_of(net), sim="verilator",
                      build_root=build_root, seed=chunk_seed, replay=replay, log=log)
            if not res.passed:
                where = f"; log: {res.log}" if res.log else ""
                raise RuntimeError(f"{name}: RTL differs from the model in chunk {chunk} "
                                   f"(seed {chunk_seed}; replay: {replay}{where}):\n"
                                   + "\n".join(res.failures[:10]))
            delivered += _count_once(name, chunk, chunk_seed, results)
            cycles += len(results)
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
                         progress, log=not args.verbose)
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
