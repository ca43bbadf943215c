"""What ``fatnet sim --waves`` costs after the simulation: the time to merge the decoded
message traces into the dump and write the .gtkw, against the co-simulation's own time,
for the 64-terminal network of every family.

Run as ``python bench/waves_decode.py`` (``make bench``; ``--kinds KIND ...`` for some
kinds only, ``--sim icarus`` for Icarus, ``--build-dir`` for the simulator builds, kept
between runs). For each network (:data:`NETWORKS`) it runs
what ``fatnet sim <kind> ... --waves DIR`` runs: the model, the cocotb co-simulation
with a VCD dump (checked against the model, as always) and
:func:`fatnet.sim.waves.write_waves`, and prints one row:

* sim s: the co-simulation's run (simulator start-up, every delivery cycle, the dump),
  without the simulator build;
* waves s: :func:`~fatnet.sim.waves.write_waves` (copy the dump, decode every cycle
  into it, write the .gtkw);
* waves / sim: their ratio.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path

from fatnet import api
from fatnet.cli.family import bench_families
from fatnet.sim.cocotb_runner import run as cosim
from fatnet.sim.waves import write_waves

#: The network of every family with the benchmarks' record
#: (:class:`fatnet.cli.family.BenchCommands`) that names one
#: (:attr:`~fatnet.cli.family.Bench.waves`; the 64-terminal network: the 64-leaf
#: fat-tree, the 64-input butterfly, the 6-cube), by its name in the table: (kind,
#: network, traffic), the parameters of ``fatnet.api.network`` and
#: ``fatnet.api.messages`` (``fatnet sim``'s options).
NETWORKS = {bench.waves.label: (kind, bench.waves.network, bench.waves.traffic)
            for kind, bench in bench_families().items() if bench.waves is not None}


def measure(name: str, sim: str, build_dir: Path, out_dir: Path) -> dict:
    """One network through the model, the co-simulation with waves and the decoder."""
    kind, network, traffic = NETWORKS[name]
    net = api.network(kind, **network)
    ms = api.messages(net, **traffic)
    report = api.route(net, ms)
    fam = api.family_of(net)
    # the simulator's layer directly: the dump's decoding is timed apart from the run
    res = cosim(net, ms, report.results, family=fam, sim=sim, seed=traffic["seed"],
                replay="python bench/waves_decode.py", waves=True, build_root=build_dir,
                masks=report.masks)
    if not res.passed or not res.waves:
        raise SystemExit(f"waves_decode: {name}: the co-simulation failed or "
                         f"wrote no dump:\n" + "\n".join(res.failures))
    start = time.perf_counter()
    dump, _, note = write_waves(net, report.results, res.waves, out_dir, name=fam.name,
                                family=fam)
    waves_s = time.perf_counter() - start
    if note:
        raise SystemExit(f"waves_decode: {name}: {note}")
    return {"cycles": report.cycles, "mb": dump.stat().st_size / 1e6,
            "sim": res.run_seconds, "waves": waves_s}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/waves_decode.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sim", choices=("verilator", "icarus"), default="verilator",
                   help="the simulator (default verilator)")
    p.add_argument("--build-dir", type=Path, default=Path("build/cocotb"),
                   help="where the simulator builds go (default build/cocotb)")
    p.add_argument("--kinds", nargs="+", action="extend", metavar="KIND",
                   choices=sorted({kind for kind, _, _ in NETWORKS.values()}),
                   help="only these kinds' networks (repeatable; default all)")
    args = p.parse_args(argv)
    command = "python bench/waves_decode.py " + shlex.join(sys.argv[1:] if argv is None
                                                           else argv)
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (kind, _, _) in NETWORKS.items():
            if args.kinds and kind not in args.kinds:
                continue
            rows[name] = measure(name, args.sim, args.build_dir,
                                 Path(tmp) / name.split(",")[0])
    # the table last, below whatever the simulators printed while building
    print(f"# {command.strip()}")
    print(f"{'network':<22} {'cycles':>6} {'dump MB':>8} {'sim s':>7} {'waves s':>8} "
          f"{'waves / sim':>11}")
    for name, row in rows.items():
        print(f"{name:<22} {row['cycles']:>6} {row['mb']:>8.1f} {row['sim']:>7.1f} "
              f"{row['waves']:>8.2f} {row['waves'] / row['sim']:>11.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
