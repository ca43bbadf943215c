"""Hostile input never crashes or hangs the command line (issue 18).

Every case holds the README's contract: exit status 2, exactly one line on stderr
(``fatnet <verb>: error: ...``) naming the parameter, no traceback, and nothing written
where the command would write (an output directory, a plot, the simulator's build).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from fatnet.cli.main import main
from fatnet.golden import messages

FAT_TREE = ["--leaves", "4", "--capacity", "2"]

#: Every verb and kind that reads ``--messages``.
MESSAGE_COMMANDS = [
    ["route", "fat-tree", *FAT_TREE],
    ["schedule", "fat-tree", *FAT_TREE],
    ["sim", "fat-tree", *FAT_TREE],
    ["route", "hypercube", "--dimension", "2"],
    ["sim", "hypercube", "--dimension", "2"],
]

#: Every option that reads a JSON input file: the message commands and the butterfly's
#: per-cycle fault masks.
FILE_OPTIONS = ([(cmd, "--messages") for cmd in MESSAGE_COMMANDS]
                + [(["sim", "butterfly", "--inputs", "8"], "--fault-masks")])


def _name(x):
    return " ".join(x) if isinstance(x, list) else None


def _files(root) -> set:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def refused(capsys, argv, needle) -> str:
    """Run ``fatnet argv`` in-process and check the contract; its stderr line."""
    try:
        code = main(argv)
    except SystemExit as e:  # argparse's own refusals
        code = e.code
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith(f"fatnet {argv[0]}: error: "), err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err and needle in err, err
    assert out == "", out
    return err


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A current directory that must stay as the test left it: the default build
    directory of ``sim`` (build/cocotb) is relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def refused_writing_nothing(capsys, workdir, argv, needle) -> str:
    before = _files(workdir)
    err = refused(capsys, argv, needle)
    assert _files(workdir) == before, "a refused command wrote files"
    return err


# ---------------------------------------------------------------- 1. input files
HOSTILE_CONTENTS = {
    "utf-16": ('{"messages": [[0, 1]]}'.encode("utf-16"),
               "not UTF-8 text (byte 0xff at offset 0)"),
    "stray 0xff byte": (b'{"messages": [[0, 1]]}\xff', "(byte 0xff at offset 22)"),
    "latin-1": ('{"messages": [[0, 1]], "note": "caf\xe9"}'.encode("latin-1"),
                "not UTF-8 text (byte 0xe9 at offset 35)"),
    "nested 100,000 deep": (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "an integer of 5,000 digits": (b'{"messages": [[0, 1, ' + b"9" * 5000 + b"]]}",
                                   "an integer of 5000 digits"),
}


@pytest.mark.parametrize("content, needle", HOSTILE_CONTENTS.values(),
                         ids=list(HOSTILE_CONTENTS))
@pytest.mark.parametrize("command, option", FILE_OPTIONS, ids=_name)
def test_a_hostile_input_file_is_one_line(command, option, content, needle, workdir,
                                          capsys):
    (workdir / "in.json").write_bytes(content)
    err = refused_writing_nothing(capsys, workdir, [*command, option, "in.json"], needle)
    assert f"{option[2:]} file 'in.json'" in err


@pytest.mark.parametrize("command, option", FILE_OPTIONS, ids=_name)
def test_a_directory_or_a_device_is_not_an_input_file(command, option, workdir, capsys):
    (workdir / "d").mkdir()
    refused_writing_nothing(capsys, workdir, [*command, option, "d"],
                            f"{option[2:]} must be a regular file, got 'd' (a directory)")
    refused_writing_nothing(capsys, workdir, [*command, option, os.devnull],
                            f"{option[2:]} must be a regular file, got "
                            f"{os.devnull!r} (a character device)")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("command, option", FILE_OPTIONS, ids=_name)
def test_a_fifo_is_refused_without_waiting_for_a_writer(command, option, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    # a process of its own: a loader that opened the FIFO would block until the timeout
    done = subprocess.run([sys.executable, "-m", "fatnet.cli", *command, option, "fifo"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr == (f"fatnet {command[0]}: error: {option[2:]} must be a regular "
                           f"file, got 'fifo' (a FIFO)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def test_an_input_file_is_read_up_to_a_bound(workdir, capsys, monkeypatch):
    doc = json.dumps({"messages": [[0, 1]] * 20}).encode()
    monkeypatch.setattr(messages, "MAX_INPUT_FILE_BYTES", len(doc) - 1)
    (workdir / "in.json").write_bytes(doc)
    refused_writing_nothing(capsys, workdir, ["route", "fat-tree", *FAT_TREE, "--messages",
                                              "in.json"],
                            f"larger than {len(doc) - 1} bytes")


def test_a_utf8_byte_order_mark_is_skipped(workdir, capsys):
    (workdir / "in.json").write_bytes(b"\xef\xbb\xbf" + b'{"messages": [[0, 1]]}')
    assert main(["route", "fat-tree", *FAT_TREE, "--messages", "in.json"]) == 0


def test_schedule_takes_every_file_route_takes(workdir, capsys):
    pairs = [[0, 1, 200], [2, "ext", 3], [3, 0]]
    (workdir / "in.json").write_text(json.dumps({"messages": pairs}))
    assert main(["route", "fat-tree", *FAT_TREE, "--messages", "in.json"]) == 0
    capsys.readouterr()
    assert main(["schedule", "fat-tree", *FAT_TREE, "--messages", "in.json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert sorted(map(str, (p for c in doc["cycles"] for p in c))) == sorted(
        str(p[:2]) for p in pairs)
    # a payload column that is not a non-negative integer is refused by both
    for bad in (-1, "x", 1.5):
        (workdir / "in.json").write_text(json.dumps({"messages": [[0, 1, bad]]}))
        for verb in ("route", "schedule"):
            refused(capsys, [verb, "fat-tree", *FAT_TREE, "--messages", "in.json"],
                    "messages[0]: payload must be a non-negative integer")


def test_a_huge_entry_is_cut_short_in_the_error_line(workdir, capsys):
    (workdir / "in.json").write_text(json.dumps({"messages": [list(range(10_000))]}))
    err = refused(capsys, ["route", "fat-tree", *FAT_TREE, "--messages", "in.json"],
                  "expected [src, dst] or [src, dst, payload], got [0, 1, 2")
    assert len(err) < 200


# ---------------------------------------------------------------- 2. seeds
BOARD = ["--board", "icebreaker", "-o", "out"]

#: A command of every verb and kind that takes --seed; "m.json" is written by the test.
SEED_COMMANDS = [
    ["schedule", "fat-tree", *FAT_TREE, "--messages", "m.json"],
    ["route", "fat-tree", *FAT_TREE, "--pattern", "transpose"],
    ["info", "fat-tree", *FAT_TREE],
    ["gen", "fat-tree", *FAT_TREE, "-o", "out"],
    ["sim", "fat-tree", *FAT_TREE, "--pattern", "transpose"],
    ["board", "fat-tree", *FAT_TREE, *BOARD],
    ["route", "butterfly", "--inputs", "8"],
    ["info", "dilated-butterfly", "--inputs", "8"],
    ["gen", "multibutterfly", "--inputs", "8", "-o", "out"],
    ["sim", "butterfly", "--inputs", "8"],
    ["board", "butterfly", "--inputs", "8", *BOARD],
    ["route", "hypercube", "--dimension", "2", "--pattern", "transpose"],
    ["info", "hypercube", "--dimension", "2"],
    ["gen", "hypercube", "--dimension", "2", "-o", "out"],
    ["sim", "hypercube", "--dimension", "2", "--pattern", "transpose"],
    ["board", "hypercube", "--dimension", "2", *BOARD],
    ["experiment", "acceptance", "--inputs", "8", "--trials", "2"],
    ["experiment", "load-sweep", "--inputs", "8", "--trials", "2", "--plot", "p.png"],
    ["experiment", "leighton-maggs", "--inputs", "8", "--trials", "2", "--plot", "p.png"],
    ["experiment", "kuszmaul", "--dimensions", "2", "--trials", "1", "--plot", "p.png"],
]


@pytest.mark.parametrize("value", ["-1", str(2 ** 63), str(2 ** 64 + 1), "x", "9" * 5000])
@pytest.mark.parametrize("argv", SEED_COMMANDS, ids=_name)
def test_a_seed_out_of_range_is_refused_everywhere(argv, value, workdir, capsys):
    (workdir / "m.json").write_text('{"messages": [[0, 1]]}')
    err = refused_writing_nothing(capsys, workdir, [*argv, "--seed", value],
                                  "argument --seed: seed must be an integer in "
                                  "[0, 2^63-1], got ")
    assert len(err) < 200


def _subparsers(parser):
    return next(a for a in parser._actions
                if isinstance(a, argparse._SubParsersAction)).choices


def test_every_seed_option_is_the_shared_one():
    # every --seed of every verb, kind and experiment, built the way main builds them
    from fatnet.cli.main import build_parser
    from fatnet.cli.options import seed
    top = _subparsers(build_parser([]))
    seen = 0
    for verb, sub in top.items():
        names = next((a.choices for a in sub._actions if a.dest == "kind"), ())
        for name in names:
            parser = _subparsers(build_parser([verb, name]))[verb]
            action = parser._option_string_actions.get("--seed")
            if action is not None:
                seen += 1
                assert action.type is seed, (verb, name)
    assert seen >= len(SEED_COMMANDS)


def test_the_largest_seed_is_taken(capsys):
    assert main(["route", "butterfly", "--inputs", "8", "--seed", str(2 ** 63 - 1)]) == 0
    assert main(["info", "fat-tree", *FAT_TREE, "--seed", str(2 ** 63 - 1)]) == 0


def test_the_model_checks_its_seeds_too():
    from fatnet.golden.butterfly import api as bf
    from fatnet.golden.errors import ParameterError
    with pytest.raises(ParameterError, match=r"seed must be an integer in \[0, 2\^63-1\]"):
        bf.spec_from_options("butterfly", 8, seed=-1)
    with pytest.raises(ParameterError, match="seed must be"):
        bf.sweep(8, 2, seed=2 ** 64)


# ---------------------------------------------------------------- 3. values out of range
MAX_CYCLES_COMMANDS = [
    ["route", "fat-tree", *FAT_TREE, "--pattern", "transpose"],
    ["sim", "fat-tree", *FAT_TREE, "--pattern", "transpose"],
    ["route", "butterfly", "--inputs", "8"],
    ["sim", "butterfly", "--inputs", "8"],
    ["sim", "hypercube", "--dimension", "2", "--pattern", "transpose"],
]


@pytest.mark.parametrize("value", ["0", "-1"])
@pytest.mark.parametrize("argv", MAX_CYCLES_COMMANDS, ids=_name)
def test_max_cycles_below_one_is_refused_everywhere(argv, value, workdir, capsys):
    # 0 was the default on the fat-tree and "every message lost" on the butterfly
    refused_writing_nothing(capsys, workdir, [*argv, "--max-cycles", value],
                            f"argument --max-cycles: max-cycles must be an integer in "
                            f"[1, 1000000], got {value}")


def test_max_cycles_past_its_bound_is_refused(workdir, capsys):
    """A run whose messages can never all arrive stops at --max-cycles: unbounded, it
    would not stop (the fuzz test found --trials 2^63 running for ever the same way)."""
    refused_writing_nothing(capsys, workdir, [*MAX_CYCLES_COMMANDS[0], "--max-cycles",
                                              str(2 ** 63)],
                            "max-cycles must be an integer in [1, 1000000]")
    refused_writing_nothing(capsys, workdir, ["experiment", "load-sweep", "--inputs", "4",
                                              "--trials", str(2 ** 63)],
                            "trials must be an integer in [1, 100000]")


def test_the_model_refuses_max_cycles_below_one():
    from fatnet.golden.butterfly import api as bf
    from fatnet.golden.butterfly.cyclemodel import run_circuit
    from fatnet.golden.errors import ParameterError
    circuit = bf.build_circuit(bf.spec_from_options("butterfly", 8), 8)
    ms = bf.pattern_messages(circuit)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ParameterError, match="max_cycles must be an integer >= 1"):
            run_circuit(circuit, ms, max_cycles=bad)


HOT_FRACTION_COMMANDS = [
    ["route", "fat-tree", *FAT_TREE, "--pattern", "transpose"],
    ["route", "butterfly", "--inputs", "8", "--pattern", "transpose"],
    ["sim", "butterfly", "--inputs", "8"],
    ["route", "hypercube", "--dimension", "2", "--pattern", "transpose"],
    ["sim", "hypercube", "--dimension", "2", "--pattern", "transpose"],
]


@pytest.mark.parametrize("value", ["5", "-0.1", "nan", "x"])
@pytest.mark.parametrize("argv", HOT_FRACTION_COMMANDS, ids=_name)
def test_hot_fraction_is_checked_whatever_the_pattern(argv, value, workdir, capsys):
    refused_writing_nothing(capsys, workdir, [*argv, "--hot-fraction", value],
                            f"argument --hot-fraction: hot-fraction must be a number in "
                            f"[0, 1], got {value!r}")


@pytest.mark.parametrize("argv", [
    ["route", "fat-tree", *FAT_TREE, "--pattern", "transpose", "--mode", "online"],
    ["sim", "fat-tree", *FAT_TREE, "--pattern", "transpose", "--mode", "online"],
    ["schedule", "fat-tree", *FAT_TREE, "--messages", "m.json"],
], ids=_name)
def test_an_unknown_method_is_refused_in_every_mode(argv, workdir, capsys):
    (workdir / "m.json").write_text('{"messages": [[0, 1]]}')
    refused_writing_nothing(capsys, workdir, [*argv, "--method", "bogus"],
                            "argument --method: invalid choice: 'bogus' (choose from")


EXPERIMENTS = {
    "acceptance": ["experiment", "acceptance", "--inputs", "8"],
    "load-sweep": ["experiment", "load-sweep", "--inputs", "8", "--plot", "p.png"],
    "leighton-maggs": ["experiment", "leighton-maggs", "--inputs", "8", "--plot", "p.png"],
    "kuszmaul": ["experiment", "kuszmaul", "--dimensions", "2", "--plot", "p.png"],
}


@pytest.mark.parametrize("value", ["0", "-3"])
@pytest.mark.parametrize("argv", EXPERIMENTS.values(), ids=list(EXPERIMENTS))
def test_trials_below_one_is_refused_by_every_experiment(argv, value, workdir, capsys):
    refused_writing_nothing(capsys, workdir, [*argv, "--trials", value],
                            "argument --trials: trials must be an integer ")


#: (command, option, value, what the line says): every other integer with a lower bound
BELOW_RANGE = [
    (["info", "fat-tree", "--capacity", "2"], "--leaves", "1",
     "leaves must be a power of two in [2, 65536], got 1"),
    (["info", "fat-tree", "--leaves", "4"], "--capacity", "0",
     "capacity must be an integer >= 1, got 0"),
    (["info", "fat-tree", "--leaves", "4"], "--root-capacity", "-2",
     "root-capacity must be an integer >= 1, got -2"),
    (["gen", "fat-tree", *FAT_TREE, "-o", "out"], "--payload-bits", "-1",
     "payload-bits must be an integer in [0, 1024], got -1"),
    (["gen", "fat-tree", *FAT_TREE, "-o", "out"], "--link-stages", "-1",
     "link-stages must be an integer in [0, 8], got -1"),
    (["route", "butterfly"], "--inputs", "2",
     "inputs must be a power of two in [4, 65536], got 2"),
    (["route", "dilated-butterfly"], "--multiplicity", "0",
     "multiplicity must be an integer in [1, 64], got 0"),
    (["route", "butterfly"], "--faults", "-1", "faults must be an integer >= 0, got -1"),
    (["route", "butterfly"], "--fault-rate", "2", "fault-rate must be a number in [0, 1]"),
    (["route", "butterfly"], "--problems", "0", "problems must be an integer >= 1, got 0"),
    (["sim", "butterfly"], "--problems", "-1", "problems must be an integer >= 1, got -1"),
    (["gen", "butterfly", "-o", "out"], "--link-stages", "-2",
     "link-stages must be an integer in [0, 8], got -2"),
    (["gen", "butterfly", "-o", "out"], "--start-stages", "5",
     "start-stages must be an integer in [0, 4], got 5"),
    (["sim", "fat-tree", *FAT_TREE, "--pattern", "hot-spot"], "--start-stages", "-1",
     "start-stages must be an integer in [0, 4], got -1"),
    (["info", "hypercube"], "--dimension", "0", "dimension must be an integer in [1, 20]"),
    (["info", "hypercube", "--dimension", "3"], "--message-bits", "0",
     "message-bits must be an integer in [1, 1048576], got 0"),
    (["route", "hypercube", "--dimension", "2", "--pattern", "transpose"], "--problems",
     "0", "problems must be an integer in [1, 1024], got 0"),
    (["route", "hypercube", "--dimension", "2", "--pattern", "transpose", "--algorithm",
      "ecube"], "--buffer", "0", "buffer must be an integer in [1, 1073741824], got 0"),
    (["gen", "hypercube", "--dimension", "2", "--algorithm", "ecube", "-o", "out"],
     "--buffer", "0", "buffer must be an integer in [1, 16], got 0"),
    (["gen", "hypercube", "--dimension", "2", "--algorithm", "ecube", "-o", "out"],
     "--steps", "0", "steps must be an integer in [1, 65536], got 0"),
    (["board", "butterfly", "--inputs", "8", *BOARD], "--report-cycles", "0",
     "report-cycles must be an integer in [1, 4294967295], got 0"),
    (["board", "butterfly", "--inputs", "8", *BOARD], "--predict", "-1",
     "predict must be an integer in [0, 1000], got -1"),
    (["board", "butterfly", "--inputs", "8", *BOARD], "--load", "2",
     "load must be a number in [0, 1], got '2'"),
]


@pytest.mark.parametrize("argv, option, value, words", BELOW_RANGE,
                         ids=lambda x: _name(x) if isinstance(x, list) else x)
def test_every_bounded_integer_is_checked_by_argparse(argv, option, value, words, workdir,
                                                      capsys):
    refused_writing_nothing(capsys, workdir, [*argv, option, value],
                            f"argument {option}: {words}")


def test_no_integer_option_is_left_unbounded():
    # a plain type=int takes -1 and 10**4000 alike: every integer option names its range
    from fatnet.cli.main import build_parser
    top = _subparsers(build_parser([]))
    for verb, sub in top.items():
        names = next((a.choices for a in sub._actions if a.dest == "kind"), ())
        for name in names:
            parser = _subparsers(build_parser([verb, name]))[verb]
            loose = [a.option_strings for a in parser._actions if a.type is int]
            assert loose == [], (verb, name, loose)


# ---------------------------------------------------------------- 4. options before the kind
@pytest.mark.parametrize("argv", [
    ["info", "--leaves", "4", "--root-capacity", "3", "fat-tree"],
    ["info", "--leaves", "4", "fat-tree", "--capacity", "2", "--json"],
    ["route", "--inputs", "8", "--seed", "3", "butterfly", "--json"],
    ["info", "--dimension", "3", "hypercube"],
    ["experiment", "--inputs", "8", "--trials", "2", "acceptance", "--json"],
], ids=_name)
def test_options_may_come_before_the_kind(argv, capsys):
    assert main(argv) == 0, capsys.readouterr().err
    kind = next(a for a in argv[1:] if not a.startswith("-") and not a.isdigit())
    rest = [a for a in argv[1:] if a != kind]
    capsys.readouterr()
    assert main([argv[0], kind, *rest]) == 0
    first = capsys.readouterr().out
    assert main(argv) == 0
    assert capsys.readouterr().out == first     # the same command, the same output


def test_a_kind_named_as_an_option_value_is_not_taken_for_the_kind(workdir, capsys):
    # --top butterfly: the first kind-like token is the value; fat-tree is the kind
    assert main(["gen", "--top", "butterfly", "fat-tree", *FAT_TREE, "-o", "out"]) == 0
    assert (workdir / "out" / "butterfly.json").exists()


def test_help_still_lists_the_kinds_and_a_kinds_options(capsys):
    assert main(["info", "--help"]) == 0
    out = capsys.readouterr().out
    assert "fat-tree" in out and "--leaves" not in out
    for argv in (["info", "fat-tree", "--help"], ["info", "--help", "fat-tree"]):
        assert main(argv) == 0
        assert "--leaves" in capsys.readouterr().out


@pytest.mark.parametrize("argv, named", [
    (["route", "hypertorus", "--leaves", "4"], "hypertorus"),
    # the refusal names the token meant as the kind, not an option's value before it
    (["route", "--leaves", "4", "hypertorus"], "hypertorus"),
    (["experiment", "--inputs", "8", "nonesuch"], "nonesuch"),
], ids=_name)
def test_an_unknown_kind_lists_the_accepted_ones(argv, named, workdir, capsys):
    err = refused_writing_nothing(capsys, workdir, argv, f"invalid choice: {named!r}")
    assert ("'butterfly', 'dilated-butterfly', 'fat-tree', 'hypercube', 'multibutterfly'"
            in err or "'acceptance', 'kuszmaul', 'leighton-maggs', 'load-sweep'" in err)


@pytest.mark.parametrize("argv", [
    ["route", "--json", "hypertorus"],      # a flag takes no value
    ["info", "--leaves=4", "hypertorus"],
    ["route", "--leaves", "4", "--capacity", "1", "hypertorus"],
], ids=_name)
def test_an_unknown_kind_is_named_whatever_options_come_before_it(argv, workdir, capsys):
    refused_writing_nothing(capsys, workdir, argv, "invalid choice: 'hypertorus'")


@pytest.mark.parametrize("argv, what", [
    (["route"], "kind"), (["route", "--json"], "kind"), (["experiment", "--seed=3"], "name"),
], ids=_name)
def test_no_kind_at_all_says_it_is_required(argv, what, workdir, capsys):
    refused_writing_nothing(capsys, workdir, argv,
                            f"the following arguments are required: {what}")


# ---------------------------------------------------------------- 5. one line, whatever
#: values with characters that would split or rewrite the line if printed as they are
CONTROL = ["a\nb", "a\rb", "a\x1b[2Jb", "a\u2028b"]


@pytest.mark.parametrize("value", CONTROL, ids=repr)
@pytest.mark.parametrize("argv", [
    ["route", "fat-tree", *FAT_TREE, "--pattern", "{}"],
    ["route", "butterfly", "--inputs", "8", "--pattern", "{}"],
    ["route", "hypercube", "--dimension", "2", "--pattern", "{}"],
    ["route", "fat-tree", *FAT_TREE, "--messages", "{}"],
    ["sim", "butterfly", "--inputs", "8", "--fault-masks", "{}"],
    ["sim", "butterfly", "--inputs", "8", "--fault-mask", "{}"],
    ["info", "fat-tree", "--leaves", "{}", "--capacity", "2"],
    ["info", "fat-tree", *FAT_TREE, "--seed", "{}"],
    ["info", "fat-tree", *FAT_TREE, "--concentrator", "{}"],
    ["info", "fat-tree", *FAT_TREE, "{}"],
    ["gen", "fat-tree", *FAT_TREE, "--top", "{}", "-o", "out"],
    ["gen", "fat-tree", *FAT_TREE, "-o", "afile/{}"],
    ["experiment", "load-sweep", "--plot", "{}/p.png"],
    ["experiment", "kuszmaul", "--dimensions", "{}"],
    ["route", "{}", "--leaves", "4"],
    ["demo", "{}"],
], ids=_name)
def test_a_control_character_never_splits_the_error_line(argv, value, workdir, capsys):
    (workdir / "afile").write_text("")
    err = refused_writing_nothing(capsys, workdir, [a.replace("{}", value) for a in argv],
                                  "error: ")
    assert not any(c in err[:-1] for c in "\n\r\x1b\u2028"), err
    assert repr(value)[1:-1] in err, err      # the value is shown, escaped


def test_output_paths_are_checked_before_any_work(workdir, capsys):
    (workdir / "afile").write_text("")
    refused_writing_nothing(capsys, workdir, ["gen", "fat-tree", *FAT_TREE, "-o", "afile"],
                            "argument -o/--output: output must be a directory")
    refused_writing_nothing(capsys, workdir, ["board", "butterfly", "--inputs", "8",
                                              "--board", "icebreaker", "-o", "afile/x"],
                            "output must be a directory")
    refused_writing_nothing(capsys, workdir, ["sim", "fat-tree", *FAT_TREE, "--pattern",
                                              "transpose", "--build-dir", "afile"],
                            "argument --build-dir: build-dir must be a directory")
    refused_writing_nothing(capsys, workdir, [*EXPERIMENTS["load-sweep"][:-1],
                                              "missing/p.png"],
                            "argument --plot: plot must be a file in a writable directory")
    refused_writing_nothing(capsys, workdir, ["gen", "fat-tree", *FAT_TREE, "--top", "1x",
                                              "-o", "out"],
                            "argument --top: top must be a Verilog identifier")
