"""What the command line prints: progress on stderr only (on a terminal), the result in
a few lines on stdout, the tools' output in a log file, ``-v`` shows everything, and a
failure is one error line with the seed, the replay command and the log."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from simulators import expected_bit_flipped, require

from fatnet.cli.main import main

SIM = ["sim", "butterfly", "--inputs", "8", "--sim", "icarus", "--seed", "3"]


def _log_of(out: str) -> Path:
    (path,) = re.findall(r"tool output in (\S+\.log)$", out, re.M)
    return Path(path)


@pytest.fixture
def terminal(monkeypatch):
    """Make rich take the captured stderr for a terminal, so that the bars are drawn."""
    monkeypatch.setenv("TTY_COMPATIBLE", "1")


def test_sim_prints_its_result_in_a_few_lines_and_logs_the_tools(tmp_path, capfd):
    require("icarus")
    assert main([*SIM, "--build-dir", str(tmp_path)]) == 0
    out, err = capfd.readouterr()
    assert err == ""   # not a terminal: no progress; no banner, no warning
    lines = out.splitlines()
    assert len(lines) == 3, out
    assert lines[1].startswith("icarus: PASS: RTL and model agree")
    log = _log_of(out)
    assert log.parent.parent == tmp_path / "icarus"
    text = log.read_text()
    # cocotb's banner and summary, the simulator's command lines: in the log only
    assert "Running on Icarus Verilog" in text and "TESTS=1 PASS=1" in text
    assert "\n$ vvp " in text
    assert "cocotb" not in out


def test_verbose_lets_the_tools_output_through(tmp_path, capfd):
    require("icarus")
    assert main(["-v", *SIM, "--build-dir", str(tmp_path)]) == 0
    out, err = capfd.readouterr()
    assert "TESTS=1 PASS=1" in out + err          # cocotb's summary, as it printed it
    assert re.search(r"^fatnet sim: simulating \d+ delivery cycles on icarus$", err, re.M)
    assert "icarus: PASS" in out and "tool output in" not in out   # no log written
    assert not list(tmp_path.rglob("sim_*.log"))
    # the verb's own -v is the same flag
    assert main([*SIM, "--build-dir", str(tmp_path), "--verbose"]) == 0
    assert "TESTS=1 PASS=1" in "".join(capfd.readouterr())


def test_progress_goes_to_stderr_and_never_to_stdout(tmp_path, capsys, terminal):
    assert main(["gen", "butterfly", "--inputs", "8", "-o", str(tmp_path / "v")]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("wrote butterfly.v") and out.count("\n") == 1
    for step in ("building the model network", "elaborating the network top",
                 "Yosys writing the Verilog"):
        assert f"fatnet gen: {step}" in err
    # --json stays parseable with a bar running beside it
    assert main(["experiment", "acceptance", "--inputs", "8", "--trials", "4",
                 "--json"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)) == 4
    assert "fatnet experiment: multibutterfly" in err


def test_verbose_progress_is_one_line_per_step(capsys):
    assert main(["experiment", "load-sweep", "--inputs", "8", "--trials", "2", "-v"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "fatnet experiment: butterfly at load 0.10"
    assert len(err) == 30 and len(set(err)) == 30   # 3 networks x 10 loads, no bar


def test_a_failing_simulation_is_one_error_line_with_seed_replay_and_log(
        tmp_path, capfd, monkeypatch):
    require("icarus")
    argv = [*SIM, "--build-dir", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", ["fatnet", *argv])
    with expected_bit_flipped(0, "recv", 5):   # one wrong expected bit: the comparison must fail
        assert main(argv) == 1
    out, err = capfd.readouterr()
    assert "icarus: FAIL" in out and "RTL differs from the golden model" in out
    (line,) = err.splitlines()
    assert line.startswith("fatnet sim: error: icarus: FAIL: RTL differs from the golden "
                           "model: cycle 0: ")
    assert f"; seed 3; replay: fatnet {' '.join(argv)}; log: " in line
    assert Path(line.rsplit("; log: ", 1)[1]).exists()


def test_a_failed_build_shows_the_logs_last_lines_and_one_error_line(tmp_path, capfd):
    require("icarus")
    argv = [*SIM, "--build-dir", str(tmp_path)]
    assert main(argv) == 0
    capfd.readouterr()
    (harness,) = tmp_path.glob("icarus/*/butterfly_checker.v")   # the harness it builds
    with harness.open("a") as f:      # the next build compiles this and fails
        f.write("\nthis is not verilog;\n")
    assert main(argv) == 1
    out, err = capfd.readouterr()
    assert out == ""
    *tail, line = err.splitlines()
    assert re.fullmatch(r"fatnet sim: error: the icarus build failed \(.*\); log: \S+\.log",
                        line), line
    assert any("syntax error" in t for t in tail), err   # iverilog's own complaint
    assert "syntax error" in Path(line.rsplit("; log: ", 1)[1]).read_text()
