"""Render the figure tables of README.md, docs/figures.md, docs/boards.md and
docs/cosim.md from ``bench/results/``.

Every figure the docs quote in a table is a recorded result: a JSON file per benchmark
in ``bench/results/`` holds, per entry, the figure's values, the command that produced
them, the date and a note on the machine. This script writes the tables between marker
comments (``<!-- figures:NAME -->`` ... ``<!-- /figures:NAME -->``) from those files, so
a table cannot drift from its results by a hand edit: ``tests/test_figures.py`` fails
when a checked-in table differs from what this script renders. The raw records a
benchmark keeps for itself (the size search's, ``bench/results/raw/board_sizes.json``)
are in ``bench/results/raw/``, which this script does not read.

Usage (from the repository root)::

    python bench/figures.py             # rewrite the tables (make figures)
    python bench/figures.py --check     # exit 1 naming every stale table
    python bench/figures.py record boards icebreaker-butterfly-8 \\
        --value lc=2591 --value fmax_mhz=40.0 --command 'fatnet board ...'

``record`` updates (or adds) one entry with today's date; then ``make figures``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DEFAULT_MACHINE = "2-core development machine, shared with other jobs"

#: The README's headline table: (results file, entry, what the Measured cell says).
#: The cell is the template filled with the entry's values; the What cell is the
#: entry's ``figure`` and the Command cell its ``command``.
HEADLINE = (
    ("regression", "fresh-clone", "{result}"),
    ("schedule", "offline-36", "`greedy` and `best` reach d = ceil(lambda) in "
     "{reached}/{cases}; Theorem 1: mean d/ceil(lambda) {theorem1_mean_ratio:.3f}"),
    ("gen", "fattree-1024", "{wall_s} s wall; {verilog_kib:,} KiB of Verilog + "
     "{harness_kib:,} KiB harness"),
    ("gen", "multibutterfly-1024", "{wall_s} s wall; {verilog_kib:,} KiB of Verilog + "
     "{harness_kib:,} KiB harness"),
    ("hardware", "fattree-node-58", "{node_fmax_mhz} MHz; 16-leaf network "
     "{network16_fmax_mhz} MHz"),
    ("hardware", "butterfly-switch-2x2", "{lut4} iCE40 LUT4 / {ff} FF"),
    ("cosim", "speed", "{fattree64}x (64-leaf fat-tree), {butterfly64}x (64-input "
     "butterfly), {hypercube6}x (6-cube) a native loop's clocks per CPU second"),
    ("experiments", "leighton-maggs", "Tables II and III within one of the paper's "
     "standard deviations in every cell; Table I within {table1_points} points but at "
     "{table1_outlier_faults:,} faults ({table1_outlier_pct} % against "
     "{table1_outlier_paper_pct} %)"),
    ("experiments", "acceptance-64", "acceptance {measured} (exact recursion "
     "{recursion:.3f}; Patel's delta network {patel})"),
    ("cosim", "hc-permutations", "{permutations:,} permutations, RTL equal to the model "
     "on every wire ({clocks:,} clocks, {wall_s} s)"),
    ("cosim", "hc-compare", "at k = {k}, transpose: Algorithm 2 {alg2} bit-times, "
     "e-cube {ecube_b1} (B = 1) and {ecube_b4} (B = 4), Valiant {valiant}"),
    ("boards", "icebreaker-butterfly-8", "{cells:,} of {capacity:,} LC, Fmax "
     "{fmax_mhz:.2f} MHz (runs at {clock_mhz} MHz)"),
    ("boards", "ulx3s-butterfly-8-50mhz", "{cells:,} LUT4, Fmax {fmax_mhz:.2f} MHz "
     "(runs at {clock_mhz} MHz)"),
    ("link_scaling", "ratio-256-16", "fat-tree {fattree_ratio:.3f} (one link stage; the "
     "same command with `--kinds fat-tree --link-stages 1`, no `--tie-low`), "
     "butterfly {butterfly_ratio:.3f} (three link stages); goal {goal}"),
    ("largest", "per-board", "iCEBreaker: {icebreaker}; Tang Nano 9K: {tang_nano_9k}; "
     "ULX3S: {ulx3s}"),
    ("soak", "million", "{butterfly:,} (butterfly, {butterfly_wall_s} s wall, "
     "{butterfly_cpu_s} s CPU), {fattree:,} (fat-tree, {fattree_wall_s} s wall, "
     "{fattree_cpu_s} s CPU), {hypercube:,} (hypercube, {hypercube_wall_s} s wall, "
     "{hypercube_cpu_s} s CPU) messages, every wire equal to the model; goal 120 s wall"),
    ("soak", "hundred-million", "{butterfly:,} (butterfly, {butterfly_wall_s:,} s wall, "
     "{butterfly_peak_rss_mb} MB), {fattree:,} (fat-tree, {fattree_wall_s:,} s wall, "
     "{fattree_peak_rss_mb} MB), {hypercube:,} (hypercube, {hypercube_wall_s:,} s wall, "
     "{hypercube_peak_rss_mb} MB resident at most) messages, every wire equal to the "
     "model"),
    ("experiments", "kuszmaul-alg2", "{formula} bit-times ({at_k10:,} at k = 10); "
     "fewer than e-cube's cut-through on transpose and bit-reversal from k = {wins_from_k}"),
)

#: docs/figures.md's table of the self-testing tops (results file, entries).
BOARD_TOPS = ("boards", ("icebreaker-butterfly-8", "ulx3s-butterfly-8-50mhz",
                         "icebreaker-butterfly-8-31.5mhz", "tang-nano-9k-butterfly-8-33.75mhz"))


def load_results(folder: Path = RESULTS) -> dict[str, dict]:
    """Every results file of ``folder``, by its name without ``.json``."""
    return {path.stem: json.loads(path.read_text(encoding="utf-8"))
            for path in sorted(folder.glob("*.json"))}


def cell(text: str) -> str:
    """``text`` as one Markdown table cell (a ``|`` would end the cell)."""
    return str(text).replace("|", "\\|")


def row(cells) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def table(header, rows) -> str:
    """A Markdown table: the header, its rule, the rows."""
    lines = [row(header), "|" + "---|" * len(header)] + [row(r) for r in rows]
    return "\n".join(lines)


def entry(results: dict, file: str, key: str) -> dict:
    """One entry of one results file, with an error naming both when it is not there."""
    try:
        return results[file]["entries"][key]
    except KeyError:
        raise KeyError(f"bench/results/{file}.json has no entry {key!r}") from None


def measured(results: dict, file: str, key: str, template: str) -> str:
    """``template`` filled with the entry's values."""
    return template.format(**entry(results, file, key)["values"])


