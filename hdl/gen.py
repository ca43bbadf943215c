"""Verilog generation, for every family: the network and its test harness as Verilog,
lint waivers and a manifest.

The family's hardware hooks (:class:`~fatnet.hdl.family.HardwareFamily`, handed in by
the caller) supply the top (``top(net, library)``), its signature, what each port means
and the family's manifest fields. Each distinct node or switch (and concentrator stage) is
emitted once, as its own
module, and instantiated wherever the network repeats it (:mod:`fatnet.hdl.modules`);
the harness file instantiates the network top (module ``<top>`` in ``<top>.v``) instead
of repeating it, so a simulator reads both files.
"""

from __future__ import annotations

import gc
import json
import time
from contextlib import contextmanager
from pathlib import Path

from amaranth.back import rtlil

from ..golden.cycle import start_latency
from .checker import DEFAULT_SHAPE, CheckingHarness, checker_manifest
from .family import HardwareFamily
from .harness import PackedHarness, harness_manifest
from .modules import ModuleInstance, ModuleLibrary, rtlil_to_verilog
from .signatures import port_rows

__all__ = ["generate", "manifest", "network_verilog", "check_size", "check_generable",
           "STEPS"]

# Amaranth's Verilog carries no timescale; simulators want one.
TIMESCALE = "`timescale 1ns/1ps\n"

#: Verilator lint waivers written next to the Verilog: `verilator --lint-only -Wall
#: lint.vlt fattree.v` is clean. Each waived rule is a property of how Amaranth and Yosys
#: print Verilog, not of the design; every other -Wall warning stays on.
LINT_WAIVERS = """`verilator_config
// Amaranth gives every register its reset value as an initialiser as well as
// assigning it in the clocked process.
lint_off -rule PROCASSINIT
// Amaranth makes a port of every signal that crosses a module boundary and keeps the
// full width of intermediate values (e.g. the carry bit of x & (~x + 1)); the bits a
// module does not read are reported unused.
lint_off -rule UNUSEDSIGNAL
// Modules are named after the design (fattree_node0, fattree_stage3) or after their
// place in the hierarchy (fattree_node0.sel_U), not after the file.
lint_off -rule DECLFILENAME
"""

#: Clock and reset: added by Amaranth for the ``sync`` domain, not signature members.
CLOCK_PORTS = [
    {"name": "clk", "width": 1, "dir": "in", "meaning": "bit clock: one bit-time per clock"},
    {"name": "rst", "width": 1, "dir": "in", "meaning": "synchronous reset"},
]


#: What the family-agnostic keys of every manifest mean (the family documents its own).
MANIFEST_FIELDS = {
    "top": "the network's Verilog module (in <top>.v)",
    "family": "the name of the family the network belongs to, as registered (fattree; "
              "butterfly for butterflies, dilated butterflies and multibutterflies)",
    "fields": "what every key of this manifest means (a key inside spec is spec.<key>)",
    "cycle_length_bits": "T: bit-times in a delivery cycle (busy is high for bit-times "
                         "0 .. T - 1)",
    "bit_time": "the controller's bit_time output: its width, and the value it saturates "
                "at (the cycle length)",
    "start_latency_clocks": "D: clocks the start strobe spends in the start tree before it "
                            "reaches the switches and the controller; bit-time t of a "
                            "delivery cycle is the clock D + 1 + t after the strobe (0: "
                            "bit-time 0 is the next clock)",
    "ports": "every port of the top, clk and rst first, then the top's signature in "
             "order: name, width, direction, meaning",
    "harness": "the packed test harness: its top module, the Verilog sources to compile "
               "(in order), its ports, its stimulus and capture memories (names, rows, "
               "row layout), the timing of a cycle, and where each terminal's wires sit "
               "in a send word (packed) and in a recv word (recv_packed)",
}

#: What the keys :func:`generate` adds mean.
GENERATED_FIELDS = {
    "modules": "every Verilog module emitted in <top>.v besides the top, each once",
    "files": "the files written, beside <top>.json",
    "generation_seconds": "wall time of the generation",
    "generation_phases": "seconds per phase: the top's RTLIL, the distinct modules' "
                         "RTLIL, Yosys writing the Verilog",
}


