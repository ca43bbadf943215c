"""``bench/board_clock.py``'s machinery without a build (each takes minutes): the
figures it reads from a build's board.json, what it refuses, and the table
``bench/figures.py`` renders from its record."""

from __future__ import annotations

import pytest
from bench_scripts import bench_script

clock = bench_script("board_clock")
figures = bench_script("figures")

MANIFEST = {"terminals": 16, "fmax_mhz": 52.09, "critical_path": "a -> b",
            "parts": {"network": {"luts": 1024, "ffs": 688},
                      "self_test": {"luts": 1190, "ffs": 1310},
                      "total": {"luts": 2214, "ffs": 1998}},
            "network_fmax": {"fmax_mhz": 96.02, "critical_path": "c -> d"}}


def test_the_figures_are_the_builds_parts_and_both_fmax():
    v = clock.values_of(MANIFEST, "icebreaker", "butterfly", 16, "--inputs 16")
    assert (v["network_lut"], v["network_ff"], v["self_test_lut"], v["self_test_ff"]) == (
        1024, 688, 1190, 1310)
    assert (v["fmax_mhz"], v["network_fmax_mhz"], v["ratio"]) == (52.09, 96.02, 0.54)
    assert (v["critical_path"], v["network_critical_path"]) == ("a -> b", "c -> d")
    assert v["capacity"] == 5280 and v["terminals"] == 16


@pytest.mark.parametrize("missing", ["parts", "network_fmax", "fmax_mhz"])
def test_a_build_without_its_figures_is_refused_naming_what_is_missing(missing):
    with pytest.raises(RuntimeError, match="the build has no figures"):
        clock.values_of({**MANIFEST, missing: None}, "icebreaker", "butterfly", 16, "")


def test_the_table_shows_each_part_with_its_share_and_both_paths():
    v = clock.values_of(MANIFEST, "icebreaker", "butterfly", 16, "--inputs 16")
    results = {"board_clock": {"entries": {"x": {"values": v, "command": "cmd",
                                                 "date": "2026-01-01"}}}}
    (_, _, body) = figures.board_clock_table(results).split("\n")
    assert body.split(" | ")[1:] == [
        "`butterfly --inputs 16`", "1,024, 688 (19%)", "1,190, 1,310 (23%)",
        "52.09 MHz (`a -> b`)", "96.02 MHz (`c -> d`)", "0.54", "`cmd`", "2026-01-01 |"]
