"""The self-testing tops of ``make boards``, built to the bitstream: each one's use of
the device, nextpnr's Fmax and the build's time.

    python bench/board_tops.py [--keys KEY ...] [--record]

from the repository's root. Each top is ``fatnet board KIND <options> --board B -o DIR
--bitstream`` (:data:`TOPS`: a small network of each kind with its size options alone,
so the family's board defaults apply, and the 8-input butterfly through each board's
PLL), as a user would run it. Printed per top, and with ``--record`` written into
``bench/results/boards.json`` (rendered into README.md, docs/figures.md and
docs/boards.md by ``python bench/figures.py``). A YoWASP tool's first call compiles it,
which takes minutes.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from fatnet.api.board import board as board_build
from fatnet.hdl.board import BOARDS

# sibling scripts of bench/ (on sys.path as the running script's folder)
from boards import device_use, option_arguments
from figures import record_entry

__all__ = ["Top", "TOPS", "command_of", "measure", "main"]

#: How the tables name each board.
BOARD_NAMES = {"icebreaker": "iCEBreaker", "ulx3s": "ULX3S", "tang-nano-9k": "Tang Nano 9K"}


class Top(NamedTuple):
    """One self-testing top: its key in ``boards.json``, board, kind, the network's and
    the self-test's parameters (as :func:`fatnet.api.board.board` takes them) and the
    PLL clock (None: the board's oscillator)."""

    key: str
    board: str
    kind: str
    params: dict
    clock: float | None = None


_BUTTERFLY_8 = {"inputs": 8, "payload_bits": 12}

#: The tops measured, in the tables' order.
TOPS = (
    Top("icebreaker-butterfly-8", "icebreaker", "butterfly", _BUTTERFLY_8),
    Top("icebreaker-butterfly-8-31.5mhz", "icebreaker", "butterfly", _BUTTERFLY_8, 31.5),
    Top("ulx3s-butterfly-8-50mhz", "ulx3s", "butterfly", _BUTTERFLY_8, 50.0),
    Top("tang-nano-9k-butterfly-8-33.75mhz", "tang-nano-9k", "butterfly", _BUTTERFLY_8,
        33.75),
    Top("icebreaker-dilated-butterfly-8", "icebreaker", "dilated-butterfly", {"inputs": 8}),
    Top("icebreaker-multibutterfly-8", "icebreaker", "multibutterfly", {"inputs": 8}),
    Top("icebreaker-fat-tree-8", "icebreaker", "fat-tree",
        {"leaves": 8, "root_capacity": 4}),
    Top("icebreaker-hypercube-3", "icebreaker", "hypercube", {"dimension": 3}),
    Top("icebreaker-hypercube-3-alg2", "icebreaker", "hypercube",
        {"dimension": 3, "algorithm": "alg2"}),
    Top("icebreaker-hypercube-3-ecube", "icebreaker", "hypercube",
        {"dimension": 3, "algorithm": "ecube"}),
)


def _options(top: Top) -> str:
    """The top's ``fatnet board`` options after the kind."""
    clock = [] if top.clock is None else [f"--clock {top.clock:g}"]
    return " ".join([*option_arguments(top.params), f"--board {top.board}", *clock])


def command_of(top: Top) -> str:
    """The command that builds one top, as a user types it."""
    return f"fatnet board {top.kind} {_options(top)} -o DIR --bitstream"


def measure(top: Top) -> dict:
    """Build one top to the bitstream; its figures."""
    params = dict(top.params, clock=top.clock) if top.clock else dict(top.params)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        built = board_build(top.kind, top.board, Path(tmp), bitstream=True, predict=0,
                            **params)
        seconds = round(time.perf_counter() - t0)
        text = (Path(tmp) / "bist_top.tim").read_text()
    used = device_use(text)
    capacity, unit = BOARDS[top.board].logic
    doc = built.manifest
    return {"board": BOARD_NAMES[top.board], "kind": top.kind,
            "options": _options(top), "defaults": _defaults_text(doc["board_defaults"]),
            "clock_mhz": doc["clock_mhz"], "pll": _pll_text(doc["pll"]),
            "cells": used["logic"][0], "capacity": capacity, "cell_kind": unit,
            "ff": used.get("ff", (0, 0))[0], "fmax_mhz": doc["fmax_mhz"],
            "seconds": seconds}


def _pll_text(pll: dict | None) -> str:
    """The PLL's setting from board.json's ``pll`` in one line, its dividers and VCO
    ('' without a PLL): ``SB_PLL40 DIVR 0, DIVF 83, DIVQ 5 (VCO 1008 MHz)``."""
    if not pll:
        return ""
    dividers = ", ".join(f"{name} {value}" for name, value in pll["parameters"].items()
                         if "DIV" in name)
    return f"{pll['primitive']} {dividers} (VCO {pll['vco_mhz']:g} MHz)"


def _defaults_text(defaults: dict) -> str:
    """The options the family's board defaults chose, as a command line (a value that
    starts with '-' joined by '=' and quoted, as ``fatnet board`` takes it)."""
    words = []
    for name, value in defaults.items():
        option = f"--{name.replace('_', '-')}"
        text = str(value)
        words.append(f"{option}={shlex.quote(text)}" if text.startswith("-")
                     else f"{option} {text}")
    return " ".join(words)


def main(argv=None) -> int:
    """Build each top; print (and record) its figures."""
    parser = argparse.ArgumentParser(prog="bench/board_tops.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--keys", nargs="+", choices=[t.key for t in TOPS],
                        help="the tops to build (default: all)")
    parser.add_argument("--record", action="store_true",
                        help="write the figures into bench/results/boards.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print("a YoWASP tool's first call compiles it, which takes minutes", flush=True)
    for top in TOPS:
        if args.keys and top.key not in args.keys:
            continue
        values = measure(top)
        print(f"{command_of(top)}: {values['cells']:,} / {values['capacity']:,} "
              f"{values['cell_kind']}, Fmax {values['fmax_mhz']} MHz at "
              f"{values['clock_mhz']} MHz, {values['seconds']} s", flush=True)
        if args.record:
            pll = " through its PLL" if top.clock else ""
            record_entry("boards", top.key, values, command=command_of(top),
                         figure=f"Self-testing top on the {values['board']}{pll}, "
                                f"{top.kind} {' '.join(option_arguments(top.params))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