def command_cell(command: str) -> str:
    """The command in code quotes."""
    return f"`{command}`"


def headline_table(results: dict) -> str:
    """The README's headline table."""
    rows = []
    for file, key, template in HEADLINE:
        found = entry(results, file, key)
        rows.append((found["figure"], measured(results, file, key, template),
                     command_cell(found["command"])))
    return table(("What", "Measured", "Command"), rows)


def board_tops_table(results: dict) -> str:
    """The self-testing tops of the 8-input butterfly, one row per board and clock."""
    file, keys = BOARD_TOPS
    rows = []
    for key in keys:
        found = entry(results, file, key)
        v = found["values"]
        rows.append((v["board"], f"{v['clock_mhz']} MHz", f"{v['cells']:,} of "
                     f"{v['capacity']:,} {v['cell_kind']}", f"{v['fmax_mhz']:.2f} MHz",
                     command_cell(found["command"]), found["date"]))
    return table(("Board", "Clock", "Cells", "Fmax", "Command", "Date"), rows)


def board_builds_table(results: dict) -> str:
    """docs/boards.md's table of every self-testing top of ``bench/board_tops.py``: its
    options, the defaults the family chose, the clock (the PLL's setting), the use of
    the device, nextpnr's Fmax and the build's time."""
    rows = []
    for found in results["boards"]["entries"].values():
        v = found["values"]
        clock = f"{v['clock_mhz']:g} MHz" + (f" ({v['pll']})" if v.get("pll") else "")
        cells = f"{v['cells']:,} / {v['capacity']:,} {v['cell_kind']} " \
                f"({v['cells'] / v['capacity']:.0%})"
        rows.append((v["board"], command_cell(f"{v['kind']} {v['options']}"),
                     command_cell(v["defaults"]) if v.get("defaults") else "-", clock,
                     cells, f"{v['fmax_mhz']:.2f} MHz", f"{v['seconds']} s",
                     found["date"]))
    return table(("Board", "Kind and options", "Board defaults", "Clock", "Logic", "Fmax",
                  "Time", "Date"), rows)


