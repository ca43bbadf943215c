"""What the benchmarks read from nextpnr's log: the critical path (printed per row of
``python bench/hw.py --link-scaling``) and the Fmax."""

from bench_scripts import bench_script

bench_hw = bench_script("hw")
critical_path = bench_hw.critical_path

# The shape of nextpnr-ecp5's report: a placement estimate first, then the routed path.
LOG = """\
Info: Critical path report for clock 'clk' (posedge -> posedge):
Info:   clk-to-q  0.52  0.52 Source old_TRELLIS_FF_Q.Q
Info:      setup  0.00  0.52 Sink old_TRELLIS_FF_Q.DI
Info: 0.10 ns logic, 0.42 ns routing

Info: Critical path report for clock 'clk' (posedge -> posedge):
Info:       type curr  total name
Info:   clk-to-q  0.52  0.52 Source bad_link0_2_4_1_TRELLIS_FF_Q.Q
Info:    routing  2.56  3.08 Net bad_link0_2_4_1 (29,32) -> (27,6)
Info:                          Sink bad_link0_2_4_1_LUT4_D.D
Info:      logic  0.24  3.32 Source bad_link0_2_4_1_LUT4_D.F
Info:    routing  0.13  4.41 Net sw_2_4.down__data_TRELLIS_FF_Q_DI (26,7) -> (26,7)
Info:                          Sink sw_2_4.down__data_TRELLIS_FF_Q.DI
Info: 1.00 ns logic, 3.41 ns routing

Info: Max frequency for clock 'clk': 226.65 MHz (PASS at 12.00 MHz)
"""


def test_the_last_report_names_its_first_source_and_last_sink():
    assert critical_path(LOG) == ("bad_link0_2_4_1 -> sw_2_4.down__data "
                                  "(1.00 ns logic, 3.41 ns routing)")


def test_a_log_without_a_report_gives_none():
    assert critical_path("ERROR: Unable to find legal placement") is None
    assert critical_path("Info: Critical path report for clock 'clk'\n") is None


def test_the_fmax_read_is_the_routed_designs_not_the_placement_estimate():
    from fatnet.hdl.tools import nextpnr_fmax
    placed = "Info: Max frequency for clock 'clk': 257.40 MHz (PASS at 12.00 MHz)\n"
    assert nextpnr_fmax(placed + LOG) == 226.65
    assert nextpnr_fmax(placed) == 257.40
    assert nextpnr_fmax("Info: Program finished normally.\n") is None


def test_a_scaling_row_placed_with_several_seeds_takes_their_median(monkeypatch, tmp_path):
    # --pnr-seeds: the same netlist placed once per seed; the row's Fmax is the median,
    # its critical path that of the seed nearest it, and one seed without an Fmax
    # leaves the row without one
    fmax_of = {1: 240.0, 2: 250.0, 3: 231.0}
    monkeypatch.setattr(bench_hw, "synth_counts",
                        lambda *a, **k: {"luts": 10, "ffs": 5, "seconds": 0.0})

    def fake_pnr(netlist, timeout, options, report, seed):
        report["critical_path"] = f"path of seed {seed}"
        return fmax_of[seed]
    monkeypatch.setattr(bench_hw, "ecp5_fmax", fake_pnr)
    row = bench_hw.scaling_row("butterfly", 8, 1, tmp_path, seeds=(3, 1, 2))
    assert row["ecp5_fmax_mhz"] == 240.0
    assert row["ecp5_fmax_by_seed"] == [231.0, 240.0, 250.0]
    assert row["critical_path"] == "path of seed 1"
    assert bench_hw.by_seed(row) == " (seeds 3 1 2: 231.0 240.0 250.0)"
    fmax_of[2] = None
    assert bench_hw.scaling_row("butterfly", 8, 1, tmp_path, seeds=(1, 2))[
        "ecp5_fmax_mhz"] is None
    assert bench_hw.by_seed(bench_hw.scaling_row("butterfly", 8, 1, tmp_path)) == ""
