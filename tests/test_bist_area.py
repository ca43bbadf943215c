"""``bench/bist_area.py``'s machinery on tiny inputs (the synthesis it runs takes
minutes): the modules it keeps, the script it runs, the per-component sums it reads from
Yosys's statistics, and the table ``bench/figures.py`` renders from its record."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from bench_scripts import bench_script

area = bench_script("bist_area")

RTLIL = """module \\bist_top
end
module \\bist_top.reset_sync
end
module \\bist_top.bist
end
module \\bist_top.bist.network
end
module \\bist_top.bist.network.sw_0_0
end
module \\bist_top.bist.t0_source
end
module \\bist_top.bist.t0_w1_check
end
module \\bist_top.bist.report$477
end
"""


def test_it_keeps_the_core_and_its_children_not_their_submodules():
    assert area.kept_modules(RTLIL) == ["bist_top.bist", "bist_top.bist.network",
                                        "bist_top.bist.t0_source",
                                        "bist_top.bist.t0_w1_check",
                                        "bist_top.bist.report$477"]


def test_its_script_is_the_boards_with_the_components_kept():
    board = ("read_rtlil bist_top.il\nsetattr -mod -set keep_hierarchy 1 bist_top.bist.network\n"
             "synth_ecp5 -abc9 -top bist_top\ntee -q -o bist_top.stat.json stat -json\n"
             "write_json bist_top.json")
    assert area.keep_script(board, ["bist_top.bist", "bist_top.bist.uart"]).splitlines() == [
        "read_rtlil bist_top.il", "setattr -mod -set keep_hierarchy 1 bist_top.bist "
        "bist_top.bist.uart", "synth_ecp5 -abc9 -top bist_top",
        "tee -q -o area.stat.json stat -json"]


def test_it_sums_each_kind_of_component():
    def module(**cells):
        return {"num_cells_by_type": cells}
    stat = {"modules": {
        "\\bist_top": module(SB_LUT4=2, SB_DFFSR=1),
        "\\bist_top.bist": module(SB_LUT4=5, SB_CARRY=3, SB_DFF=4),
        "\\bist_top.bist.network": module(SB_LUT4=100, SB_DFFR=50),
        "\\bist_top.bist.t0_source": module(SB_LUT4=10, SB_DFFE=7),
        "\\bist_top.bist.t1_source": module(SB_LUT4=11, SB_DFFE=8),
        "\\bist_top.bist.t1_w0_check": module(SB_LUT4=6, SB_DFF=3),
        "\\bist_top.bist.counting": module(SB_LUT4=40, SB_DFF=9, SB_RAM40_4K=2),
        "\\bist_top.bist.report$477": module(SB_LUT4=20, SB_DFF=6, SB_RAM40_4K=2),
        "\\bist_top.bist.t1_lfsr": module(SB_LUT4=1)}}
    got = area.component_counts(stat, "ice40")
    assert got == {
        "board": {"luts": 2, "ffs": 1, "rams": 0, "instances": 1},
        "top": {"luts": 5, "ffs": 4, "rams": 0, "instances": 1},
        "network": {"luts": 100, "ffs": 50, "rams": 0, "instances": 1},
        "generators": {"luts": 21, "ffs": 15, "rams": 0, "instances": 2},
        "checkers": {"luts": 6, "ffs": 3, "rams": 0, "instances": 1},
        "counting": {"luts": 40, "ffs": 9, "rams": 2, "instances": 1},
        "report": {"luts": 20, "ffs": 6, "rams": 2, "instances": 1},
        "tN_lfsr": {"luts": 1, "ffs": 0, "rams": 0, "instances": 1}}


def test_the_table_shows_each_component_and_the_share_per_terminal():
    spec = importlib.util.spec_from_file_location(
        "bench_figures", Path(__file__).resolve().parent.parent / "bench" / "figures.py")
    figures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(figures)
    values = {"board": "icebreaker", "kind": "butterfly", "options": "--inputs 4",
              "terminals": 4, "wires": 8, "capacity": 1000, "self_test_lut": 250,
              "self_test_ff": 120, "generators_lut": 100, "generators_ff": 40,
              "checkers_lut": 40, "checkers_ff": 20, "report_lut": 30, "report_ff": 10,
              "report_ram": 2}
    results = {"bist_area": {"entries": {"x": {"values": values, "command": "cmd",
                                               "date": "2026-01-01"}}}}
    (_, _, body) = figures.bist_area_table(results).split("\n")
    assert body.split(" | ")[1:] == [
        "`butterfly --inputs 4`", "0, 0", "100, 40 (25.0, 10.0)", "40, 20 (5.0, 2.5)",
        "0, 0", "30, 10, 2 RAM", "0, 0", "0, 0", "250, 120 (25%)", "`cmd`", "2026-01-01 |"]
