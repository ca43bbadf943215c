"""Co-simulation speed: cocotb against a native Verilator loop, on the same Verilog.

Run as ``python bench/cosim.py`` (``make bench``; ``--kinds KIND ...`` for some kinds
only, ``--sizes N ...`` for some sizes only, ``--quick`` for the quick case alone: the
16-leaf fat-tree). For every kind of a family with the benchmarks' record
(:class:`fatnet.cli.family.BenchCommands`) and each of its co-simulation sizes
(:attr:`~fatnet.cli.family.Bench.cosim`: the 16- and 64-leaf smallest universal
fat-trees, off-line, seed 0; the 64-input butterfly; the 6-cube's Algorithm 1 router
chains), it builds the workload's network (:attr:`~fatnet.cli.family.Bench.workload`)
and its checking harness (:class:`fatnet.hdl.checker.CheckingHarness`) and measures, in
one run:

* native: ``verilator --cc --exe --build`` of the checking harness with a small C++ main
  that puts random bits into the rows of its stimulus and expected-word memories, sets
  ``cycles`` to a whole batch, strobes ``start`` once a batch and reads ``errors`` at
  each batch's end, for a fixed number of clocks;
* cocotb on Verilator and on Icarus: the family's real, checked workload
  (:attr:`~fatnet.cli.family.Bench.traffic`; e.g. fat-trees: random-destinations
  message sets scheduled off-line; the butterfly: full-load random destinations with
  losses retried), many delivery cycles, every ``recv`` and ``send_ack`` wire compared
  with the model at every bit-time by the harness (:mod:`fatnet.sim.cocotb_runner`: on
  Verilator inside the bench top that makes the clock). Where the family compares the first cycle's
  acceptance with its theory (:attr:`~fatnet.cli.family.Bench.acceptance`: the
  butterfly, beside Patel's recursion), that line follows the table.

Both Verilator builds use the same make flags (``simulator_env``); the cocotb build adds
``--timing`` (C++20 coroutines) for the bench top's clock. Rates are clocks per second of
simulation loop: the cocotb figure is timed inside the test, from the first batch's
rows to the last batch's count, so start-up is not in it (it is printed separately, as
is the runner-side planning and check). The machine may be shared: native and cocotb
on Verilator run ``--rounds`` times (default 3), one after the other, and each keeps
its run of least CPU time; the ratio that compares is the CPU one (clocks per CPU
second). ``--simulators verilator`` leaves Icarus out; ``--record`` writes cocotb on
Verilator's ratios (CPU and wall) into ``bench/results/cosim.json`` (entry ``speed``)
for ``python bench/figures.py``.

The hypercube's RTL studies (Algorithm 2 on every permutation, Kuszmaul's comparison)
are ``bench/hypercube_rtl.py``.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fatnet import api
from fatnet.api import family_of
from fatnet.cli.family import CosimCase, bench_families
from fatnet.golden.cycle import start_latency
from fatnet.hdl.checker import checker_geometry
from fatnet.hdl.harness import harness_geometry, packed_layout

# a sibling script of bench/ (on sys.path as the running script's folder)
from figures import record_entry

__all__ = ["native_row", "cocotb_row", "checked_workload", "cases", "main", "bench_network"]

NATIVE_MAIN = r"""
#include "V%(top)s_checker.h"
#include "V%(top)s_checker___024root.h"
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

