"""Option parsers the families' command lines share.

Each is an argparse ``type``: a value out of range is refused by argparse itself, before
anything is built, run or written, in one line ``fatnet <verb>: error: argument
--<option>: <option> must be ..., got ...`` that names the accepted range, whether or
not the value would be used (a hot-spot fraction with another pattern is still checked).
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import sys
from pathlib import Path

from ..api.params import check_fraction, check_identifier
from ..golden.cycle import MAX_START_STAGES
from ..golden.errors import ParameterError
from ..golden.seeds import SEED_RANGE, check_seed

__all__ = ["MAX_CYCLES", "MAX_TRIALS", "comma_ints", "bounded_int", "power_of_two",
           "fraction", "seed", "add_seed_option", "add_unused_seed_option",
           "DEFAULT_PATTERN", "add_pattern_option",
           "add_start_stages_option",
           "add_stuck_link_option", "parse_stuck_link", "stuck_links",
           "output_directory", "output_file", "identifier"]

#: Most delivery cycles a run may be given (``--max-cycles``): a run whose messages can
#: never all arrive (a fault cuts them off) stops there, so the bound keeps it finite.
MAX_CYCLES = 1_000_000
#: Most random trials of an experiment (``--trials``; the paper's tables use 2,000).
MAX_TRIALS = 100_000

#: The most characters of a refused value an error line quotes.
_SHOWN_CHARACTERS = 40


def _shown(text: str) -> str:
    """``text`` quoted with ``repr`` (no character of it can break the line), cut short:
    a value of 5,000 digits is refused, not printed."""
    if len(text) > _SHOWN_CHARACTERS:
        return f"{text[:_SHOWN_CHARACTERS]!r}... ({len(text)} characters)"
    return repr(text)


def comma_ints(expected: str):
    """An argparse ``type``: ``"3,1,2"`` -> ``[3, 1, 2]``; anything else is refused in one
    line that says what was ``expected`` (``"integers (levels 0..lg n)"``)."""
    def parse(text: str) -> list[int]:
        try:
            return [int(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {expected}, got {_shown(text)}") from None
    return parse


def _integer(text: str, name: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:   # not an integer, or more digits than int() converts
        raise argparse.ArgumentTypeError(f"{name} must be {what}, got {_shown(text)}") \
            from None


def bounded_int(name: str, low: int, high: int | None = None):
    """An argparse ``type``: an integer in ``[low, high]`` (``high`` None: no upper
    bound), else one line naming ``name`` and the range.

    Parameters
    ----------
    name : str
        The option's name without dashes, as the error line says it.
    low, high : int
        The accepted range, both ends included.
    """
    what = (f"an integer >= {low}" if high is None
            else f"an integer in [{low}, {high}]")

    def parse(text: str) -> int:
        value = _integer(text, name, what)
        if value < low or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {value}")
        return value
    return parse


def power_of_two(name: str, low: int, high: int):
    """An argparse ``type``: a power of two in ``[low, high]``, else one line."""
    what = f"a power of two in [{low}, {high}]"

    def parse(text: str) -> int:
        value = _integer(text, name, what)
        if not low <= value <= high or value & (value - 1):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {value}")
        return value
    return parse


def fraction(name: str, zero: bool = True):
    """An argparse ``type``: a number in [0, 1] (in (0, 1] when ``zero`` is False; NaN
    is not one), else one line (:func:`fatnet.api.params.check_fraction`'s, showing the
    text as typed)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan   # not a number: refused by the check, as NaN is
        try:
            return check_fraction(name, value, given=_shown(text), zero=zero)
        except ParameterError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return parse


@functools.lru_cache(maxsize=None)
def seed_type(name: str = "seed"):
    """The argparse ``type`` of every seed option (``name``: the option without dashes,
    as its error line says it): the model's one seed range
    (:data:`fatnet.golden.seeds.MAX_SEED`); one function per name, so that every option
    of a name shares it."""
    def parse(text: str) -> int:
        value = _integer(text, name, SEED_RANGE)
        try:
            return check_seed(value, name)
        except ParameterError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return parse


