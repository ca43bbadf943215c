"""fatnet's Python API: the command line's work as plain functions and dataclasses.

>>> from fatnet import api
>>> net = api.network("fat-tree", leaves=16, root_capacity=8, seed=1)
>>> ms = api.messages(net, pattern="random-permutation", seed=1)
>>> run = api.route(net, ms)
>>> run.delivered + run.local, run.lost
(16, [])

Parameters are the command line's options with underscores (``--root-capacity`` is
``root_capacity``), with the same defaults; bad input raises
:class:`~fatnet.golden.errors.ParameterError` (a ``ValueError``) in one line naming the
parameter. docs/api.md is the reference.
"""

from ..golden.errors import FatnetInputError, MessageFileError, ParameterError
from .board import BoardBuild, board
from .hardware import SIMULATORS, Cosimulation, Generated, Waves, cosimulate, generate
from .model import (Experiment, Schedule, experiment, experiments, messages, network,
                    route, schedule)
from .registry import Family, Kind, families, family_of, get_family, kinds

__all__ = ["network", "messages", "route", "schedule", "Schedule", "generate",
           "Generated", "cosimulate", "Cosimulation", "Waves", "SIMULATORS", "board",
           "BoardBuild", "experiment", "experiments", "Experiment", "kinds", "families",
           "get_family", "family_of", "Family", "Kind", "FatnetInputError",
           "ParameterError", "MessageFileError"]
