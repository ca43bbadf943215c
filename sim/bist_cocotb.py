"""cocotb co-simulation of the whole self-testing top (test and runner): the BIST's
Verilog runs from reset with nothing but its clock; a UART receiver in the testbench
decodes its report lines, and the runner requires them to equal the model's prediction
(:func:`fatnet.sim.bist.predict`) line for line.

``run_bist(plan, reports, sim=...)`` builds one directory per plan (keyed by the plan
and the generator's sources) and returns (passed, failures, lines decoded, seconds).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from ..golden.bist import report_line

__all__ = ["run_bist", "bist_reports"]

PLAN_ENV = "FATNET_BIST_PLAN"
PERIOD_NS = 10

try:
    import cocotb
    from cocotb.clock import Clock
    from cocotb.triggers import ClockCycles, FallingEdge, Timer
    from cocotb.utils import get_sim_time
except ImportError:  # the runner side works without the simulator
    cocotb = None  # type: ignore[assignment]


if cocotb is not None:
    @cocotb.test()
    async def bist_reports(dut):
        """Reset, then decode ``lines`` report lines from ``uart_tx`` (8N1, ``divisor``
        clocks per bit, sampled mid-bit) and write them to the plan's output file."""
        plan = json.loads(Path(os.environ[PLAN_ENV]).read_text())
        D, want = plan["divisor"], plan["lines"]
        Clock(dut.clk, PERIOD_NS, unit="ns").start()
        dut.rst.value = 1
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        text, lines = "", []
        bit = D * PERIOD_NS
        while len(lines) < want:
            await FallingEdge(dut.uart_tx)
            await Timer(bit // 2, unit="ns")
            if int(dut.uart_tx.value):
                continue                          # a glitch, not a start bit
            byte = 0
            for j in range(8):
                await Timer(bit, unit="ns")
                v = dut.uart_tx.value
                if not v.is_resolvable:
                    raise AssertionError(
                        f"uart_tx is {v} in bit {j} of character {len(text)} of line "
                        f"{len(lines)}, {get_sim_time('ns')} ns: snapshot "
                        f"{dut.report.held.value}")
                byte |= int(v) << j
            await Timer(bit, unit="ns")
            if not int(dut.uart_tx.value):
                raise AssertionError(f"line {len(lines)}: no stop bit after {byte:#x}")
            text += chr(byte)
            if text.endswith("\r\n"):
                lines.append(text[:-2])
                text = ""
        Path(plan["out"]).write_text(json.dumps(lines))


def _key(plan) -> str:
    from .. import hdl
    build = plan.family.testbench.build_params(plan.net)
    h = hashlib.sha1(json.dumps(
        [plan.net.family, build.params, plan.pattern,
         plan.load, plan.bist_seed, plan.report_cycles, plan.baud_divisor, plan.flip_cycle,
         str(plan.stuck_wire)],
        sort_keys=True, default=str).encode())
    for path in sorted(Path(hdl.__file__).parent.rglob("*.py")):
        h.update(path.read_bytes())
    for f in [*build.sources, __file__]:
        h.update(Path(f).read_bytes())
    return h.hexdigest()[:12]


def run_bist(plan, reports: int, *, sim: str | None = None, build_root="build/bist",
             replay: str = "") -> tuple[bool, list[str], list[str], float]:
    """Build the plan's BIST top and decode ``reports`` lines on ``sim``; compare them
    with the model's. Returns (passed, failures, decoded lines, seconds)."""
    from amaranth.back import verilog
    from cocotb_tools.runner import get_runner

    from ..hdl.tools import temporary_env
    from .bist import build_core, predict
    from .cocotb_runner import _failures, simulator_env
    sim = sim or os.environ.get("SIM", "icarus")
    expect = [report_line(r) for r in predict(plan, reports * plan.report_cycles)]
    build_dir = Path(build_root).resolve() / sim / _key(plan)
    build_dir.mkdir(parents=True, exist_ok=True)
    src = build_dir / "bist.v"
    if not src.exists():
        src.write_text(verilog.convert(build_core(plan), name="bist", emit_src=False))
    out = build_dir / f"lines_{reports}.json"
    out.unlink(missing_ok=True)
    plan_file = build_dir / f"plan_{reports}.json"
    plan_file.write_text(json.dumps({"divisor": plan.baud_divisor, "lines": reports,
                                     "out": str(out)}))
    t0 = time.perf_counter()
    with temporary_env(simulator_env(sim)):
        runner = get_runner(sim)
        build_args = ["-Wno-fatal", "-Wno-lint", "-Wno-style"] if sim == "verilator" else []
        runner.build(sources=[src], hdl_toplevel="bist", build_dir=build_dir, always=False,
                     timescale=("1ns", "1ps"), build_args=build_args)
        results = build_dir / f"results_{reports}.xml"
        results.unlink(missing_ok=True)
        try:
            runner.test(hdl_toplevel="bist", test_module="fatnet.sim.bist_cocotb",
                        build_dir=build_dir, test_dir=build_dir, results_xml=str(results),
                        extra_env={PLAN_ENV: str(plan_file)})
        except SystemExit:
            pass  # under pytest the runner exits on a failing test; the XML says which
    seconds = time.perf_counter() - t0
    failures = _failures(results)
    got = json.loads(out.read_text()) if out.exists() else []
    for i, (e, g) in enumerate(zip(expect, got)):
        if e != g:
            failures.append(f"report {i}: the UART says {g!r}, the model {e!r}"
                            + (f"; replay: {replay}" if replay else ""))
    if len(got) < len(expect) and not failures:
        failures.append(f"{len(got)} report lines decoded, {len(expect)} expected")
    return not failures, failures, got, seconds