int main(int argc, char** argv) {
    const long clocks = std::atol(argv[1]);
    // a batch: B delivery cycles of T + 1 + D clocks each, from one start strobe
    const long batch = %(B)dL * (%(T)d + 1 + %(D)d);
    const int rows = %(rows)d;
    VerilatedContext* ctx = new VerilatedContext;
    V%(top)s_checker* top = new V%(top)s_checker{ctx};
    auto* root = top->rootp;
    std::mt19937 rng(1);
    top->rst = 0; top->start = 0; top->clk = 0; top->cycles = %(B)d;
    top->eval();
    unsigned long sink = 0;
    auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    for (long c = 0; c < clocks; ++c) {
        const long phase = c %% batch;
        if (phase == 0)  // the batch's stimulus and expected words, into the memories' rows
            for (int r = 0; r < rows; ++r) {
                fill(root->%(top)s_checker__DOT__stim[r], rng, %(send_bits)d);
                fill(root->%(top)s_checker__DOT__expect_recv[r], rng, %(recv_bits)d);
                fill(root->%(top)s_checker__DOT__expect_ack[r], rng, %(send_bits)d);
            }
        top->start = phase == 0;
        top->clk = 1; top->eval();
        top->clk = 0; top->eval();
        if (phase == batch - 1)
            sink += top->errors;
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


#: What the recorded ratios are (bench/results/cosim.json, entry ``speed``).
SPEED_FIGURE = ("cocotb on Verilator against a native Verilator loop on the same checking "
                "harness, clocks per CPU second (every wire checked; goal 0.8x at 64 "
                "terminals)")


def bench_network(kind: str, size: int):
    """The co-simulation workload's network of ``kind`` at ``size``: its family's
    :attr:`~fatnet.cli.family.Bench.workload` parameters, built by
    :func:`fatnet.api.network` (the fat-tree: the smallest universal one, off-line,
    Pippenger, seed 0; the butterfly: 8 payload bits, no faults; the hypercube:
    Algorithm 1's router chains, M = 2k)."""
    return api.network(kind, **bench_families()[kind].workload(size))


def native_row(net, build_root: Path, clocks: int) -> dict:
    """Build the checking harness natively with Verilator and run ``clocks`` clocks of
    random batches; returns build seconds and clocks/s."""
    from fatnet.hdl.gen import generate
    from fatnet.sim.cocotb_runner import VERILATOR_PUBLIC, build_key, harness_sources, simulator_env
    T = net.cycle_length
    top = net.family
    d = Path(build_root).resolve() / "native" / build_key(net, family=family_of(net))
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if not (d / f"{top}_checker.v").exists():
        generate(net, d, top=top, harness=True, hardware=family_of(net).hardware,
                 checker=True)
    geo = harness_geometry(net, hardware=family_of(net).hardware)
    check = checker_geometry(T, geo["W"], geo["Wr"])
    main_cpp = NATIVE_MAIN % {"T": T, "D": start_latency(net), "B": check["B"],
                              "rows": check["rows"], "send_bits": check["k"] * check["W"],
                              "recv_bits": check["k"] * check["Wr"], "top": top}
    fresh = not (d / "main.cpp").exists() or (d / "main.cpp").read_text() != main_cpp
    if fresh:
        (d / "main.cpp").write_text(main_cpp)
    sources = [p.name for p in harness_sources(d, top, "checker")]
    # the memories stay in the model, under their names, as for the cocotb build
    (d / "public.vlt").write_text(VERILATOR_PUBLIC.format(top=f"{top}_checker"))
    env = dict(os.environ)
    env.update(simulator_env("verilator"))
    exe = d / "obj" / "native"
    if fresh or not exe.exists():
        subprocess.run(["verilator", "--cc", "--exe", "--build", "-j", "2", "-Mdir", "obj",
                        "--top-module", f"{top}_checker", "-Wno-fatal", "-Wno-lint",
                        "-Wno-style", "-o", "native", "public.vlt", *sources, "main.cpp"],
                       cwd=d, env=env, check=True, stdout=subprocess.DEVNULL)
    build_s = time.perf_counter() - t0
    out = subprocess.run([str(exe), str(clocks)], cwd=d, check=True, capture_output=True,
                         text=True).stdout.split()
    return {"how": "native verilator", "build_seconds": build_s,
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


def cocotb_row(net, sim: str, build_root: Path, workload) -> dict:
    """cocotb co-simulation of a :func:`checked_workload` on one simulator."""
    from fatnet.sim.cocotb_runner import run
    ms, results, accept = workload
    t0 = time.perf_counter()
    # Verilator: the native loop's shape (few, wide rows a batch); Icarus: one word a row
    res = run(net, ms, results, family=family_of(net), sim=sim, build_root=build_root,
              seed=1, replay="python bench/cosim.py",
              shape="wide" if sim == "verilator" else "narrow")
    total = time.perf_counter() - t0
    if not res.passed:
        raise RuntimeError("\n".join(res.failures))
    return {"how": f"cocotb {sim}", "build_seconds": res.build_seconds,
            "clocks": res.clocks, "seconds": res.sim_seconds,
            "clocks_per_second": res.clocks_per_second, "cycles": res.cycles,
            "test_seconds": res.run_seconds, "python_seconds": res.python_seconds,
            "cpu_seconds": res.cpu_seconds, "first_cycle_acceptance": accept,
            "check_seconds": total - res.build_seconds - res.run_seconds}


def cases(kinds, sizes=None, quick: bool = False) -> list[tuple[str, CosimCase]]:
    """The runs the options select, as (kind, case): each of ``kinds``' co-simulation
    cases (:attr:`~fatnet.cli.family.Bench.cosim`), only those of ``sizes`` if given,
    only the quick ones with ``quick``."""
    bench = bench_families()
    return [(kind, case) for kind in kinds for case in bench[kind].cosim
            if (case.quick if quick else not sizes or case.size in sizes)]


SIMULATORS = ("verilator", "icarus")


def _least_cpu(runs: list[dict]) -> dict:
    """The run of ``runs`` with the least CPU time, with the first run's build time."""
    best = dict(min(runs, key=lambda r: r["cpu_seconds"]))
    best["build_seconds"] = runs[0]["build_seconds"]
    return best


def run_case(kind: str, case: CosimCase, root: Path,
             simulators: tuple[str, ...] = SIMULATORS, rounds: int = 1) -> list[dict]:
    """One case's rows: native, then cocotb on each of ``simulators`` (Verilator and
    Icarus by default; each with its ratio to native), every row tagged with the kind
    and the size. The runs go in ``rounds`` rounds, native then cocotb on Verilator
    (Icarus, a hundred times slower, in the first round only), each row the round with
    the least CPU time: on a shared machine the other jobs slow both loops alike only
    when their runs alternate."""
    net = bench_network(kind, case.size)
    cycles = {"verilator": case.verilator_cycles, "icarus": case.icarus_cycles}
    workloads = {sim: checked_workload(net, cycles[sim]) for sim in simulators}
    natives: list[dict] = []
    runs: dict[str, list[dict]] = {sim: [] for sim in simulators}
    for round_ in range(rounds):
        natives.append(native_row(net, root, case.native_clocks))
        for sim in simulators:
            if sim == "verilator" or not round_:
                runs[sim].append(cocotb_row(net, sim, root / "cocotb", workloads[sim]))
    native = _least_cpu(natives)
    rows = [native]
    for sim in simulators:
        r = _least_cpu(runs[sim])
        r["ratio"] = r["clocks_per_second"] / native["clocks_per_second"]
        rows.append(r)
    stimulus = sum(w for _, _, w in packed_layout(net, hardware=family_of(net).hardware))
    print(f"  {kind} {case.size}: {net.cycle_length} bit-times per cycle, "
          f"T x W = {net.cycle_length} x {stimulus} stimulus bits", flush=True)
    for r in rows:
        r["kind"], r["family"], r["size"] = kind, net.family, case.size
    return rows


def _cpu_ratios(rows: list[dict]) -> None:
    """Set every row's ``clocks_per_cpu_second`` and, for a cocotb row, its
    ``cpu_ratio``: its clocks per CPU second over its case's native row's."""
    for r in rows:
        r["clocks_per_cpu_second"] = (r["clocks"] / r["cpu_seconds"] if r.get("cpu_seconds")
                                      else 0.0)
    for r in rows:
        if "ratio" in r:
            native = next(x for x in rows if x["size"] == r["size"] and "ratio" not in x
                          and x["kind"] == r["kind"])
            r["cpu_ratio"] = r["clocks_per_cpu_second"] / native["clocks_per_cpu_second"]


def _report(rows: list[dict]) -> None:
    """The table of every row (size: the family's, e.g. the fat-tree's leaves, the
    hypercube's dimension), then each family's acceptance line."""
    bench = bench_families()
    kinds = list(dict.fromkeys(r["kind"] for r in rows))
    _cpu_ratios(rows)
    print("co-simulation speed: " + "; ".join(bench[k].summary for k in kinds)
          + "; every recv/send_ack wire checked at every bit-time:")
    print(f"{'family':>9}  {'size':>5}  {'how':>16}  {'build s':>7}  {'clocks':>8}  {'sim s':>6}  "
          f"{'clocks/s':>9}  {'vs native':>9}  {'clocks/cpu-s':>12}  {'vs native':>9}  "
          f"{'py s':>5}  {'startup s':>9}  {'check s':>7}")
    for r in rows:
        ratio = f"{r['ratio']:.2f}x" if "ratio" in r else "1"
        start = f"{r['test_seconds'] - r['seconds']:.1f}" if "test_seconds" in r else "-"
        check = f"{r['check_seconds']:.1f}" if "check_seconds" in r else "-"
        py = f"{r['python_seconds']:.2f}" if "python_seconds" in r else "-"
        print(f"{r['family']:>9}  {r['size']:>5}  {r['how']:>16}  {r['build_seconds']:>7.1f}  "
              f"{r['clocks']:>8}  {r['seconds']:>6.2f}  {r['clocks_per_second']:>9.0f}  "
              f"{ratio:>9}  {r['clocks_per_cpu_second']:>12.0f}  "
              f"{r.get('cpu_ratio', 1.0):>8.2f}x  {py:>5}  {start:>9}  {check:>7}")
    for r in rows:
        acceptance = bench[r["kind"]].acceptance
        if r.get("first_cycle_acceptance") and acceptance is not None:
            print(f"RTL acceptance, {r['how']} "
                  f"{acceptance(r['size'], r['first_cycle_acceptance'])}")


def _record(rows: list[dict], command: str) -> None:
    """Record cocotb on Verilator's ratios to native (clocks per CPU second, and per
    second as ``<key>_wall``), one value per case, ``<family><size>`` (e.g.
    ``butterfly64``), in ``bench/results/cosim.json``'s ``speed`` entry."""
    values = {}
    for r in rows:
        if r["how"] == "cocotb verilator":
            key = f"{r['family']}{r['size']}"
            values[key] = round(r["cpu_ratio"], 2)
            values[f"{key}_wall"] = round(r["ratio"], 2)
    record_entry("cosim", "speed", values, figure=SPEED_FIGURE, command=command)


def main(argv=None) -> None:
    kinds = list(bench_families())
    ap = argparse.ArgumentParser(prog="python bench/cosim.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--kinds", nargs="+", action="extend", choices=kinds, metavar="KIND",
                    help=f"only these kinds (repeatable; of {', '.join(kinds)}; default all)")
    ap.add_argument("--sizes", nargs="+", action="extend", type=int, metavar="N",
                    help="only these sizes (repeatable; default each kind's every size: "
                         + "; ".join(f"{k} {', '.join(str(c.size) for c in b.cosim)}"
                                     for k, b in bench_families().items()) + ")")
    ap.add_argument("--quick", action="store_true",
                    help="the quick case alone: "
                         + ", ".join(f"{k} {c.size}" for k, c in cases(kinds, quick=True)))
    ap.add_argument("--simulators", nargs="+", choices=SIMULATORS, default=list(SIMULATORS),
                    metavar="SIM", help="cocotb on these simulators only (of "
                    f"{', '.join(SIMULATORS)}; default both)")
    ap.add_argument("--rounds", type=int, default=3, metavar="R",
                    help="run native and cocotb on Verilator R times, alternately, and keep "
                         "each one's run of least CPU time (default 3)")
    ap.add_argument("--build-dir", default=None,
                    help="keep the builds here (default: a temporary directory)")
    ap.add_argument("--record", action="store_true",
                    help="write cocotb on Verilator's ratios into bench/results/cosim.json "
                         "(then python bench/figures.py)")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1; got {args.rounds}")
    selected = cases(args.kinds or kinds, args.sizes, args.quick)
    if not selected:
        ap.error("no co-simulation case of the --kinds has one of the --sizes")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
        root = Path(args.build_dir or tmp)
        for kind, case in selected:
            rows += run_case(kind, case, root, tuple(args.simulators), args.rounds)
    _report(rows)
    if args.record:
        given = sys.argv[1:] if argv is None else argv
        _record(rows, shlex.join(["python", "bench/cosim.py",
                                  *(a for a in given if a != "--record")]))


if __name__ == "__main__":
    main()