def bist_speed_table(results: dict) -> str:
    """docs/boards.md's table of the self-test prediction's speed on the iCEBreaker's
    plans, one row per recorded case of ``bench/bist_predict_speed.py``."""
    rows = []
    for found in results.get("bist_predict_speed", {"entries": {}})["entries"].values():
        v = found["values"]
        rows.append((command_cell(v["options"]), v["traffic"], f"{v['batched']:,}",
                     f"{v['scalar']:,}", f"{v['ratio']}x", f"{v['board']:,}",
                     f"{v['model_s_per_board_s']}", _table_cell(v), found["date"]))
    return table(("`fatnet board` options (`--board icebreaker`)", "Traffic",
                  "Batched: cycles/s", "Scalar: cycles/s", "Batched / scalar",
                  "Board: cycles/s", "Model s per board s",
                  "Outcome table: patterns, up front s, lazy s", "Date"), rows)


#: docs/boards.md's table of the self-test's logic per component: (column, the key of
#: its values in bist_area.json's entries, what it is divided by for the per-terminal
#: or per-wire figure, or None).
BIST_AREA_COLUMNS = (("Network", "network", None), ("Generators (per terminal)",
                                                    "generators", "terminals"),
                     ("Checkers (per recv wire)", "checkers", "wires"),
                     ("Counting", "counting", None), ("Report", "report", None),
                     ("UART", "uart", None), ("Top", "top", None))


def _lut_ff(values: dict, key: str, per: str | None) -> str:
    """One component's cell in :func:`bist_area_table`: ``LUT, FF`` (block RAMs where
    it has any; per terminal or wire where ``per`` names the divisor)."""
    lut, ff = values.get(f"{key}_lut", 0), values.get(f"{key}_ff", 0)
    text = f"{lut:,}, {ff:,}"
    if values.get(f"{key}_ram"):
        text += f", {values[f'{key}_ram']} RAM"
    if per and values.get(per):
        text += f" ({lut / values[per]:.1f}, {ff / values[per]:.1f})"
    return text


def bist_area_table(results: dict) -> str:
    """docs/boards.md's table of the self-test's LUTs and flip-flops per kind of
    component, one row per recorded case of ``bench/bist_area.py``."""
    rows = []
    for found in results.get("bist_area", {"entries": {}})["entries"].values():
        v = found["values"]
        share = f" ({v['self_test_lut'] / v['capacity']:.0%})" if v.get("capacity") else ""
        rows.append((v["board"], command_cell(f"{v['kind']} {v['options']}"),
                     *(_lut_ff(v, key, per) for _, key, per in BIST_AREA_COLUMNS),
                     f"{v['self_test_lut']:,}, {v['self_test_ff']:,}{share}",
                     command_cell(found["command"]), found["date"]))
    return table(("Board", "Kind and size", *(c for c, _, _ in BIST_AREA_COLUMNS),
                  "Self-test", "Command", "Date"), rows)


def _fmax_cell(mhz: float, path: str | None) -> str:
    """An Fmax and its critical path, for :func:`board_clock_table`."""
    return f"{mhz:.2f} MHz" + (f" (`{path}`)" if path else "")


def board_clock_table(results: dict) -> str:
    """docs/boards.md's table of the network's and the self-test's logic and the board's
    Fmax against the network alone's, one row per recorded case of
    ``bench/board_clock.py``."""
    rows = []
    for found in results.get("board_clock", {"entries": {}})["entries"].values():
        v = found["values"]
        def share(luts, v=v):
            return f" ({luts / v['capacity']:.0%})" if v.get("capacity") else ""
        rows.append((v["board"], command_cell(f"{v['kind']} {v['options']}"),
                     f"{v['network_lut']:,}, {v['network_ff']:,}{share(v['network_lut'])}",
                     f"{v['self_test_lut']:,}, {v['self_test_ff']:,}"
                     f"{share(v['self_test_lut'])}",
                     _fmax_cell(v["fmax_mhz"], v["critical_path"]),
                     _fmax_cell(v["network_fmax_mhz"], v["network_critical_path"]),
                     f"{v['ratio']:.2f}", command_cell(found["command"]), found["date"]))
    return table(("Board", "Kind and size", "Network LUT, FF", "Self-test LUT, FF",
                  "Board's Fmax (critical path)", "Network alone's Fmax (critical path)",
                  "Board's / network's", "Command", "Date"), rows)


