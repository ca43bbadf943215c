"""Co-simulation speed: cocotb runs of fat-trees on Icarus and Verilator.

Run as ``python -m fatnet.sim.bench_cosim`` (``--quick`` for the 16-leaf tree only).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from ..golden.fattree.network import FatTreeNetwork
from ..golden.fattree.spec import FatTreeSpec, min_universal_root

__all__ = ["sim_speed_row", "main"]


def sim_speed_row(leaves: int, sim: str, build_root: Path) -> dict:
    """cocotb co-simulation speed on one simulator: a random-destinations set on the
    smallest universal fat-tree, scheduled off-line, every cycle checked."""
    from ..golden.messages import make_pattern
    from ..golden.fattree.route import run_offline
    from .cocotb_runner import run
    net = FatTreeNetwork(FatTreeSpec.universal(leaves, min_universal_root(leaves)))
    ms = make_pattern(leaves, "random-destinations", 1, net.spec.payload_bits)
    cycles = [sorted(r.outcomes) for r in run_offline(net, ms, keep_results=True).results]
    res = run(net, ms, cycles, sim=sim, build_root=build_root, seed=1)
    if not res.passed:
        raise RuntimeError("\n".join(res.failures))
    return {"leaves": leaves, "sim": sim, "cycles": res.cycles,
            "cycle_bits": net.cycle_length, "build_seconds": round(res.build_seconds, 1),
            "cycles_per_second": round(res.cycles_per_second, 1),
            "bit_times_per_second": round(res.bit_times / res.sim_seconds)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m fatnet.sim.bench_cosim",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="16 leaves only")
    args = ap.parse_args(argv)
    speeds = []
    with tempfile.TemporaryDirectory(prefix="fatnet-cosim-") as tmp:
        for n in (16,) if args.quick else (16, 64):
            for sim in ("icarus", "verilator"):
                speeds.append(sim_speed_row(n, sim, Path(tmp) / "cocotb"))
    print("cocotb co-simulation speed (random destinations, off-line schedule, every "
          "recv/send_ack wire compared at every bit-time):")
    print(f"{'leaves':>6}  {'simulator':>9}  {'build s':>7}  {'cycles':>6}  "
          f"{'bits/cycle':>10}  {'cycles/s':>8}  {'bit-times/s':>11}")
    for r in speeds:
        print(f"{r['leaves']:>6}  {r['sim']:>9}  {r['build_seconds']:>7}  {r['cycles']:>6}  "
              f"{r['cycle_bits']:>10}  {r['cycles_per_second']:>8}  "
              f"{r['bit_times_per_second']:>11}")


if __name__ == "__main__":
    main()
