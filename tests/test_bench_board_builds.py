"""``bench/board_builds.py``'s machinery without a build (each takes minutes): the
command it runs for a recorded build, the builds it selects, the shipped data it writes,
and the count it reads from nextpnr's log."""

from __future__ import annotations

import sys

import pytest
from bench_scripts import bench_script

builds_script = bench_script("board_builds")

BUILDS = [
    {"key": "butterfly", "board": "icebreaker", "terminals": 8, "logic": 2475,
     "command": "fatnet board butterfly --inputs 8 --payload-bits 10 --board icebreaker "
                "-o DIR --bitstream"},
    {"key": "hypercube alg1", "board": "ulx3s", "terminals": 256, "logic": 73072,
     "command": "fatnet board hypercube --dimension 8 --message-bits 28 "
                "'--nextpnr-opts=--router router2 --tmg-ripup' --board ulx3s -o DIR "
                "--bitstream"},
]


def test_a_recorded_command_runs_with_this_interpreter_into_the_given_directory(tmp_path):
    args = builds_script.build_arguments(BUILDS[1]["command"], tmp_path / "x")
    assert args[:4] == [sys.executable, "-m", "fatnet.cli", "board"]
    assert args[args.index("-o") + 1] == str(tmp_path / "x")
    # a quoted option stays one argument
    assert "--nextpnr-opts=--router router2 --tmg-ripup" in args
    assert args[-3:] == ["--no-fit-check", "--predict", "0"]


def test_a_command_that_is_not_a_board_build_is_refused(tmp_path):
    with pytest.raises(ValueError, match="fatnet board"):
        builds_script.build_arguments("fatnet gen butterfly --inputs 8 -o DIR", tmp_path)


def test_the_selection_filters_by_board_kind_and_size():
    assert builds_script.selected(BUILDS) == [0, 1]
    assert builds_script.selected(BUILDS, boards=["ulx3s"]) == [1]
    assert builds_script.selected(BUILDS, keys=["butterfly"]) == [0]
    assert builds_script.selected(BUILDS, max_terminals=64) == [0]


def test_the_written_data_has_the_new_counts_their_day_and_the_command():
    data = {"about": "Builds measured.", "builds": BUILDS}
    once = builds_script.update(data, {1: 70000}, "2026-11-28")
    assert [b["logic"] for b in once["builds"]] == [2475, 70000]
    assert "measured" not in once["builds"][0]
    assert once["builds"][1]["measured"] == "2026-11-28"
    assert builds_script.COMMAND in once["about"]
    # measured again: the sentence naming the command is not repeated
    twice = builds_script.update(once, {0: 2000}, "2026-11-29")
    assert twice["about"].count(builds_script.COMMAND) == 1
    assert twice["builds"][1]["logic"] == 70000 and BUILDS[0]["logic"] == 2475


def test_the_count_is_read_from_nextpnrs_log(tmp_path, monkeypatch):
    log = ("Info: Device utilisation:\n"
           "Info: \t         ICESTORM_LC:  3059/ 5280    57%\n"
           "Info: \t        ICESTORM_RAM:     5/   30    16%\n")

    def fake_build(args, **kwargs):
        out = args[args.index("-o") + 1]
        (tmp_path / out).mkdir(parents=True, exist_ok=True)
        (tmp_path / out / "bist_top.tim").write_text(log)
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(builds_script.subprocess, "run", fake_build)
    assert builds_script.measure(BUILDS[0], tmp_path, 10) == (3059, "fits")


def test_a_build_that_does_not_fit_is_counted_from_its_error_line(tmp_path, monkeypatch):
    error = ("fatnet board: error: the icebreaker build failed: Failed to expand region "
             "(utilisation ICESTORM_LC: 5388/ 5280 102%); the largest butterfly ...")

    def failed_build(args, **kwargs):       # writes nothing, as fatnet board does
        return type("Failed", (), {"returncode": 2, "stderr": error + "\n"})()

    monkeypatch.setattr(builds_script.subprocess, "run", failed_build)
    assert builds_script.measure(BUILDS[0], tmp_path, 10) == (5388, error)
