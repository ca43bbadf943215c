"""Speed of the self-test's prediction (benchmark figures, not timed tests).

Run as ``python bench/bist_predict_speed.py`` from the repository's root. For the
iCEBreaker builds of ``docs/boards.md`` (``fatnet board KIND SIZE --board icebreaker``,
the board defaults, the default report period) and a few other traffic settings, it
prints the delivery cycles per second of CPU time of this process that
:func:`fatnet.sim.bist.counter_run` predicts from reset, report by report as
``--listen`` asks, on the batched engine (the reports of the board's first
``--board-seconds``) and on the scalar engine (its first ``--scalar-cycles`` cycles),
their ratio measured in this one run, and the board's own rate (its clock
divided by the BIST period): the model's seconds per second of the board, which is
what ``--listen`` needs to keep pace. The batched engine runs as ``--listen`` runs it,
on the plan's outcome table where one serves the plan (:mod:`fatnet.sim.bisttable`),
whose cost is measured apart, in a cache directory of its own (never the user's): CPU
seconds of the first ``--reports`` reports on a table filled from empty as the
prediction fills it (a block of patterns at each miss, as ``--listen`` does), and to
compute it whole up front instead; the rate is then measured on the whole table (as a
later ``--listen`` finds it kept on disk).

``--record`` also writes the figures into ``bench/results/bist_predict_speed.json``
(:mod:`bench.figures`'s ``record``).
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
import time
from pathlib import Path

from fatnet.api.board import plan_board
from fatnet.cli.main import build_parser
from fatnet.golden.cycle import stuck_wires
from fatnet.sim import bisttable
from fatnet.sim.bist import _stuck_view, counter_run

# a sibling script of bench/ (on sys.path as the running script's folder)
from figures import record_entry

__all__ = ["main"]

BOARD = "icebreaker"
#: name -> the options of ``fatnet board`` after the kind's name and before --board.
CASES = {
    "butterfly": "butterfly --inputs 8",
    "butterfly-load-0.1": "butterfly --inputs 8 --load 0.1",
    "butterfly-complement": "butterfly --inputs 8 --pattern complement",
    "dilated-butterfly": "dilated-butterfly --inputs 8",
    "multibutterfly": "multibutterfly --inputs 8",
    "fat-tree": "fat-tree --leaves 8 --root-capacity 4",
    "fat-tree-shift": "fat-tree --leaves 8 --root-capacity 4 --pattern shift",
    "hypercube-alg1": "hypercube --dimension 3",
    "hypercube-alg2": "hypercube --dimension 3 --algorithm alg2",
    "hypercube-ecube": "hypercube --dimension 3 --algorithm ecube",
}


def board_plan(options: str):
    """(plan, board delivery cycles per second) of ``fatnet board OPTIONS --board
    icebreaker`` (the plan ``--listen`` makes)."""
    argv = ["board", *options.split(), "--board", BOARD, "--listen", "unused"]
    args = build_parser(argv).parse_args(argv)
    _, plan, (_, _, clock_mhz, period), _, _ = plan_board(argv[1], args)
    return plan, clock_mhz * 1e6 / period


def rate(plan, engine: str, cycles: int, at: int,
         table: str = "fill") -> tuple[float, dict, dict | None]:
    """Delivery cycles per second of CPU time over the first ``cycles`` from reset, asked
    report by report as ``--listen`` asks (:func:`fatnet.sim.bist.counter_run`), the
    counters after them and after ``at`` cycles (None past ``cycles``)."""
    start = time.process_time()
    run = counter_run(plan, engine, table=table)
    asks = sorted({*range(plan.report_cycles, cycles, plan.report_cycles), cycles, at})
    seen = {c: run.at(c) for c in asks if c <= cycles}
    return cycles / (time.process_time() - start), seen[cycles], seen.get(at)


def table_costs(plan, cycles: int) -> dict:
    """The plan's outcome table in a cache directory of its own: ``table`` (``bulk``:
    computed in blocks on the family's batched model; ``as met``: a pattern at a time,
    a family without one; ``none``: no table serves the plan), ``lazy_s`` (CPU seconds
    of the first ``cycles`` on a table filled from empty as the prediction fills it,
    and the fraction filled then) and ``build_s`` (CPU seconds to compute it whole up
    front instead, on a family with a batched model); the whole table stays open for
    :func:`rate`."""
    space = None if stuck_wires(plan.net) else bisttable.pattern_space(plan)
    if space is None:
        return {"table": "none"}
    saved = os.environ.get("XDG_CACHE_HOME")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "lazy")
            bisttable._OPEN.clear()
            start = time.process_time()
            table = bisttable.open_table(plan, _stuck_view(plan), space)
            rate(plan, "batched", cycles, 0)
            lazy = time.process_time() - start
            filled = table.filled / space.size
            os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "bulk")
            bisttable._OPEN.clear()
            start = time.process_time()
            whole = bisttable.open_table(plan, _stuck_view(plan), space)
            if whole.batched:    # one by one, the whole table would take the model's
                whole.complete()   # time for every pattern
            build = time.process_time() - start
    finally:
        if saved is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = saved
    return {"table": "bulk" if table.batched else "as met", "patterns": space.size,
            "build_s": round(build, 1) if table.batched else 0,
            "lazy_s": round(lazy, 1), "lazy_filled": round(filled, 3)}


def measure(name: str, reports: int, scalar_cycles: int, board_seconds: float) -> dict:
    """One case's figures, printed with its command."""
    plan, board = board_plan(CASES[name])
    costs = table_costs(plan, reports * plan.report_cycles)
    # the reports of the board's first seconds, as --listen asks for them
    cycles = plan.report_cycles * max(reports, math.ceil(board_seconds * board /
                                                         plan.report_cycles))
    batched, counts, seen = rate(plan, "batched", cycles, scalar_cycles)
    scalar, scalar_counts, _ = rate(plan, "scalar", scalar_cycles, scalar_cycles)
    if seen is not None and seen != scalar_counts:   # the tests' claim, seen here too
        raise SystemExit(f"{name}: the engines differ after {scalar_cycles} cycles: "
                         f"batched {seen}, scalar {scalar_counts}")
    values = {"options": CASES[name], "traffic": f"{plan.pattern}, load {plan.load:g}",
              "batched": round(batched), "scalar": round(scalar),
              "ratio": round(batched / scalar, 1), "board": round(board),
              "model_s_per_board_s": round(board / batched, 2), **costs}
    print(f"{name}: {plan.pattern}, load {plan.load:g}, report every "
          f"{plan.report_cycles:,} cycles; batched {batched:,.0f} cycles/s ({cycles:,} "
          f"cycles, {counts['offered']:,} offered), scalar {scalar:,.0f} "
          f"({scalar_cycles:,} cycles): {batched / scalar:.1f}x; the board "
          f"{board:,.0f} cycles/s: {board / batched:.2f} s of model a board second; "
          f"outcome table {costs}\n"
          f"    command: fatnet board {CASES[name]} --board {BOARD} --listen PORT")
    return values