def manifest(net, top: str, dut=None, modules=None, *, hardware: HardwareFamily) -> dict:
    """The manifest of a generated network: the family's parameters, timing and
    structure, and every top-level port, derived from the top's signature.

    Parameters
    ----------
    net
        The golden network (``FatTreeNetwork``, ``CircuitNetwork``, ...).
    top : str
        Name of the network's Verilog module.
    dut : wiring.Component or interface, optional
        The top whose signature gives the ports (default: the family's top, elaborated
        for its signature only).
    modules : list of (name, key), optional
        The distinct modules emitted (:attr:`ModuleLibrary.modules`).
    hardware : HardwareFamily
        The family's hardware hooks.
    """
    hw = hardware
    if dut is None:
        dut = hw.network_signature(net).create()
    T = net.cycle_length
    ports = list(CLOCK_PORTS)
    for row in port_rows(dut.signature):
        ports.append({"name": row["name"], "width": row["width"], "dir": row["dir"],
                      "meaning": hw.port_meaning(net, row)})
    doc = {"top": top, "family": net.family}
    doc.update(hw.manifest_fields(net, modules or ()))
    doc["cycle_length_bits"] = T
    doc["bit_time"] = {"width": max(1, T.bit_length()), "saturates_at": T}
    doc["start_latency_clocks"] = start_latency(net)
    doc.setdefault("fields", {}).update(MANIFEST_FIELDS)
    doc["ports"] = ports
    doc["harness"] = harness_manifest(net, top, dut)
    return doc


#: Amaranth numbers a module's top-level input bits, and the outputs of each instance
#: it contains, with 16 bits, 0 and 1 being the constants: at most 65534 input bits per
#: top module, 65536 output bits per instance (the network top inside the harness).
MAX_INPUT_BITS = (1 << 16) - 2
MAX_INSTANCE_OUTPUT_BITS = 1 << 16


def check_size(net, *, hardware: HardwareFamily) -> None:
    """Refuse, in one line, a network too large to convert: one whose top would have
    more input bits than Amaranth numbers in one module (clk, rst, start, every
    endpoint's ``send`` and ``recv_ack`` wires and a splitter network's
    ``fault_mask``), or more output bits than an instance may have (in the harness).
    Everything else scales with the network and has no fixed limit (the harness keeps
    a cycle's stimulus and captures in memories of at most ``ROW_BITS``-bit rows).

    Raises
    ------
    ParameterError
        Naming the size parameter, the bit count and the limit.
    """
    from ..golden.errors import ParameterError
    rows = port_rows(hardware.network_signature(net))
    bits = {"in": len(CLOCK_PORTS), "out": 0}
    by_kind: dict = {}
    for row in rows:
        bits[row["dir"]] += row["width"]
        kind = row["name"].rsplit("__", 1)[-1] if row["endpoint"] else row["name"]
        by_kind[kind, row["dir"]] = by_kind.get((kind, row["dir"]), 0) + row["width"]
    size = hardware.size_text(net)
    for d, limit, what in (("in", MAX_INPUT_BITS, "input bits in one module"),
                           ("out", MAX_INSTANCE_OUTPUT_BITS,
                            "output bits of one instance")):
        if bits[d] > limit:
            parts = ", ".join(f"{k} {n}" for (k, dd), n in sorted(
                by_kind.items(), key=lambda x: -x[1]) if dd == d and n > 1)
            raise ParameterError(
                f"{size} is too large to generate: the network top would have {bits[d]} "
                f"{'input' if d == 'in' else 'output'} bits ({parts}), and Amaranth "
                f"converts at most {limit} {what}; choose a smaller network")


