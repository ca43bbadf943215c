"""The verbs agree: every default stated in ``--help``, one default per option across
verbs (the traffic, the hypercube's algorithm), ``--seed`` on every verb and kind, and
``fatnet --version``."""

from __future__ import annotations

import argparse
import json
import re
from importlib.metadata import version

import pytest

from fatnet.cli.main import build_parser, main
from fatnet.cli.options import DEFAULT_PATTERN, seed
from fatnet.api.registry import families

#: Network options of the smallest network of every kind that routes traffic.
NETWORKS = {
    "fat-tree": ["--leaves", "4", "--capacity", "2"],
    "butterfly": ["--inputs", "8"],
    "dilated-butterfly": ["--inputs", "8"],
    "multibutterfly": ["--inputs", "8"],
    "hypercube": ["--dimension", "3"],
}


def _subparsers(parser: argparse.ArgumentParser) -> dict:
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def _every_parser():
    """(name, parser) of the top level, every verb with every kind (or experiment) it
    takes, and ``demo``: each built the way ``main`` builds it."""
    top = build_parser([])
    yield "fatnet", top
    for verb, sub in _subparsers(top).items():
        names = next((a.choices for a in sub._actions if a.dest == "kind"), None)
        if names is None:   # demo: no kind of its own
            yield verb, _subparsers(build_parser([verb]))[verb]
            continue
        for name in names:
            yield f"{verb} {name}", _subparsers(build_parser([verb, name]))[verb]


def _shown_as(value) -> list[str]:
    """How a help text may write ``value``: ``2..12`` or ``6,8,10`` for a tuple of
    integers, ``1`` or ``1.0`` for a float."""
    if isinstance(value, (tuple, list)):
        items = [str(v) for v in value]
        shown = [",".join(items), ", ".join(items)]
        if len(value) > 2 and list(value) == list(range(value[0], value[-1] + 1)):
            shown.append(f"{value[0]}..{value[-1]}")
        return shown
    if isinstance(value, float):
        return [str(value), f"{value:g}"]
    return [str(value)]


