"""The integer checks of every parameter: one meaning of "an integer" (a bool is not
one, although Python's bool is an int) and one wording of the error."""

from __future__ import annotations

import numpy as np

from .errors import ParameterError

__all__ = ["is_integer", "check_int"]


def is_integer(value, numpy: bool = True) -> bool:
    """Whether ``value`` is an integer: an ``int`` or, with ``numpy``, a numpy integer;
    never a bool (``bool`` or ``numpy.bool_``)."""
    types = (int, np.integer) if numpy else int
    return isinstance(value, types) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value, low: int, high: int | None = None, what: str | None = None,
              numpy: bool = True) -> int:
    """``value`` as an ``int`` if it is an integer in ``[low, high]`` (``high`` None: no
    upper bound), else one line (:class:`~fatnet.golden.errors.ParameterError`):
    ``{name} must be {what}, got {value}``, where a value that is no integer is told
    it must be ``an integer {what}`` unless ``what`` says so already.

    Parameters
    ----------
    name : str
        The parameter's name as the user gave it (an option's name without dashes).
    value
        What was given.
    low, high : int
        The accepted range, both ends included.
    what : str, optional
        What the parameter must be (its range, in words); default ``an integer in
        [low, high]`` or ``an integer >= low``.
    numpy : bool
        Whether a numpy integer is accepted (:func:`is_integer`).
    """
    if what is None:
        what = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
    if not is_integer(value, numpy):
        kind = what if what.startswith("an integer") else f"an integer {what}"
        raise ParameterError(f"{name} must be {kind}, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        raise ParameterError(f"{name} must be {what}, got {value}")
    return value