@contextmanager
def _without_cycle_collection():
    """Amaranth's conversion of a large design allocates millions of small objects that
    all live until it ends; Python's cycle collector rescans the growing heap again and
    again meanwhile (about a third of the 1024-input multibutterfly top's conversion).
    Collection resumes afterwards; explicit ``gc.collect()`` calls still run."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


#: The steps :func:`generate` reports, in order (``progress(done, len(STEPS), what)``).
#: Amaranth's Yosys is WebAssembly, compiled for the machine on its first run (then
#: cached by wasmtime): about 20 s once.
STEPS = ("elaborating the network top", "converting the distinct modules to RTLIL",
         "Yosys writing the Verilog (first run: +20 s compiling Yosys)",
         "the packed test harness", "lint waivers and the manifest")


def _no_progress(done: int, total: int, what: str) -> None:
    pass


def network_verilog(net, top: str | None = None, timings: dict | None = None, *,
                    hardware: HardwareFamily, progress=None):
    """The network as Verilog text, each distinct node and stage module once.

    Returns ``(text, dut, library)``: the top component (with node stand-ins) and the
    library of the modules emitted. ``timings``, if given, receives the seconds spent
    on the top's RTLIL (``top_rtlil``), the distinct modules' RTLIL (``modules_rtlil``)
    and Yosys writing the Verilog (``yosys``). ``progress(done, total, what)``, if
    given, is called as each of the first three :data:`STEPS` starts.
    """
    timings = {} if timings is None else timings
    progress = progress or _no_progress
    top = top or net.family
    t0 = time.perf_counter()
    library = ModuleLibrary(prefix=top)
    progress(0, len(STEPS), STEPS[0])
    with _without_cycle_collection():
        dut = hardware.top(net, library=library)
        text = rtlil.convert(dut, name=top, emit_src=False)
    t1 = time.perf_counter()
    progress(1, len(STEPS), f"converting {len(library.modules)} distinct modules to RTLIL")
    # small networks convert in-process; larger ones in forked workers (one per CPU)
    with _without_cycle_collection():
        modules = library.rtlil(jobs=1 if len(library.modules) < 48 else None)
    text = "\n".join([text, modules])
    t2 = time.perf_counter()
    progress(2, len(STEPS), STEPS[2])
    verilog_text = rtlil_to_verilog(text)
    t3 = time.perf_counter()
    timings.update(top_rtlil=round(t1 - t0, 3), modules_rtlil=round(t2 - t1, 3),
                   yosys=round(t3 - t2, 3))
    return verilog_text, dut, library


def check_generable(net, *, hardware: HardwareFamily) -> None:
    """Every refusal of :func:`generate`, before anything is built or written: a network
    the family's hardware does not build (``check_buildable``), or one too large to
    convert (:func:`check_size`). ``fatnet sim`` calls it before the model runs."""
    hardware.check_buildable(net)
    check_size(net, hardware=hardware)


#: What the ``checker`` key means (present when the checking harness was written).
CHECKER_FIELD = ("the checking harness (written with generate(..., checker=True), as the "
                 "cocotb runner does): its top module, sources, ports, shape (wide or "
                 "narrow memories), the batch's five memories (stimulus, expected recv "
                 "and send_ack words, captures), their row layout and the timing of a "
                 "batch; the words are packed as in the harness's packed and recv_packed")


def _write_checker(net, out: Path, top: str, dut, shape: str) -> str:
    """Write ``<top>_checker.v`` (instantiating module ``<top>``) of ``shape``; its file
    name."""
    stand_in = ModuleInstance(dut.signature, top)
    c = rtlil.convert(CheckingHarness(net, core=stand_in, shape=shape), name=f"{top}_checker",
                      emit_src=False)
    (out / f"{top}_checker.v").write_text(TIMESCALE + rtlil_to_verilog(c))
    return f"{top}_checker.v"


def generate(net, out_dir, top: str | None = None, harness: bool = True, *,
             hardware: HardwareFamily, progress=None, checker: bool = False,
             checker_shape: str = DEFAULT_SHAPE) -> dict:
    """Write ``<top>.v`` (and ``<top>_harness.v``), ``lint.vlt`` and ``<top>.json``;
    with ``checker``, also the checking harness ``<top>_checker.v``
    (:class:`~fatnet.hdl.checker.CheckingHarness` with memories of ``checker_shape``, a
    key of :data:`~fatnet.hdl.checker.SHAPES`; the manifest's ``checker`` entry).

    ``<top>_harness.v`` holds only the harness, which instantiates module ``<top>``:
    simulate it with both files (the manifest's ``harness.sources``). Returns the
    manifest, with the files written and the generation time. ``progress(done, total,
    what)``, if given, is called as each of :data:`STEPS` starts and when all are done.
    """
    progress = progress or _no_progress
    top = top or net.family
    check_generable(net, hardware=hardware)  # a network that cannot be generated: nothing written
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    files = []
    timings: dict[str, float] = {}
    text, dut, library = network_verilog(net, top, timings, hardware=hardware,
                                         progress=progress)
    (out / f"{top}.v").write_text(TIMESCALE + text)
    files.append(f"{top}.v")
    progress(3, len(STEPS), STEPS[3])
    if harness:
        stand_in = ModuleInstance(dut.signature, top)
        h = rtlil.convert(PackedHarness(net, core=stand_in), name=f"{top}_harness",
                          emit_src=False)
        (out / f"{top}_harness.v").write_text(TIMESCALE + rtlil_to_verilog(h))
        files.append(f"{top}_harness.v")
    if checker:
        files.append(_write_checker(net, out, top, dut, checker_shape))
    progress(4, len(STEPS), STEPS[4])
    (out / "lint.vlt").write_text(LINT_WAIVERS)
    files.append("lint.vlt")
    doc = manifest(net, top, dut, library.modules, hardware=hardware)
    doc["modules"] = [name for name, _ in library.modules]
    doc["files"] = files
    doc["generation_seconds"] = round(time.perf_counter() - t0, 3)
    doc["generation_phases"] = timings
    doc["fields"].update(GENERATED_FIELDS)
    if checker:
        doc["checker"] = checker_manifest(net, top, dut, checker_shape)
        doc["fields"]["checker"] = CHECKER_FIELD
    (out / f"{top}.json").write_text(json.dumps(doc, indent=2) + "\n")
    progress(len(STEPS), len(STEPS), STEPS[-1])
    return doc