#: ``--seed``'s argparse ``type``.
seed = seed_type("seed")


def add_seed_option(p: argparse.ArgumentParser, help: str = "seed (default 0)",
                    flag: str = "--seed") -> None:
    """``flag`` (default ``--seed``; default value 0), checked by :func:`seed_type`:
    every verb and kind adds its seeds through here, so every one takes the same range."""
    p.add_argument(flag, type=seed_type(flag.lstrip("-")), default=0, metavar="S",
                   help=help)


def add_unused_seed_option(p: argparse.ArgumentParser, verb: str) -> None:
    """``--seed`` for a verb that draws nothing at random: taken, so that one command
    line serves every verb of a kind, and its help says that it changes nothing."""
    add_seed_option(p, f"accepted as by every verb (default 0); {verb} draws nothing at "
                       f"random, so the seed changes nothing here")


#: The traffic of ``route`` and ``sim`` when neither ``--pattern`` nor ``--messages`` is
#: given, for every kind: a permutation, because it is the traffic every kind and every
#: algorithm routes (the hypercube's Algorithm 2 refuses a destination twice).
DEFAULT_PATTERN = "random-permutation"


def add_pattern_option(p, patterns, sender: str = "input",
                       receiver: str = "output") -> None:
    """``--pattern P`` (default :data:`DEFAULT_PATTERN`) on ``p`` (a parser, or the group
    it shares with ``--messages``): every kind's ``route`` and ``sim`` take the same
    default. ``patterns`` are the kind's names (checked by its model, which names them
    in its refusal); ``sender`` and ``receiver`` name the ends of a message (``leaf``,
    ``node``)."""
    p.add_argument("--pattern", default=DEFAULT_PATTERN, metavar="P",
                   help=f"the traffic, one of: {', '.join(patterns)} (default "
                        f"{DEFAULT_PATTERN}: every {sender} sends one message and every "
                        f"{receiver} receives one, drawn from --seed)")


def add_start_stages_option(p: argparse.ArgumentParser) -> None:
    """``--start-stages D`` (default 0), for every family whose tops have a start tree:
    the strobe reaches the switches through D register stages, and bit-time 0 is the
    clock D + 1 after it."""
    p.add_argument("--start-stages", type=bounded_int("start-stages", 0, MAX_START_STAGES),
                   default=0, metavar="D",
                   help=f"register stages from the start strobe to the switches (a "
                        f"balanced tree, fan-out ceil(switches^(1/D))), for the clock of "
                        f"large networks on a board: "
                        f"bit-time 0 is the clock D + 1 after the strobe (0 .. "
                        f"{MAX_START_STAGES}; default 0)")


def parse_stuck_link(text: str, syntax: str, words: dict | None = None):
    """``((a, b, c), value)`` from ``--stuck-link``'s four ``:``-separated fields
    (``syntax`` as help and errors show it): non-negative integers, the first one a word
    of ``words`` (replaced by its value) where given; one line naming ``syntax``
    otherwise. The ranges are the model's to check."""
    parts = str(text).split(":")
    first = parts[0]
    ok = (len(parts) == 4 and all(p.isdigit() for p in parts[1:])
          and (first in words if words is not None else first.isdigit()))
    if not ok:
        raise argparse.ArgumentTypeError(f"stuck-link must be {syntax} (non-negative "
                                         f"integers), got {text!r}")
    head = words[first] if words is not None else int(first)
    return (head, int(parts[1]), int(parts[2])), int(parts[3])


def add_stuck_link_option(p: argparse.ArgumentParser, syntax: str, which: str,
                          words: dict | None = None) -> None:
    """``--stuck-link SPEC`` (repeatable), for every family whose hardware can hold a
    link inside the network stuck: SPEC is ``syntax``, read by :func:`parse_stuck_link`
    (``words``: the names its first field takes, if not a number), ``which`` says what
    it names. A form that does not parse is refused in one line; the ranges are checked
    when the network is built."""
    def stuck_link(text: str):
        return parse_stuck_link(text, syntax, words)
    p.add_argument("--stuck-link", type=stuck_link, action="append", default=[],
                   metavar=syntax,
                   help=f"inject a fault no status register knows of: {which}; messages "
                        f"routed onto it are lost there, and one stuck at 1 feeds a stream "
                        f"of ones on (repeatable; the model and the hardware both carry it)")


