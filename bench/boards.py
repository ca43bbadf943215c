"""The largest network each board holds: a search over sizes with ``fatnet board``.

For every board with a bitstream flow here (iCE40, ECP5) and every family, the network
grows one size at a time (the butterfly's inputs, the fat-tree's leaves, the
hypercube's dimension) and each size is built to the bitstream by ``fatnet board
--bitstream``, as a user would, at the board's clock (``--clock``, default the
oscillator). A size *fits* when the build succeeds: it is placed, routed and meets the
clock (nextpnr refuses a design that does not). The search stops at the first size that
does not fit. Printed per size: the device's utilisation (logic cells or LUTs,
flip-flops where the device counts them apart, block RAMs), nextpnr's Fmax of the
routed design and the build time; per board and family the largest size that fits.

Then the largest size's clock: the PLL's fastest frequency at or below the Fmax
nextpnr measured (:func:`pll_at_most`), built again at it (``--clock``); each build
places differently, so the next clock follows the Fmax each build measured: after a
build that closes, the PLL's fastest frequency under its Fmax if that is faster; after
one that does not, the fastest under its Fmax; up to :data:`CLOCK_TRIES` builds
(:func:`best_clock`; ``--no-best-clock`` skips the step).

    python bench/boards.py [--boards icebreaker ulx3s] [--kinds butterfly ...]
                           [--json FILE] [--record] [--from-record]
                           [--first-size N] [--last-size N] [--no-best-clock]
                           [--clock MHZ] [--synth-opts OPTS] [--nextpnr-opts OPTS]
    python bench/boards.py --ship

``--record`` keeps the largest size per board and kind in :data:`RECORD`; ``--ship``
copies that record, with its provenance, into the package's shipped data, which
``fatnet board`` quotes when a network does not fit.

``--first-size N`` starts a search at size N instead of the smallest (on a large device
the small sizes each cost a long build and tell nothing): the sizes below it are not
built, and taken to fit, since a smaller network of the same kind needs fewer of every
resource.

Each build is its own ``fatnet board`` process, so a failure is the command's own
one-line error, which the table shows.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from fatnet.cli.family import bench_families
from fatnet.hdl.board import BOARD_SIZES, BOARDS, LOGIC_CELLS, TOOL_OPTIONS, tool_opts_of
from fatnet.hdl.pll import PLLS
from fatnet.hdl.tools import nextpnr_fmax, nextpnr_utilisation

__all__ = ["BENCH", "LADDERS", "option_arguments", "device_use", "CLOCK_TRIES", "RECORD",
           "size_options", "build_row", "search", "pll_at_most", "best_clock", "record",
           "ship", "main"]

#: The size search's record (``--record``): per board and kind, the largest size that
#: fitted and met the clock. ``--ship`` copies it into the package's shipped data
#: (:data:`fatnet.hdl.board.BOARD_SIZES`), which ``fatnet board`` quotes.
RECORD = Path(__file__).resolve().parent / "results" / "raw" / "board_sizes.json"
#: The command that fills :data:`RECORD`, as the shipped data names it.
RECORD_COMMAND = "python bench/boards.py --boards B --record"
#: The command that ships it.
SHIP_COMMAND = "python bench/boards.py --ship"

#: Builds the best-clock step makes at most for one network.
CLOCK_TRIES = 3

#: Per kind, the benchmarks' record of its family
#: (:class:`fatnet.cli.family.BenchCommands`): the sizes tried, smallest first (each up
#: to a size that does not fit on the largest board, the ULX3S's ECP5-85F), and the
#: options of each size.
BENCH = bench_families()
#: Per kind, the sizes tried, smallest first.
LADDERS = {kind: bench.ladder for kind, bench in BENCH.items()}


def option_arguments(options: dict) -> list[str]:
    """The command line of plain parameters (:func:`fatnet.api.network`'s):
    ``{"root_capacity": 7}`` is ``--root-capacity 7``."""
    return [arg for name, value in options.items()
            for arg in (f"--{name.replace('_', '-')}", str(value))]


def size_options(kind: str, size: int) -> list[str]:
    """``fatnet board``'s network options of one size (the family's
    :attr:`~fatnet.cli.family.Bench.options`: e.g. the smallest payload the self-testing
    top accepts)."""
    return option_arguments(BENCH[kind].options(size))


#: Per device family: nextpnr's names of logic, flip-flops and block RAM.
RESOURCES = {**dict.fromkeys(LOGIC_CELLS, "logic"), "TRELLIS_FF": "ff", "DFF": "ff",
             "ICESTORM_RAM": "bram", "DP16KD": "bram", "BSRAM": "bram"}
#: How the record names them.
RESOURCE_NAMES = {"logic": "logic cells", "ff": "flip-flops", "bram": "block RAMs"}


def device_use(log: str) -> dict[str, tuple[int, int]]:
    """nextpnr's utilisation in ``log`` by the record's resource names
    (:data:`RESOURCES`): ``{"logic": (used, available), ...}``."""
    return {RESOURCES[name]: counts for name, counts in nextpnr_utilisation(log).items()
            if name in RESOURCES}


def _tool_arguments(tool_opts: dict[str, str]) -> list[str]:
    """``fatnet board``'s arguments for ``tool_opts`` (keyed by the names of
    :data:`~fatnet.hdl.board.TOOL_OPTIONS`), each joined by '=' (the value starts with
    '-', which argparse would take for an option)."""
    return [f"--{name.replace('_', '-')}={tool_opts[name]}" for name in TOOL_OPTIONS
            if tool_opts.get(name) is not None]


def build_row(board: str, kind: str, size: int, workdir: Path,
              clock: float | None = None, timeout: int = 7200,
              tool_opts: dict[str, str] | None = None) -> dict:
    """Build one size with ``fatnet board --bitstream`` (with ``tool_opts``, e.g.
    ``{"nextpnr_opts": "--router router2"}`` for ``--nextpnr-opts``, if given); its
    utilisation, Fmax, time and whether it fits (the build succeeded)."""
    # a directory of its own per build (a failed build writes nothing: fatnet board's
    # outputs are all-or-nothing, so nothing of an earlier build may be left to read)
    out = workdir / (f"{board}-{kind}-{size}" + (f"-{clock:g}MHz" if clock else ""))
    cmd = [sys.executable, "-m", "fatnet.cli", "board", kind, *size_options(kind, size),
           "--board", board, "-o", str(out), "--bitstream",
           # the search measures what fits: the estimate may not stop it, and it
           # needs no prediction
           "--no-fit-check", "--predict", "0"]
    if clock is not None:
        cmd += ["--clock", f"{clock:g}"]
    cmd += _tool_arguments(tool_opts or {})
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, err = p.returncode, p.stderr.strip().splitlines()
    except subprocess.TimeoutExpired:
        code, err = None, [f"no result within {timeout} s"]
    row = {"board": board, "kind": kind, "size": size,
           "command": "fatnet board " + shlex.join(cmd[4:]).replace(str(out), "DIR"),
           "fits": code == 0, "seconds": round(time.perf_counter() - t0),
           "error": None if code == 0 else (err[-1] if err else f"exit {code}")}
    if clock is not None:
        row["clock_mhz"] = clock
    row.update(tool_opts_of(tool_opts or {}))
    tim = out / "bist_top.tim"
    text = tim.read_text() if tim.exists() else ""
    for resource, (used, avail) in device_use(text).items():
        row[resource] = used
        row[f"{resource}_available"] = avail
    fmax = nextpnr_fmax(text)
    if fmax is None and row["error"]:   # a clock not met: the error line names the Fmax
        unmet = re.findall(r"the clock is not met: Fmax ([\d.]+) MHz", row["error"])
        fmax = float(unmet[-1]) if unmet else None
    row["fmax_mhz"] = fmax
    return row


def _clock_of(r: dict) -> float:
    """The clock a row was built at (``--clock``, else the board's oscillator)."""
    return r.get("clock_mhz") or BOARDS[r["board"]].clock_mhz


def _largest_fastest(rows: list[dict]) -> dict | None:
    """Of one board's and kind's builds, the largest size that fitted, at the fastest
    clock it closed at (None if none fitted)."""
    return max((r for r in rows if r["fits"]), key=lambda r: (r["size"], _clock_of(r)),
               default=None)


def _line(r: dict) -> str:
    use = ", ".join(f"{r[k]}/{r[k + '_available']} {k}" for k in ("logic", "ff", "bram")
                    if k in r)
    state = "fits" if r["fits"] else f"does not fit: {r['error']}"
    return (f"{r['board']:>10} {r['kind']:>9} {r['size']:>4} at {_clock_of(r):g} MHz: "
            f"{state}; {use or '-'}; Fmax {r['fmax_mhz'] or '-'} MHz; {r['seconds']} s")


def _print_row(row: dict) -> None:
    print(_line(row), flush=True)


def search(board: str, kind: str, workdir: Path, clock: float | None = None,
           timeout: int = 7200, first: int | None = None, report=_print_row,
           last: int | None = None,
           tool_opts: dict[str, str] | None = None) -> list[dict]:
    """Sizes of ``kind`` on ``board`` from the smallest (or ``first``) until one does
    not fit or ``last`` is built; ``report`` is called with each row as it is measured."""
    rows = []
    for size in LADDERS[kind]:
        if (first is not None and size < first) or (last is not None and size > last):
            continue
        rows.append(build_row(board, kind, size, workdir, clock, timeout, tool_opts))
        report(rows[-1])
        if not rows[-1]["fits"]:
            break
    return rows


def pll_at_most(board: str, ceiling_mhz: float) -> float | None:
    """The fastest clock ``board`` makes at or below ``ceiling_mhz``: its PLL's fastest
    frequency there or the oscillator's own, whichever is faster; None if neither is."""
    spec = BOARDS[board]
    made = [PLLS[spec.pll].fastest_at_most(spec.clock_mhz, ceiling_mhz),
            spec.clock_mhz if spec.clock_mhz <= ceiling_mhz else None]
    return max((f for f in made if f is not None), default=None)


def best_clock(row: dict, workdir: Path, timeout: int = 7200,
               report=_print_row) -> list[dict]:
    """The largest size's build (``row``, which fits) again at the PLL's fastest clock
    at or below its Fmax, with the row's tools' options, until a try finds nothing
    faster to build or :data:`CLOCK_TRIES` builds are made: the rows of those builds
    (each with its ``clock_mhz``); ``report`` is called with each as it is measured.

    Each build places differently, so each one's Fmax sets the next clock: a build that
    closes is followed by the PLL's fastest clock under the Fmax it measured, if that
    is faster (the Fmax of a placement made for a slower clock understates what a
    placement for a faster one reaches); a build that does not close, by the fastest
    under the Fmax it measured (under its clock if it measured none). A clock is never
    built twice, and never at or below one that closed or at or above one that missed."""
    rows, fmax = [], row["fmax_mhz"]
    closed = _clock_of(row)              # the fastest clock known to close
    missed = float("inf")                # the slowest clock known to miss
    tried = {BOARDS[row["board"]].clock_mhz, closed}
    for _ in range(CLOCK_TRIES):
        clock = pll_at_most(row["board"], min(fmax, missed * (1 - 1e-3))) if fmax else None
        if clock is None or clock in tried or clock <= closed:
            break
        tried.add(clock)
        rows.append(build_row(row["board"], row["kind"], row["size"], workdir, clock,
                              timeout, tool_opts_of(row)))
        report(rows[-1])
        if rows[-1]["fits"]:
            closed, fmax = clock, rows[-1]["fmax_mhz"]
        else:
            # a build that measured no Fmax (no legal placement: timing-driven placement
            # can need more cells at a faster clock) is followed by the fastest clock
            # under the one it tried
            missed = clock
            fmax = min(fmax, rows[-1]["fmax_mhz"] or clock) * (1 - 1e-3)
    return rows


def main(argv=None) -> None:
    built = sorted(b for b, spec in BOARDS.items() if spec.bitstream is not None)
    ap = argparse.ArgumentParser(prog="python bench/boards.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--boards", nargs="+", choices=built, default=built,
                    help=f"boards (default {' '.join(built)})")
    ap.add_argument("--kinds", nargs="+", choices=sorted(LADDERS), default=sorted(LADDERS),
                    help="families (default all)")
    ap.add_argument("--clock", type=float, default=None, metavar="MHZ",
                    help="fatnet board --clock (default: each board's oscillator)")
    ap.add_argument("--synth-opts", default=None, metavar="OPTS",
                    help="fatnet board --synth-opts for every build (e.g. "
                         "'-dffe_min_ce_use 4' for the iCEBreaker's 16-input butterfly)")
    ap.add_argument("--nextpnr-opts", default=None, metavar="OPTS",
                    help="fatnet board --nextpnr-opts for every build (e.g. '--router "
                         "router2' for the ULX3S's largest sizes)")
    ap.add_argument("--timeout", type=int, default=7200,
                    help="seconds per build (default 7200)")
    ap.add_argument("--from-record", action="store_true",
                    help="start each search at the size bench/results/raw/board_sizes.json "
                         "records for the board and kind (it and the next size are built "
                         "again)")
    ap.add_argument("--first-size", type=int, default=None, metavar="N",
                    help="start each search at size N (one of the kind's sizes: "
                         + "; ".join(f"{kind} {', '.join(map(str, ladder))}"
                                     for kind, ladder in LADDERS.items())
                         + "): smaller sizes are not built")
    ap.add_argument("--last-size", type=int, default=None, metavar="N",
                    help="stop each search at size N (one of the kind's sizes), for "
                         "a larger size an earlier run measured not to fit: the sizes "
                         "above N are not built")
    ap.add_argument("--no-best-clock", dest="best_clock", action="store_false",
                    help="skip building the largest size again at the PLL's fastest "
                         "clock under its Fmax")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--record", action="store_true",
                    help="record the largest size that fits per board and kind in "
                         "bench/results/raw/board_sizes.json")
    ap.add_argument("--ship", action="store_true",
                    help="build nothing: copy bench/results/raw/board_sizes.json, with its "
                         "provenance, into the package's hdl/board_sizes.json (fatnet "
                         "board's error for a network that does not fit quotes it)")
    args = ap.parse_args(argv)
    if args.ship:
        ship()
        print(f"shipped {RECORD} as {BOARD_SIZES}")
        return
    for option, size in (("--first-size", args.first_size), ("--last-size", args.last_size)):
        for kind in args.kinds if size is not None else ():
            if size not in LADDERS[kind]:
                ap.error(f"{option} must be one of {kind}'s sizes "
                         f"{', '.join(map(str, LADDERS[kind]))}, not {size}")
    if args.first_size is not None and args.from_record:
        ap.error("--first-size and --from-record both set where a search starts: "
                 "give one")
    if None not in (args.first_size, args.last_size) and args.last_size < args.first_size:
        ap.error(f"--last-size must be at least --first-size ({args.first_size}), "
                 f"not {args.last_size}")
    print("The largest network per board (python bench/boards.py): fatnet "
          "board --bitstream per size until one does not fit or meet the clock",
          flush=True)
    rows = []
    recorded = json.loads(RECORD.read_text()) if RECORD.exists() else {}

    def keep(row: dict) -> None:
        """Print a row and write the JSON and the record at once, so that a search
        stopped midway (each build of a large device takes many minutes) keeps what it
        measured."""
        _print_row(row)
        rows.append(row)
        if args.json:
            Path(args.json).write_text(json.dumps({"boards": rows}, indent=2))
        if args.record:
            record(rows)

    with tempfile.TemporaryDirectory(prefix="fatnet-bench-boards-") as tmp:
        for board in args.boards:
            for kind in args.kinds:
                first = (recorded.get(board, {}).get(kind, {}).get("size")
                         if args.from_record else args.first_size)
                found = search(board, kind, Path(tmp), args.clock, args.timeout, first,
                               keep, args.last_size, tool_opts_of(vars(args)))
                fit = [r for r in found if r["fits"]]
                if fit and args.best_clock:
                    found += best_clock(fit[-1], Path(tmp), args.timeout, keep)
                if not found:         # --from-record's size above --last-size
                    print(f"{board} {kind}: nothing built: the search starts at size "
                          f"{first}, above --last-size {args.last_size}", flush=True)
                    continue
                fastest = _largest_fastest(found)
                print(f"{board} {kind}: the largest that fits is "
                      + (f"size {fastest['size']}, at {_clock_of(fastest):g} MHz"
                         if fastest else "none (the first size built does not fit)"),
                      flush=True)


