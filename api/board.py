"""A board build through the API: the self-testing top of a network for an FPGA board,
its files, the model's prediction of its UART reports and, optionally, the bitstream.

The build is ``fatnet board``'s own (:func:`fatnet.cli.board.build_files`, imported when
:func:`board` runs: the board flow and its options live together there); this module
gives it plain parameters: the network's (:func:`fatnet.api.network`'s) and the
self-test's (:data:`BOARD_OPTIONS`), with the family's board defaults applied where
they are left out, exactly as on the command line.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from ..golden.errors import ParameterError
from .params import accepted, check_choice, check_fraction, check_int
from .registry import get_family

__all__ = ["BOARD_OPTIONS", "MAX_REPORT_CYCLES", "MAX_PREDICT", "BoardBuild", "board"]

#: Most delivery cycles between two reports (the report counter's 32 bits).
MAX_REPORT_CYCLES = 2 ** 32 - 1
#: Most report lines the model predicts.
MAX_PREDICT = 1000

#: The self-test's parameters besides the network's, with ``fatnet board``'s defaults
#: (a family's board defaults, e.g. the fat-tree's on-line mode, replace the network's).
BOARD_OPTIONS = {"clock": None, "pattern": "random", "load": 1.0, "seed": 0,
                 "report_cycles": None, "predict": None, "stuck_wire": None,
                 "no_fit_check": False, "synth_opts": None, "nextpnr_opts": None}


@dataclass(frozen=True)
class BoardBuild:
    """What :func:`board` wrote.

    Attributes
    ----------
    directory : Path
        The build's directory: ``bist.v``, the board's files, ``board.json``.
    board : str
        The board.
    manifest : dict
        ``board.json``: the clock, the network, the self-test's plan, the defaults the
        family chose, the logic estimate, the predicted reports (docs/boards.md).
    predicted_reports : list of str
        The model's first report lines, as the board prints them on its UART.
    bitstream : Path or None
        The bitstream, when built.
    note : str or None
        Why fewer reports were predicted than asked, if so.
    """

    directory: Path
    board: str
    manifest: dict
    predicted_reports: list
    bitstream: Path | None
    note: str | None

    @property
    def board_defaults(self) -> dict:
        """The parameters the family's board defaults set (``board.json``'s)."""
        return self.manifest["board_defaults"]


def _options(kind: str, params: dict) -> dict:
    """The network's and the self-test's parameters, defaults filled in; unknown names
    and left-out required ones refused in one line."""
    fam = get_family(kind)
    hook = fam.commands.build_network
    network = {name: p.default for name, p in inspect.signature(hook).parameters.items()
               if name in accepted(hook)}
    options = {**network, **BOARD_OPTIONS}
    # the family's board defaults: None until applied from the other parameters
    options.update(dict.fromkeys(fam.commands.board_defaults(kind)))
    names = ", ".join(options)
    for name in params:
        if name not in options:
            raise ParameterError(f"{name} is not a parameter of a {kind} board build: it "
                                 f"takes {names}")
    options.update(params)
    for name, value in options.items():
        if value is inspect.Parameter.empty:
            raise ParameterError(f"{name} is required for a {kind} board build")
    return options


def _check(options: dict) -> None:
    """The self-test's parameters checked as ``fatnet board``'s options are."""
    from ..golden.bist import PATTERNS
    check_choice("pattern", options["pattern"], PATTERNS)
    check_fraction("load", options["load"])
    if options["report_cycles"] is not None:
        check_int("report_cycles", options["report_cycles"], 1, MAX_REPORT_CYCLES)
    if options["predict"] is not None:
        check_int("predict", options["predict"], 0, MAX_PREDICT)


def board(kind: str, board: str, output, *, bitstream: bool = False,
          **params) -> BoardBuild:
    """Build the self-testing top of a ``kind`` network for ``board`` into the directory
    ``output`` (``fatnet board``): ``params`` are the network's (as
    :func:`fatnet.api.network` takes them) and the self-test's (:data:`BOARD_OPTIONS`);
    ``bitstream`` runs the YoWASP tools to the bitstream.

    A network the board cannot hold (by the estimate from the measured builds; unless
    ``no_fit_check``), or parameters the self-test cannot take, are refused in one
    line before anything is written.
    """
    from ..cli.board import build_files   # the board flow, beside its options
    from ..hdl.board import BOARDS
    check_choice("board", board, sorted(BOARDS))
    options = _options(kind, params)
    _check(options)
    args = SimpleNamespace(**options, board=board, output=str(output), bitstream=bitstream,
                           program=False, listen=None, check_capture=None, baud=None,
                           reports=None, verbose=False)
    built = build_files(kind, args)
    products = None if built.products is None else \
        Path(output) / f"bist_top.{BOARDS[board].bitstream}"
    return BoardBuild(directory=Path(output), board=board, manifest=built.doc,
                      predicted_reports=list(built.lines), bitstream=products,
                      note=built.note)
