"""Plain keyword parameters for a family's hooks, checked in one line.

A family's plain-parameter hooks (``build_network``, ``make_messages``, ``run_network``
of :class:`fatnet.cli.family.CommandFamily`) take keyword-only parameters named as the
command line's options with underscores (``--root-capacity`` is ``root_capacity``).
:func:`call` refuses an unknown or a missing name in one line that names it and the
accepted ones (Python's own ``TypeError`` would name the hook's function instead);
:func:`from_args` is the other direction, for the command line: the parameters a hook
takes, picked from the parsed options.

The value checks here are the ones the command line's option types make on text
(:mod:`fatnet.cli.options`), made on Python values for the API.
"""

from __future__ import annotations

import inspect
import math
import re

from ..golden.checks import check_int  # the model's one integer check, re-exported
from ..golden.errors import ParameterError

__all__ = ["accepted", "call", "takes_keywords_of", "from_args", "check_int", "check_fraction",
           "check_choice", "check_identifier", "MAX_IDENTIFIER"]


def _keyword_parameters(hook) -> dict[str, inspect.Parameter]:
    return {name: p for name, p in inspect.signature(hook).parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY}


def accepted(hook) -> list[str]:
    """The keyword parameters ``hook`` takes, in its order."""
    return list(_keyword_parameters(hook))


def call(hook, what: str, *args, **params):
    """``hook(*args, **params)``, its keyword parameters checked first.

    Parameters
    ----------
    hook : callable
        A hook whose parameters are keyword-only after its positional ones.
    what : str
        What the hook makes, for the error line (``a fat-tree network``).

    Raises
    ------
    ParameterError
        For a name the hook does not take, or a required one left out: one line naming
        it and the accepted names.
    """
    keywords = _keyword_parameters(hook)
    names = ", ".join(keywords) or "none"
    for name in params:
        if name not in keywords:
            raise ParameterError(f"{name} is not a parameter of {what}: it takes {names}")
    for name, p in keywords.items():
        if p.default is inspect.Parameter.empty and name not in params:
            raise ParameterError(f"{name} is required for {what} (it takes {names})")
    return hook(*args, **params)


def takes_keywords_of(inner):
    """Decorator of a hook whose ``**params`` go on to ``inner``: its signature (what
    :func:`call` checks, :func:`from_args` picks and ``help()`` shows) becomes its own
    parameters followed by ``inner``'s keyword-only ones."""
    def mark(hook):
        own = [p for p in inspect.signature(hook).parameters.values()
               if p.kind is not inspect.Parameter.VAR_KEYWORD]
        hook.__signature__ = inspect.signature(hook).replace(
            parameters=own + list(_keyword_parameters(inner).values()))
        return hook
    return mark


def from_args(hook, args) -> dict:
    """The keyword parameters of ``hook`` that the parsed options ``args`` hold (an
    option a verb does not have is left to the hook's default)."""
    return {name: getattr(args, name) for name in _keyword_parameters(hook)
            if hasattr(args, name)}


def check_fraction(name: str, value, *, given: str | None = None,
                   zero: bool = True) -> float:
    """``value`` as a number in [0, 1] (in (0, 1] when ``zero`` is False; NaN is not
    one), else one line naming ``name`` and the range and showing ``given`` (how the
    value was written, e.g. an option's quoted text; by default ``value``'s repr). The
    command line's fractions are checked here too."""
    low_ok = (lambda v: v >= 0.0) if zero else (lambda v: v > 0.0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or math.isnan(value) or not (low_ok(value) and value <= 1.0):
        interval = "[0, 1]" if zero else "(0, 1]"
        raise ParameterError(f"{name} must be a number in {interval}, got "
                             f"{repr(value) if given is None else given}")
    return float(value)


def check_choice(name: str, value, choices) -> str:
    """``value`` if it is one of ``choices``, else one line naming them."""
    if value not in choices:
        raise ParameterError(f"{name} must be one of {', '.join(map(str, choices))}, got "
                             f"{value!r}")
    return value


#: A Verilog identifier, as a module name must be (no escaped identifiers).
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")

#: Longest module name: it names files (``<top>_harness.v``; a file name has 255 bytes).
MAX_IDENTIFIER = 100


def check_identifier(name: str, value, shown=repr) -> str:
    """``value`` if it is a Verilog identifier (a top module's name) of at most
    :data:`MAX_IDENTIFIER` characters, else one line naming ``name`` (the value as
    ``shown(value)`` writes it: the command line cuts a long one short)."""
    if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value) \
            or len(value) > MAX_IDENTIFIER:
        raise ParameterError(f"{name} must be a Verilog identifier ([A-Za-z_][A-Za-z0-9_$]*, "
                             f"at most {MAX_IDENTIFIER} characters), got {shown(value)}")
    return value
