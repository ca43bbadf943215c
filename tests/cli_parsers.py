"""The command line's parsers as the tests read them (importable as ``cli_parsers``, like
``simulators``): a verb's parser built for a kind, and the options it takes."""

import argparse

from fatnet.cli.main import build_parser


def _verbs(argv: list[str]) -> dict[str, argparse.ArgumentParser]:
    parser = build_parser(argv)
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def verb_names() -> list[str]:
    """Every verb of ``fatnet``."""
    return sorted(_verbs([]))


def verb_parser(verb: str, kind: str) -> argparse.ArgumentParser:
    """The parser of ``fatnet <verb> <kind>``, with the kind's options."""
    return _verbs([verb, kind])[verb]


def verb_kinds(verb: str) -> list[str]:
    """The kinds (for ``experiment``, the experiments) ``fatnet <verb>`` accepts (none:
    it takes no kind)."""
    actions = _verbs([verb])[verb]._actions
    return sorted(next((a.choices for a in actions if a.dest == "kind"), ()))


def option_choices(verb: str, kind: str, option: str) -> list[str]:
    """The values ``fatnet <verb> <kind>`` accepts for ``option`` (empty: it has no such
    option, or it takes any value)."""
    action = verb_parser(verb, kind)._option_string_actions.get(option)
    return sorted(map(str, action.choices or ())) if action else []