def _help_of(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    return " ".join(parser._get_formatter()._expand_help(action).split())


def test_every_default_is_stated_in_the_help():
    missing, walked = [], 0
    for name, parser in _every_parser():
        for action in parser._actions:
            if (not action.option_strings or action.nargs == 0
                    or action.default in (None, argparse.SUPPRESS, [])):
                continue   # a flag, a positional, or no default to state
            walked += 1
            help_ = _help_of(parser, action)
            where = help_.find("default")
            shown = _shown_as(action.default)
            if where < 0 or not any(re.search(rf"(?<![\w.]){re.escape(s)}(?![\w.])",
                                              help_[where:]) for s in shown):
                missing.append(f"fatnet {name} {action.option_strings[-1]} "
                               f"(default {action.default!r}): {help_!r}")
    assert walked > 100   # the walk reached every verb and kind
    assert not missing, "\n".join(missing)


def test_build_dir_states_its_default(capsys):
    assert main(["sim", "butterfly", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "where the simulator's builds are kept and reused (default build/cocotb)" in out


def test_an_option_without_a_stated_default_gets_one_in_the_help(capsys):
    # the formatter's own rule, on an option written without its default
    from fatnet.cli.main import _Parser
    p = _Parser(prog="t")
    p.add_argument("--depth", type=int, default=7, help="how deep")
    p.add_argument("--width", type=int, default=3, help="how wide (default 3)")
    p.add_argument("--flag", action="store_true", help="a flag")
    text = " ".join(p.format_help().split())
    assert "how deep (default 7)" in text
    assert "how wide (default 3)" in text and "(default 3) (default 3)" not in text
    assert "a flag (default" not in text


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"fatnet {version('fatnet')}\n"


def _kinds_of(verb: str) -> list[str]:
    names = next(a.choices for a in _subparsers(build_parser([]))[verb]._actions
                 if a.dest == "kind")
    return sorted(names)


@pytest.mark.parametrize("verb", ["route", "sim"])
def test_every_kind_routes_the_same_default_pattern(verb):
    assert set(_kinds_of(verb)) <= set(NETWORKS)
    for kind in _kinds_of(verb):
        parser = _subparsers(build_parser([verb, kind]))[verb]
        args = parser.parse_args([kind, *NETWORKS[kind]])
        assert args.pattern == DEFAULT_PATTERN, (verb, kind)
        assert getattr(args, "messages", None) is None
        help_ = _help_of(parser, parser._option_string_actions["--pattern"])
        assert f"default {DEFAULT_PATTERN}" in help_, help_


@pytest.mark.parametrize("kind", sorted(NETWORKS))
def test_route_without_a_pattern_routes_the_default_one(kind, capsys):
    argv = ["route", kind, *NETWORKS[kind], "--seed", "3", "--json", "--allow-loss"]
    assert main(argv) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*argv, "--pattern", DEFAULT_PATTERN]) == 0
    assert json.loads(capsys.readouterr().out) == default
    assert main([*argv, "--pattern", "transpose"]) == 0
    assert json.loads(capsys.readouterr().out) != default   # the pattern is routed


def test_a_message_file_still_replaces_the_default_pattern(tmp_path, capsys):
    f = tmp_path / "m.json"
    f.write_text('{"messages": [[0, 3], [1, 2]]}')
    assert main(["route", "fat-tree", *NETWORKS["fat-tree"], "--messages", str(f),
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["messages"] == 2 and doc["source"] == str(f)


def test_the_hypercube_verbs_take_one_algorithm_by_default(tmp_path, capsys):
    from fatnet.cli import hypercube as hc
    defaults = {verb: _subparsers(build_parser([verb, "hypercube"]))[verb]
                ._option_string_actions["--algorithm"].default
                for verb in ("route", "gen", "sim", "board")}
    assert set(defaults.values()) == {hc.DEFAULT_ALGORITHM}, defaults
    # the same options: route runs the algorithm whose hardware sim would build
    argv = ["hypercube", "--dimension", "3", "--pattern", "complement"]
    assert main(["route", *argv, "--json"]) == 0
    routed = json.loads(capsys.readouterr().out)
    sim = _subparsers(build_parser(["sim", "hypercube"]))["sim"].parse_args(argv)
    assert routed["algorithm"] == hc.network_from_args("hypercube", sim).algorithm == "alg1"
    assert routed["delivered"] == 8   # the complement is collision-free for Algorithm 1


def test_every_verb_and_kind_takes_the_one_seed_option():
    checked = []
    for name, parser in _every_parser():
        if " " not in name:
            continue   # the top level and demo take no kind
        action = parser._option_string_actions.get("--seed")
        assert action is not None, f"fatnet {name} takes no --seed"
        assert action.type is seed, name
        checked.append(name)
    assert {"gen hypercube", "info hypercube", "board hypercube"} <= set(checked)


@pytest.mark.parametrize("verb, kind, says", [
    ("gen", "hypercube", "hardware itself draws nothing"),
    ("info", "hypercube", "info draws nothing at random, so the seed changes nothing"),
    ("schedule", "fat-tree", "schedule draws nothing at random, so the seed changes nothing"),
])
def test_where_a_seed_changes_nothing_the_help_says_so(verb, kind, says):
    parser = _subparsers(build_parser([verb, kind]))[verb]
    help_ = _help_of(parser, parser._option_string_actions["--seed"])
    assert says in help_, help_


@pytest.mark.parametrize("argv", [
    ["info", "hypercube", "--dimension", "3", "--json"],
    ["schedule", "fat-tree", "--leaves", "8", "--root-capacity", "4", "--messages", "m.json"],
])
def test_a_seed_said_to_change_nothing_changes_nothing(argv, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.json").write_text('{"messages": [[0, 5], [1, 5], [2, 7], [4, 1], '
                                     '[5, 0], [6, 2], [7, 3]]}')
    outs = []
    for s in ("0", "7"):
        assert main([*argv, "--seed", s]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and outs[0]


def test_gen_hypercube_takes_a_seed(tmp_path, capsys):
    def manifest(*extra):
        out = tmp_path / "-".join(extra or ("plain",))
        assert main(["gen", "hypercube", "--dimension", "2", *extra, "-o", str(out)]) == 0
        capsys.readouterr()
        return (json.loads((out / "hypercube.json").read_text()),
                (out / "hypercube.v").read_text())
    # Valiant's intermediate nodes are drawn from the seed; alg1's hardware draws nothing
    valiant = manifest("--algorithm", "valiant", "--seed", "5")[0]
    assert json.dumps(valiant).count('"seed": 5') >= 1
    assert manifest("--seed", "5")[1] == manifest()[1]
    assert main(["info", "hypercube", "--dimension", "2", "--seed", "5"]) == 0


def test_the_networks_here_cover_every_kind():
    assert {k for f in families() for k in f.kinds} == set(NETWORKS)


@pytest.mark.parametrize("argv, lost", [
    (["route", "hypercube", "--dimension", "4"], "of 16 messages not delivered"),
    (["route", "fat-tree", "--leaves", "16", "--root-capacity", "8", "--mode", "online",
      "--pattern", "hot-spot", "--max-cycles", "1"], "of 16"),
])
def test_route_with_losses_exits_1_with_one_line_naming_allow_loss(argv, lost, capsys):
    """A ``route`` that loses messages never exits non-zero silently: one stderr line says
    how many were lost and names ``--allow-loss``; with it the status is 0."""
    assert main(argv) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and lost in err[0] and "--allow-loss" in err[0]
    assert main(argv + ["--allow-loss"]) == 0
    assert capsys.readouterr().err == ""
