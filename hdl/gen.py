"""Verilog generation: the fat-tree (and its test harness) as Verilog plus a manifest."""

from __future__ import annotations

import json
import time
from pathlib import Path

from amaranth.back import verilog

from .fattree import FatTreeNetworkHW
from .harness import PackedHarness

__all__ = ["generate", "manifest"]

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
// Submodules are named after their place in the hierarchy (fattree.node_3 ...), not
// after the file.
lint_off -rule DECLFILENAME
"""


def manifest(net, top: str) -> dict:
    caps = net.spec.capacities
    T = net.cycle_length
    ports = [
        {"name": "clk", "width": 1, "dir": "in", "meaning": "bit clock"},
        {"name": "rst", "width": 1, "dir": "in", "meaning": "synchronous reset"},
        {"name": "start", "width": 1, "dir": "in",
         "meaning": "strobe: the next clock cycle is bit-time 0 of a delivery cycle"},
        {"name": "bit_time", "width": max(1, T.bit_length()), "dir": "out",
         "meaning": f"bit-time in the delivery cycle (saturates at {T})"},
        {"name": "busy", "width": 1, "dir": "out", "meaning": "delivery cycle in progress"},
    ]
    for i in range(net.n):
        w = caps[-1]
        ports += [
            {"name": f"leaf__{i}__send", "width": w, "dir": "in",
             "meaning": f"processor {i} sends: one bit-serial message per wire"},
            {"name": f"leaf__{i}__send_ack", "width": w, "dir": "out",
             "meaning": f"acknowledgment of processor {i}'s messages, per wire"},
            {"name": f"leaf__{i}__recv", "width": w, "dir": "out",
             "meaning": f"messages delivered to processor {i}: M bit then payload"},
            {"name": f"leaf__{i}__recv_ack", "width": w, "dir": "in",
             "meaning": f"processor {i} acknowledges: 1 from the M bit on"},
        ]
    ports += [
        {"name": "ext__send", "width": caps[0], "dir": "in",
         "meaning": "external interface sends into the root"},
        {"name": "ext__send_ack", "width": caps[0], "dir": "out",
         "meaning": "acknowledgment of the external interface's messages"},
        {"name": "ext__recv", "width": caps[0], "dir": "out",
         "meaning": "messages leaving the root to the external interface"},
        {"name": "ext__recv_ack", "width": caps[0], "dir": "in",
         "meaning": "the external interface acknowledges"},
    ]
    return {
        "top": top,
        "spec": net.spec.to_dict(),
        "capacities": list(caps),
        "effective_capacities": [int(net.effective_cap[:, (1 << k) - 1].min())
                                 for k in range(net.L + 1)],
        "cycle_length_bits": T,
        "timing": "see README 'Timing': M at bit-time 0; per node 1 + decision bits + "
                  "max(1, stages) for M, max(1, stages) for every later bit; "
                  "acknowledgment max(1, stages) per node back",
        "concentrator_shapes": [
            {"inputs": r, "outputs": s, "stages": [st.outputs for st in c.stages],
             "decision_width": c.decision_width, "guarantee": c.guarantee}
            for (r, s), c in sorted(net.shapes.items())],
        "ports": ports,
        "harness": {"top": f"{top}_harness",
                    "packed": [{"port": p, "first_bit": b, "width": w}
                               for p, b, w in net.port_layout()]},
    }


def generate(net, out_dir, top: str = "fattree", harness: bool = True) -> dict:
    """Write ``<top>.v`` (and ``<top>_harness.v``) and ``<top>.json`` into ``out_dir``.

    Returns the manifest, with the files written and the generation time.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    files = []
    dut = FatTreeNetworkHW(net)
    text = verilog.convert(dut, name=top, emit_src=False)
    (out / f"{top}.v").write_text(TIMESCALE + text)
    files.append(f"{top}.v")
    if harness:
        text = verilog.convert(PackedHarness(net), name=f"{top}_harness", emit_src=False)
        (out / f"{top}_harness.v").write_text(TIMESCALE + text)
        files.append(f"{top}_harness.v")
    (out / "lint.vlt").write_text(LINT_WAIVERS)
    files.append("lint.vlt")
    doc = manifest(net, top)
    doc["files"] = files
    doc["generation_seconds"] = round(time.perf_counter() - t0, 3)
    (out / f"{top}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return doc
