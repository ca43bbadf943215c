"""Fat-tree specifics of the testbenches: planner hooks (:mod:`.ports`), waveform groups
(:mod:`.waves`)."""

from .ports import *  # noqa: F401,F403
from .ports import __all__ as _ports_all
from .waves import hop_field_labels, interior_wires, wave_groups

__all__ = list(_ports_all) + ["wave_groups", "hop_field_labels", "interior_wires"]