#: The shipped size-search record (``python bench/boards.py --ship``), which
#: :func:`board_sizes_table` renders: the same data ``fatnet board`` quotes.
BOARD_SIZES = ROOT / "hdl" / "board_sizes.json"

#: Per board and family, the size the largest network is meant to reach: twice the
#: butterfly's inputs and the fat-tree's leaves of the first self-test, and one
#: dimension more of the hypercube (k = 8 on the ULX3S, at a PLL clock).
BOARD_SIZE_GOALS = {("icebreaker", "butterfly"): 32, ("icebreaker", "fat-tree"): 16,
                    ("icebreaker", "hypercube"): 5, ("tang-nano-9k", "butterfly"): 32,
                    ("tang-nano-9k", "fat-tree"): 32, ("tang-nano-9k", "hypercube"): 5,
                    ("ulx3s", "butterfly"): 256, ("ulx3s", "fat-tree"): 128,
                    ("ulx3s", "hypercube"): 8}


#: How :func:`board_sizes_table` names a family's size.
SIZE_NAMES = {"butterfly": "{} inputs", "fat-tree": "{} leaves", "hypercube": "k = {}"}


def board_sizes_table(results: dict, path: Path = BOARD_SIZES) -> str:
    """docs/boards.md's table of the largest network per board and family: the shipped
    record of the size search (``path``; ``results`` is not read), one row per board
    and family, with the size it is meant to reach."""
    shipped = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for board, kinds in shipped["sizes"].items():
        for kind, found in kinds.items():
            goal = BOARD_SIZE_GOALS.get((board, kind))
            name = SIZE_NAMES.get(kind, "{}")
            rows.append((board, kind, name.format(found["size"]),
                         "-" if goal is None else name.format(goal),
                         f"{found['clock_mhz']:g} MHz", found["use"],
                         command_cell(f"fatnet board {kind} {found['options']} --board {board}")))
    return table(("Board", "Family", "Largest that fits", "Meant to reach", "Clock", "Build",
                  "Command"), rows)


#: docs/cosim.md's soak table: (label, the key of its values in soak.json's entry).
SOAK_NETWORKS = (("butterfly, 16 inputs", "butterfly"),
                 ("fat-tree, 16 leaves, off-line", "fattree"),
                 ("4-cube, Algorithm 1", "hypercube"))


def soak_table(results: dict) -> str:
    """docs/cosim.md's table of the 10^8-message soaks, one row per family."""
    found = entry(results, "soak", "hundred-million")
    v = found["values"]
    rows = [(label, f"{v[key]:,}", f"{v[key + '_cycles']:,}", f"{v[key + '_wall_s']:,} s",
             f"{v[key + '_cpu_s']:,} s", f"{v[key + '_peak_rss_mb']} MB")
            for label, key in SOAK_NETWORKS]
    return table(("Network", "Messages", "Delivery cycles", "Wall", "CPU",
                  "Resident at most"), rows)


def _table_cell(values: dict) -> str:
    """The outcome table's cost in :func:`bist_speed_table`: its patterns, CPU seconds
    up front and the first reports' on a table filled lazily (not recorded: a dash)."""
    kind = values.get("table")
    if kind is None:
        return "-"
    if kind == "none":
        return "none"
    up_front = f"{values['build_s']}" if kind == "bulk" else "as met"
    return f"{values['patterns']:,}, {up_front}, {values['lazy_s']}"


def values_text(values: dict) -> str:
    """An entry's values as ``name = value`` pairs."""
    return "; ".join(f"{name} = {value}" for name, value in values.items())


def recorded_table(results: dict) -> str:
    """Every recorded entry: its file, figure, values, command, date and machine."""
    rows = []
    for file, content in results.items():
        for found in content["entries"].values():
            rows.append((f"{file}.json", found["figure"], values_text(found["values"]),
                         command_cell(found["command"]), found["date"], found["machine"]))
    return table(("Results", "Figure", "Values", "Command", "Date", "Machine"), rows)


