"""The fit estimate's builds measured again: each build of the package's shipped data
``hdl/board_builds.json`` (:data:`fatnet.hdl.board.BOARD_BUILDS`) rebuilt by its own
command, and its logic (nextpnr's count of iCE40 logic cells or ECP5 and Gowin LUT4)
read from the build's log.

    python bench/board_builds.py [--boards B ...] [--keys K ...] [--max-terminals N]
                                 [--timeout S] [--write]

``fatnet board`` estimates a design's logic from these builds before it generates
anything (:func:`fatnet.hdl.board.estimate_logic`); when the self-test or a network
changes, the builds' counts go stale and the estimate with them. This rebuilds the
builds selected (every build by default; ``--max-terminals`` leaves out the long
builds of large networks), prints each one's count against the recorded one, and with
``--write`` writes the new counts, each with the day it was measured, into the shipped
data, whose ``about`` names this command, after each build (a run stopped keeps the
counts it measured). A build that does not fit still has a count:
nextpnr reports the logic before it places. A build that stops before nextpnr counts
(synthesis failed, a timeout) keeps its recorded count and is named in the output.

Each build is its own ``fatnet board`` process (``--no-fit-check --predict 0``: the
estimate may not refuse what is measured, and no prediction is needed).
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

from fatnet.hdl.board import BOARD_BUILDS, LOGIC_CELLS
from fatnet.hdl.tools import nextpnr_utilisation

__all__ = ["build_arguments", "measure", "selected", "update", "main"]

#: nextpnr's count as ``fatnet board``'s error line quotes it for a build that does not
#: fit ("utilisation ICESTORM_LC: 5388/ 5280 102%").
FAILED_USE = re.compile(r"utilisation (\w+): *(\d+)/")
#: The command that measures the builds, as the shipped data's ``about`` names it.
COMMAND = "python bench/board_builds.py --write"


def build_arguments(command: str, out: Path) -> list[str]:
    """A recorded build's command (``fatnet board ... -o DIR ...``) as the arguments of
    this interpreter's ``fatnet`` writing into ``out``, with the fit check off and no
    prediction."""
    words = shlex.split(command)
    if words[:2] != ["fatnet", "board"] or "DIR" not in words:
        raise ValueError(f"not a 'fatnet board ... -o DIR' command: {command!r}")
    words = [str(out) if w == "DIR" else w for w in words]
    return [sys.executable, "-m", "fatnet.cli", *words[1:], "--no-fit-check",
            "--predict", "0"]


def measure(build: dict, workdir: Path, timeout: int) -> tuple[int | None, str]:
    """One build rebuilt: (nextpnr's logic count or None, a word on how it ended)."""
    out = workdir / f"{build['board']}-{build['key'].replace(' ', '-')}-{build['terminals']}"
    try:
        p = subprocess.run(build_arguments(build["command"], out), capture_output=True,
                           text=True, timeout=timeout)
        ended = "fits" if p.returncode == 0 else (
            p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1]
    except subprocess.TimeoutExpired:
        ended = f"no result within {timeout} s"
    tim = out / "bist_top.tim"
    use = nextpnr_utilisation(tim.read_text(errors="replace") if tim.exists() else "")
    counts = [used for name, (used, _) in use.items() if name in LOGIC_CELLS]
    # a build that does not fit writes nothing; its error line quotes nextpnr's count
    counts += [int(used) for name, used in FAILED_USE.findall(ended) if name in LOGIC_CELLS]
    return (counts[0] if counts else None), ended


def selected(builds: list[dict], boards=None, keys=None,
             max_terminals: int | None = None) -> list[int]:
    """The indices of the builds on ``boards`` of ``keys`` (None: every one) with at
    most ``max_terminals`` terminals."""
    return [i for i, b in enumerate(builds)
            if (boards is None or b["board"] in boards) and (keys is None or b["key"] in keys)
            and (max_terminals is None or b["terminals"] <= max_terminals)]


def update(data: dict, counts: dict[int, int], day: str) -> dict:
    """The shipped data with the builds of ``counts`` (index: new count) measured on
    ``day``; ``about`` names the command that measures them."""
    builds = [dict(b, logic=counts[i], measured=day) if i in counts else dict(b)
              for i, b in enumerate(data["builds"])]
    about = data["about"].split(" Measured again by ")[0]
    return {**data, "about": f"{about} Measured again by {COMMAND} (each build's "
                             f"'measured' is its day).", "builds": builds}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python bench/board_builds.py",
                                 description=__doc__.split("\n\n")[0])
    data = json.loads(BOARD_BUILDS.read_text())
    builds = data["builds"]
    ap.add_argument("--boards", nargs="+", choices=sorted({b["board"] for b in builds}),
                    help="only these boards' builds (default every board)")
    ap.add_argument("--keys", nargs="+", choices=sorted({b["key"] for b in builds}),
                    help="only these kinds' builds (default every kind)")
    ap.add_argument("--max-terminals", type=int, default=None, metavar="N",
                    help="only builds of at most N terminals (the large ULX3S builds "
                         "take an hour or more each)")
    ap.add_argument("--timeout", type=int, default=7200, help="seconds per build")
    ap.add_argument("--write", action="store_true",
                    help=f"write the new counts into {BOARD_BUILDS.name}")
    args = ap.parse_args(argv)
    chosen = selected(builds, args.boards, args.keys, args.max_terminals)
    print(f"{len(chosen)} builds; a YoWASP tool's first call compiles it, which takes "
          f"minutes", flush=True)
    counts, day = {}, datetime.date.today().isoformat()
    with tempfile.TemporaryDirectory(prefix="fatnet-builds-") as tmp:
        for i in chosen:
            b, t0 = builds[i], time.perf_counter()
            logic, ended = measure(b, Path(tmp), args.timeout)
            if logic is not None:
                counts[i] = logic
                if args.write:      # after each build: a run stopped keeps what it measured
                    BOARD_BUILDS.write_text(json.dumps(update(data, counts, day),
                                                       indent=1) + "\n")
            change = (f"{logic:,} ({logic / b['logic'] - 1:+.0%})" if logic is not None
                      else "not counted, kept")
            print(f"{b['board']:>12} {b['key']:>16} {b['terminals']:>4}: {b['logic']:,} -> "
                  f"{change}; {ended}; {time.perf_counter() - t0:.0f} s", flush=True)
    if args.write:
        print(f"wrote {len(counts)} counts into {BOARD_BUILDS}")


if __name__ == "__main__":
    main()
