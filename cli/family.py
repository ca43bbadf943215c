"""What a network family's command-line module provides (``cli/<family>.py``).

:mod:`fatnet.cli.main` builds ``fatnet <verb> <kind>`` from these members of the family's
``commands`` module (:class:`fatnet.api.registry.Family`); the hardware verbs ``gen`` and
``sim`` are the same for every family with hardware and live in :mod:`fatnet.cli.main`.

Every family has the members of :class:`CommandFamily`. Four capabilities are optional and
detected by type (``isinstance`` against the protocol): :class:`ExperimentCommands`
(``fatnet experiment <name>``), :class:`OfflineSchedule` (``fatnet schedule``; these two
are declared in :mod:`fatnet.api.registry`, since the API reads them too),
:class:`BoardCommands` (``fatnet board``, with the testbench's
:class:`~fatnet.sim.family.SelfTest`) and :class:`BenchCommands` (the benchmarks of
``bench/``). ``tests/test_families.py`` checks that
every registered family provides them, with these parameters.

The plain-parameter hooks (``build_network``, ``make_messages``, ``run_network``) are
what :mod:`fatnet.api` calls; the ``*_from_args`` hooks turn parsed options into them.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any, NamedTuple, Protocol, runtime_checkable

# the optional capabilities the API reads too are declared beside the registry (the API
# does not import the command line); a family's command module provides them here
from ..api.registry import ExperimentCommands, OfflineSchedule, experiments_of

__all__ = ["Verb", "Experiment", "CosimCase", "WavesCase", "SoakModel", "Bench", "CommandFamily",
           "ExperimentCommands", "OfflineSchedule", "BoardCommands", "BenchCommands",
           "OPTIONAL", "bench_families", "experiments_of"]


class Verb(NamedTuple):
    """A model-only verb of a family (``route``, ``info``, ...)."""

    #: One line of help, for ``fatnet --help``.
    help: str
    #: ``run(kind, args)`` -> the exit status.
    run: Callable[[str, argparse.Namespace], int]


class Experiment(NamedTuple):
    """A paper's experiment (``fatnet experiment <name>``)."""

    #: One line of help, for ``fatnet experiment --help``.
    help: str
    #: ``add_arguments(parser)``: the experiment's options.
    add_arguments: Callable[[argparse.ArgumentParser], None]
    #: ``run(args)`` -> the exit status.
    run: Callable[[argparse.Namespace], int]
    #: ``data(**params)`` -> what ``--json`` prints, from plain keyword parameters named
    #: as the options (:func:`fatnet.api.experiment` calls it).
    data: Callable[..., Any]


class CosimCase(NamedTuple):
    """One size of the co-simulation speed benchmark (``bench/cosim.py``): how long each
    of its three runs is."""

    #: The size (:attr:`Bench.workload`'s argument).
    size: int
    #: Clocks of the native Verilator loop.
    native_clocks: int
    #: Checked delivery cycles of cocotb on Verilator.
    verilator_cycles: int
    #: Checked delivery cycles of cocotb on Icarus.
    icarus_cycles: int
    #: Whether ``--quick`` runs it.
    quick: bool = False


class WavesCase(NamedTuple):
    """The network whose ``fatnet sim --waves`` cost ``bench/waves_decode.py`` measures."""

    #: The table's name of the network (``"fat-tree, 64 leaves"``).
    label: str
    #: Its plain parameters (:func:`fatnet.api.network`'s).
    network: dict
    #: Its traffic's plain parameters (:func:`fatnet.api.messages`'s, with a ``seed``).
    traffic: dict


class SoakModel(NamedTuple):
    """The soak's model in bulk (``bench/soak.py``): a chunk of independent delivery
    cycles, every terminal wire of every cycle from one call of the family's batched
    engine.

    A chunk is one of two kinds, as ``draw`` returns it. At full load (three arrays),
    every terminal offers a message in every cycle and the soak offers a lost one again
    in a later chunk. Scheduled (four arrays: an off-line network's cycles), every
    cycle is a set the network delivers whole (the fat-tree's one-cycle sets) and a
    message the model does not deliver fails the soak."""

    #: ``draw(net, cycles, rng)`` -> (src, dst, payload) int arrays, drawn from the
    #: numpy Generator ``rng``: every terminal offers a fresh random message in each of
    #: ``cycles`` cycles, cycle ``c``'s terminal ``s`` at index ``c * terminals + s``;
    #: or (src, dst, payload, cycle): ``cycles`` scheduled cycles, each message's
    #: cycle (0 .. ``cycles`` - 1, in order) in ``cycle``.
    draw: Callable[[Any, int, Any], tuple]
    #: ``waves(net, cycle, src, dst, payload)`` ->
    #: :class:`~fatnet.golden.cycle.TerminalWaves`: every terminal wire of the cycles
    #: (each message's ``cycle`` label, cycles independent) and the messages delivered.
    waves: Callable[..., Any]


