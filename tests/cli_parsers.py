"""The command line's parsers as the tests read them (importable as ``cli_parsers``, like
``simulators``): a verb's parser built for a kind, and the options it takes."""

import argparse

from fatnet.cli.main import build_parser


def verb_parser(verb: str, kind: str) -> argparse.ArgumentParser:
    """The parser of ``fatnet <verb> <kind>``, with the kind's options."""
    parser = build_parser([verb, kind])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices[verb]


def verb_kinds(verb: str) -> list[str]:
    """The kinds (for ``experiment``, the experiments) ``fatnet <verb>`` accepts."""
    parser = build_parser([verb])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sorted(next(a.choices for a in sub.choices[verb]._actions if a.dest == "kind"))


def option_choices(verb: str, kind: str, option: str) -> list[str]:
    """The values ``fatnet <verb> <kind>`` accepts for ``option`` (empty: it has no such
    option, or it takes any value)."""
    action = verb_parser(verb, kind)._option_string_actions.get(option)
    return sorted(map(str, action.choices or ())) if action else []
