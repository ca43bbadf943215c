"""Co-simulation speed: cocotb against a native Verilator loop, on the same Verilog.

Run as ``python bench/cosim.py`` (``make bench``; ``--quick`` for the 16-leaf
tree only, ``--butterfly-only`` / ``--no-butterfly``, ``--hypercube-only`` /
``--no-hypercube``). For each smallest-universal fat-tree (16 and 64 leaves, off-line,
seed 0), the 64-input butterfly and the 6-cube's Algorithm 1 router chains it builds the
packed harness (:class:`fatnet.hdl.harness.PackedHarness`) and measures, in
one run:

* native: ``verilator --cc --exe --build`` of the harness with a small C++ main that
  puts random bits into the rows of the harness's stimulus memory, strobes ``start``
  every T + 1 clocks and reads the rows of both capture memories at each cycle's end,
  for a fixed number of clocks;
* cocotb on Verilator and on Icarus: a real, checked workload (fat-trees:
  random-destinations message sets scheduled off-line; the butterfly: full-load random
  destinations with losses retried; many delivery cycles, every ``recv`` and
  ``send_ack`` wire compared with the model at every bit-time). For the butterfly it
  also prints the first cycle's acceptance at full load, which the RTL matched wire for
  wire, beside Patel's recursion.

Both Verilator builds use the same compiler flags (``simulator_env``). Rates are clocks
per second of simulation loop: the cocotb figure is timed inside the test, from the
first cycle's write to the last cycle's read, so start-up is not in it (it is printed
separately, as is the runner-side check).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from fatnet import api
from fatnet.api import family_of
from fatnet.cli.family import bench_families
from fatnet.hdl.harness import harness_geometry, packed_layout

__all__ = ["native_row", "cocotb_row", "checked_workload", "main", "bench_network"]

NATIVE_MAIN = r"""
#include "V%(top)s_harness.h"
#include "V%(top)s_harness___024root.h"
#include "verilated.h"
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <random>

// A memory row is a scalar (up to 64 bits) or a VlWide of 32-bit words.
template <typename T> static void fill(T& x, std::mt19937& rng, int bits) {
    unsigned long long v = (unsigned long long)rng() << 32 | rng();
    x = (T)(bits >= 64 ? v : v & ((1ULL << bits) - 1));
}
template <std::size_t N> static void fill(VlWide<N>& x, std::mt19937& rng, int bits) {
    for (std::size_t i = 0; i < N; ++i) x[i] = rng();
    if (bits %% 32) x[N - 1] &= (1u << (bits %% 32)) - 1;
}
template <typename T> static unsigned long fold(const T& x) { return (unsigned long)x; }
template <std::size_t N> static unsigned long fold(const VlWide<N>& x) {
    unsigned long s = 0;
    for (std::size_t i = 0; i < N; ++i) s += x[i];
    return s;
}