class Bench(NamedTuple):
    """What the benchmarks (``bench/``) build of a family: one kind, in sizes.

    A size is the one number that grows the network (the butterfly's inputs, the
    fat-tree's leaves, the hypercube's dimension).
    """

    #: The kind the benchmarks build.
    kind: str
    #: The sizes the board search tries (``bench/boards.py``), smallest first.
    ladder: tuple[int, ...]
    #: ``options(size)`` -> the network's plain parameters (:func:`fatnet.api.network`'s,
    #: which :func:`fatnet.api.board` and ``fatnet board`` take too) for the self-testing
    #: top on a board: what the board search builds.
    options: Callable[[int], dict]
    #: ``workload(size)`` -> the network's plain parameters for the co-simulation
    #: workload (``bench/cosim.py``, ``bench/soak.py``).
    workload: Callable[[int], dict]
    #: ``traffic(net, rng)`` -> (messages, the model's
    #: :class:`~fatnet.golden.runner.RunReport` with every cycle's result kept): one run
    #: of the co-simulation's checked workload on ``workload``'s network, drawn from the
    #: numpy Generator ``rng``; the benchmarks run it again until they have the cycles
    #: they want.
    traffic: Callable[[Any, Any], tuple]
    #: The size the soak (``bench/soak.py``) runs a million messages through.
    soak_size: int
    #: What :attr:`workload` and :attr:`traffic` are, in a few words, for the co-simulation
    #: benchmark's heading (``"the butterfly of 2x2 switches (cocotb: full-load random
    #: destinations, losses retried)"``).
    summary: str = ""
    #: The co-simulation speed benchmark's sizes (``bench/cosim.py``), smallest first.
    cosim: tuple[CosimCase, ...] = ()
    #: ``acceptance(size, accepted)`` -> a line comparing the first cycle's acceptance the
    #: RTL matched (``accepted``: one fraction per run of :attr:`traffic`) with the
    #: family's theory, printed below the co-simulation table; None prints nothing.
    acceptance: Callable[[int, Any], str] | None = None
    #: The network of ``bench/waves_decode.py`` (None leaves the family out of it).
    waves: WavesCase | None = None
    #: The soak's model in bulk; None: the soak plans every cycle of :attr:`traffic`'s
    #: results (the reference path, a few ms a cycle).
    soak: SoakModel | None = None


@runtime_checkable
class CommandFamily(Protocol):
    """The command line of one family."""

    #: Model-only verbs by name.
    VERBS: dict[str, Verb]

    def add_arguments(self, parser, verb: str, kind: str) -> None:
        """Add the options of ``verb`` for ``kind`` (the network's, the traffic's; the
        hardware verbs' own options are added by :mod:`fatnet.cli.main`). ``sim`` needs a
        ``--seed`` among them: every failure prints it with the command that replays it."""
        ...

    def build_network(self, kind: str) -> Any:
        """The golden network of plain keyword-only parameters after ``kind``, named as
        the options with underscores (``root_capacity``), each with the option's default
        (:func:`fatnet.api.network` calls it; :meth:`network_from_args` is the command
        line's thin wrapper)."""

    def make_messages(self, net) -> Any:
        """The message set of plain keyword-only parameters (``pattern``, ``seed``,
        ``messages``: a file, ...), :func:`fatnet.api.messages`."""

    def run_network(self, net, ms) -> Any:
        """The model's run of ``ms`` as the hardware runs it, every cycle's result kept:
        a :class:`~fatnet.golden.runner.RunReport` (:func:`fatnet.api.route`; keyword-only
        parameters as the options, ``max_cycles``, ...)."""

    def network_from_args(self, kind: str, args) -> Any:
        """The golden network the options name (its ``family`` is the family's name)."""
        ...

    def messages_from_args(self, args, net) -> Any:
        """The message set a ``route`` or ``sim`` command names
        (:class:`~fatnet.golden.messages.MessageSet`)."""
        ...

    def run_model(self, net, ms, args) -> Any:
        """The model's run for ``sim``: a :class:`~fatnet.golden.runner.RunReport` with its
        cycle results kept (``results``) and, if it ran under run-time fault masks, the
        mask of every cycle (``masks``)."""
        ...


@runtime_checkable
class BoardCommands(Protocol):
    """Optional: ``fatnet board`` for the family's kinds (the self-testing top)."""

    def board_defaults(self, kind: str) -> dict:
        """``fatnet board``'s defaults for the self-test where ``gen``'s do not serve
        (a payload long enough for its fields, a switch-setting mode, a pattern): option
        dest -> :class:`fatnet.cli.board.BoardDefault` (its help, stating the default,
        and its value from the other options). The one place these defaults come from."""
        ...

    def check_board(self, kind: str, args) -> None:
        """Refuse, in one line naming the option that fixes it, options the self-test
        cannot take (after :meth:`board_defaults` are applied)."""
        ...

    def board_fit_key(self, kind: str, args) -> str:
        """Which measured builds (``hdl/board_builds.json``, their ``key``) estimate
        this network's logic: the kind, and what else changes its logic per terminal."""
        ...


@runtime_checkable
class BenchCommands(Protocol):
    """Optional: the sizes and options the benchmarks of ``bench/`` build (a family
    without it is left out of them)."""

    #: The benchmarks' kind, sizes and options.
    BENCH: Bench


#: The optional command capabilities, by name (for the family checks).
OPTIONAL: dict[str, type] = {"experiments": ExperimentCommands, "schedule": OfflineSchedule,
                             "board": BoardCommands, "benchmarks": BenchCommands}


def bench_families() -> dict[str, Bench]:
    """The benchmarks' records of the registered families with hardware and
    :class:`BenchCommands`, by kind (in the order of the families' names)."""
    from ..api.registry import families
    return {fam.commands.BENCH.kind: fam.commands.BENCH for fam in families()
            if fam.has_hardware and isinstance(fam.commands, BenchCommands)}
