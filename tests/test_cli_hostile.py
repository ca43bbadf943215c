"""Hostile input never crashes or hangs the command line (issue 18).

Every case holds the README's contract: exit status 2, exactly one line on stderr
(``fatnet <verb>: error: ...``) naming the parameter, no traceback, and nothing written
where the command would write (an output directory, a plot, the simulator's build).
"""

from __future__ import annotations

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
