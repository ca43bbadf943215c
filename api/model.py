"""The model through the API: a network of a kind, its traffic, its cycle-exact run, its
off-line schedule, and the papers' experiments by name.

Every function takes plain keyword parameters named as the command line's options with
underscores (``fatnet route fat-tree --root-capacity 8`` is ``root_capacity=8``), with
the same defaults, and refuses bad input with one line naming the parameter
(:class:`~fatnet.golden.errors.ParameterError`). The work is the family's: its
plain-parameter hooks (:class:`fatnet.cli.family.CommandFamily`), found through the
registry (:mod:`fatnet.api.registry`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..golden.errors import ParameterError
from .params import call
from .registry import OfflineSchedule, experiments_of, families, family_of, get_family

__all__ = ["network", "messages", "route", "Schedule", "schedule", "Experiment",
           "experiments", "experiment"]


def network(kind: str, **params):
    """The golden network of ``kind`` (``fat-tree``, ``multibutterfly``, ``hypercube``,
    ...; :func:`fatnet.api.registry.kinds`) with the given parameters.

    The network is the one structure the model routes and the hardware is built from
    (``net.family``, ``net.cycle_length``); a command line's network options, e.g.
    ``network("fat-tree", leaves=16, root_capacity=8, seed=1)`` for ``--leaves 16
    --root-capacity 8 --seed 1``.
    """
    return call(get_family(kind).commands.build_network, f"a {kind} network", kind,
                **params)


def messages(net, **params):
    """The traffic of ``net``: a :class:`~fatnet.golden.messages.MessageSet` from a
    ``pattern`` drawn from ``seed`` (default ``random-permutation``, seed 0) or, where
    the family takes one, a message file (``messages="m.json"``); the traffic options
    of ``fatnet route`` otherwise (``hot_fraction``, ``problems``).

    The command line's one ``--seed`` seeds the network and its traffic alike; here
    each call takes its own (pass the network's to get the command line's traffic).
    """
    fam = family_of(net)
    return call(fam.commands.make_messages, f"the {fam.name} family's messages", net,
                **params)


def route(net, ms, **params):
    """Run the message set ``ms`` through the cycle-exact model of ``net``, delivery
    cycle after cycle, as the hardware runs it (what ``fatnet sim`` compares the RTL
    with).

    Returns a :class:`~fatnet.golden.runner.RunReport` (``delivered``, ``local``,
    ``lost`` as ``(message, reason)`` pairs, ``cycles``, ``cycle_length``,
    ``retries``, ``results``: every cycle's :class:`~fatnet.golden.cycle.CycleResult`);
    ``params`` as the options of ``fatnet sim``: ``max_cycles``, and per family
    ``method`` (fat-tree), ``fault_mask`` / ``fault_masks`` (splitter networks).
    """
    fam = family_of(net)
    return call(fam.commands.run_network, f"the {fam.name} family's model run", net, ms,
                **params)


@dataclass(frozen=True)
class Schedule:
    """An off-line schedule of a message set (:func:`schedule`).

    Attributes
    ----------
    load_factor : float
        lambda, the most messages through a channel per wire.
    lower_bound : int
        ceil(lambda): no schedule takes fewer delivery cycles.
    cycles : list of list of (int, int)
        The ``(src, dst)`` pairs of every delivery cycle, in order.
    """

    load_factor: float
    lower_bound: int
    cycles: list

    @property
    def length(self) -> int:
        """Delivery cycles the schedule takes."""
        return len(self.cycles)


def schedule(net, ms, **params) -> Schedule:
    """The off-line schedule of ``ms`` on ``net`` (``fatnet schedule``; ``method`` as
    its option), for a family that schedules off-line (the fat-tree); another family is
    refused in one line."""
    fam = family_of(net)
    if not isinstance(fam.commands, OfflineSchedule):
        able = [f.name for f in families() if isinstance(f.commands, OfflineSchedule)]
        raise ParameterError(f"the {fam.name} family has no off-line schedule: "
                             f"{', '.join(able)} schedule off-line")
    doc = call(fam.commands.schedule_messages, f"the {fam.name} family's schedule", net, ms,
               **params)
    return Schedule(load_factor=doc["load_factor"], lower_bound=doc["lower_bound"],
                    cycles=[[tuple(pair) for pair in cycle] for cycle in doc["cycles"]])


@dataclass(frozen=True)
class Experiment:
    """One run of a paper's experiment (:func:`experiment`).

    Attributes
    ----------
    name : str
        The experiment (``fatnet experiment <name>``).
    family : str
        The family it belongs to.
    parameters : dict
        The parameters it ran with (those given; the rest are the defaults).
    data : Any
        What ``fatnet experiment <name> --json`` prints: its rows or tables.
    """

    name: str
    family: str
    parameters: dict
    data: Any


def experiments() -> dict[str, str]:
    """Every experiment by name -> its family's name."""
    return {name: fam.name for fam in families() for name in experiments_of(fam.commands)}


def experiment(name: str, *, progress=None, **params) -> Experiment:
    """Run the experiment ``name`` (:func:`experiments`) with the parameters of
    ``fatnet experiment <name>`` (``inputs``, ``trials``, ``seed``, ...; ``progress``:
    a callable ``progress(done, total, what)``, as the command line's bar)."""
    known = experiments()
    if name not in known:
        raise ParameterError(f"experiment must be one of {', '.join(sorted(known))}, got "
                             f"{name!r}")
    fam = next(f for f in families() if f.name == known[name])
    data = call(experiments_of(fam.commands)[name].data, f"the {name} experiment",
                progress=progress, **params)
    return Experiment(name=name, family=fam.name, parameters=dict(params), data=data)