def record(rows: list[dict], path: Path | None = None) -> None:
    """Add the largest size that fitted per board and kind to ``path`` (default
    :data:`RECORD`; the searches of other boards and kinds already there are kept)."""
    path = RECORD if path is None else path
    found = json.loads(path.read_text()) if path.exists() else {}
    for r in rows:
        best = _largest_fastest([x for x in rows if x["board"] == r["board"]
                                 and x["kind"] == r["kind"]])
        if best is None:
            continue
        use = ", ".join(f"{best[k]}/{best[k + '_available']} {RESOURCE_NAMES[k]}"
                        for k in ("logic", "ff", "bram") if k in best)
        extra = (f" --clock {best['clock_mhz']:g}" if best.get("clock_mhz") else "")
        extra += "".join(" " + shlex.quote(a) for a in _tool_arguments(tool_opts_of(best)))
        found.setdefault(r["board"], {})[r["kind"]] = {
            "size": best["size"], "clock_mhz": _clock_of(best),
            "options": " ".join(size_options(r["kind"], best["size"])) + extra,
            "use": use + (f", Fmax {best['fmax_mhz']} MHz" if best["fmax_mhz"] else "")}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")


def ship(record_path: Path | None = None, shipped: Path | None = None,
         date: datetime.date | None = None) -> None:
    """Copy the size search's record (``record_path``, default :data:`RECORD`) into the
    package's shipped data (``shipped``, default
    :data:`~fatnet.hdl.board.BOARD_SIZES`), with its provenance: the commands that
    measured and shipped it and the day (``date``, default today)."""
    record_path = RECORD if record_path is None else record_path
    shipped = BOARD_SIZES if shipped is None else shipped
    date = datetime.date.today() if date is None else date
    doc = {"provenance": {"measured_by": RECORD_COMMAND, "shipped_by": SHIP_COMMAND,
                          "record": "bench/results/raw/board_sizes.json",
                          "date": date.isoformat()},
           "sizes": json.loads(record_path.read_text())}
    shipped.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
