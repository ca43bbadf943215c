"""The seeds of the model's random choices: one accepted range for every family.

A seed feeds ``numpy.random.default_rng`` (which refuses a negative one), the fat-tree's
spec and manifest, and the self-testing top's 64-bit generators; [0, 2^63 - 1] is the
range every one of them takes unchanged, so no seed is refused by one verb and taken by
another, and none wraps.
"""

from __future__ import annotations

import numpy as np

from .errors import ParameterError

__all__ = ["MAX_SEED", "SEED_RANGE", "check_seed"]

#: The largest seed accepted anywhere.
MAX_SEED = 2 ** 63 - 1

#: The accepted range, as error lines say it.
SEED_RANGE = "an integer in [0, 2^63-1]"


def check_seed(seed, name: str = "seed") -> int:
    """``seed`` as an int, or one line (ParameterError) naming ``name`` and the range."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ParameterError(f"{name} must be {SEED_RANGE}, got {seed!r}")
    if not 0 <= int(seed) <= MAX_SEED:
        raise ParameterError(f"{name} must be {SEED_RANGE}, got {int(seed)}")
    return int(seed)
