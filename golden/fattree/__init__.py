"""Leiserson's fat-tree (1985): spec, topology, concentrators, schedulers, cycle model.

The family's golden model. :class:`FatTreeNetwork` is the single description of
structure that the hardware (:mod:`fatnet.hdl.fattree`) is built from; :func:`build`
makes it from a :class:`FatTreeSpec`. The family's command line is
:mod:`fatnet.cli.fattree`.
"""

from .api import build, spec_from_options
from .network import FatTreeNetwork
from .spec import FatTreeSpec

__all__ = ["FatTreeNetwork", "FatTreeSpec", "build", "spec_from_options"]
