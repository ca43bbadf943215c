"""Verilog generation: the fat-tree (and its test harness) as Verilog plus a manifest.

Each distinct node and each distinct concentrator stage is emitted once, as its own
module, and instantiated wherever the network repeats it (:mod:`fatnet.hdl.modules`);
the harness file instantiates the network top (module ``<top>`` in ``<top>.v``) instead
of repeating it, so a simulator reads both files.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from amaranth.back import rtlil

from ..golden.fattree.topology import PORT_L, PORT_NAMES, PORT_R, PORT_U
from .fattree import FatTreeNetworkHW
from .fattree.network import network_signature, node_key, port_meaning
from .harness import PackedHarness, endpoint_layout
from .modules import ModuleInstance, ModuleLibrary, rtlil_to_verilog
from .signatures import port_rows

__all__ = ["generate", "manifest", "network_verilog"]

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


def _shape_index(net) -> dict:
    return {shape: k for k, shape in enumerate(sorted(net.shapes))}


def manifest(net, top: str, dut=None, modules=None) -> dict:
    """The manifest of a generated network: parameters, timing, concentrator shapes and
    where they sit, and every top-level port, derived from the top's signature.

    Parameters
    ----------
    net : FatTreeNetwork
    top : str
        Name of the network's Verilog module.
    dut : FatTreeNetworkHW or interface, optional
        The top whose signature gives the ports (default: an interface of
        :func:`network_signature`).
    modules : list of (name, key), optional
        The distinct modules emitted (:attr:`ModuleLibrary.modules`).
    """
    dut = dut if dut is not None else network_signature(net).create()
    caps = net.spec.capacities
    T = net.cycle_length
    online = net.spec.mode == "online"
    ports = list(CLOCK_PORTS)
    for row in port_rows(dut.signature):
        ports.append({"name": row["name"], "width": row["width"], "dir": row["dir"],
                      "meaning": port_meaning(net, row)})
    index = _shape_index(net)
    shapes = []
    for (r, s), c in sorted(net.shapes.items()):
        shapes.append({
            "index": index[(r, s)], "inputs": r, "outputs": s,
            "stages": [st.outputs for st in c.stages],
            "stage_decision_widths": [0 if online else st.decision_width
                                      for st in c.stages],
            "decision_width": 0 if online else c.decision_width,
            "guarantee": c.guarantee})
    node_module = {}
    for name, key in modules or ():
        if key[0] == "node":
            node_module[key[1:]] = name
    node_outputs = []
    for h in range(net.n - 1):
        row = {"node": h, "level": (h + 1).bit_length() - 1}
        for p in (PORT_U, PORT_L, PORT_R):
            row[PORT_NAMES[p]] = index[net.concentrator_shape(h, p)]
        if node_module:
            row["module"] = node_module[node_key(net, h)]
        node_outputs.append(row)
    eff = [int(net.effective_cap[:, (1 << k) - 1].min()) for k in range(net.L + 1)]
    w_bits = ("0: on-line, no decision bits" if online
              else "its decision_width in concentrator_shapes")
    return {
        "top": top,
        "spec": net.spec.to_dict(),
        "capacities": list(caps),
        "effective_capacities": eff,
        "cycle_length_bits": T,
        "bit_time": {"width": max(1, T.bit_length()), "saturates_at": T},
        "timing": (
            f"one bit-time per clock; bit-time 0 is the clock after the start strobe. "
            f"Sources drive M at bit-time 0. At a node, M out = M in + 1 (turn bit) + W "
            f"+ max(1, k), W = the decision bits of the output's concentrator shape "
            f"({w_bits}), k = its stages (node_outputs says which shape); every later "
            f"bit spends max(1, k) bit-times in the node. A destination raises recv_ack "
            f"in the clock its M bit arrives (one clock later delays send_ack by one); "
            f"the source sees send_ack A = sum of max(1, k) over the path's nodes later. "
            f"Delivery cycle = the longest path's M arrival + max(payload_bits, A) + 1 = {T} bit-times; bit_time "
            f"counts 0 .. {T - 1} while busy, then stays at {T} until the next start."),
        "concentrator_shapes": shapes,
        "node_outputs": node_outputs,
        "fields": {
            "concentrator_shapes": "every distinct concentrator (inputs -> outputs): "
                "stage output sizes, decision bits per stage and in all (0 on-line), "
                "guarantee = any that many inputs reach distinct outputs",
            "node_outputs": "per node (heap order): the index in concentrator_shapes of "
                "the concentrator on its U, L and R output, and the Verilog module",
            "effective_capacities": "per level (root first), the fewest messages a "
                "channel of that level is guaranteed to carry: min(capacity, guarantee "
                "of the concentrator feeding it); off-line schedules use these",
            "bit_time": "the controller's bit_time output: its width, and the value it "
                "saturates at (the cycle length)",
        },
        "ports": ports,
        "harness": {"top": f"{top}_harness", "sources": [f"{top}.v", f"{top}_harness.v"],
                    "packed": [{"port": p, "first_bit": b, "width": w}
                               for p, b, w in endpoint_layout(dut)]},
    }


def network_verilog(net, top: str = "fattree", timings: dict | None = None):
    """The network as Verilog text, each distinct node and stage module once.

    Returns ``(text, dut, library)``: the top component (with node stand-ins) and the
    library of the modules emitted. ``timings``, if given, receives the seconds spent
    on the top's RTLIL (``top_rtlil``), the distinct modules' RTLIL (``modules_rtlil``)
    and Yosys writing the Verilog (``yosys``).
    """
    timings = {} if timings is None else timings
    t0 = time.perf_counter()
    library = ModuleLibrary(prefix=top)
    dut = FatTreeNetworkHW(net, library=library)
    text = rtlil.convert(dut, name=top, emit_src=False)
    t1 = time.perf_counter()
    # small networks convert in-process; larger ones in forked workers (one per CPU)
    text = "\n".join([text, library.rtlil(jobs=1 if net.n < 128 else None)])
    t2 = time.perf_counter()
    verilog_text = rtlil_to_verilog(text)
    t3 = time.perf_counter()
    timings.update(top_rtlil=round(t1 - t0, 3), modules_rtlil=round(t2 - t1, 3),
                   yosys=round(t3 - t2, 3))
    return verilog_text, dut, library


def generate(net, out_dir, top: str = "fattree", harness: bool = True) -> dict:
    """Write ``<top>.v`` (and ``<top>_harness.v``), ``lint.vlt`` and ``<top>.json``.

    ``<top>_harness.v`` holds only the harness, which instantiates module ``<top>``:
    simulate it with both files (the manifest's ``harness.sources``). Returns the
    manifest, with the files written and the generation time.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    files = []
    timings = {}
    text, dut, library = network_verilog(net, top, timings)
    (out / f"{top}.v").write_text(TIMESCALE + text)
    files.append(f"{top}.v")
    if harness:
        stand_in = ModuleInstance(dut.signature, top)
        h = rtlil.convert(PackedHarness(net, core=stand_in), name=f"{top}_harness",
                          emit_src=False)
        (out / f"{top}_harness.v").write_text(TIMESCALE + rtlil_to_verilog(h))
        files.append(f"{top}_harness.v")
    (out / "lint.vlt").write_text(LINT_WAIVERS)
    files.append("lint.vlt")
    doc = manifest(net, top, dut, library.modules)
    doc["modules"] = [name for name, _ in library.modules]
    doc["files"] = files
    doc["generation_seconds"] = round(time.perf_counter() - t0, 3)
    doc["generation_phases"] = timings
    (out / f"{top}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return doc
