"""Leiserson's fat-tree (1985): spec, topology, concentrators, schedulers, cycle model.

The family's golden model. :class:`FatTreeNetwork` is the single description of
structure that the hardware (:mod:`fatnet.hdl.fattree`) is built from. The names below
are the family's hooks for the registry (:mod:`fatnet.cli.registry`).
"""

from .cli import (KINDS, VERBS, add_arguments, build, messages_from_args, network_from_args,
                  run_model, spec_from_args)
from .network import FatTreeNetwork
from .spec import FatTreeSpec

__all__ = ["FatTreeNetwork", "FatTreeSpec", "KINDS", "VERBS", "add_arguments", "build",
           "messages_from_args", "network_from_args", "run_model", "spec_from_args"]