int main(int argc, char** argv) {
    const long clocks = std::atol(argv[1]);
    const int T = %(T)d, rows = %(rows)d;
    VerilatedContext* ctx = new VerilatedContext;
    V%(top)s_harness* top = new V%(top)s_harness{ctx};
    auto* root = top->rootp;
    std::mt19937 rng(1);
    top->rst = 0; top->start = 0; top->clk = 0;
    top->eval();
    unsigned long sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    for (long c = 0; c < clocks; ++c) {
        const bool strobe = (c %% (T + 1)) == 0;
        if (strobe)  // the cycle's stimulus, written into the memory's rows
            for (int r = 0; r < rows; ++r)
                fill(root->%(top)s_harness__DOT__stim[r], rng, %(row_bits)d);
        top->start = strobe;
        top->clk = 1; top->eval();
        top->clk = 0; top->eval();
        if ((c %% (T + 1)) == T)
            for (int r = 0; r < rows; ++r)
                sink += fold(root->%(top)s_harness__DOT__recv_cap[r])
                        ^ fold(root->%(top)s_harness__DOT__ack_cap[r]);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    std::printf("%%ld clocks %%.6f s %%.1f clocks/s %%.6f cpu-s sink %%lu\n", clocks, s,
                clocks / s, cpu, sink);
    top->final();
    delete top;
    delete ctx;
    return 0;
}
"""


def bench_network(kind: str, size: int):
    """The co-simulation workload's network of ``kind`` at ``size``: its family's
    :attr:`~fatnet.cli.family.Bench.workload` parameters, built by
    :func:`fatnet.api.network` (the fat-tree: the smallest universal one, off-line,
    Pippenger, seed 0; the butterfly: 8 payload bits, no faults; the hypercube:
    Algorithm 1's router chains, M = 2k)."""
    return api.network(kind, **bench_families()[kind].workload(size))


def native_row(net, build_root: Path, clocks: int) -> dict:
    """Build the harness natively with Verilator and run ``clocks`` clocks of random
    stimulus; returns build seconds and clocks/s."""
    from fatnet.hdl.gen import generate
    from fatnet.sim.cocotb_runner import VERILATOR_PUBLIC, build_key, harness_sources, simulator_env
    T = net.cycle_length
    top = net.family
    d = Path(build_root).resolve() / "native" / build_key(net, family=family_of(net))
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not (d / f"{top}_harness.v").exists():
        generate(net, d, top=top, harness=True, hardware=family_of(net).hardware)
    geo = harness_geometry(net, hardware=family_of(net).hardware)
    main_cpp = NATIVE_MAIN % {"T": T, "rows": geo["rows"], "row_bits": geo["k"] * geo["W"],
                              "top": top}
    fresh = not (d / "main.cpp").exists() or (d / "main.cpp").read_text() != main_cpp
    if fresh:
        (d / "main.cpp").write_text(main_cpp)
    sources = [p.name for p in harness_sources(d, top)]
    # the memories stay in the model, under their names, as for the cocotb build
    (d / "public.vlt").write_text(VERILATOR_PUBLIC.format(top=f"{top}_harness"))
    env = dict(os.environ)
    env.update(simulator_env("verilator"))
    exe = d / "obj" / "native"
    if fresh or not exe.exists():
        subprocess.run(["verilator", "--cc", "--exe", "--build", "-j", "2", "-Mdir", "obj",
                        "--top-module", f"{top}_harness", "-Wno-fatal", "-Wno-lint",
                        "-Wno-style", "-o", "native", "public.vlt", *sources, "main.cpp"],
                       cwd=d, env=env, check=True, stdout=subprocess.DEVNULL)
    build_s = time.perf_counter() - t0
    out = subprocess.run([str(exe), str(clocks)], cwd=d, check=True, capture_output=True,
                         text=True).stdout.split()
    return {"leaves": _size(net), "how": "native verilator", "build_seconds": build_s,
            "clocks": int(out[0]), "seconds": float(out[2]),
            "clocks_per_second": float(out[4]), "cpu_seconds": float(out[6])}


def _concatenated_runs(next_run, cycles_wanted: int):
    """Runs of the model (``next_run()`` -> (MessageSet, RunReport)) until
    ``cycles_wanted`` cycles, renumbered into one message set: (messages, the first
    ``cycles_wanted`` CycleResults, the reports)."""
    from fatnet.golden.messages import MessageSet
    results, parts, reports, offset = [], [], [], 0
    while len(results) < cycles_wanted:
        ms, rep = next_run()
        for r in rep.results:  # renumber the messages into one set
            r.outcomes = {m + offset: o for m, o in r.outcomes.items()}
            r.injections = {m + offset: v for m, v in r.injections.items()}
            for m, o in r.outcomes.items():
                o.message = m
        results += rep.results
        parts.append(ms)
        reports.append(rep)
        offset += len(ms)
    ms = MessageSet(np.concatenate([p.src for p in parts]), np.concatenate([p.dst for p in parts]),
                    [x for p in parts for x in p.payload])
    return ms, results[:cycles_wanted], reports


def checked_workload(net, cycles: int, seed: int = 1):
    """The benchmark's workload of ``net``'s family (its
    :attr:`~fatnet.cli.family.Bench.traffic`) for ``cycles`` delivery cycles, its runs
    drawn from ``seed``: (messages, the model's CycleResults, the first cycle's
    acceptance of every run: the fraction of its messages delivered)."""
    traffic = family_of(net).commands.BENCH.traffic
    rng = np.random.default_rng(seed)
    sizes = []

    def next_run():
        ms, report = traffic(net, rng)
        sizes.append(len(ms))
        return ms, report

    ms, results, reports = _concatenated_runs(next_run, cycles)
    accept = [len(rep.results[0].with_status("delivered")) / n
              for rep, n in zip(reports, sizes)]
    return ms, results, accept


def _size(net) -> int:
    return getattr(net, "n_inputs", None) or getattr(net, "n", None) or net.nodes


def cocotb_row(net, sim: str, build_root: Path, cycles: int) -> dict:
    """cocotb co-simulation of ``cycles`` checked delivery cycles on one simulator."""
    from fatnet.sim.cocotb_runner import run
    ms, results, accept = checked_workload(net, cycles)
    t0 = time.perf_counter()
    res = run(net, ms, results, family=family_of(net), sim=sim, build_root=build_root,
              seed=1, replay="python bench/cosim.py")
    total = time.perf_counter() - t0
    if not res.passed:
        raise RuntimeError("\n".join(res.failures))
    return {"leaves": _size(net), "how": f"cocotb {sim}", "build_seconds": res.build_seconds,
            "clocks": res.clocks, "seconds": res.sim_seconds,
            "clocks_per_second": res.clocks_per_second, "cycles": res.cycles,
            "test_seconds": res.run_seconds, "python_seconds": res.python_seconds,
            "cpu_seconds": res.cpu_seconds, "first_cycle_acceptance": accept,
            "check_seconds": total - res.build_seconds - res.run_seconds}


#: (leaves, native clocks, cocotb Verilator cycles, cocotb Icarus cycles)
CASES = ((16, 2_000_000, 2000, 300), (64, 400_000, 600, 60))
#: the same for the butterfly of 2x2 switches: (inputs, ...)
BUTTERFLY_CASES = ((64, 2_000_000, 3000, 300),)


#: the hypercube's Algorithm 1 router chains: (k, ...)
HYPERCUBE_CASES = ((6, 2_000_000, 3000, 300),)


def hc_all_permutations(build_root: Path, sim: str = "verilator") -> dict:
    """Algorithm 2's hardware on every one of the 40,320 permutations of the 3-cube (M =
    6), one delivery cycle each, in one simulation, every recv and send_ack wire checked
    against the model at every bit-time."""
    import itertools
    from fatnet.golden.messages import MessageSet
    from fatnet.sim.cocotb_runner import run
    net = api.network("hypercube", dimension=3, algorithm="alg2")
    perms = list(itertools.permutations(range(8)))
    src = np.tile(np.arange(8), len(perms))
    dst = np.array(perms, dtype=np.int64).reshape(-1)
    ms = MessageSet.from_pairs(src, dst, net.payload_bits, 1)
    t0 = time.perf_counter()
    results = [net.simulate_cycle(ms, net.injections(ms, range(8 * j, 8 * j + 8)))
               for j in range(len(perms))]
    model_s = time.perf_counter() - t0
    assert all(len(r.delivered) == 8 for r in results)
    t0 = time.perf_counter()
    res = run(net, ms, results, family=family_of(net), sim=sim, build_root=build_root,
              seed=1, replay="python bench/cosim.py --hc-permutations")
    return {"permutations": len(perms), "passed": res.passed, "failures": res.failures[:5],
            "model_seconds": model_s, "cosim_seconds": time.perf_counter() - t0,
            "build_seconds": res.build_seconds, "clocks": res.clocks,
            "clocks_per_second": res.clocks_per_second, "cycles": res.cycles}


def hc_alg2_patterns(k: int, build_root: Path, sim: str = "verilator") -> dict:
    """Algorithm 2's hardware on the k-cube (M = 2k): the permutation patterns, two more
    random permutations and two random partial permutations, one delivery cycle each, in
    one simulation, checked against the model on every wire and bit-time."""
    from fatnet.golden.hypercube.patterns import make_pattern
    from fatnet.golden.messages import MessageSet
    from fatnet.sim.cocotb_runner import run
    net = api.network("hypercube", dimension=k, algorithm="alg2")
    names = ("transpose", "bit-reversal", "complement", "random-permutation")
    from fatnet.golden.hypercube.alg1 import random_partial_permutation
    rng = np.random.default_rng([1, k])
    n = net.nodes
    pairs = [make_pattern(k, p, 1) for p in names] + [
        make_pattern(k, "random-permutation", s) for s in (2, 3)] + [
        random_partial_permutation(k, int(rng.integers(1, n)), rng) for _ in range(2)]
    ms = MessageSet.from_pairs(np.concatenate([s_ for s_, _ in pairs]),
                               np.concatenate([d for _, d in pairs]), net.payload_bits, 1)
    bounds = np.cumsum([0] + [len(s_) for s_, _ in pairs])
    t0 = time.perf_counter()
    results = [net.simulate_cycle(ms, net.injections(ms, range(bounds[j], bounds[j + 1])))
               for j in range(len(pairs))]
    model_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = run(net, ms, results, family=family_of(net), sim=sim, build_root=build_root,
              seed=1, replay=f"python bench/cosim.py --hc-permutations (k = {k})")
    return {"k": k, "cycles": res.cycles, "cycle_length": net.cycle_length,
            "passed": res.passed, "failures": res.failures[:5], "model_seconds": model_s,
            "cosim_seconds": time.perf_counter() - t0, "build_seconds": res.build_seconds,
            "clocks_per_second": res.clocks_per_second}


#: Kuszmaul's comparison in hardware: (label, algorithm, buffer)
HC_COMPARE = (("alg2", "alg2", None), ("e-cube B=1", "ecube", 1), ("e-cube B=4", "ecube", 4),
              ("Valiant B=4", "valiant", 4))
HC_COMPARE_PATTERNS = ("transpose", "bit-reversal", "random-permutation")
#: random permutations per k in the comparison (seeds 1 ..)
HC_COMPARE_RANDOM = 3


def hc_compare(k: int, algorithm: str, buffer, build_root: Path, sim: str = "verilator",
               seed: int = 1) -> dict:
    """One design of the comparison on the k-cube (M = 2k): transpose, bit-reversal and
    random permutations, each on-line until delivered, in one simulation checked against
    the model on every wire and bit-time; per routing, the RTL's bit-times: the cycles
    before the last, whole, and the last one's send_ack (every message delivered)."""
    from fatnet.golden.hypercube.circuit import run_blocks
    from fatnet.golden.hypercube.patterns import make_pattern
    from fatnet.golden.messages import MessageSet
    from fatnet.sim.cocotb_runner import run
    # the store-and-forward cycle's steps capped at 32k (the default, k * 2^k or twice
    # that, makes the 8-cube's Valiant cycle 110,000 bit-times long, and its harness
    # too large to generate): a cycle that does not drain is sent again, and the table's
    # cycles column shows it
    steps = None if algorithm == "alg2" else min((2 if algorithm == "valiant" else 1)
                                                 * k << k, 32 * k)
    # the seed draws Valiant's intermediate nodes; the other algorithms draw nothing
    net = api.network("hypercube", dimension=k, algorithm=algorithm, buffer=buffer,
                      steps=steps, seed=seed)
    names = [p for p in HC_COMPARE_PATTERNS if p != "random-permutation"]
    pairs = [make_pattern(k, p, seed) for p in names]
    pairs += [make_pattern(k, "random-permutation", seed + j) for j in range(HC_COMPARE_RANDOM)]
    names += [f"random-permutation {seed + j}" for j in range(HC_COMPARE_RANDOM)]
    ms = MessageSet.from_pairs(np.concatenate([s_ for s_, _ in pairs]),
                               np.concatenate([d for _, d in pairs]), net.payload_bits, seed)
    bounds = np.cumsum([0] + [len(s_) for s_, _ in pairs])
    t0 = time.perf_counter()
    per_block = run_blocks(net, ms, [range(bounds[j], bounds[j + 1])
                                     for j in range(len(pairs))])
    model_s = time.perf_counter() - t0
    bit_times = {}
    for name, cycles in zip(names, per_block):
        last = cycles[-1]
        acks = [o.ack_time for o in last.outcomes.values()]
        done = not last.lost and all(a is not None for a in acks)
        bit_times[name] = (len(cycles) - 1) * net.cycle_length + max(acks) if done else None
    results = [r for cycles in per_block for r in cycles]
    t0 = time.perf_counter()
    res = run(net, ms, results, family=family_of(net), sim=sim, build_root=build_root,
              seed=seed, replay=f"python bench/cosim.py --hc-compare (k = {k}, "
                                f"{algorithm}, buffer {buffer})")
    return {"k": k, "algorithm": algorithm, "buffer": buffer, "steps": steps,
            "passed": res.passed,
            "failures": res.failures[:5], "bit_times": bit_times,
            "cycles": [len(c) for c in per_block], "cycle_length": net.cycle_length,
            "model_seconds": model_s, "cosim_seconds": time.perf_counter() - t0,
            "build_seconds": res.build_seconds}


def _hc_compare_report(rows, plot) -> None:
    """The comparison's table (RTL bit-times, random permutations as their mean) and its
    plot of bit-times against k."""
    dims = sorted({r["k"] for r in rows})
    print("Kuszmaul's comparison in RTL (M = 2k; bit-times from the start strobe to "
          "send_ack, every message delivered; cocotb on Verilator, every recv and "
          "send_ack wire checked at every bit-time):")
    print(f"{'k':>2}  {'hardware':>12}  {'transpose':>9}  {'bit-rev':>8}  "
          f"{'random (mean)':>13}  {'cycles':>14}  {'PASS':>4}  {'build s':>7}  {'sim s':>6}")
    series = {}
    for r in rows:
        label = next(lb for lb, a, b in HC_COMPARE if a == r["algorithm"] and b == r["buffer"])
        bt = r["bit_times"]
        rnd = [v for name, v in bt.items() if name.startswith("random")]
        mean = float(np.mean(rnd)) if rnd and None not in rnd else None
        row = [bt.get("transpose"), bt.get("bit-reversal"), mean]
        series.setdefault(label, {})[r["k"]] = row
        cells = ["lost" if v is None else f"{v:,.0f}" for v in row]
        print(f"{r['k']:>2}  {label:>12}  {cells[0]:>9}  {cells[1]:>8}  {cells[2]:>13}  "
              f"{','.join(map(str, r['cycles'])):>14}  {'PASS' if r['passed'] else 'FAIL':>4}  "
              f"{r['build_seconds']:>7.0f}  {r['cosim_seconds']:>6.0f}", flush=True)
        for f in r["failures"]:
            print(f)
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
        for ax, (j, title) in zip(axes, enumerate(("transpose", "bit-reversal",
                                                   "random permutations (mean)"))):
            for label, by_k in series.items():
                ks = [k for k in dims if k in by_k and by_k[k][j] is not None]
                ax.plot(ks, [by_k[k][j] for k in ks], marker="o", label=label)
            ax.set_title(title)
            ax.set_xlabel("k (2^k nodes)")
            ax.set_yscale("log")
            ax.grid(True, alpha=0.3)
        axes[0].set_ylabel("RTL bit-times (M = 2k)")
        axes[0].legend()
        fig.suptitle("Algorithm 2 against e-cube and Valiant, bit-times measured in RTL")
        fig.tight_layout()
        fig.savefig(plot, dpi=120)
        print(f"plot: {plot}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python bench/cosim.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="16 leaves only")
    ap.add_argument("--leaves", type=int, action="append", choices=[c[0] for c in CASES],
                    help="only these trees (repeatable; default all)")
    ap.add_argument("--no-butterfly", action="store_true", help="fat-trees only")
    ap.add_argument("--butterfly-only", action="store_true", help="the butterfly only")
    ap.add_argument("--no-hypercube", action="store_true", help="skip the 6-cube")
    ap.add_argument("--hc-permutations", action="store_true",
                    help="only Algorithm 2's hardware: all 40,320 permutations of the "
                         "3-cube in one simulation, then permutations and partial "
                         "permutations on the 4-, 5-, 6- and 8-cube (Verilator)")
    ap.add_argument("--hc-compare", action="store_true",
                    help="only Kuszmaul's comparison in RTL: Algorithm 2, e-cube at B = 1 "
                         "and 4, Valiant at B = 4, on transpose, bit-reversal and random "
                         "permutations (Verilator), with --hc-compare-dims and --plot")
    ap.add_argument("--hc-compare-dims", default="3,4,5,6,8",
                    help="the comparison's dimensions (default 3,4,5,6,8)")
    ap.add_argument("--plot", default=None, metavar="FILE",
                    help="--hc-compare: write the plot of bit-times against k here")
    ap.add_argument("--hypercube-only", action="store_true", help="the 6-cube only")
    ap.add_argument("--build-dir", default=None,
                    help="keep the builds here (default: a temporary directory)")
    args = ap.parse_args(argv)
    if args.hc_compare:
        try:
            dims = [int(v) for v in args.hc_compare_dims.split(",")]
        except ValueError:
            ap.error(f"hc-compare-dims must be comma-separated integers, got "
                     f"{args.hc_compare_dims!r}")
        rows = []
        for k in dims:
            for _, algorithm, buffer in HC_COMPARE:
                with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
                    rows.append(hc_compare(k, algorithm, buffer,
                                           Path(args.build_dir or tmp) / "cocotb"))
                r = rows[-1]
                print(f"  k = {k} {algorithm} B={buffer}: {'PASS' if r['passed'] else 'FAIL'}"
                      f" build {r['build_seconds']:.0f} s, co-simulation "
                      f"{r['cosim_seconds']:.0f} s; RTL bit-times {r['bit_times']}, cycles "
                      f"{r['cycles']}", flush=True)
        _hc_compare_report(rows, args.plot)
        if not all(r["passed"] for r in rows):
            raise SystemExit(1)
        return
    if args.hc_permutations:
        with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
            r = hc_all_permutations(Path(args.build_dir or tmp) / "cocotb")
        print(f"Algorithm 2 on every permutation of the 3-cube ({r['permutations']:,}, one "
              f"delivery cycle each, cocotb on Verilator, one simulation): "
              f"{'PASS' if r['passed'] else 'FAIL'}; model {r['model_seconds']:.0f} s, "
              f"co-simulation {r['cosim_seconds']:.0f} s (build {r['build_seconds']:.0f} s), "
              f"{r['clocks']:,} clocks at {r['clocks_per_second']:,.0f} clocks/s")
        for f in r["failures"]:
            print(f)
        for k in (4, 5, 6, 8):
            with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
                r = hc_alg2_patterns(k, Path(args.build_dir or tmp) / "cocotb")
            print(f"Algorithm 2 on the {k}-cube (transpose, bit-reversal, complement, 3 "
                  f"random permutations, 2 random partial permutations; T = "
                  f"{r['cycle_length']} bit-times; cocotb on "
                  f"Verilator): {'PASS' if r['passed'] else 'FAIL'}; build "
                  f"{r['build_seconds']:.0f} s, model {r['model_seconds']:.1f} s, "
                  f"{r['clocks_per_second']:,.0f} clocks/s", flush=True)
            for f in r["failures"]:
                print(f)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
        root = Path(args.build_dir or tmp)
        only = args.butterfly_only or args.hypercube_only
        cases = [] if only else [
            ("fat-tree", c) for c in CASES
            if (c[0] == 16 if args.quick else not args.leaves or c[0] in args.leaves)]
        if not (args.no_butterfly or args.quick or args.hypercube_only):
            cases += [("butterfly", c) for c in BUTTERFLY_CASES]
        if not (args.no_hypercube or args.quick or args.butterfly_only):
            cases += [("hypercube", c) for c in HYPERCUBE_CASES]
        for kind, (leaves, native_clocks, ver_cycles, ic_cycles) in cases:
            net = bench_network(kind, leaves)
            native = native_row(net, root, native_clocks)
            rows.append(native)
            for sim, cycles in (("verilator", ver_cycles), ("icarus", ic_cycles)):
                r = cocotb_row(net, sim, root / "cocotb", cycles)
                r["ratio"] = r["clocks_per_second"] / native["clocks_per_second"]
                rows.append(r)
            print(f"  {net.family} {leaves}: {net.cycle_length} bit-times per cycle, "
                  f"T x W = {net.cycle_length} x "
                  f"{sum(w for _, _, w in packed_layout(net, hardware=family_of(net).hardware))} "
                  f"stimulus bits", flush=True)
            for r in rows[-3:]:
                r["family"] = net.family
    print("co-simulation speed: the smallest universal fat-trees, off-line (cocotb: random-"
          "destinations schedules), the butterfly of 2x2 switches (cocotb: full-load "
          "random destinations, losses retried) and the 6-cube's Algorithm 1 router chains "
          "(N = nodes; cocotb: full-load random permutations, collisions retried); every "
          "recv/send_ack wire checked at every bit-time:")
    print(f"{'family':>9}  {'N':>5}  {'how':>16}  {'build s':>7}  {'clocks':>8}  {'sim s':>6}  "
          f"{'clocks/s':>9}  {'vs native':>9}  {'clocks/cpu-s':>12}  {'vs native':>9}  "
          f"{'py s':>5}  {'startup s':>9}  {'check s':>7}")
    for r in rows:
        per_cpu = r["clocks"] / r["cpu_seconds"] if r.get("cpu_seconds") else 0.0
        r["clocks_per_cpu_second"] = per_cpu
        native = next(x for x in rows if x["leaves"] == r["leaves"] and "ratio" not in x
                      and x["family"] == r["family"])
        cpu_ratio = per_cpu / native["clocks_per_cpu_second"] if "ratio" in r else 1.0
        ratio = f"{r['ratio']:.2f}x" if "ratio" in r else "1"
        start = f"{r['test_seconds'] - r['seconds']:.1f}" if "test_seconds" in r else "-"
        check = f"{r['check_seconds']:.1f}" if "check_seconds" in r else "-"
        py = f"{r['python_seconds']:.2f}" if "python_seconds" in r else "-"
        print(f"{r['family']:>9}  {r['leaves']:>5}  {r['how']:>16}  {r['build_seconds']:>7.1f}  "
              f"{r['clocks']:>8}  {r['seconds']:>6.2f}  {r['clocks_per_second']:>9.0f}  "
              f"{ratio:>9}  {per_cpu:>12.0f}  {cpu_ratio:>8.2f}x  "
              f"{py:>5}  {start:>9}  {check:>7}")
    for r in rows:   # Patel's recursion is the butterfly's
        if r.get("first_cycle_acceptance") and r["family"] == "butterfly":
            from fatnet.golden.butterfly.circuit import patel_acceptance
            acc = np.asarray(r["first_cycle_acceptance"])
            n = r["leaves"].bit_length() - 1
            q = 0.5
            for _ in range(n - 1):
                q = 1 - (1 - q / 2) ** 2
            print(f"RTL acceptance ({r['how']}, butterfly N = {r['leaves']}, first cycle at "
                  f"full load, {len(acc)} problems, every wire equal to the model's): "
                  f"{acc.mean():.4f} ± {acc.std():.4f}; exact recursion for this butterfly "
                  f"(two delivery wires per output) {2 * q:.4f}; Patel's delta network of "
                  f"2x2 crossbars {patel_acceptance(n):.4f}")


if __name__ == "__main__":
    main()
