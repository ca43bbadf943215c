"""``bench/board_tops.py`` and the tables ``bench/figures.py`` renders from the board
records, without a build (each takes minutes): every top is a command ``fatnet board``
takes, and the tables show what the records hold."""

from __future__ import annotations

import json
import shlex

import pytest
from bench_scripts import bench_script

from fatnet.cli.main import build_parser

tops = bench_script("board_tops")
figures = bench_script("figures")


@pytest.mark.parametrize("top", tops.TOPS, ids=lambda t: t.key)
def test_every_top_is_a_command_fatnet_board_parses(top):
    words = shlex.split(tops.command_of(top).replace("DIR", "out"))
    assert words[:2] == ["fatnet", "board"]
    args = build_parser(words[1:]).parse_args(words[1:])
    assert (args.board, args.bitstream) == (top.board, True)
    assert args.clock == top.clock


def test_the_tops_keys_are_distinct_and_name_their_board():
    keys = [t.key for t in tops.TOPS]
    assert len(set(keys)) == len(keys)
    assert all(t.key.startswith(t.board) for t in tops.TOPS)


def test_the_builds_table_shows_the_share_the_pll_and_the_defaults():
    values = {"board": "iCEBreaker", "kind": "hypercube", "options": "--dimension 3",
              "defaults": "--pattern random", "clock_mhz": 31.5, "pll": "DIVF 83",
              "cells": 1320, "capacity": 5280, "cell_kind": "logic cells",
              "fmax_mhz": 60.0, "seconds": 40}
    results = {"boards": {"entries": {"x": {"values": values, "date": "2026-01-01"}}}}
    (_, _, body) = figures.board_builds_table(results).split("\n")
    assert body.split(" | ")[1:] == [
        "`hypercube --dimension 3`", "`--pattern random`", "31.5 MHz (DIVF 83)",
        "1,320 / 5,280 logic cells (25%)", "60.00 MHz", "40 s", "2026-01-01 |"]


def test_the_sizes_table_names_each_size_and_its_goal(tmp_path):
    shipped = {"provenance": {}, "sizes": {"icebreaker": {"butterfly": {
        "size": 16, "clock_mhz": 58.5, "options": "--inputs 16 --clock 58.5",
        "use": "2522/5280 logic cells"}}}}
    path = tmp_path / "board_sizes.json"
    path.write_text(json.dumps(shipped))
    (_, _, body) = figures.board_sizes_table({}, path).split("\n")
    assert body.split(" | ")[1:] == [
        "butterfly", "16 inputs", "32 inputs", "58.5 MHz", "2522/5280 logic cells",
        "`fatnet board butterfly --inputs 16 --clock 58.5 --board icebreaker` |"]


def test_the_defaults_are_a_command_line_fatnet_board_takes():
    text = tops._defaults_text({"payload_bits": 10, "nextpnr_opts": "--router router2"})
    assert text == "--payload-bits 10 --nextpnr-opts='--router router2'"
    words = ["board", "butterfly", "--inputs", "8", "--board", "icebreaker", "-o", "x",
             *shlex.split(text)]
    args = build_parser(words).parse_args(words)
    assert (args.payload_bits, args.nextpnr_opts) == (10, "--router router2")


def test_the_pll_is_its_primitive_dividers_and_vco():
    pll = {"primitive": "SB_PLL40", "vco_mhz": 1008.0, "parameters": {
        "FEEDBACK_PATH": "SIMPLE", "DIVR": 0, "DIVF": 83, "DIVQ": 5, "FILTER_RANGE": 1}}
    assert tops._pll_text(pll) == "SB_PLL40 DIVR 0, DIVF 83, DIVQ 5 (VCO 1008 MHz)"
    assert tops._pll_text(None) == ""