#: Where each table goes: (file from the repository root, marker name, renderer).
TARGETS = (
    ("README.md", "headline", headline_table),
    ("docs/figures.md", "board-tops", board_tops_table),
    ("docs/figures.md", "recorded", recorded_table),
    ("docs/boards.md", "board-builds", board_builds_table),
    ("docs/boards.md", "bist-speed", bist_speed_table),
    ("docs/boards.md", "bist-area", bist_area_table),
    ("docs/boards.md", "board-clock", board_clock_table),
    ("docs/boards.md", "board-sizes", board_sizes_table),
    ("docs/cosim.md", "soak", soak_table),
)


def markers(name: str) -> tuple[str, str]:
    """The opening and closing marker comments of table ``name``."""
    return f"<!-- figures:{name} -->", f"<!-- /figures:{name} -->"


def replace_block(text: str, name: str, body: str) -> str:
    """``text`` with the block between ``name``'s markers set to ``body``."""
    start, end = markers(name)
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    if len(pattern.findall(text)) != 1:
        raise ValueError(f"expected one {start} ... {end} block")
    return pattern.sub(lambda _: f"{start}\n{body}\n{end}", text)


def rendered_files(results: dict, root: Path = ROOT) -> dict[str, str]:
    """Each target file's text with its tables rendered from ``results``."""
    texts: dict[str, str] = {}
    for path, name, render in TARGETS:
        text = texts.get(path) or (root / path).read_text(encoding="utf-8")
        texts[path] = replace_block(text, name, render(results))
    return texts


def stale_files(results: dict, root: Path = ROOT) -> list[str]:
    """The target files whose checked-in tables differ from the rendered ones."""
    return [path for path, text in rendered_files(results, root).items()
            if (root / path).read_text(encoding="utf-8") != text]


def parse_value(text: str):
    """A ``--value`` right-hand side: an int, else a float, else the string."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def record(args) -> None:
    """``record`` on the command line: :func:`record_entry` of its arguments."""
    values = {}
    for pair in args.value:
        name, _, value = pair.partition("=")
        values[name] = parse_value(value)
    record_entry(args.file, args.entry, values, figure=args.figure, command=args.command,
                 machine=args.machine)


def record_entry(file: str, entry: str, values: dict, *, figure: str | None = None,
                 command: str | None = None, machine: str | None = None) -> None:
    """Set one entry of ``bench/results/<file>.json``: its values (and its figure,
    command, machine where given) with today's date. The benchmarks call it with
    ``--record``."""
    path = RESULTS / f"{file}.json"
    content = (json.loads(path.read_text(encoding="utf-8")) if path.exists()
               else {"benchmark": file, "entries": {}})
    found = content["entries"].setdefault(entry, {"figure": entry, "values": {}})
    found["values"].update(values)
    for field, text in (("figure", figure), ("command", command), ("machine", machine)):
        if text:
            found[field] = text
    found.setdefault("command", "")
    found.setdefault("machine", DEFAULT_MACHINE)
    found["date"] = datetime.date.today().isoformat()
    path.write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def parse_args(argv):
    """The command line: render (the default), ``--check``, or ``record``."""
    parser = argparse.ArgumentParser(prog="bench/figures.py", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming the files whose tables are stale")
    sub = parser.add_subparsers(dest="action")
    rec = sub.add_parser("record", help="set one entry of bench/results/FILE.json")
    rec.add_argument("file", help="the results file's name without .json (e.g. boards)")
    rec.add_argument("entry", help="the entry's key (e.g. icebreaker-butterfly-8)")
    rec.add_argument("--value", action="append", default=[], metavar="NAME=VALUE")
    rec.add_argument("--figure", help="what the figure is, as the tables name it")
    rec.add_argument("--command", help="the command that produced the values")
    rec.add_argument("--machine", help=f"the machine note (default: {DEFAULT_MACHINE!r})")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    """Render the tables, check them, or record one entry; the exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.action == "record":
        record(args)
        return 0
    results = load_results()
    if args.check:
        stale = stale_files(results)
        for path in stale:
            print(f"figures: {path}: tables differ from bench/results/ (run make figures)")
        return 1 if stale else 0
    for path, text in rendered_files(results).items():
        (ROOT / path).write_text(text, encoding="utf-8")
        print(f"figures: wrote the tables of {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