def _record(name: str, values: dict, reports: int, scalar_cycles: int,
            board_seconds: float) -> None:
    record_entry(
        "bist_predict_speed", name, values,
        figure=f"self-test prediction, {name} on the {BOARD} (delivery cycles per CPU "
               f"second: batched, scalar, ratio; the board's cycles per second)",
        command=f"python bench/bist_predict_speed.py --reports {reports} --board-seconds "
                f"{board_seconds:g} --scalar-cycles {scalar_cycles} (fatnet board "
                f"{CASES[name]} --board {BOARD} --listen PORT)")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python bench/bist_predict_speed.py",
                                description=__doc__.splitlines()[0])
    p.add_argument("--reports", type=int, default=5,
                   help="reports predicted from reset on an outcome table filled from "
                        "empty (default 5)")
    p.add_argument("--board-seconds", type=float, default=2.0,
                   help="the batched engine predicts the reports of the board's first "
                        "seconds, at least --reports (default 2)")
    p.add_argument("--scalar-cycles", type=int, default=2000,
                   help="cycles the scalar engine predicts from reset (default 2000)")
    p.add_argument("--cases", nargs="*", choices=sorted(CASES), default=list(CASES),
                   help="the cases to run (default all)")
    p.add_argument("--record", action="store_true",
                   help="write the figures into bench/results/bist_predict_speed.json")
    args = p.parse_args(argv)
    print(f"self-test prediction speed, CPU time of one process, on the {BOARD}'s "
          f"plans (board defaults, default report period)", flush=True)
    for name in args.cases:
        values = measure(name, args.reports, args.scalar_cycles, args.board_seconds)
        if args.record:
            _record(name, values, args.reports, args.scalar_cycles, args.board_seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