def stuck_links(pairs, syntax: str | None = None, words: dict | None = None) -> dict:
    """The ``--stuck-link`` values (``(key, value)`` pairs) as one dict; a wire named
    twice with two values is refused in one line rather than one of them dropped. With
    the family's ``syntax`` (and ``words``, as :func:`parse_stuck_link` takes them), a
    value given as its text (the API's ``stuck_link=["up:3:0:1"]``) is parsed first."""
    out: dict = {}
    for item in pairs:
        if syntax is not None and isinstance(item, str):
            try:
                item = parse_stuck_link(item, syntax, words)
            except argparse.ArgumentTypeError as e:
                raise ParameterError(str(e)) from None
        key, value = item
        if out.get(key, value) != value:
            raise ParameterError(f"stuck-link names one wire twice, at {out[key]} and at "
                                 f"{value}: {key}")
        out[key] = value
    return out


def _nearest_existing(path: Path) -> Path:
    """``path`` or the nearest of its ancestors that exists (``.`` at the latest)."""
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path


def _refuse_path(name: str, text: str, what: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"{name} must be {what}, got {_shown(text)}")


def output_directory(name: str):
    """An argparse ``type``: a directory the command writes into, made if missing.

    Refused at once (not after minutes of work) when it, or the nearest ancestor that
    exists, is not a writable directory (a file in the way)."""
    what = "a directory, or a path where one can be made"

    def parse(text: str) -> str:
        if not text or "\0" in text:
            raise _refuse_path(name, text, what)
        path = Path(text)
        found = _nearest_existing(path if path.is_absolute() else Path.cwd() / path)
        if not found.is_dir():
            where = "it is" if found == path.absolute() else f"{str(found)!r} is"
            raise _refuse_path(name, text, f"{what} ({where} not a directory)")
        if not os.access(found, os.W_OK | os.X_OK):
            raise _refuse_path(name, text, f"{what} ({str(found)!r} is not writable)")
        return text
    return parse


#: What ``--plot`` can write (matplotlib picks the format by the file's suffix).
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def output_file(name: str, suffixes: tuple = PLOT_SUFFIXES):
    """An argparse ``type``: a file the command writes (a plot), checked at once: one of
    ``suffixes``, its directory must exist and be writable, and it must not be a
    directory itself."""
    what = "a file in a writable directory that exists"

    def parse(text: str) -> str:
        if not text or "\0" in text:
            raise _refuse_path(name, text, what)
        if Path(text).suffix.lower() not in suffixes:
            raise _refuse_path(name, text, f"a file ending in {', '.join(suffixes)}")
        path = Path(text)
        folder = path.parent if str(path.parent) else Path(".")
        if path.is_dir():
            raise _refuse_path(name, text, f"{what} (it is a directory)")
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise _refuse_path(name, text, f"{what} ({str(folder)!r} is not one)")
        return text
    return parse


def identifier(name: str):
    """An argparse ``type``: a Verilog identifier (a top module's name), at most
    :data:`fatnet.api.params.MAX_IDENTIFIER` characters (the API's one rule)."""
    def parse(text: str) -> str:
        try:
            return check_identifier(name, text, _shown)
        except ParameterError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    return parse


def loss_status(lost: int, messages: int, allow_loss: bool, why: str = "") -> int:
    """``route``'s exit status: 0 when every message arrived or ``--allow-loss`` was
    given, else 1 with one line on stderr saying how many were lost (a non-zero status
    never comes without its reason). ``why`` names the cause or the option that avoids it."""
    if not lost or allow_loss:
        return 0
    print(f"fatnet route: error: {lost} of {messages} messages not delivered"
          + (f" ({why})" if why else "") + "; --allow-loss exits 0 with losses",
          file=sys.stderr)
    return 1
