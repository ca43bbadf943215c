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

    python -m fatnet.hdl.bench_boards [--boards icebreaker ulx3s] [--kinds butterfly ...]
                                      [--json FILE]

Each build is its own ``fatnet board`` process, so a failure is the command's own
one-line error, which the table shows.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..golden.fattree.spec import min_universal_root
from .board import BOARD_SIZES, BOARDS

__all__ = ["LADDERS", "size_options", "build_row", "search", "record", "main"]

#: Per kind: the sizes tried, smallest first (the butterfly's inputs, the fat-tree's
#: leaves, the hypercube's dimension).
LADDERS = {
    "butterfly": (4, 8, 16, 32, 64, 128, 256),
    "fat-tree": (4, 8, 16, 32, 64, 128),
    "hypercube": (2, 3, 4, 5, 6, 7),
}


def _address_bits(terminals: int) -> int:
    return max(1, (terminals - 1).bit_length())


def size_options(kind: str, size: int) -> list[str]:
    """The network options of one size, with the smallest payload the self-testing
    top accepts (source, sequence and check fields: 2n + 4 bits among 2^n terminals; the
    hypercube's message bits 3k + 4)."""
    if kind == "butterfly":
        return ["--inputs", str(size), "--payload-bits", str(2 * _address_bits(size) + 4)]
    if kind == "fat-tree":  # the processors are the terminals (not the external channel)
        return ["--leaves", str(size), "--root-capacity", str(min_universal_root(size)),
                "--mode", "online", "--payload-bits", str(2 * _address_bits(size) + 4)]
    if kind == "hypercube":
        return ["--dimension", str(size), "--message-bits", str(3 * size + 4)]
    raise ValueError(f"kind must be one of {', '.join(LADDERS)}, not {kind!r}")


def _utilisation(tim: str) -> dict:
    """The device utilisation nextpnr printed: resource -> (used, available)."""
    out = {}
    for name, used, avail in re.findall(r"Info:\s+(\w+):\s+(\d+)/\s*(\d+)\s+\d+%", tim):
        out[name] = (int(used), int(avail))
    return out


#: Per device family: nextpnr's names of logic, flip-flops and block RAM.
RESOURCES = {"ICESTORM_LC": "logic", "TRELLIS_COMB": "logic", "TRELLIS_FF": "ff",
             "ICESTORM_RAM": "bram", "DP16KD": "bram", "LUT4": "logic", "DFF": "ff",
             "BSRAM": "bram"}
#: How the record names them.
RESOURCE_NAMES = {"logic": "logic cells", "ff": "flip-flops", "bram": "block RAMs"}


def build_row(board: str, kind: str, size: int, workdir: Path,
              clock: float | None = None, timeout: int = 7200) -> dict:
    """Build one size with ``fatnet board --bitstream``; its utilisation, Fmax, time and
    whether it fits (the build succeeded)."""
    out = workdir / f"{board}-{kind}-{size}"
    cmd = [sys.executable, "-m", "fatnet.cli", "board", kind, *size_options(kind, size),
           "--board", board, "-o", str(out), "--bitstream"]
    if clock is not None:
        cmd += ["--clock", f"{clock:g}"]
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        code, err = p.returncode, p.stderr.strip().splitlines()
    except subprocess.TimeoutExpired:
        code, err = None, [f"no result within {timeout} s"]
    row = {"board": board, "kind": kind, "size": size,
           "command": "fatnet board " + " ".join(cmd[4:]).replace(str(out), "DIR"),
           "fits": code == 0, "seconds": round(time.perf_counter() - t0),
           "error": None if code == 0 else (err[-1] if err else f"exit {code}")}
    tim = out / "bist_top.tim"
    text = tim.read_text() if tim.exists() else ""
    for name, (used, avail) in _utilisation(text).items():
        if name in RESOURCES:
            row[RESOURCES[name]] = used
            row[f"{RESOURCES[name]}_available"] = avail
    fmax = re.findall(r"Max frequency for clock\s+'[^']*':\s+([\d.]+) MHz", text)
    row["fmax_mhz"] = float(fmax[-1]) if fmax else None
    return row


def _line(r: dict) -> str:
    use = ", ".join(f"{r[k]}/{r[k + '_available']} {k}" for k in ("logic", "ff", "bram")
                    if k in r)
    state = "fits" if r["fits"] else f"does not fit: {r['error']}"
    return (f"{r['board']:>10} {r['kind']:>9} {r['size']:>4}: {state}; {use or '-'}; "
            f"Fmax {r['fmax_mhz'] or '-'} MHz; {r['seconds']} s")


def search(board: str, kind: str, workdir: Path, clock: float | None = None,
           timeout: int = 7200) -> list[dict]:
    """Sizes of ``kind`` on ``board`` from the smallest until one does not fit."""
    rows = []
    for size in LADDERS[kind]:
        rows.append(build_row(board, kind, size, workdir, clock, timeout))
        print(_line(rows[-1]), flush=True)
        if not rows[-1]["fits"]:
            break
    return rows


def main(argv=None) -> None:
    built = sorted(b for b, spec in BOARDS.items() if spec.bitstream is not None)
    ap = argparse.ArgumentParser(prog="python -m fatnet.hdl.bench_boards",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--boards", nargs="+", choices=built, default=built,
                    help=f"boards (default {' '.join(built)})")
    ap.add_argument("--kinds", nargs="+", choices=sorted(LADDERS), default=sorted(LADDERS),
                    help="families (default all)")
    ap.add_argument("--clock", type=float, default=None, metavar="MHZ",
                    help="fatnet board --clock (default: each board's oscillator)")
    ap.add_argument("--timeout", type=int, default=7200,
                    help="seconds per build (default 7200)")
    ap.add_argument("--json", help="also write the rows as JSON here")
    ap.add_argument("--record", action="store_true",
                    help="record the largest size that fits per board and kind in "
                         "hdl/board_sizes.json (fatnet board's error for a network that "
                         "does not fit names it)")
    args = ap.parse_args(argv)
    print("The largest network per board (python -m fatnet.hdl.bench_boards): fatnet "
          "board --bitstream per size until one does not fit or meet the clock",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="fatnet-bench-boards-") as tmp:
        for board in args.boards:
            for kind in args.kinds:
                found = search(board, kind, Path(tmp), args.clock, args.timeout)
                rows += found
                fit = [r for r in found if r["fits"]]
                print(f"{board} {kind}: the largest that fits is "
                      f"{'size ' + str(fit[-1]['size']) if fit else 'none tried'}",
                      flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"boards": rows}, indent=2))
    if args.record:
        record(rows)


def record(rows: list[dict], path: Path = BOARD_SIZES) -> None:
    """Add the largest size that fitted per board and kind to ``path`` (the searches of
    other boards and kinds already there are kept)."""
    found = json.loads(path.read_text()) if path.exists() else {}
    for r in rows:
        fits = [x for x in rows if x["board"] == r["board"] and x["kind"] == r["kind"]
                and x["fits"]]
        if not fits:
            continue
        best = max(fits, key=lambda x: x["size"])
        use = ", ".join(f"{best[k]}/{best[k + '_available']} {RESOURCE_NAMES[k]}"
                        for k in ("logic", "ff", "bram") if k in best)
        found.setdefault(r["board"], {})[r["kind"]] = {
            "size": best["size"], "options": " ".join(size_options(r["kind"], best["size"])),
            "use": use + (f", Fmax {best['fmax_mhz']} MHz" if best["fmax_mhz"] else "")}
    path.write_text(json.dumps(found, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
